/**
 * `shell {command, cwd?, timeout_ms?}` (alias `bash`): runs `bash -c command` in a directory of the
 * workspace with an allowlisted environment (API keys never pass through). The child leads its own
 * process group (`detached`), so a timeout or a cancelled run kills the command *and* everything it
 * started (SIGTERM, then SIGKILL after a grace period); background jobs a command leaves running
 * are killed by the tool's `dispose` when the run ends (`process-groups.ts`). Output is captured
 * with a bounded head and tail per stream. A non-zero exit ends `ok:false` with that `exit_code`
 * (docs/decisions.md #7).
 *
 * Commands are not confined to the workspace (they can `cd /`), unless `sandbox: "bubblewrap"`
 * runs them under `bwrap` (`sandbox.ts`).
 */
import { spawn } from "node:child_process";
import { stat } from "node:fs/promises";
import { constants } from "node:os";
import { TOOL_DEFAULTS } from "../defaults.js";
import { type ChildExit, onChildEnd, signalGroup } from "../process-signals.js";
import { type ToolDefinition, type ToolResult, toolResult } from "../tool.js";
import { resolveInWorkspace, workspaceRoot } from "../workspace.js";
import { fsFailure, toolFailure } from "./common.js";
import { createProcessGroups, type ProcessGroups } from "./process-groups.js";
import { bubblewrapArgs, findBubblewrap, type ShellSandbox } from "./sandbox.js";
import { createStreamCapture } from "./stream-capture.js";

/** Arguments of `shell`. */
export interface ShellArgs {
  command: string;
  cwd?: string;
  timeout_ms?: number;
}

/** The environment shell commands get, beyond `TOOL_DEFAULTS.shellEnvAllowlist` and `LC_*`. */
export interface ShellEnvOptions {
  /** More variable names to pass through from `source` (e.g. `["GOPATH", "JAVA_HOME"]`). */
  passThrough?: readonly string[];
  /** Variables set for every command; they win over passed-through values. */
  set?: Readonly<Record<string, string>>;
  /**
   * Where passed-through values come from: the environment of the program using eddy (the CLI
   * passes its own). The library never reads `process.env` itself, so without a source commands
   * get only a standard `PATH` and `set`.
   * @defaultValue `SHELL_FALLBACK_ENV` (`PATH=/usr/local/bin:/usr/bin:/bin`)
   */
  source?: Readonly<Record<string, string | undefined>>;
}

/** The environment passed-through values come from when `ShellEnvOptions.source` is not given. */
export const SHELL_FALLBACK_ENV: Readonly<Record<string, string>> = { PATH: "/usr/local/bin:/usr/bin:/bin" };

/** The environment for shell commands: the allowlist, `LC_*`, `passThrough`, then `set`. */
export function shellEnvironment(options: ShellEnvOptions = {}): Record<string, string> {
  const source = options.source ?? SHELL_FALLBACK_ENV;
  const allowed = new Set([...TOOL_DEFAULTS.shellEnvAllowlist, ...(options.passThrough ?? [])]);
  const env: Record<string, string> = {};
  for (const name of Object.keys(source).sort()) {
    const value = source[name];
    if (value !== undefined && (allowed.has(name) || name.startsWith("LC_"))) env[name] = value;
  }
  return { ...env, ...options.set };
}

/** Options of `createShellTool`. */
export interface ShellToolOptions {
  /** What commands see of the environment beyond the allowlist. */
  env?: ShellEnvOptions;
  /**
   * `"bubblewrap"` runs every command under `bwrap` (read-only system, writable workspace, private
   * /tmp, no network; CLI `--sandbox`). Throws `invalid_config` when `bwrap` is not on the
   * commands' `PATH`. @defaultValue "none"
   */
  sandbox?: ShellSandbox;
}

