/**
 * Race-free file access for the file tools. `resolveInWorkspace` checks a path, but between that
 * check and the use a local process can swap a component for a symlink to a file outside the
 * workspace (a check-then-use race). Here the check is made on the object actually used:
 *
 * - A file or directory that is read is opened first, and the real path of the opened descriptor
 *   is checked (on Linux `/proc/self/fd/N`, which names the open object itself, not a path to it).
 *   An object outside the workspace is closed unread.
 * - Anything created, replaced, renamed or removed is done *inside a directory descriptor* whose
 *   real path was checked: on Linux `/proc/self/fd/N/name` looks `name` up in that very directory
 *   (as `openat`/`renameat`/`unlinkat` do), and new files are opened `O_CREAT|O_EXCL|O_NOFOLLOW`,
 *   so a symlink swapped in later is never followed.
 *
 * Without `/proc` (macOS, BSD) the descriptor's path is checked by comparing device and inode with
 * the resolved path instead, and lookups go through that checked real path: a narrower window, not
 * none. Tests run on Linux.
 */

import { randomBytes } from "node:crypto";
import { constants, existsSync, openSync, type Stats } from "node:fs";
import {
  type FileHandle,
  lstat,
  mkdir,
  open,
  readdir,
  readlink,
  realpath,
  rename,
  rmdir,
  stat,
  unlink,
} from "node:fs/promises";
import { relative, sep } from "node:path";
import { EddyError } from "../errors.js";
import { isInside, outsideWorkspace } from "./workspace.js";

const O_NOFOLLOW = constants.O_NOFOLLOW ?? 0;
const O_DIRECTORY = constants.O_DIRECTORY ?? 0;
// A FIFO opened for reading would block until a writer appears; a terminal must not become ours.
const O_READ = constants.O_RDONLY | (constants.O_NONBLOCK ?? 0) | (constants.O_NOCTTY ?? 0);

/** Whether `/proc/self/fd/N` names open descriptors (Linux). */
const PROC_FD = existsSync("/proc/self/fd");

/** A path naming the object open at `handle`, for lookups that must start there. */
function refOf(handle: FileHandle, real: string): string {
  return PROC_FD ? `/proc/self/fd/${handle.fd}` : real;
}

/** A directory inside the workspace, held open: lookups through `ref` cannot be redirected. */
export interface AnchoredDir {
  /** Names this very directory (`/proc/self/fd/N` on Linux); `${ref}/${name}` looks `name` up in it. */
  readonly ref: string;
  /** Its real path, checked to be inside the workspace when it was opened. */
  readonly real: string;
  close(): Promise<void>;
}

/** A file or directory opened inside the workspace. */
export interface OpenedEntry {
  handle: FileHandle;
  /** Real path of the opened object (inside the workspace). */
  real: string;
  stats: Stats;
}

const RACED =
  "it changed while being opened and now resolves outside the workspace (a symlink was swapped in)";

/** The real path of the object open at `handle`; `hint` is the path it was opened by. */
async function realPathOf(handle: FileHandle, hint: string): Promise<string> {
  if (PROC_FD) return readlink(`/proc/self/fd/${handle.fd}`);
  const real = await realpath(hint);
  const [opened, named] = await Promise.all([handle.stat(), stat(real)]);
  if (opened.dev !== named.dev || opened.ino !== named.ino) {
    throw new EddyError("path_outside_workspace", "the path changed while being opened", { fault: "model" });
  }
  return real;
}

/**
 * Opens `path` (absolute, or `${dir.ref}/name`) with `flags`, following symlinks, and keeps it only
 * when the opened object's real path is inside `root`. `display` names it in errors.
 */
export async function openInside(
  root: string,
  path: string,
  flags: number,
  where: { tool: string; display: string },
): Promise<OpenedEntry> {
  const handle = await open(path, flags);
  try {
    const real = await realPathOf(handle, path);
    if (!isInside(root, real)) throw outsideWorkspace(where.tool, where.display, RACED);
    return { handle, real, stats: await handle.stat() };
  } catch (error) {
    await handle.close();
    throw error;
  }
}

