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
import { closeSync, constants, fstatSync, openSync, readSync, type Stats } from "node:fs";
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
}

/**
 * The bytes of the regular file at `path`, at most `options.maxBytes` of them. Throws a one-line
 * `EddyError` naming the file when it cannot be opened, is not a regular file (a FIFO, a device, a
 * socket, a directory), or is larger than the bound.
 */
export function readRegularFileSync(path: string, options: RegularFileOptions): Buffer {
  const name = `${options.what} ${options.name ?? path}`;
  let fd: number;
  try {
    fd = openSync(path, O_READ);
  } catch (err) {
    throw failure(options, `cannot read ${name}: ${reasonOf(err)}`, err);
  }
  try {
    const stats = fstatSync(fd);
    if (!stats.isFile())
      throw failure(options, `${name} is ${kindOf(stats)}, not a regular file: give a file`);
    if (stats.size > options.maxBytes) throw tooLarge(name, options);
    const bytes = readBounded(fd, stats.size, options.maxBytes);
    if (bytes === undefined) throw tooLarge(name, options);
    return bytes;
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

function reasonOf(err: unknown): string {
  return (err as NodeJS.ErrnoException).code ?? (err as Error).message;
}

function failure(options: RegularFileOptions, message: string, cause?: unknown): EddyError {
  return new EddyError(options.code ?? "invalid_argument", message, {
    fault: "user",
    ...(cause === undefined ? {} : { cause }),
    details: { limit_bytes: options.maxBytes },
  });
}
