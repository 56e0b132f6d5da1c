/**
 * `mkdir -p` that always ends. Node's `mkdir(path, { recursive: true })` (sync and async, Node 20
 * and 22) spins at full CPU, forever, when `mkdir(2)` answers ENOENT for a folder whose parent
 * exists — as procfs does (`/proc/nope`): it creates the parent again, is told it exists, and tries
 * the child again. `eddy serve --data-dir /proc/x` or `eddy batch --out /proc/x` hung that way
 * with no word (docs/pitfalls.md #70). Here each missing folder is created once, from the first
 * one that exists down, so the work is bounded by the path's length; a folder that cannot be made
 * throws the system's error (its `code`: ENOENT, EACCES, ENOTDIR, …) for the caller to word.
 *
 * Symlinks on the way are followed, as `mkdir -p` does: the paths given here are the user's own
 * choices (a data folder, an output folder, a cache), not names from untrusted input.
 */
import { lstatSync, mkdirSync, statSync } from "node:fs";
import { mkdir, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { EddyError } from "../errors.js";

/** Creates `path` and whatever folders above it are missing; nothing when it is a folder already. */
export function makeDirSync(path: string, mode?: number): void {
  for (const dir of missingSync(resolve(path))) {
    try {
      mkdirSync(dir, mode);
    } catch (err) {
      // Made meanwhile by another process: fine when it is a folder.
      if (!(errnoOf(err) === "EEXIST" && folderSync(dir))) throw err;
    }
  }
}

/** `makeDirSync`, without blocking the event loop. */
export async function makeDir(path: string, mode?: number): Promise<void> {
  for (const dir of await missing(resolve(path))) {
    try {
      await mkdir(dir, mode);
    } catch (err) {
      if (!(errnoOf(err) === "EEXIST" && (await folder(dir)))) throw err;
    }
  }
}

/** The folders of `path` to create, outermost first; throws when something on the way is not a folder. */
function missingSync(path: string): string[] {
  const todo: string[] = [];
  for (let dir = path; !folderSync(dir); dir = dirname(dir)) {
    todo.push(dir);
    if (dirname(dir) === dir) break;
  }
  return todo.reverse();
}

async function missing(path: string): Promise<string[]> {
  const todo: string[] = [];
  for (let dir = path; !(await folder(dir)); dir = dirname(dir)) {
    todo.push(dir);
    if (dirname(dir) === dir) break;
  }
  return todo.reverse();
}

/** Whether `dir` is a folder: false when nothing is there; anything else there throws ENOTDIR. */
function folderSync(dir: string): boolean {
  try {
    return isFolder(statSync(dir), dir);
  } catch (err) {
    if (errnoOf(err) === "ENOENT") return false;
    throw err;
  }
}

async function folder(dir: string): Promise<boolean> {
  try {
    return isFolder(await stat(dir), dir);
  } catch (err) {
    if (errnoOf(err) === "ENOENT") return false;
    throw err;
  }
}

function isFolder(stats: { isDirectory(): boolean }, dir: string): true {
  if (stats.isDirectory()) return true;
  const err: NodeJS.ErrnoException = new Error(`ENOTDIR: not a directory, mkdir '${dir}'`);
  err.code = "ENOTDIR";
  err.path = dir;
  throw err;
}

function errnoOf(err: unknown): string | undefined {
  return (err as NodeJS.ErrnoException | null)?.code;
}

/**
 * A folder of this user's in the temp folder, named `name` (a batch's workspace copies, found again
 * by a resumed task): made with mode 700 when missing. One that is there must be a real folder (not
 * a symlink), this user's, and writable by no one else: the temp folder is shared, and a name known
 * in advance (a queue job chooses its batch id) could be planted as a link to a folder the copies
 * would then replace. Throws `EddyError` `workspace_copy_failed` otherwise. `root`: another folder
 * than the temp folder (tests).
 */
export function privateTempFolder(name: string, root: string = tmpdir()): string {
  const path = join(root, name);
  try {
    mkdirSync(path, 0o700);
  } catch (err) {
    if (errnoOf(err) !== "EEXIST") throw err;
  }
  const stats = lstatSync(path);
  const uid = process.getuid?.();
  const refuse = (why: string) =>
    new EddyError(
      "workspace_copy_failed",
      `${path} ${why}: eddy keeps task workspace copies only in a folder of its own; remove it`,
      {
        fault: "user",
      },
    );
  if (stats.isSymbolicLink()) throw refuse("is a symlink");
  if (!stats.isDirectory()) throw refuse("is not a folder");
  if (uid !== undefined && stats.uid !== uid) throw refuse("belongs to another user");
  if ((stats.mode & 0o022) !== 0) throw refuse("is writable by others");
  return path;
}