/** Opens a file or directory for reading (no-block, checked inside the workspace). */
export function openForRead(
  root: string,
  absolute: string,
  where: { tool: string; display: string },
): Promise<OpenedEntry> {
  return openInside(root, absolute, O_READ, where);
}

/** Opens a directory for listing (checked inside the workspace). */
export async function openDir(
  root: string,
  absolute: string,
  where: { tool: string; display: string },
): Promise<AnchoredDir> {
  const opened = await openInside(root, absolute, constants.O_RDONLY | O_DIRECTORY, where);
  return anchored(opened.handle, opened.real);
}

/** The directory `entry` (opened by `openForRead`) as an anchor for lookups; closing it closes the entry. */
export function anchorDir(entry: OpenedEntry): AnchoredDir {
  return anchored(entry.handle, entry.real);
}

/**
 * Opens the child directory `name` of `dir` without following a symlink (walks never follow them).
 * Throws `ELOOP`/`ENOTDIR` when `name` is not (or no longer) a directory.
 */
export async function openChildDir(dir: AnchoredDir, name: string): Promise<AnchoredDir> {
  const handle = await open(`${dir.ref}/${name}`, constants.O_RDONLY | O_DIRECTORY | O_NOFOLLOW);
  return anchored(handle, `${dir.real}${sep}${name}`);
}

/** Opens the regular file `name` in `dir` for reading without following a symlink. */
export function openChildFile(dir: AnchoredDir, name: string): Promise<FileHandle> {
  return open(`${dir.ref}/${name}`, O_READ | O_NOFOLLOW);
}

/**
 * `openChildFile`, blocking: returns a file descriptor (close it with `closeSync`). For a worker
 * thread reading many small files, where a thread-pool round trip per call costs more than the
 * system call.
 */
export function openChildFileSync(dir: AnchoredDir, name: string): number {
  return openSync(`${dir.ref}/${name}`, O_READ | O_NOFOLLOW);
}

function anchored(handle: FileHandle, real: string): AnchoredDir {
  let closed = false;
  return {
    ref: refOf(handle, real),
    real,
    close: async () => {
      if (closed) return;
      closed = true;
      await handle.close();
    },
  };
}

/** The parent directory of a path to write, opened, and what was created to reach it. */
export interface WriteParent {
  dir: AnchoredDir;
  /** Real path of the topmost directory created on the way (to remove on rollback), if any. */
  created?: string;
}

/**
 * Opens the directory `relDir` (workspace-relative, `/`-separated, no `..`) one component at a
 * time from the root, checking each opened directory's real path, and creating missing ones when
 * `create` is set (each `mkdir` happens inside an already checked directory).
 */
export async function openDirForWrite(
  root: string,
  relDir: string,
  where: { tool: string; display: string },
  options: { create: boolean },
): Promise<WriteParent> {
  const parts = relDir.split(/[\\/]/).filter((p) => p !== "" && p !== ".");
  let dir = await openDir(root, root, where);
  let created: string | undefined;
  try {
    for (const part of parts) {
      let next: AnchoredDir;
      try {
        next = await openDir(root, `${dir.ref}/${part}`, where);
      } catch (error) {
        if (errnoOf(error) !== "ENOENT" || !options.create) throw parentError(error, where);
        try {
          await mkdir(`${dir.ref}/${part}`);
        } catch (mkdirError) {
          if (errnoOf(mkdirError) !== "EEXIST") throw mkdirError;
        }
        created ??= `${dir.real}${sep}${part}`;
        next = await openDir(root, `${dir.ref}/${part}`, where);
      }
      await dir.close();
      dir = next;
    }
  } catch (error) {
    await dir.close();
    throw error;
  }
  return created === undefined ? { dir } : { dir, created };
}

function parentError(error: unknown, where: { tool: string; display: string }): unknown {
  if (errnoOf(error) === "ENOTDIR") {
    return new EddyError(
      "tool_failed",
      `${where.tool}: ${where.display}: a parent of this path is a file, not a directory`,
      { fault: "model" },
    );
  }
  return error;
}

