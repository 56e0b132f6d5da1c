/**
 * The config file's `hooks` as `ToolHooks` (loop/hooks.ts): each is a command line run with
 * `sh -c` in the workspace, the call as JSON on stdin —
 * `{"hook", "turn", "call_id", "name", "arguments"}` (after a call also `"ok"` and `"output"`).
 *
 * - exit 0 allows; stdout may hold JSON that rewrites: `{"arguments": {...}}` before a call,
 *   `{"output": "..."}` after it (empty stdout: no change);
 * - exit 2 denies, with stderr as the reason the model reads (after a call: the output is withheld);
 * - anything else — another exit code, a crash, stdout that is not such JSON or longer than
 *   16 MiB, or no answer within `timeout_ms` (default 10 s; the command's process group is
 *   killed) — fails closed: the call is denied (or its output withheld) with a note saying what
 *   went wrong. So does a hook whose shell exits leaving a process holding its stdout or stderr
 *   open: the call is not held up waiting for that process.
 */
import { spawn } from "node:child_process";
import type { AfterToolCallDecision, BeforeToolCallDecision, HookCall, ToolHooks } from "../loop/hooks.js";
import type { JsonObject } from "../protocol/types.js";
import { onChildEnd, signalGroup } from "../tools/process-signals.js";
import type { HookCommandsConfig } from "./config-compose.js";
import type { Env } from "./config-file.js";

/** How long a hook command may take unless `hooks.timeout_ms` says otherwise. */
export const HOOK_TIMEOUT_MS = 10_000;

/** Longest stderr kept as a reason (the rest is cut). */
const REASON_MAX = 2000;

interface HookRun {
  code: number | null;
  stdout: string;
  stderr: string;
  timedOut: boolean;
  /** Stdout passed `HOOK_STDOUT_MAX_BYTES`: the command was killed. */
  overflowed?: boolean;
  /** The shell exited while a process it left still held its stdout or stderr open. */
  heldOpen?: boolean;
  error?: string;
}

/** The hooks of a config file's `hooks`, run in `workspace` with `env`. */
export function commandHooks(config: HookCommandsConfig, workspace: string, env: Env): ToolHooks {
  const timeoutMs = config.timeout_ms ?? HOOK_TIMEOUT_MS;
  const hooks: ToolHooks = {};
  const before = config.before_tool_call;
  if (before !== undefined)
    hooks.beforeToolCall = async (call, { signal }) => {
      const run = await runHook(before, payload("before_tool_call", call), {
        workspace,
        env,
        timeoutMs,
        signal,
      });
      return beforeDecision(run, timeoutMs);
    };
  const after = config.after_tool_call;
  if (after !== undefined)
    hooks.afterToolCall = async (call, { signal }) => {
      const input = { ...payload("after_tool_call", call), ok: call.ok, output: call.output };
      const run = await runHook(after, input, { workspace, env, timeoutMs, signal });
      return afterDecision(run, timeoutMs);
    };
  return hooks;
}

function payload(hook: string, call: HookCall): Record<string, unknown> {
  let args: unknown = call.arguments;
  try {
    args = JSON.parse(call.arguments);
  } catch {}
  return { hook, turn: call.turn, call_id: call.callId, name: call.name, arguments: args };
}

/** The decision a finished `before_tool_call` command stands for. */
export function beforeDecision(run: HookRun, timeoutMs: number): BeforeToolCallDecision {
  const failed = failure("before_tool_call", run, timeoutMs);
  if (failed !== undefined)
    return { action: "deny", reason: `${failed}; the call was not run`, note: failed };
  if (run.code === 2) return { action: "deny", reason: reasonOf(run.stderr) };
  const out = rewriteOf(run.stdout, "arguments");
  if (out === undefined) return { action: "allow" };
  if ("problem" in out) {
    const note = `the before_tool_call hook wrote ${out.problem} (fail closed)`;
    return { action: "deny", reason: `${note}; the call was not run`, note };
  }
  const value = out.value;
  if (typeof value === "string") return { action: "rewrite", arguments: value };
  if (value !== null && typeof value === "object" && !Array.isArray(value))
    return { action: "rewrite", arguments: value as JsonObject };
  const note =
    'the before_tool_call hook wrote "arguments" that is neither an object nor a string (fail closed)';
  return { action: "deny", reason: `${note}; the call was not run`, note };
}

/** The decision a finished `after_tool_call` command stands for. */
export function afterDecision(run: HookRun, timeoutMs: number): AfterToolCallDecision {
  const failed = failure("after_tool_call", run, timeoutMs);
  if (failed !== undefined)
    return { action: "deny", reason: `${failed}; the output was withheld`, note: failed };
  if (run.code === 2) return { action: "deny", reason: reasonOf(run.stderr) };
  const out = rewriteOf(run.stdout, "output");
  if (out === undefined) return { action: "allow" };
  if (!("problem" in out) && typeof out.value === "string") return { action: "rewrite", output: out.value };
  const note = `the after_tool_call hook wrote ${"problem" in out ? out.problem : '"output" that is not a string'} (fail closed)`;
  return { action: "deny", reason: `${note}; the output was withheld`, note };
}

