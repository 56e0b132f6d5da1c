/**
 * A queue worker's copies folders (`--workspace-per-task`): one per batch it served, in the
 * temporary folder (`eddy-batch-ID`, holding up to `BATCH_DEFAULTS.maxKeptWorkspaces` failed tasks'
 * copies). A local `eddy batch` sweeps its own folder when its runs are over; a worker never knows
 * a batch is over, so every batch it ever served left its folder behind, without a bound. Now a
 * worker removes a folder once no job of its batch has started or finished in it for
 * `BATCH_DEFAULTS.workerCopiesKeepMs` (docs/decisions.md #42), checking at start and every
 * `BATCH_DEFAULTS.workerCopiesSweepMs`.
 *
 * Only a folder eddy made is removed: a real folder (not a symlink), this user's, named
 * `eddy-batch-ID`, holding the marker `COPIES_MARKER` — a small regular file of this user's with
 * `MARKER_TEXT` in it, written by the worker that uses the folder. The marker's mtime is the
 * folder's last activity: every worker using the folder (on this machine) touches it as a job of
 * the batch starts and ends, and as it sweeps while jobs of the batch are in flight in it, so a
 * folder another worker uses is not idle either. A folder a job in flight in this process uses is
 * never removed. A folder to remove is first renamed (`eddy-batch-ID.removing-…`), in the same
 * synchronous step as its check, so a job starting meanwhile makes a fresh one; its entries go
 * before its marker, so a removal that fails half-way is tried again at the next sweep.
 */
import { randomBytes } from "node:crypto";
import {
  closeSync,
  constants,
  fstatSync,
  ftruncateSync,
  futimesSync,
  lstatSync,
  openSync,
  readSync,
  renameSync,
  type Stats,
  writeSync,
} from "node:fs";
import { readdir, rm, rmdir, unlink } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { privateTempFolder } from "../util/make-dir.js";
import { reasonOf, withRegularFileSync } from "../util/regular-file.js";
import { BATCH_DEFAULTS } from "./defaults.js";

/** The marker's name in a copies folder (a task copy's name never starts with a dot: `copyName`). */
export const COPIES_MARKER = ".eddy-worker-copies";

/** The marker's content: a folder whose marker holds anything else is not eddy's. */
export const MARKER_TEXT = "eddy worker: task workspace copies, removed once idle (docs/decisions.md #42)\n";

/** A copies folder's name; `.removing-…`: one a sweep renamed and did not finish removing. */
const FOLDER_NAME = /^eddy-batch-([a-z0-9]{8,40})(\.removing-[0-9a-f]{16})?$/;

const O_NOFOLLOW = constants.O_NOFOLLOW ?? 0;
const O_NONBLOCK = constants.O_NONBLOCK ?? 0;

/** Options of `workerCopies`. */
export interface WorkerCopiesOptions {
  /** Where the copies folders are. @defaultValue os.tmpdir() */
  root?: string;
  /** How long a folder stays once idle. @defaultValue BATCH_DEFAULTS.workerCopiesKeepMs (24 h) */
  keepForMs?: number;
  /** How often `start` sweeps. @defaultValue BATCH_DEFAULTS.workerCopiesSweepMs (1 h) */
  sweepEveryMs?: number;
  /** The time, in ms since the epoch (tests pass their own). @defaultValue Date.now */
  now?: () => number;
  /** Told, in one line, what could not be done (a folder not removed, a marker not written). */
  onProblem?: (line: string) => void;
}

/** A worker's copies folders: made and marked as jobs use them, removed once idle. */
export interface WorkerCopies {
  /** The batch's copies folder, made (mode 700) and marked: `BatchWorkerOptions.workspaces`. */
  folderFor(batch: string): string;
  /** A job of the batch starts in this process (its folder is not removed until it ends). */
  started(batch: string): void;
  /** That job ended, whatever its outcome. */
  ended(batch: string): void;
  /** Removes the idle folders now; resolves to the paths removed. Never rejects. */
  sweep(): Promise<string[]>;
  /** Sweeps now and every `sweepEveryMs` (the timer does not keep the process alive). */
  start(): void;
  /** Stops the timer. */
  stop(): void;
}

/** A worker's copies folders (see the module comment). */
export function workerCopies(options: WorkerCopiesOptions = {}): WorkerCopies {
  const root = options.root ?? tmpdir();
  const keepForMs = options.keepForMs ?? BATCH_DEFAULTS.workerCopiesKeepMs;
  const now = options.now ?? Date.now;
  const said = new Set<string>();
  const problem = (key: string, line: string) => {
    if (said.has(key)) return;
    said.add(key);
    options.onProblem?.(line);
  };
  const inFlight = new Map<string, number>();
  const touch = (batch: string, create: boolean) => {
    const folder = join(root, `eddy-batch-${batch}`);
    try {
      markFolder(folder, now(), create);
    } catch (err) {
      problem(
        `mark ${folder}`,
        `cannot mark ${folder} as eddy's (${reasonOf(err)}): it will not be removed when idle`,
      );
    }
  };
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<string[]> | undefined;
  const copies: WorkerCopies = {
    folderFor(batch) {
      const folder = privateTempFolder(`eddy-batch-${batch}`, root);
      touch(batch, true);
      return folder;
    },
    started(batch) {
      inFlight.set(batch, (inFlight.get(batch) ?? 0) + 1);
    },
    ended(batch) {
      const left = (inFlight.get(batch) ?? 1) - 1;
      if (left > 0) inFlight.set(batch, left);
      else inFlight.delete(batch);
      touch(batch, false);
    },
    sweep() {
      running ??= sweepFolders({ root, keepForMs, now, inFlight, touch, problem }).finally(() => {
        running = undefined;
      });
      return running;
    },
    start() {
      void copies.sweep();
      timer ??= setInterval(
        () => void copies.sweep(),
        options.sweepEveryMs ?? BATCH_DEFAULTS.workerCopiesSweepMs,
      );
      timer.unref();
    },
    stop() {
      if (timer !== undefined) clearInterval(timer);
      timer = undefined;
    },
  };
  return copies;
}

