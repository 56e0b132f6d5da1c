/**
 * Reading a file the user named (a tasks file, a tape, a config, a schema, an attachment): only a
 * regular file is read, and never more than a bound. `/dev/zero` or `/dev/urandom` would otherwise
 * be read until memory runs out, and a FIFO would block the process until a writer appears.
 *
 * The file is opened first, non-blocking (so opening a FIFO returns at once) and without becoming
 * the controlling terminal, and the *opened* descriptor is checked with `fstat`: a path swapped
 * between a check and the read cannot slip a special file in. The read stops one byte past the
 * bound whatever `st_size` says (files under `/proc` report 0; a file may grow while it is read).
 */
import {
  closeSync,
  constants,
  fstatSync,
  ftruncateSync,
  lstatSync,
  openSync,
  readSync,
  type Stats,
  statSync,
  writeSync,
} from "node:fs";
import { EddyError, type EddyErrorCode } from "../errors.js";

const O_READ = constants.O_RDONLY | (constants.O_NONBLOCK ?? 0) | (constants.O_NOCTTY ?? 0);
const FIRST_CHUNK = 64 * 1024;

/** How a bounded read names its file and fails. */
export interface RegularFileOptions {
  /** The file's role as errors name it, before the path: `"the tasks file"`, `"tape"`, `"--schema"`. */
  what: string;
  /** The most bytes read; a larger file is refused. */
  maxBytes: number;
  /** The code of the errors thrown (all `fault: "user"`). @defaultValue "invalid_argument" */
  code?: EddyErrorCode;
  /** What the bound is, as the too-large error says it. @defaultValue "the most eddy reads" */
  limitReason?: string;
  /** The file's name in errors. @defaultValue the path */
  name?: string;
  /**
   * Refuse a symlink at `path` (`O_NOFOLLOW`): eddy's own file in a folder others may have put
   * links in (a batch's `--out`), which must not be read from wherever a link points.
   * @defaultValue false
   */
  noFollow?: boolean;
}

/**
 * The bytes of the regular file at `path`, at most `options.maxBytes` of them. Throws a one-line
 * `EddyError` naming the file when it cannot be opened, is not a regular file (a FIFO, a device, a
 * socket, a directory), or is larger than the bound.
 */
export function readRegularFileSync(path: string, options: RegularFileOptions): Buffer {
  return withRegularFileSync(path, options, (fd, size, name) => {
    const bytes = readBounded(fd, size, options.maxBytes);
    if (bytes === undefined) throw tooLarge(name, options);
    return bytes;
  });
}

/**
 * Opens the regular file at `path` as `readRegularFileSync` does (refused the same way when it is
 * not a regular file or is larger than `options.maxBytes`) and hands `read` its descriptor, its size
 * and its name for errors; closes it after. An error `read` throws that is not an `EddyError` is
 * worded as a failure to read the file.
 */
export function withRegularFileSync<T>(
  path: string,
  options: RegularFileOptions,
  read: (fd: number, size: number, name: string) => T,
): T {
  const name = `${options.what} ${options.name ?? path}`;
  let fd: number;
  try {
    fd = openSync(path, O_READ | (options.noFollow === true ? (constants.O_NOFOLLOW ?? 0) : 0));
  } catch (err) {
    // ELOOP: O_NOFOLLOW met a symlink (`noFollow`); else the path's symlinks loop (a path the user
    // named is followed: "eddy never reads through one" was said of a loop the user had made).
    if (errnoCode(err) === "ELOOP" && options.noFollow === true && isSymlink(path))
      throw failure(
        options,
        `${name} is a symlink, and eddy never reads its own files through one (it could point anywhere): remove it`,
        err,
      );
    throw failure(options, `cannot read ${name}: ${reasonOf(err)}${loopNote(err)}`, err);
  }
  try {
    const stats = fstatSync(fd);
    if (!stats.isFile())
      throw failure(options, `${name} is ${kindOf(stats)}, not a regular file: give a file`);
    if (stats.size > options.maxBytes) throw tooLarge(name, options);
    return read(fd, stats.size, name);
  } catch (err) {
    if (EddyError.isInstance(err)) throw err;
    throw failure(options, `cannot read ${name}: ${reasonOf(err)}`, err);
  } finally {
    closeSync(fd);
  }
}

/** `readRegularFileSync` as UTF-8 text. */
export function readRegularTextSync(path: string, options: RegularFileOptions): string {
  return readRegularFileSync(path, options).toString("utf8");
}