/** `lstat` of `name` in `dir`, or `undefined` when there is nothing there. */
export async function lstatChild(dir: AnchoredDir, name: string): Promise<Stats | undefined> {
  try {
    return await lstat(`${dir.ref}/${name}`);
  } catch (error) {
    if (errnoOf(error) === "ENOENT") return undefined;
    throw error;
  }
}

/** Reads the regular file `name` in `dir` whole, refusing a symlink. */
export async function readChildFile(dir: AnchoredDir, name: string): Promise<Buffer> {
  const handle = await openChildFile(dir, name);
  try {
    return await handle.readFile();
  } finally {
    await handle.close();
  }
}

/**
 * Replaces (or creates) `name` in `dir` atomically: a temporary file created in the same
 * directory (`O_EXCL|O_NOFOLLOW`), then `rename` over `name` (which replaces a symlink, never
 * follows it). `mode` keeps an existing file's permission bits.
 */
export async function writeChildAtomic(
  dir: AnchoredDir,
  name: string,
  content: string | Uint8Array,
  mode?: number,
): Promise<void> {
  const temp = `.${name}.eddy-${process.pid}-${randomBytes(6).toString("hex")}.tmp`;
  const flags = constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | O_NOFOLLOW;
  const handle = await open(`${dir.ref}/${temp}`, flags, 0o666);
  try {
    try {
      await handle.writeFile(content);
      if (mode !== undefined) await handle.chmod(mode);
    } finally {
      await handle.close();
    }
    await rename(`${dir.ref}/${temp}`, `${dir.ref}/${name}`);
  } catch (error) {
    await removeChildFile(dir, temp);
    throw error;
  }
}

/** Removes the file (or symlink, never what it points to) `name` from `dir`; nothing there is fine. */
export async function removeChildFile(dir: AnchoredDir, name: string): Promise<void> {
  // `unlink`, not `rm`: Node's `rm` (even without `recursive`) empties a directory found at the
  // path when its first unlink fails with EISDIR, listing and removing through the path by name,
  // so a swap to a symlink in between removed files outside the workspace.
  try {
    await unlink(`${dir.ref}/${name}`);
  } catch (error) {
    if (errnoOf(error) !== "ENOENT") throw error;
  }
}

/**
 * Removes the directory `name` in `dir` with everything in it. Each level is opened `O_NOFOLLOW`
 * and emptied through its descriptor, so a directory swapped for a symlink meanwhile is neither
 * entered nor emptied: `rm(path, {recursive})` would lstat the path, then list and unlink through
 * it by name, and a swap between the two took the removal outside the workspace (found by
 * src/tools/builtin/symlink-race.test.ts). A symlink at `name` itself is removed, not followed.
 */
export async function removeChildTree(dir: AnchoredDir, name: string): Promise<void> {
  let child: AnchoredDir;
  try {
    child = await openChildDir(dir, name);
  } catch (error) {
    const code = errnoOf(error);
    if (code === "ENOENT") return;
    if (code === "ELOOP" || code === "ENOTDIR") return removeChildFile(dir, name); // a symlink or a file
    throw error;
  }
  try {
    for (const entry of await readdir(child.ref, { withFileTypes: true })) {
      if (entry.isDirectory()) await removeChildTree(child, entry.name);
      else await removeChildFile(child, entry.name);
    }
  } finally {
    await child.close();
  }
  // rmdir never follows a symlink: if `name` was swapped for one, this fails and nothing goes.
  await rmdir(`${dir.ref}/${name}`);
}

/** Splits a real path inside `root` into its workspace-relative parent directory and base name. */
export function splitInside(root: string, real: string): { parent: string; name: string } {
  const rel = relative(root, real).split(sep).join("/");
  const slash = rel.lastIndexOf("/");
  return slash === -1
    ? { parent: ".", name: rel }
    : { parent: rel.slice(0, slash), name: rel.slice(slash + 1) };
}

/** The `code` of a `node:fs` error, if any. */
export function errnoOf(error: unknown): string | undefined {
  return (error as NodeJS.ErrnoException | undefined)?.code;
}
