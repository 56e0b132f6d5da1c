/**
 * The process groups a `shell` tool started, so that nothing it started outlives the run: a
 * command's background jobs (`sleep 100 &`, a dev server) stay in its group after the command
 * returns, and `killAll` (the tool's `dispose`, called when the run ends) stops them: SIGTERM,
 * then SIGKILL after a grace period. If the process exits before that, an `exit` hook SIGKILLs
 * whatever groups are still recorded (registered only while there are some).
 */
import { groupAlive, signalGroup } from "../process-signals.js";

/** Process groups to stop when the run ends. */
export interface ProcessGroups {
  /** Records the group led by `pgid` (a child spawned `detached`). */
  add(pgid: number): void;
  /** Forgets `pgid` if no process of its group is left. */
  forgetIfGone(pgid: number): void;
  /** The recorded groups that still have processes. */
  live(): number[];
  /** SIGTERM every recorded group, SIGKILL after `graceMs` what is left, then forget them all. */
  killAll(graceMs: number): Promise<void>;
}

/** How often `killAll` looks whether the groups are gone during the grace period. */
const POLL_MS = 25;

/** Creates an empty set of groups. */
export function createProcessGroups(): ProcessGroups {
  const groups = new Set<number>();
  const onExit = () => {
    for (const pgid of groups) signalGroup(pgid, "SIGKILL");
  };
  const update = () => {
    if (groups.size > 0 && !process.listeners("exit").includes(onExit)) process.on("exit", onExit);
    if (groups.size === 0) process.off("exit", onExit);
  };
  const forgetIfGone = (pgid: number) => {
    if (!groupAlive(pgid)) groups.delete(pgid);
  };
  return {
    add(pgid) {
      groups.add(pgid);
      update();
    },
    forgetIfGone(pgid) {
      forgetIfGone(pgid);
      update();
    },
    live() {
      for (const pgid of [...groups]) forgetIfGone(pgid);
      update();
      return [...groups];
    },
    async killAll(graceMs) {
      const targets = [...groups];
      for (const pgid of targets) signalGroup(pgid, "SIGTERM");
      const until = Date.now() + graceMs;
      while (targets.some(groupAlive) && Date.now() < until) {
        await new Promise((resolve) => setTimeout(resolve, POLL_MS));
      }
      for (const pgid of targets) {
        if (groupAlive(pgid)) signalGroup(pgid, "SIGKILL");
        groups.delete(pgid);
      }
      update();
    },
  };
}