/** A size for messages: `256 MiB`, `1.5 MiB`, `64 KiB`, `10 bytes`. */
export function sizeText(bytes: number): string {
  const [unit, size] =
    bytes >= 1024 * 1024
      ? ["MiB", bytes / (1024 * 1024)]
      : bytes >= 1024
        ? ["KiB", bytes / 1024]
        : ["bytes", bytes];
  return `${Number.isInteger(size) ? size : size.toFixed(1)} ${unit}`;
}

/** Reads until end of file; undefined once more than `max` bytes came. */
function readBounded(fd: number, sizeHint: number, max: number): Buffer | undefined {
  let buffer = Buffer.allocUnsafe(Math.min(max + 1, Math.max(sizeHint + 1, FIRST_CHUNK)));
  let filled = 0;
  for (;;) {
    if (filled === buffer.length) {
      if (filled > max) return undefined;
      const grown = Buffer.allocUnsafe(Math.min(max + 1, buffer.length * 2));
      buffer.copy(grown, 0, 0, filled);
      buffer = grown;
    }
    const read = readSync(fd, buffer, filled, buffer.length - filled, null);
    if (read === 0) break;
    filled += read;
  }
  return filled > max ? undefined : buffer.subarray(0, filled);
}

/**
 * Write, create; non-blocking, so opening a FIFO no one reads fails at once (ENXIO) instead of
 * blocking the process in `open(2)`, where no signal reaches it; never the controlling terminal.
 */
export const WRITE_FLAGS =
  constants.O_WRONLY | constants.O_CREAT | (constants.O_NONBLOCK ?? 0) | (constants.O_NOCTTY ?? 0);

/** How a write names its file and fails. */
export interface WritableFileOptions {
  /** The file's role as errors name it, before the path: `"the page"`, `"the tape"`. */
  what: string;
  /** The code of the errors thrown (all `fault: "user"`). @defaultValue "invalid_argument" */
  code?: EddyErrorCode;
  /**
   * Refuse a symlink at `path` (`O_NOFOLLOW`), and a file with other hard links (`st_nlink` > 1,
   * refused before anything in it is emptied or written): for eddy's own files in a folder that
   * others may have put links in (a batch's `--out`), where following one would write wherever it
   * points and writing into a hard link would change the file it shares with another name.
   * @defaultValue false (a path the user named is theirs to link)
   */
  noFollow?: boolean;
}

/** `WRITE_FLAGS` and `more`, with `O_NOFOLLOW` when `options` say so. */
export function writeFlags(options: WritableFileOptions, more: number): number {
  return WRITE_FLAGS | more | (options.noFollow === true ? (constants.O_NOFOLLOW ?? 0) : 0);
}

/**
 * Writing a file the user named (a page, a tape, a batch's results): the descriptor `open` returns
 * (opened with `WRITE_FLAGS` and more), checked with `fstat` to be a regular file's. A FIFO, a
 * device or a directory is refused with a one-line `EddyError` — `cannot write the page x.fifo: it
 * is a FIFO (named pipe), not a regular file; give a file` — as is a path that cannot be opened.
 */
export function checkedWritable(path: string, options: WritableFileOptions, open: () => number): number {
  let fd: number;
  try {
    fd = open();
  } catch (err) {
    // ENXIO: a FIFO no one reads (or a device that is not there); say which.
    const stats = errnoCode(err) === "ENXIO" ? statOrUndefined(path) : undefined;
    if (stats !== undefined && !stats.isFile()) throw notRegularFile(path, stats, options);
    // ELOOP: O_NOFOLLOW met a symlink (`noFollow`); else the path's symlinks loop.
    if (errnoCode(err) === "ELOOP" && options.noFollow === true && isSymlink(path))
      throw cannotWrite(
        path,
        "it is a symlink, and eddy never writes its own files through one (it could point anywhere); remove it",
        options,
      );
    throw cannotWrite(path, `${reasonOf(err)}${loopNote(err)}`, options, err);
  }
  const stats = fstatSync(fd);
  if (stats.isFile() && (options.noFollow !== true || stats.nlink <= 1)) return fd;
  closeSync(fd);
  if (!stats.isFile()) throw notRegularFile(path, stats, options);
  throw cannotWrite(
    path,
    `it has ${stats.nlink} hard links, and eddy never writes its own files into one that has other names (it could be any file); remove it`,
    options,
  );
}

