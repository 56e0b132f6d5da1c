/**
 * Signals for the process groups eddy's child processes lead (`detached: true`): the shell tool's
 * commands (`builtin/process-groups.ts`) and stdio MCP servers (`mcp/stdio-transport.ts`). A
 * negative pid addresses the whole group, so what a command started goes with it.
 */
import type { ChildProcess } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";

/** Sends `signal` to every process of the group `pgid` leads; a group already gone is no error. */
export function signalGroup(pgid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pgid, signal);
  } catch {
    // ESRCH: the group is already gone.
  }
}

/**
 * True while a process of the group is alive. `kill(-pgid, 0)` also counts zombies (dead, not yet
 * reaped: a grandchild whose parent died is reaped by PID 1, which in a container may never
 * happen), so on Linux a positive answer is checked against /proc.
 */
export function groupAlive(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EPERM") return false;
  }
  return process.platform !== "linux" || liveMemberInProc(pgid);
}

function liveMemberInProc(pgid: number): boolean {
  let entries: string[];
  try {
    entries = readdirSync("/proc");
  } catch {
    return true;
  }
  for (const entry of entries) {
    if (entry.charCodeAt(0) < 48 || entry.charCodeAt(0) > 57) continue;
    let stat: string;
    try {
      stat = readFileSync(`/proc/${entry}/stat`, "utf8");
    } catch {
      continue; // ended while we looked
    }
    // "pid (comm) state ppid pgrp …": comm may hold spaces and parentheses, so split after the last ")".
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    if (Number(fields[2]) === pgid && fields[0] !== "Z" && fields[0] !== "X") return true;
  }
  return false;
}

/**
 * After a child's shell exits, how long its pipes may stay open — held by a process it left in the
 * background, maybe in a session of its own, out of reach of the group kill — before the caller
 * settles without waiting for them (docs/pitfalls.md #83).
 */
export const PIPE_CLOSE_WAIT_MS = 250;

/** How a child ended: its exit code or signal. */
export interface ChildExit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

/**
 * Calls `ended` once when `child` is done: at its `close` (it exited and its pipes closed), or
 * `PIPE_CLOSE_WAIT_MS` after its `exit` while something still holds its pipes (`heldOpen`). The
 * shell tool and the hook commands settle this way. Returns a function that stops waiting (the
 * caller settled for another reason).
 */
export function onChildEnd(
  child: ChildProcess,
  ended: (exit: ChildExit, heldOpen: boolean) => void,
): () => void {
  let exit: ChildExit | undefined;
  let timer: NodeJS.Timeout | undefined;
  let done = false;
  const finish = (how: ChildExit, heldOpen: boolean) => {
    if (done) return;
    done = true;
    clearTimeout(timer);
    ended(how, heldOpen);
  };
  child.on("exit", (code, signal) => {
    const how = { code, signal };
    exit = how;
    timer = setTimeout(() => finish(how, true), PIPE_CLOSE_WAIT_MS);
  });
  child.on("close", (code, signal) => finish(exit ?? { code, signal }, false));
  return () => {
    done = true;
    clearTimeout(timer);
  };
}
