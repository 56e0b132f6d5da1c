/**
 * The tape recorder: a frame observer that appends each frame to the tape as it is emitted, with
 * a synchronous write, so a crash or a kill leaves a valid prefix. Secrets never reach a tape:
 * frames carry none by construction, and as defence in depth any configured secret value found in
 * a line is replaced by `***` before it is written.
 */
import { closeSync, constants, fstatSync, ftruncateSync, openSync, rmSync } from "node:fs";
import { describeError } from "../errors.js";
import type { Frame } from "../frames/frame.js";
import { redactSecrets } from "../util/redact.js";
import { checkedWritable, emptiedWritable, WRITE_FLAGS, writeAllSync } from "../util/regular-file.js";
import type { TapeHeader } from "./tape.js";

/** Writes a tape as the run goes. */
export interface TapeRecorder {
  /** Pass as `onFrame` to `runAgent`. */
  observer: (frame: Frame) => void;
  close(): void;
}

/**
 * A tape recorder writing to `path` (the header first, then each frame as it is emitted). `reserved`:
 * the file opened before the run started (`reserveTapeFile`), emptied now.
 */
export function createTapeRecorder(
  path: string,
  header: TapeHeader,
  secrets: readonly (string | undefined)[] = [],
  reserved?: ReservedTape,
): TapeRecorder {
  const fd = reserved === undefined ? openTapeFile(path) : emptyTape(reserved);
  const end = { bytes: 0 };
  const write = (value: unknown) => {
    appendTapeLine(fd, `${redactSecrets(JSON.stringify(value), secrets)}\n`, end);
  };
  write(header);
  let open = true;
  return {
    observer: (frame) => {
      if (!open) return;
      try {
        write(frame);
      } catch (err) {
        throw new TapeWriteError(path, err);
      }
    },
    close: () => {
      if (!open) return;
      open = false;
      closeSync(fd);
    },
  };
}

/**
 * A tape line that could not be written, said with the path (a library's run is cancelled with this
 * as its reason); a system error's code is kept as `code`.
 */
export class TapeWriteError extends Error {
  /** What went wrong, without the path: a system error's code (`ENOSPC`), else the error's message. */
  readonly problem: string;
  readonly code: string | undefined;

  constructor(path: string, cause: unknown) {
    const code = (cause as NodeJS.ErrnoException | undefined)?.code;
    const problem = typeof code === "string" ? code : describeError(cause);
    super(`cannot write the tape ${path}: ${problem}`, { cause });
    this.name = "TapeWriteError";
    this.problem = problem;
    this.code = typeof code === "string" ? code : undefined;
  }
}

/**
 * A run's tape writes from its `onFrame`: the first that fails (a full disk) stops the writing and
 * calls `stop` with why — the caller cancels the run, which must not go on unrecorded — and the
 * observer goes on serving the run's other readers (docs/pitfalls.md #69). Never throws.
 */
export class TapeWriteGuard {
  /**
   * Why the tape stopped being written, once it did: a system error's code (`ENOSPC`, never a
   * path of the machine's), else the error's message.
   */
  problem: string | undefined;

  constructor(private readonly stop: (problem: string, error: unknown) => void) {}

  /** Runs one tape write, unless one failed before. */
  write(write: () => void): void {
    if (this.problem !== undefined) return;
    try {
      write();
    } catch (err) {
      // The recorder's own error names the path already; the guard's caller says it once.
      const code = (err as NodeJS.ErrnoException | undefined)?.code;
      this.problem =
        err instanceof TapeWriteError ? err.problem : typeof code === "string" ? code : describeError(err);
      this.stop(this.problem, err);
    }
  }
}

/**
 * Appends one line to the tape open at `fd`, whose size so far is `end.bytes`: whole or not at all.
 * A write the disk cuts short (full, or over the file size limit: the rest fails with ENOSPC or
 * EFBIG) is taken back, so the tape still ends with a whole line (docs/pitfalls.md #69), and the
 * error is thrown.
 */
export function appendTapeLine(fd: number, line: string, end: { bytes: number }): void {
  const bytes = Buffer.from(line, "utf8");
  try {
    writeAllSync(fd, bytes);
  } catch (err) {
    try {
      ftruncateSync(fd, end.bytes);
    } catch {
      // The tape keeps the part line; a reader skips a last line that is not whole.
    }
    throw err;
  }
  end.bytes += bytes.length;
}

/**
 * Opens `path` for writing a tape (created or truncated); a path that cannot be written, or that is
 * not a regular file (a FIFO, a device, a directory), is a user error (`invalid_config`) naming the
 * path and the reason. With `noFollow`, a symlink or a file with other hard links at `path` is
 * refused too, before it is emptied (a store's own tapes).
 */
export function openTapeFile(path: string, options: { noFollow?: boolean } = {}): number {
  const how = { ...TAPE, noFollow: options.noFollow === true };
  return emptiedWritable(path, how);
}

/** A tape's file opened before its run starts, what it held still untouched (`reserveTapeFile`). */
export interface ReservedTape {
  readonly path: string;
  readonly fd: number;
  /** The reservation made the file (it did not exist). */
  readonly created: boolean;
}

/**
 * Opens `path` for a tape before its run starts, so a path that cannot be written stops the command
 * before anything is sent — without emptying a file that is there until the recorder starts
 * (`createTapeRecorder`), in case the run never does (`releaseTapeFile`). Fails as `openTapeFile`.
 */
export function reserveTapeFile(path: string): ReservedTape {
  let created = true;
  const fd = checkedWritable(path, TAPE, () => {
    try {
      return openSync(path, WRITE_FLAGS | constants.O_EXCL);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
      created = false;
      return openSync(path, WRITE_FLAGS);
    }
  });
  return { path, fd, created };
}

/** How tape writes name their file and fail: `cannot write the tape PATH: …` (a user error). */
const TAPE = { what: "the tape", code: "invalid_config" } as const;

/** Gives back a reserved tape whose run never started: closed, and removed when the reservation made it and it is still empty. */
export function releaseTapeFile(tape: ReservedTape): void {
  const empty = fstatSync(tape.fd).size === 0;
  closeSync(tape.fd);
  if (tape.created && empty) rmSync(tape.path, { force: true });
}

/** The descriptor of a reserved tape, emptied: its run has started and the tape is written from here. */
export function emptyTape(tape: ReservedTape): number {
  ftruncateSync(tape.fd, 0);
  return tape.fd;
}
