/**
 * One conversation at a time on a thread: a chat session holds its thread for as long as it is
 * open, `eddy run --thread` and a served run for their run. Two chats on one thread had their
 * turns interleaved in one log, each answering from the other's messages ("What is my name?" →
 * the other user's name). The hold is a file beside the log (`.eddy/threads/NAME.lock`) that names
 * its process; one whose process is gone (killed, the machine restarted) holds nothing.
 */
import { EddyError } from "../errors.js";
import type { StateDir } from "../util/state-dir.js";
import { holdStateLock, type LockHolder, type StateLock } from "../util/state-lock.js";

/** A thread held by this process; `release` lets it go (once). */
export type ThreadHold = StateLock;

/**
 * Holds `name` in the threads folder `open()` gives (a fresh descriptor per call) for `holder`
 * (e.g. "eddy chat"), or throws `thread_busy` naming who holds it and what to do.
 */
export function holdThread(
  open: () => Promise<StateDir>,
  name: string,
  holder: string,
  now: () => number,
): Promise<ThreadHold> {
  return holdStateLock(open, `${name}.lock`, holder, (other, dir) => busy(name, other, dir.path), now);
}

function busy(name: string, other: LockHolder, folder: string): EddyError {
  const process_ = other.pid === undefined ? "" : `, process ${other.pid}`;
  return new EddyError(
    "thread_busy",
    `thread ${name} is in use by another ${JSON.stringify(other.holder)}${process_}: leave that one first, or use another thread (if no eddy runs on it, delete ${folder}/${name}.lock)`,
    { fault: "user", details: { thread: name } },
  );
}
