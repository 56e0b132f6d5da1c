/**
 * A lock file in a state folder that names its process (`{pid, holder, since}`): taken with
 * O_EXCL, let go by its taker, and free when its process is gone (killed, the machine restarted).
 * A thread's hold (src/context/thread-hold.ts) and a batch folder's (src/batch/batch-dir.ts) are
 * such locks.
 */
import { isJsonObject, parseJsonObject } from "./json.js";
import { createStateFileOnce, readStateFile, removeStateFile, type StateDir } from "./state-dir.js";

/** A lock held by this process; `release` lets it go (once). */
export interface StateLock {
  release(): Promise<void>;
}

/** Who holds a lock another process asked for: its `holder` text (cut) and process id, when readable. */
export interface LockHolder {
  holder: string;
  pid: number | undefined;
}

/**
 * Takes `file` in the folder `open()` gives (a fresh descriptor per call) for `holder` (e.g.
 * "eddy chat"), or throws what `busy` makes of the process holding it.
 */
export async function holdStateLock(
  open: () => Promise<StateDir>,
  file: string,
  holder: string,
  busy: (other: LockHolder, dir: StateDir) => Error,
  now: () => number = Date.now,
): Promise<StateLock> {
  const mine = JSON.stringify({ pid: process.pid, holder, since: now() });
  const dir = await open();
  try {
    for (let tries = 0; ; tries++) {
      if (await createStateFileOnce(dir, file, mine)) break;
      const other = parseJsonObject((await readStateFile(dir, file, 4096)) ?? "");
      const pid = isJsonObject(other) && Number.isSafeInteger(other.pid) ? (other.pid as number) : undefined;
      if (tries > 0 || (pid !== undefined && alive(pid))) {
        const who =
          isJsonObject(other) && typeof other.holder === "string" ? other.holder.slice(0, 40) : "eddy";
        throw busy({ holder: who, pid }, dir);
      }
      // Its process is gone (or the file is not one eddy wrote): it holds nothing.
      await removeStateFile(dir, file);
    }
  } finally {
    await dir.close();
  }
  let released = false;
  return {
    async release() {
      if (released) return;
      released = true;
      const folder = await open();
      try {
        if ((await readStateFile(folder, file, 4096)) === mine) await removeStateFile(folder, file);
      } finally {
        await folder.close();
      }
    },
  };
}

/** Whether process `pid` runs (one of another user's runs too: EPERM). */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
}
