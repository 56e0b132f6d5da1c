/**
 * The optional confinement of `shell` commands with bubblewrap (`bwrap`, the sandbox Flatpak
 * uses): the whole file system read-only, the workspace bound writable at its own path, a private
 * `/tmp`, fresh `/dev` and `/proc`, no network (an empty network namespace with only loopback),
 * its own PID, IPC and UTS namespaces (so background jobs die with the command), and
 * `--die-with-parent` (the sandbox dies with eddy). bwrap needs unprivileged user namespaces, or
 * root, or a setuid install; `probeBubblewrap` says whether it can start here.
 */
import { execFile } from "node:child_process";
import { accessSync, constants } from "node:fs";
import { delimiter, join } from "node:path";
import { EddyError } from "../../errors.js";

/** How `shell` commands are confined: not at all, or under bubblewrap. */
export type ShellSandbox = "none" | "bubblewrap";

/** The `bwrap` options (before the command) for a command run in `cwd` with `workspace` writable. */
export function bubblewrapArgs(o: { workspace: string; cwd: string }): string[] {
  return [
    ["--ro-bind", "/", "/"],
    ["--dev", "/dev"],
    ["--proc", "/proc"],
    ["--tmpfs", "/tmp"],
    // After /tmp, so a workspace below /tmp is bound on top of the private one.
    ["--bind", o.workspace, o.workspace],
    ["--unshare-net", "--unshare-pid", "--unshare-ipc", "--unshare-uts"],
    ["--die-with-parent"],
    ["--chdir", o.cwd],
    ["--"],
  ].flat();
}

/**
 * The absolute path of `bwrap` on `path` (a `PATH` value). Throws `invalid_config` (the user's to
 * fix) when it is not there.
 */
export function findBubblewrap(path: string | undefined): string {
  for (const dir of (path ?? "").split(delimiter)) {
    if (dir === "") continue;
    const candidate = join(dir, "bwrap");
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // not in this directory
    }
  }
  throw new EddyError(
    "invalid_config",
    "the shell sandbox needs bubblewrap (the bwrap command), which is not installed or not on PATH; " +
      "install it (Debian/Ubuntu: apt-get install bubblewrap, Fedora: dnf install bubblewrap) or run without --sandbox",
    { fault: "user" },
  );
}

/**
 * Whether bwrap can start a sandbox on this machine (it cannot where unprivileged user namespaces
 * are disabled): `{ok: true}`, or `{ok: false, reason}` with bwrap's own message. For a CLI to
 * refuse `--sandbox` at start instead of failing every command.
 */
export async function probeBubblewrap(
  path: string | undefined,
): Promise<{ ok: true } | { ok: false; reason: string }> {
  let bwrap: string;
  try {
    bwrap = findBubblewrap(path);
  } catch (error) {
    return { ok: false, reason: (error as Error).message };
  }
  const args = [...bubblewrapArgs({ workspace: "/", cwd: "/" }), "true"];
  return new Promise((resolve) => {
    execFile(bwrap, args, { timeout: 10_000 }, (error, _stdout, stderr) => {
      if (error === null) resolve({ ok: true });
      else
        resolve({
          ok: false,
          reason: `bwrap cannot start a sandbox here: ${stderr.trim() || error.message}`,
        });
    });
  });
}