interface SweepState {
  root: string;
  keepForMs: number;
  now: () => number;
  inFlight: ReadonlyMap<string, number>;
  touch: (batch: string, create: boolean) => void;
  problem: (key: string, line: string) => void;
}

async function sweepFolders(state: SweepState): Promise<string[]> {
  const { root, problem } = state;
  let names: string[];
  try {
    names = await readdir(root);
  } catch (err) {
    problem(`read ${root}`, `cannot look for idle workspace copies in ${root}: ${reasonOf(err)}`);
    return [];
  }
  // Jobs in flight here keep their folders fresh for the other workers on this machine.
  for (const batch of state.inFlight.keys()) state.touch(batch, false);
  const removed: string[] = [];
  for (const name of names) {
    const match = FOLDER_NAME.exec(name);
    if (match === null) continue;
    const path = join(root, name);
    // Checked and renamed in one synchronous step: no job of this process starts in between.
    const doomed = claimIdle(path, match[1] as string, match[2] !== undefined, state);
    if (doomed === undefined) continue;
    try {
      await removeFolder(doomed);
      removed.push(path);
    } catch (err) {
      problem(`remove ${doomed}`, `cannot remove the idle workspace copies ${doomed}: ${reasonOf(err)}`);
    }
  }
  return removed;
}

/** The path to remove `path` from (renamed) when it is an idle copies folder of eddy's; else undefined. */
function claimIdle(path: string, batch: string, renamed: boolean, state: SweepState): string | undefined {
  if (!renamed && state.inFlight.has(batch)) return undefined;
  const lastUsed = lastUse(path);
  if (lastUsed === undefined) return undefined;
  if (renamed) return path;
  if (state.now() - lastUsed < state.keepForMs) return undefined;
  const doomed = `${path}.removing-${randomBytes(8).toString("hex")}`;
  try {
    renameSync(path, doomed);
    return doomed;
  } catch (err) {
    state.problem(`remove ${path}`, `cannot remove the idle workspace copies ${path}: ${reasonOf(err)}`);
    return undefined;
  }
}

/**
 * When a copies folder was last used (its marker's or its own mtime, the later), or undefined when
 * it is not eddy's: not a real folder, another user's, no valid marker.
 */
export function lastUse(path: string): number | undefined {
  try {
    const folder = lstatSync(path);
    if (!folder.isDirectory() || !ownedHere(folder)) return undefined;
    const marker = readMarker(join(path, COPIES_MARKER));
    return marker === undefined ? undefined : Math.max(marker.mtimeMs, folder.mtimeMs);
  } catch {
    return undefined;
  }
}

function ownedHere(stats: Stats): boolean {
  const uid = process.getuid?.();
  return uid === undefined || stats.uid === uid;
}

/** The marker's stats when it is one (a regular file of this user's holding `MARKER_TEXT`). */
function readMarker(path: string): Stats | undefined {
  const size = Buffer.byteLength(MARKER_TEXT);
  // A FIFO, a symlink, a huge file: not eddy's, and never waited on, followed or read whole.
  try {
    return withRegularFileSync(path, { what: "marker", maxBytes: size, noFollow: true }, (fd) => {
      const stats = fstatSync(fd);
      if (stats.size !== size || !ownedHere(stats)) return undefined;
      const text = Buffer.alloc(size);
      const read = readSync(fd, text, 0, size, 0);
      return read === size && text.toString("utf8") === MARKER_TEXT ? stats : undefined;
    });
  } catch {
    return undefined;
  }
}

/**
 * Writes the folder's marker (when `create`: else only one that is there) and sets its mtime to
 * `at`. Never follows a symlink or blocks on a FIFO; throws when the marker is not a regular file.
 */
export function markFolder(folder: string, at: number, create: boolean): void {
  const path = join(folder, COPIES_MARKER);
  let fd: number;
  try {
    fd = openSync(path, constants.O_RDWR | O_NOFOLLOW | O_NONBLOCK | (create ? constants.O_CREAT : 0), 0o600);
  } catch (err) {
    if (!create && (err as NodeJS.ErrnoException).code === "ENOENT") return;
    throw err;
  }
  try {
    const stats = fstatSync(fd);
    if (!stats.isFile()) throw new Error(`${path} is not a regular file`);
    if (stats.size !== Buffer.byteLength(MARKER_TEXT)) {
      if (!create) return;
      ftruncateSync(fd, 0);
      writeSync(fd, MARKER_TEXT, 0, "utf8");
    }
    futimesSync(fd, at / 1000, at / 1000);
  } finally {
    closeSync(fd);
  }
}

/** Removes a claimed folder: its entries, then its marker, then itself. */
async function removeFolder(folder: string): Promise<void> {
  for (const name of await readdir(folder)) {
    if (name !== COPIES_MARKER) await rm(join(folder, name), { recursive: true, force: true });
  }
  await unlink(join(folder, COPIES_MARKER)).catch(() => {});
  await rmdir(folder);
}
