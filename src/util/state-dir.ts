/**
 * eddy's own state in a workspace (`.eddy/threads`, `.eddy/bundles`, …), opened without following
 * symlinks. A cloned repository can ship `.eddy/threads` as a symlink to any folder, or
 * `.eddy/threads/x.jsonl` as one to any file; following them would make `eddy run --thread x`
 * append to a file outside the workspace. So, as the file tools do (src/tools/workspace-fs.ts):
 *
 * - every folder below the base is opened `O_DIRECTORY|O_NOFOLLOW` *inside the descriptor of its
 *   parent* (on Linux `/proc/self/fd/N/name` looks `name` up in that very folder, as `openat`
 *   does): a symlink anywhere on the way is refused, and one swapped in after a check is never
 *   followed, because nothing is looked up by path twice;
 * - a file is opened `O_NOFOLLOW` (and non-blocking, so a FIFO cannot hang it) inside its folder's
 *   descriptor and checked with `fstat`: only a regular file with one link is used (a hard link
 *   to a file elsewhere would be the same escape).
 *
 * The base itself (the workspace) is the user's choice and is followed. Without `/proc` (macOS,
 * BSD) each component is checked with `lstat` before it is opened by path: a narrower window, not
 * none. Tests run on Linux.
 */
import { randomBytes } from "node:crypto";
import { constants, existsSync, lstatSync, mkdirSync, type Stats } from "node:fs";
import { type FileHandle, lstat, mkdir, open, readdir, rename, rm } from "node:fs/promises";
import { join } from "node:path";
import { EddyError } from "../errors.js";
import { makeDir } from "./make-dir.js";
import { sizeText } from "./regular-file.js";

const O_NOFOLLOW = constants.O_NOFOLLOW ?? 0;
const O_DIRECTORY = constants.O_DIRECTORY ?? 0;
const O_SAFE = O_NOFOLLOW | (constants.O_NONBLOCK ?? 0) | (constants.O_NOCTTY ?? 0);
const PROC_FD = existsSync("/proc/self/fd");

/** A folder of eddy's state, held open. */
export interface StateDir {
  /** Its path, for messages. */
  readonly path: string;
  /** Names this very folder (`/proc/self/fd/N` on Linux): `${ref}/${name}` looks `name` up in it. */
  readonly ref: string;
  close(): Promise<void>;
}

/**
 * Opens `base/parts[0]/parts[1]/…` one folder at a time, refusing a symlink or a file on the way
 * (`state_path_unsafe`). A missing folder is created when `create` is set; otherwise the result is
 * `undefined`.
 */
export async function openStateDir(
  base: string,
  parts: readonly string[],
  options: { create: boolean },
): Promise<StateDir | undefined> {
  if (options.create) {
    try {
      await makeDir(base);
    } catch (err) {
      throw cannotCreate(err, base);
    }
  }
  let dir: StateDir;
  try {
    dir = held(await open(base, constants.O_RDONLY | O_DIRECTORY), base);
  } catch (err) {
    if (errnoOf(err) === "ENOENT") return undefined;
    throw err;
  }
  try {
    for (const part of parts) {
      const next = await openChild(dir, part, options.create);
      await dir.close();
      if (next === undefined) return undefined;
      dir = next;
    }
    return dir;
  } catch (err) {
    await dir.close();
    throw err;
  }
}

async function openChild(dir: StateDir, name: string, create: boolean): Promise<StateDir | undefined> {
  const path = join(dir.path, name);
  const flags = constants.O_RDONLY | O_DIRECTORY | O_NOFOLLOW;
  try {
    await checkUnlinked(dir, name);
    return held(await open(`${dir.ref}/${name}`, flags), path);
  } catch (err) {
    if (errnoOf(err) !== "ENOENT") throw await unsafe(err, dir, name);
    if (!create) return undefined;
  }
  try {
    await mkdir(`${dir.ref}/${name}`);
  } catch (err) {
    if (errnoOf(err) !== "EEXIST") throw cannotCreate(err, path);
  }
  try {
    return held(await open(`${dir.ref}/${name}`, flags), path);
  } catch (err) {
    throw await unsafe(err, dir, name);
  }
}

