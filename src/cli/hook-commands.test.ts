import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { commandHooks, HOOK_STDOUT_MAX_BYTES } from "./hook-commands.js";

const call = { turn: 0, callId: "c1", name: "read_file", arguments: '{"path":"a.txt"}' };
const dirs: string[] = [];
const leftBehind: number[] = [];

afterEach(() => {
  // The background process a hook started in a session of its own: the test's to end.
  for (const pid of leftBehind.splice(0))
    try {
      process.kill(pid, "SIGKILL");
    } catch {}
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function workspace(): string {
  const dir = mkdtempSync(join(tmpdir(), "eddy-hook-"));
  dirs.push(dir);
  return dir;
}

/** The pid the hook wrote to `bg.pid` in `dir`, remembered for the cleanup. */
function backgroundPid(dir: string): number {
  const pid = Number(readFileSync(join(dir, "bg.pid"), "utf8").trim());
  leftBehind.push(pid);
  return pid;
}

// A background process in a session of its own (setsid) is out of reach of the group kill and
// keeps the hook's stdout open for as long as it lives.
const HOLDS_STDOUT = "setsid sleep 600 & echo $! > bg.pid;";

describe("hook commands (cli/hook-commands.ts)", { timeout: 60_000 }, () => {
  it("a hook that exits leaving a process holding its stdout fails closed at its exit, not held up", async () => {
    const dir = workspace();
    const hooks = commandHooks(
      { before_tool_call: `${HOLDS_STDOUT} echo '{"arguments":{"path":"b.txt"}}'`, timeout_ms: 600_000 },
      dir,
      process.env as Record<string, string>,
    );
    const decision = await hooks.beforeToolCall?.(call, { signal: new AbortController().signal });
    // What that process may still write is never read: a part of the answer is not taken for it.
    expect(decision).toMatchObject({
      action: "deny",
      note: "the before_tool_call hook exited but left a process holding its output open (fail closed)",
    });
    backgroundPid(dir);
  });

  it("a cancelled hook ends the call even when a process it left holds its stdout", async () => {
    const dir = workspace();
    const hooks = commandHooks(
      {
        // `started` is written once the background process is in its own session (no longer in
        // the group the cancel kills).
        before_tool_call:
          "setsid sh -c 'echo $$ > bg.pid; echo started > started; exec sleep 600' & sleep 600",
        timeout_ms: 600_000,
      },
      dir,
      process.env as Record<string, string>,
    );
    const cancel = new AbortController();
    const decided = hooks.beforeToolCall?.(call, { signal: cancel.signal });
    // Cancelled once the hook is under way (its marker file written).
    await expect.poll(() => existsSync(join(dir, "started")), { timeout: 30_000 }).toBe(true);
    cancel.abort();
    const decision = await decided;
    expect(decision).toMatchObject({ action: "deny", note: expect.stringMatching(/was killed/) });
    backgroundPid(dir);
  });

  it("a hook flooding stdout is killed at the cap and denies (fail closed), the process unharmed", async () => {
    const hooks = commandHooks(
      { after_tool_call: "yes 0123456789abcdef0123456789abcdef", timeout_ms: 600_000 },
      workspace(),
      process.env as Record<string, string>,
    );
    const decision = await hooks.afterToolCall?.(
      { ...call, ok: true, output: "x" },
      { signal: new AbortController().signal },
    );
    expect(decision).toMatchObject({
      action: "deny",
      note: `the after_tool_call hook wrote more than ${HOOK_STDOUT_MAX_BYTES} bytes on stdout (fail closed)`,
    });
  });
});