/** The parameters of `shell`: one object for every shell tool (its validator is compiled ahead of time). */
export const SHELL_PARAMETERS = {
  type: "object",
  properties: {
    command: { type: "string", minLength: 1, description: "The bash command line to run." },
    cwd: {
      type: "string",
      description: "Working directory relative to the workspace root. Default: the root.",
    },
    timeout_ms: {
      type: "integer",
      minimum: 1,
      description: `Kill the command after this many milliseconds. Default ${TOOL_DEFAULTS.shellTimeoutMs}; larger values are capped at ${TOOL_DEFAULTS.shellMaxTimeoutMs}.`,
    },
  },
  required: ["command"],
  additionalProperties: false,
};

/**
 * Creates the `shell` tool (alias `bash`) with a fixed environment. Its `dispose()` kills what
 * its commands left running in the background; call it (or `ToolRegistry.dispose()`) when the
 * run ends.
 */
export function createShellTool(options: ShellToolOptions = {}): ToolDefinition<ShellArgs> {
  const env = shellEnvironment(options.env);
  const sandbox = options.sandbox ?? "none";
  const bwrap = sandbox === "bubblewrap" ? findBubblewrap(env.PATH) : undefined;
  const groups = createProcessGroups();
  return {
    name: "shell",
    aliases: ["bash"],
    description:
      "Run a bash command in the workspace (bash -c). cwd is relative to the workspace root (default: the root). " +
      (bwrap === undefined
        ? ""
        : "Commands run in a sandbox: only the workspace (and a private /tmp) is writable, and there is no network. ") +
      `The command is killed after timeout_ms (default ${TOOL_DEFAULTS.shellTimeoutMs}, at most ${TOOL_DEFAULTS.shellMaxTimeoutMs}). ` +
      "stdin is empty; a non-zero exit status is reported as a failure with its exit_code. Only a few environment variables " +
      "(PATH, HOME, LANG, …) are set.",
    parameters: SHELL_PARAMETERS,
    // The command's own timeout (≤ shellMaxTimeoutMs) fires first and keeps the partial output.
    timeoutMs: TOOL_DEFAULTS.shellMaxTimeoutMs + 10_000,
    truncationHint: "filter the output (grep, head, tail) or redirect it to a file and read that in parts",
    async execute(args, { workspace, signal }) {
      const root = await workspaceRoot(workspace);
      const cwd = await resolveInWorkspace(root, args.cwd ?? ".", "shell");
      try {
        if (!(await stat(cwd.absolute)).isDirectory()) {
          throw toolFailure("tool_failed", `shell: cwd ${cwd.display} is not a directory`);
        }
      } catch (error) {
        throw fsFailure("shell", error, cwd.display);
      }
      const timeoutMs = Math.min(
        args.timeout_ms ?? TOOL_DEFAULTS.shellTimeoutMs,
        TOOL_DEFAULTS.shellMaxTimeoutMs,
      );
      const argv = ["bash", "-c", args.command];
      const [file, ...rest] =
        bwrap === undefined
          ? argv
          : [bwrap, ...bubblewrapArgs({ workspace: root, cwd: cwd.absolute }), ...argv];
      return runCommand({
        file: file as string,
        args: rest,
        cwd: cwd.absolute,
        env,
        timeoutMs,
        signal,
        groups,
      });
    },
    dispose: () => groups.killAll(TOOL_DEFAULTS.shellKillGraceMs),
  };
}

interface RunOptions {
  file: string;
  args: string[];
  cwd: string;
  env: Record<string, string>;
  timeoutMs: number;
  signal: AbortSignal;
  groups: ProcessGroups;
}