/**
 * Opens the file `name` in `dir` with `flags` (plus `O_NOFOLLOW`, non-blocking): a symlink, a
 * special file or a file with other hard links is refused (`state_path_unsafe`). `undefined` when
 * there is no such file and `flags` do not create one.
 */
export async function openStateFile(
  dir: StateDir,
  name: string,
  flags: number,
): Promise<FileHandle | undefined> {
  const path = join(dir.path, name);
  let handle: FileHandle;
  try {
    await checkUnlinked(dir, name);
    handle = await open(`${dir.ref}/${name}`, flags | O_SAFE, 0o666);
  } catch (err) {
    if (errnoOf(err) === "ENOENT") return undefined;
    throw await unsafe(err, dir, name);
  }
  try {
    const stats = await handle.stat();
    if (!stats.isFile()) throw unsafeError(`${path} is not a regular file`);
    if (stats.nlink > 1)
      throw unsafeError(`${path} has other hard links (it may be a file outside the workspace)`);
    return handle;
  } catch (err) {
    await handle.close();
    throw err;
  }
}

/** The text of the file `name` in `dir` (see `openStateFile`), at most `maxBytes`; `undefined` when absent. */
export async function readStateFile(
  dir: StateDir,
  name: string,
  maxBytes: number,
): Promise<string | undefined> {
  const handle = await openStateFile(dir, name, constants.O_RDONLY);
  if (handle === undefined) return undefined;
  try {
    const { size } = await handle.stat();
    if (size > maxBytes)
      throw new EddyError(
        "state_path_unsafe",
        `${join(dir.path, name)} is larger than ${sizeText(maxBytes)}, the most eddy reads`,
        { fault: "user" },
      );
    return await handle.readFile("utf8");
  } finally {
    await handle.close();
  }
}

/** The names in `dir`. */
export function listStateDir(dir: StateDir): Promise<string[]> {
  return readdir(dir.ref);
}

/** `lstat` of `name` in `dir` (a symlink is described, not followed); `undefined` when absent. */
export async function lstatState(dir: StateDir, name: string): Promise<Stats | undefined> {
  try {
    return await lstat(`${dir.ref}/${name}`);
  } catch (err) {
    if (errnoOf(err) === "ENOENT") return undefined;
    throw err;
  }
}

/**
 * Writes `name` in `dir` whole: a temporary file created in `dir` (`O_EXCL|O_NOFOLLOW`), then
 * renamed over `name` (a rename replaces a symlink, never follows it). A reader never sees half.
 */
export async function writeStateFileAtomic(dir: StateDir, name: string, content: string): Promise<void> {
  const temp = `.${name}.${process.pid}-${randomBytes(6).toString("hex")}.tmp`;
  const flags = constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL;
  const handle = await openStateFile(dir, temp, flags);
  if (handle === undefined) throw new Error(`cannot create ${join(dir.path, temp)}`);
  try {
    try {
      await handle.writeFile(content);
    } finally {
      await handle.close();
    }
    await rename(`${dir.ref}/${temp}`, `${dir.ref}/${name}`);
  } catch (err) {
    await rm(`${dir.ref}/${temp}`, { force: true });
    throw err;
  }
}

/** Without `/proc`, lookups go by path: check the component with `lstat` first. */
async function checkUnlinked(dir: StateDir, name: string): Promise<void> {
  if (PROC_FD) return;
  const stats = await lstat(`${dir.ref}/${name}`);
  if (stats.isSymbolicLink()) throw Object.assign(new Error("symlink"), { code: "ELOOP" });
}

function held(handle: FileHandle, path: string): StateDir {
  let closed = false;
  return {
    path,
    ref: PROC_FD ? `/proc/self/fd/${handle.fd}` : path,
    close: async () => {
      if (closed) return;
      closed = true;
      await handle.close();
    },
  };
}