/** Why a hook run counts as failed (fail closed), or undefined when it answered (exit 0 or 2). */
function failure(hook: string, run: HookRun, timeoutMs: number): string | undefined {
  if (run.timedOut) return `the ${hook} hook timed out after ${timeoutMs} ms (fail closed)`;
  // What such a process writes later is not read: fail closed rather than take a part for the answer.
  if (run.heldOpen === true && run.code !== null && run.code !== 2)
    return `the ${hook} hook exited but left a process holding its output open (fail closed)`;
  if (run.overflowed === true)
    return `the ${hook} hook wrote more than ${HOOK_STDOUT_MAX_BYTES} bytes on stdout (fail closed)`;
  if (run.error !== undefined) return `the ${hook} hook could not run: ${run.error} (fail closed)`;
  if (run.code === 0 || run.code === 2) return undefined;
  const why = run.code === null ? "was killed" : `exited ${run.code}`;
  const stderr = run.stderr.trim() === "" ? "" : `: ${reasonOf(run.stderr)}`;
  return `the ${hook} hook ${why}${stderr} (fail closed)`;
}

function reasonOf(stderr: string): string {
  const text = stderr.trim().replace(/\s*\n\s*/g, " ");
  if (text === "") return "denied by a hook";
  return text.length > REASON_MAX ? `${text.slice(0, REASON_MAX)}…` : text;
}

/** `key` of the JSON object on stdout; undefined when stdout is empty or has no such key. */
function rewriteOf(stdout: string, key: string): { value: unknown } | { problem: string } | undefined {
  if (stdout.trim() === "") return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(stdout);
  } catch {
    return { problem: "stdout that is not JSON" };
  }
  if (parsed === null || typeof parsed !== "object" || Array.isArray(parsed))
    return { problem: "stdout that is not a JSON object" };
  if (!(key in parsed)) return undefined;
  return { value: (parsed as Record<string, unknown>)[key] };
}

/** The most a hook may write on stdout (a rewrite); more fails closed, the command killed. */
export const HOOK_STDOUT_MAX_BYTES = 16 * 1024 * 1024;

/** The most of a hook's stderr kept (a reason uses its first `REASON_MAX` characters); the rest is dropped. */
const HOOK_STDERR_MAX_BYTES = 64 * 1024;

/**
 * Runs `command` with `sh -c`, `input` as JSON on stdin; kills its process group on timeout, on
 * abort and when stdout passes `HOOK_STDOUT_MAX_BYTES`. It settles once the shell has exited and
 * its pipes closed, or `PIPE_CLOSE_WAIT_MS` after the exit when something else still holds them.
 */
function runHook(
  command: string,
  input: unknown,
  options: { workspace: string; env: Env; timeoutMs: number; signal: AbortSignal },
): Promise<HookRun> {
  return new Promise((resolve) => {
    const child = spawn("sh", ["-c", command], {
      cwd: options.workspace,
      env: options.env as NodeJS.ProcessEnv,
      stdio: ["pipe", "pipe", "pipe"],
      detached: true,
    });
    const stdout = boundedText(HOOK_STDOUT_MAX_BYTES);
    const stderr = boundedText(HOOK_STDERR_MAX_BYTES);
    let timedOut = false;
    let settled = false;
    const kill = () => {
      if (child.pid !== undefined) signalGroup(child.pid, "SIGKILL");
    };
    const timer = setTimeout(() => {
      timedOut = true;
      kill();
    }, options.timeoutMs);
    options.signal.addEventListener("abort", kill, { once: true });
    child.stdout.on("data", (d: Buffer) => {
      if (!stdout.push(d)) kill();
    });
    child.stderr.on("data", (d: Buffer) => stderr.push(d));
    child.stdin.on("error", () => {});
    child.stdin.end(JSON.stringify(input));
    const done = (code: number | null, error?: string, heldOpen = false) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      stopWaiting();
      options.signal.removeEventListener("abort", kill);
      child.stdout.destroy();
      child.stderr.destroy();
      const run: HookRun = { code, stdout: stdout.text(), stderr: stderr.text(), timedOut };
      if (stdout.overflowed) run.overflowed = true;
      if (heldOpen) run.heldOpen = true;
      if (error !== undefined) run.error = error;
      resolve(run);
    };
    child.on("error", (err) => done(null, err.message));
    const stopWaiting = onChildEnd(child, (how, heldOpen) => done(how.code, undefined, heldOpen));
  });
}

/** Bytes of a stream up to `max`: `push` answers false once more came (and keeps no more). */
function boundedText(max: number): { push(chunk: Buffer): boolean; text(): string; overflowed: boolean } {
  const chunks: Buffer[] = [];
  let bytes = 0;
  const capture = {
    overflowed: false,
    push(chunk: Buffer): boolean {
      if (capture.overflowed) return false;
      if (bytes + chunk.length > max) {
        chunks.push(chunk.subarray(0, max - bytes));
        bytes = max;
        capture.overflowed = true;
        return false;
      }
      chunks.push(chunk);
      bytes += chunk.length;
      return true;
    },
    text: () => Buffer.concat(chunks).toString("utf8"),
  };
  return capture;
}