function runCommand(o: RunOptions): Promise<ToolResult> {
  return new Promise((resolve) => {
    const out = createStreamCapture(TOOL_DEFAULTS.shellStreamCapBytes);
    const err = createStreamCapture(TOOL_DEFAULTS.shellStreamCapBytes);
    const child = spawn(o.file, o.args, {
      cwd: o.cwd,
      env: o.env,
      detached: true,
      stdio: ["ignore", "pipe", "pipe"],
    });
    if (child.pid !== undefined) o.groups.add(child.pid);
    let stopped: "timeout" | "cancelled" | undefined;
    let exit: ChildExit | undefined;
    let settled = false;

    const killGroup = (sig: NodeJS.Signals) => {
      if (child.pid !== undefined) signalGroup(child.pid, sig);
    };
    const stop = (why: "timeout" | "cancelled") => {
      if (stopped !== undefined || settled) return;
      stopped = why;
      killGroup("SIGTERM");
      // Not cleared on settle: other members of the group may outlive the shell.
      setTimeout(() => killGroup("SIGKILL"), TOOL_DEFAULTS.shellKillGraceMs);
    };
    const onAbort = () => stop("cancelled");
    const timer = setTimeout(() => stop("timeout"), o.timeoutMs);
    o.signal.addEventListener("abort", onAbort, { once: true });
    if (o.signal.aborted) stop("cancelled");

    const settle = (result: ToolResult) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      stopWaiting();
      o.signal.removeEventListener("abort", onAbort);
      if (child.pid !== undefined) o.groups.forgetIfGone(child.pid);
      child.stdout?.destroy();
      child.stderr?.destroy();
      resolve(result);
    };

    child.stdout?.on("data", (chunk: Buffer) => out.push(chunk));
    child.stderr?.on("data", (chunk: Buffer) => err.push(chunk));
    child.on("error", (error: NodeJS.ErrnoException) => settle(startFailure(o.file, error)));
    const stopWaiting = onChildEnd(child, (how) => {
      exit = how;
      settle(outcome());
    });

    const outcome = (): ToolResult =>
      commandOutcome({ stdout: out.finish(), stderr: err.finish(), stopped, exit, timeoutMs: o.timeoutMs });
  });
}

/** The result when the shell itself could not be started (e.g. `bash` not on `PATH`). */
function startFailure(file: string, error: NodeJS.ErrnoException): ToolResult {
  return toolResult({
    ok: false,
    exitCode: 127,
    error: {
      code: "tool_failed",
      message: `shell: could not start ${file} (${error.code ?? error.message})`,
    },
  });
}

/** How a command ended, with what it wrote. */
interface CommandEnd {
  stdout: ReturnType<ReturnType<typeof createStreamCapture>["finish"]>;
  stderr: ReturnType<ReturnType<typeof createStreamCapture>["finish"]>;
  /** Set when eddy stopped the command. */
  stopped: "timeout" | "cancelled" | undefined;
  exit: { code: number | null; signal: NodeJS.Signals | null } | undefined;
  timeoutMs: number;
}

/** The result of a finished command: a timeout (124), a cancel (130), a signal (128+n) or its exit code. */
function commandOutcome(c: CommandEnd): ToolResult {
  const artifacts =
    c.stdout.dropped || c.stderr.dropped
      ? { stdout_bytes: c.stdout.totalBytes, stderr_bytes: c.stderr.totalBytes }
      : undefined;
  const streams = {
    stdout: c.stdout.text,
    stderr: c.stderr.text,
    ...(artifacts === undefined ? {} : { artifacts }),
  };
  if (c.stopped === "timeout") {
    return toolResult({
      ok: false,
      exitCode: 124,
      ...streams,
      error: {
        code: "tool_timeout",
        message: `shell: the command timed out after ${c.timeoutMs} ms and its process group was killed; raise timeout_ms (at most ${TOOL_DEFAULTS.shellMaxTimeoutMs}) or do less per call`,
      },
    });
  }
  if (c.stopped === "cancelled") {
    return toolResult({
      ok: false,
      exitCode: 130,
      ...streams,
      error: { code: "cancelled", message: "shell: the run was cancelled and the command was killed" },
    });
  }
  const signal = c.exit?.signal ?? null;
  if (signal !== null) {
    const number = constants.signals[signal] ?? 0;
    return toolResult({
      ok: false,
      exitCode: 128 + number,
      ...streams,
      error: { code: "tool_failed", message: `shell: the command was killed by ${signal}` },
    });
  }
  const code = c.exit?.code ?? 1;
  return toolResult({ ok: code === 0, exitCode: code, ...streams });
}