/**
 * Creates the file `name` in `dir` with `content` unless something is there already (false then):
 * one process of many wins. Never follows a symlink.
 */
export async function createStateFileOnce(dir: StateDir, name: string, content: string): Promise<boolean> {
  let handle: FileHandle;
  try {
    handle = await open(
      `${dir.ref}/${name}`,
      constants.O_CREAT | constants.O_EXCL | constants.O_WRONLY | O_SAFE,
      0o644,
    );
  } catch (err) {
    if (errnoOf(err) === "EEXIST") return false;
    throw await unsafe(err, dir, name);
  }
  try {
    await handle.writeFile(content);
  } finally {
    await handle.close();
  }
  return true;
}

/** Removes the file `name` from `dir`, if it is there (a symlink is removed, never followed). */
export async function removeStateFile(dir: StateDir, name: string): Promise<void> {
  await rm(`${dir.ref}/${name}`, { force: true });
}

/** The error for `name` in `dir` that could not be opened: a symlink, not a folder, a FIFO, else `err`. */
async function unsafe(err: unknown, dir: StateDir, name: string): Promise<unknown> {
  const path = join(dir.path, name);
  const code = errnoOf(err);
  // EISDIR: opened to write, a folder (a log replaced by one while a chat ran).
  if (code === "ENXIO" || code === "EISDIR") return unsafeError(`${path} is not a regular file`);
  if (code !== "ELOOP" && code !== "ENOTDIR") return namedByPath(err, dir);
  const stats = await lstatState(dir, name).catch(() => undefined);
  if (stats === undefined) return err;
  if (stats.isSymbolicLink()) return unsafeError(symlinkMessage(path));
  return unsafeError(`${path} is not a folder`);
}

/**
 * A system error about a file opened through `dir.ref`, naming the file by its path: its message
 * said `/proc/self/fd/22/z.jsonl`, a name the user cannot find.
 */
function namedByPath(err: unknown, dir: StateDir): unknown {
  if (!(err instanceof Error)) return err;
  err.message = err.message.replaceAll(`${dir.ref}/`, `${dir.path}/`);
  const withPath = err as NodeJS.ErrnoException;
  if (typeof withPath.path === "string")
    withPath.path = withPath.path.replaceAll(`${dir.ref}/`, `${dir.path}/`);
  return err;
}

/** A folder of eddy's state that the system will not make (a read-only disk, no permission, procfs). */
function cannotCreate(err: unknown, path: string): unknown {
  const code = errnoOf(err);
  if (code === undefined) return err;
  return new EddyError(
    "invalid_config",
    `cannot create the folder ${path} (${code}): eddy keeps this workspace's own state there (threads, bundles, served runs); use a workspace where it can`,
    { fault: "user" },
  );
}

/**
 * `root/parts…` as a real folder, made where missing: a part that is a symlink (one shipped in a
 * repository could point anywhere) or not a folder is refused, as the state folders opened by
 * `openStateDir` are. For what is written by path (a chat turn's tape), not through a descriptor.
 */
export function realFolderSync(root: string, parts: readonly string[]): string {
  let path = root;
  for (const part of parts) {
    path = join(path, part);
    let stats: Stats | undefined;
    try {
      stats = lstatSync(path);
    } catch (err) {
      if (errnoOf(err) !== "ENOENT") throw err;
    }
    if (stats === undefined) mkdirSync(path);
    else if (stats.isSymbolicLink()) throw unsafeError(symlinkMessage(path));
    else if (!stats.isDirectory())
      throw unsafeError(`${path} is not a folder: eddy keeps its state in it; move it away`);
  }
  return path;
}

function symlinkMessage(path: string): string {
  return `${path} is a symlink: eddy keeps its own state only in real folders and files, never through a symlink (one shipped in a repository could point anywhere); remove it`;
}

function unsafeError(message: string): EddyError {
  return new EddyError("state_path_unsafe", message, { fault: "user" });
}

function errnoOf(err: unknown): string | undefined {
  return (err as NodeJS.ErrnoException | undefined)?.code;
}
