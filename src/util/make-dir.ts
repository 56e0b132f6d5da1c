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
import { mkdirSync, statSync } from "node:fs";
import { mkdir, stat } from "node:fs/promises";
import { dirname, resolve } from "node:path";

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
