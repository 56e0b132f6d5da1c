/**
 * One conversation at a time on a thread: a chat session holds its thread for as long as it is
 * open, `eddy run --thread` and a served run for their run. Two chats on one thread had their
 * turns interleaved in one log, each answering from the other's messages ("What is my name?" →
 * the other user's name). The hold is a file beside the log (`.eddy/threads/NAME.lock`) that names
 * its process; one whose process is gone (killed, the machine restarted) holds nothing.
 */
import { EddyError } from "../errors.js";
import { isJsonObject, parseJsonObject } from "../util/json.js";
import { createStateFileOnce, readStateFile, removeStateFile, type StateDir } from "../util/state-dir.js";

/** A thread held by this process; `release` lets it go (once). */
export interface ThreadHold {
  release(): Promise<void>;
}

/**
 * Holds `name` in the threads folder `open()` gives (a fresh descriptor per call) for `holder`
 * (e.g. "eddy chat"), or throws `thread_busy` naming who holds it and what to do.
 */
export async function holdThread(
  open: () => Promise<StateDir>,
  name: string,
  holder: string,
  now: () => number,
): Promise<ThreadHold> {
  const file = `${name}.lock`;
  const mine = JSON.stringify({ pid: process.pid, holder, since: now() });
  const dir = await open();
  try {
    for (let tries = 0; ; tries++) {
      if (await createStateFileOnce(dir, file, mine)) break;
      const other = parseJsonObject((await readStateFile(dir, file, 4096)) ?? "");
      const pid = isJsonObject(other) && Number.isSafeInteger(other.pid) ? (other.pid as number) : undefined;
      if (tries > 0 || (pid !== undefined && alive(pid))) throw busy(name, other, pid, dir.path);
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

function busy(name: string, other: unknown, pid: number | undefined, folder: string): EddyError {
  const who = isJsonObject(other) && typeof other.holder === "string" ? other.holder.slice(0, 40) : "eddy";
  const process_ = pid === undefined ? "" : `, process ${pid}`;
  return new EddyError(
    "thread_busy",
    `thread ${name} is in use by another ${JSON.stringify(who)}${process_}: leave that one first, or use another thread (if no eddy runs on it, delete ${folder}/${name}.lock)`,
    { fault: "user", details: { thread: name } },
  );
}
