/**
 * Where a batch keeps its tasks' tapes: files in a folder (`DIR/tapes/ID.tape`), or Redis streams
 * for workers on other machines (queue/redis-tapes.ts). A tape is written frame by frame as the run
 * goes, so a process that dies leaves every frame it had emitted. A resumed run writes its new
 * tape beside the old one and swaps it in only once it holds everything the old one had worth
 * keeping (`commit`), so dying mid-resume loses nothing either.
 */
import { closeSync, existsSync, renameSync, rmSync } from "node:fs";
import { join } from "node:path";
import type { Frame } from "../frames/frame.js";
import { appendTapeLine, emptyTape, openTapeFile, type ReservedTape } from "../replay/recorder.js";
import { readTape, type Tape, type TapeHeader } from "../replay/tape.js";
import { makeDirSync } from "../util/make-dir.js";
import { redactSecrets } from "../util/redact.js";
import { tapeFileName } from "./task.js";

/** Writes one tape. */
export interface TapeWriter {
  /** Appends a frame (pass as, or call from, the run's `onFrame`). */
  write(frame: Frame): void;
  /** Makes this tape the task's tape, replacing the old one (a no-op for a tape that replaced it at once). */
  commit(): void;
  /**
   * Resolves once every frame written so far is stored (a file tape's writes are synchronous: at
   * once). Rejects when a write was lost, or when `signal` aborts first.
   */
  flush(signal?: AbortSignal): Promise<void>;
  /**
   * Finishes writing (and waits for writes in flight); a tape never committed is thrown away.
   * Rejects when a write was lost, so an incomplete tape is never taken for a complete one.
   */
  close(): Promise<void>;
}

/** The tapes of a batch's tasks. */
export interface TapeStore {
  /** The task's tape, if it has one (to resume from, or to take a finished result from). */
  read(id: string): Promise<Tape | undefined>;
  /**
   * Starts a tape for the task. `replace: "now"` (a fresh run) replaces any old tape at once;
   * `"on_commit"` (a resumed run) keeps the old one until `commit()`.
   */
  open(id: string, header: TapeHeader, replace: "now" | "on_commit"): TapeWriter;
  /** Where the task's tape is, for its result (a path relative to the batch folder, or a key). */
  location(id: string): string;
}

/**
 * Tapes as files `ID.tape` in `dir` (created when missing); `secrets` never reach them. A tape is
 * opened without following a symlink (`O_NOFOLLOW`): one planted as `ID.tape` (or
 * `ID.tape.resuming`) is refused, not written through to wherever it points.
 */
export function fileTapeStore(dir: string, secrets: readonly string[] = []): TapeStore {
  makeDirSync(dir);
  const pathOf = (id: string) => join(dir, tapeFileName(id));
  return {
    async read(id) {
      const path = pathOf(id);
      return existsSync(path) ? readTape(path) : undefined;
    },
    open(id, header, replace) {
      const path = pathOf(id);
      const target = replace === "now" ? path : `${path}.resuming`;
      // Opened here, not by the writer, to refuse a symlink; created, so nothing to keep (`created`).
      const opened = { path: target, fd: openTapeFile(target, { noFollow: true }), created: true };
      return createTapeFileWriter(target, header, secrets, replace === "now" ? undefined : path, opened);
    },
    location: pathOf,
  };
}

/**
 * A tape file written line by line with synchronous writes (a killed process leaves a valid
 * prefix). With `replaces`, it is written beside that tape and renamed over it on `commit()`.
 * `reserved`: the file opened before the run started (`reserveTapeFile`), emptied now.
 */
export function createTapeFileWriter(
  path: string,
  header: TapeHeader,
  secrets: readonly string[],
  replaces: string | undefined,
  reserved?: ReservedTape,
): TapeWriter {
  let fd: number | undefined = reserved === undefined ? openTapeFile(path) : emptyTape(reserved);
  const end = { bytes: 0 };
  const write = (value: unknown) => {
    if (fd !== undefined) appendTapeLine(fd, `${redactSecrets(JSON.stringify(value), secrets)}\n`, end);
  };
  write(header);
  let committed = replaces === undefined;
  return {
    write,
    commit() {
      if (committed || replaces === undefined) return;
      // The open descriptor follows the file: later frames land in the renamed tape.
      renameSync(path, replaces);
      committed = true;
    },
    flush: async () => {},
    async close() {
      if (fd === undefined) return;
      closeSync(fd);
      fd = undefined;
      if (!committed) rmSync(path, { force: true });
    },
  };
}