/**
 * `checkedWritable` with the file emptied only once it passed the checks (`O_TRUNC` at `open` would
 * empty a hard link's file before `fstat` could refuse it).
 */
export function emptiedWritable(path: string, options: WritableFileOptions): number {
  const fd = checkedWritable(path, options, () => openSync(path, writeFlags(options, 0)));
  try {
    ftruncateSync(fd, 0);
  } catch (err) {
    closeSync(fd);
    throw cannotWrite(path, reasonOf(err), options, err);
  }
  return fd;
}

/** Writes `data` as the whole content of the regular file at `path` (created, or emptied first). */
export function writeRegularFileSync(
  path: string,
  data: string | Uint8Array,
  options: WritableFileOptions,
): void {
  writeAll(emptiedWritable(path, options), data, path, options);
}

/** Appends `data` to the regular file at `path` (created when missing). */
export function appendRegularFileSync(
  path: string,
  data: string | Uint8Array,
  options: WritableFileOptions,
): void {
  writeAll(
    checkedWritable(path, options, () => openSync(path, writeFlags(options, constants.O_APPEND))),
    data,
    path,
    options,
  );
}

/** Writes all of `bytes` at `fd` (a write may take only part of them); returns how many. */
export function writeAllSync(fd: number, bytes: Uint8Array): number {
  let written = 0;
  while (written < bytes.length) written += writeSync(fd, bytes, written);
  return written;
}

function writeAll(fd: number, data: string | Uint8Array, path: string, options: WritableFileOptions): void {
  try {
    writeAllSync(fd, typeof data === "string" ? Buffer.from(data, "utf8") : data);
  } catch (err) {
    throw cannotWrite(path, reasonOf(err), options, err);
  } finally {
    closeSync(fd);
  }
}

function cannotWrite(path: string, reason: string, options: WritableFileOptions, cause?: unknown): EddyError {
  return new EddyError(
    options.code ?? "invalid_argument",
    `cannot write ${options.what} ${path}: ${reason}`,
    {
      fault: "user",
      ...(cause === undefined ? {} : { cause }),
    },
  );
}

function notRegularFile(path: string, stats: Stats, options: WritableFileOptions): EddyError {
  return cannotWrite(path, `it is ${kindOf(stats)}, not a regular file; give a file`, options);
}

/** `stat` of `path` (links followed), or undefined when there is nothing to stat. */
export function statOrUndefined(path: string): Stats | undefined {
  try {
    return statSync(path);
  } catch {
    return undefined;
  }
}

/** Whether `a` and `b` name one existing file (device and inode), by any name or link. */
export function sameFile(a: string, b: string): boolean {
  const x = statOrUndefined(a);
  const y = statOrUndefined(b);
  return x !== undefined && y !== undefined && x.dev === y.dev && x.ino === y.ino;
}

function isSymlink(path: string): boolean {
  try {
    return lstatSync(path).isSymbolicLink();
  } catch {
    return false;
  }
}

/** What ELOOP means where no `O_NOFOLLOW` was asked for. */
function loopNote(err: unknown): string {
  return errnoCode(err) === "ELOOP" ? " (its symlinks lead to one another in a loop)" : "";
}

function errnoCode(err: unknown): string | undefined {
  return (err as NodeJS.ErrnoException | null)?.code;
}

/** What a file that is not a regular one is, in words ("a FIFO (named pipe)", "a character device", …). */
export function kindOf(stats: Stats): string {
  if (stats.isFIFO()) return "a FIFO (named pipe)";
  if (stats.isCharacterDevice()) return "a character device";
  if (stats.isBlockDevice()) return "a block device";
  if (stats.isSocket()) return "a socket";
  if (stats.isDirectory()) return "a directory";
  return "a special file";
}

function tooLarge(name: string, options: RegularFileOptions): EddyError {
  const reason = options.limitReason ?? "the most eddy reads";
  return failure(options, `${name} is larger than ${sizeText(options.maxBytes)}, ${reason}`);
}

/** A system error's code (`ENOTDIR`, `EISDIR`, …), else its message: what a one-line error says of it. */
export function reasonOf(err: unknown): string {
  return (err as NodeJS.ErrnoException).code ?? (err as Error).message;
}

function failure(options: RegularFileOptions, message: string, cause?: unknown): EddyError {
  return new EddyError(options.code ?? "invalid_argument", message, {
    fault: "user",
    ...(cause === undefined ? {} : { cause }),
    details: { limit_bytes: options.maxBytes },
  });
}
