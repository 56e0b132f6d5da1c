/**
 * Signals for the process groups eddy's child processes lead (`detached: true`): the shell tool's
 * commands (`builtin/process-groups.ts`) and stdio MCP servers (`mcp/stdio-transport.ts`). A
 * negative pid addresses the whole group, so what a command started goes with it.
 */
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
