/**
 * `shell` under bubblewrap (`sandbox: "bubblewrap"`, CLI `--sandbox`): the workspace is writable,
 * the rest of the file system is not, /tmp is private, the network is gone, and cancellation
 * still kills the command. The sandboxed runs need `bwrap`: they are skipped (and say so) only
 * where it is not installed; `.ci/run` installs it.
 */
import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { createServer, type Server } from "node:net";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TOOL_DEFAULTS } from "../defaults.js";
import { createToolRegistry, type ToolRegistry } from "../registry.js";
import { createSandbox, runTool, type Sandbox } from "../test-support/workspace.js";
import { bubblewrapArgs, findBubblewrap, probeBubblewrap } from "./sandbox.js";
import { createShellTool } from "./shell.js";

const PATH = process.env.PATH;
const hasBwrap = (() => {
  try {
    findBubblewrap(PATH);
    return true;
  } catch {
    return false;
  }
})();
if (!hasBwrap) {
  console.warn(
    "sandbox.test.ts: bwrap is not installed, so the sandboxed runs are SKIPPED (apt-get install bubblewrap)",
  );
}

let box: Sandbox;
let server: Server;
let port = 0;
let sandboxed: ToolRegistry | undefined;
const plain = createToolRegistry([createShellTool({ env: { source: { PATH } } })]);

beforeAll(async () => {
  box = await createSandbox();
  await box.files({ "sub/file.txt": "in sub\n" });
  server = createServer((socket) => socket.end("hello from the host\n"));
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  port = (server.address() as { port: number }).port;
  if (hasBwrap)
    sandboxed = createToolRegistry([createShellTool({ env: { source: { PATH } }, sandbox: "bubblewrap" })]);
});
afterAll(async () => {
  server.close();
  await sandboxed?.dispose();
  await box.cleanup();
});

const inSandbox = (args: Record<string, unknown>, signal?: AbortSignal) =>
  runTool(sandboxed as ToolRegistry, box.root, "shell", args, signal === undefined ? {} : { signal });

describe("shell sandbox: arguments and errors (no bwrap needed)", () => {
  it("builds the bwrap options: read-only system, writable workspace, private /tmp, no network", () => {
    expect(bubblewrapArgs({ workspace: "/w", cwd: "/w/sub" })).toEqual([
      "--ro-bind",
      "/",
      "/",
      "--dev",
      "/dev",
      "--proc",
      "/proc",
      "--tmpfs",
      "/tmp",
      "--bind",
      "/w",
      "/w",
      "--unshare-net",
      "--unshare-pid",
      "--unshare-ipc",
      "--unshare-uts",
      "--die-with-parent",
      "--chdir",
      "/w/sub",
      "--",
    ]);
  });

  it("refuses to create a sandboxed shell when bwrap is not on PATH, saying how to get it", async () => {
    expect(() =>
      createShellTool({ env: { source: { PATH: "/nonexistent" } }, sandbox: "bubblewrap" }),
    ).toThrow(
      /the shell sandbox needs bubblewrap \(the bwrap command\), which is not installed or not on PATH; install it \(Debian\/Ubuntu: apt-get install bubblewrap/,
    );
    expect(await probeBubblewrap("/nonexistent")).toMatchObject({ ok: false, reason: /needs bubblewrap/ });
  });

  it("without the sandbox, the same commands do reach the network and outside files (the checks below can fail)", async () => {
    const r = await runTool(plain, box.root, "shell", {
      command: `exec 3<>/dev/tcp/127.0.0.1/${port} && head -1 <&3 && echo outside > ${join(box.outside, "plain.txt")}`,
    });
    expect(r.parsed.stdout).toBe("hello from the host\n");
    expect(existsSync(join(box.outside, "plain.txt"))).toBe(true);
  });
});

describe.skipIf(!hasBwrap)("shell sandbox under bwrap", () => {
  it("bwrap can start here", async () => {
    expect(await probeBubblewrap(PATH)).toEqual({ ok: true });
  });

  it("the workspace is writable, at its own path", async () => {
    const r = await inSandbox({ command: "pwd; echo made > made.txt; cat sub/file.txt", cwd: "." });
    expect(r.parsed).toMatchObject({ ok: true, stdout: `${box.root}\nin sub\n` });
    expect(await readFile(join(box.root, "made.txt"), "utf8")).toBe("made\n");
  });

  it("the rest of the file system is read-only", async () => {
    const target = join(box.outside, "escaped.txt");
    const r = await inSandbox({ command: `echo x > ${target}` });
    expect(r.ok).toBe(false); // (below /tmp here, so hidden by the private /tmp)
    expect(existsSync(target)).toBe(false);
    const etc = await inSandbox({ command: "touch /etc/eddy-sandbox-test" });
    expect(etc.ok).toBe(false);
    expect(etc.parsed.stderr).toMatch(/Read-only file system/);
    expect(existsSync("/etc/eddy-sandbox-test")).toBe(false);
  });

  it("/tmp is private to the command", async () => {
    const r = await inSandbox({ command: "echo x > /tmp/eddy-sandbox-probe && ls /tmp" });
    expect(r.parsed).toMatchObject({ ok: true });
    expect(existsSync("/tmp/eddy-sandbox-probe")).toBe(false);
  });

  it("there is no network: a server on the host's loopback cannot be reached", async () => {
    const r = await inSandbox({ command: `exec 3<>/dev/tcp/127.0.0.1/${port} && head -1 <&3` });
    expect(r.ok).toBe(false);
    expect(r.parsed.stdout).toBe("");
    expect(r.parsed.stderr).toMatch(/Connection refused|Network is unreachable/);
  });

  it("cancellation kills the sandboxed command and everything in it", async () => {
    const controller = new AbortController();
    // A duration no other test uses (they run at the same time and may have their own `sleep 100`).
    const sleep = `sleep 100${Math.random().toFixed(9).slice(1)}`;
    const pending = inSandbox({ command: `${sleep} & ${sleep}`, timeout_ms: 60_000 }, controller.signal);
    await new Promise((resolve) => setTimeout(resolve, 500));
    const abortedAt = performance.now();
    controller.abort();
    const r = await pending;
    expect(r.error?.code).toBe("cancelled");
    expect(performance.now() - abortedAt).toBeLessThan(3_000);
    // The group gets SIGTERM, then SIGKILL after TOOL_DEFAULTS.shellKillGraceMs, and the sandbox's
    // PID namespace is torn down after its init dies: the result can come first, so wait for the
    // processes to go (a fixed 300 ms was too short on a loaded machine) — but they must go.
    const running = () => execFileSync("ps", ["-eo", "args"]).toString().split("\n").includes(sleep);
    const deadline = Date.now() + TOOL_DEFAULTS.shellKillGraceMs + 10_000;
    while (running() && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 100));
    expect(running()).toBe(false);
  });
});
