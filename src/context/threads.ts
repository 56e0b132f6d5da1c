/**
 * Threads: a named conversation that spans runs, kept by eddy in the workspace.
 *
 * - `.eddy/threads/NAME.jsonl`: an append-only log, one JSON record per line: a `prompt` record
 *   when a run starts and an `outcome` record when it ends (final text, the items needed to
 *   continue, usage, tape path), tied by `run_id`.
 * - `.eddy/bundles/<sha256>.json`: compiled context bundles, content-addressed: the file is the
 *   bundle's canonical JSON and its name the sha256 of that text, so a bundle id names exactly one
 *   content and a replay can load and check it.
 *
 * Concurrent runs may append to one log: each record is written with a single `write(2)` on a
 * file opened with `O_APPEND`, which on a local file system (ext4, xfs, btrfs, tmpfs, overlayfs)
 * places it at the end in one piece; readers skip a last line that is still being written. Network
 * file systems do not promise this. A crash mid-write can leave a last line with no newline: the
 * next append ends it first (in the same write), so the torn record is one unreadable line and the
 * new record stays whole; readers recover a whole record glued after a torn one by older versions.
 *
 * Nothing under `.eddy/` is reached through a symlink, and only regular files are read (see
 * `createThreadStore`).
 */
import { createHash } from "node:crypto";
import { constants } from "node:fs";
import type { FileHandle } from "node:fs/promises";
import { join } from "node:path";
import { describeError, EddyError } from "../errors.js";
import type { JsonObject, Usage } from "../protocol/types.js";
import {
  forEachLine,
  isJsonObject,
  nestsDeeperThan,
  RECORD_MAX_DEPTH,
  wellFormed,
  withoutBom,
} from "../util/json.js";
import {
  listStateDir,
  lstatState,
  openStateDir,
  openStateFile,
  readStateFile,
  type StateDir,
  writeStateFileAtomic,
} from "../util/state-dir.js";
import { bundleId, type ContextBundle, canonicalJson } from "./bundle.js";
import { holdThread, type ThreadHold } from "./thread-hold.js";

/** Thread names: 1–64 letters, digits, `.`, `_`, `-`, starting with a letter or digit. */
export const THREAD_NAME_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

/** The record written when a run of the thread starts. */
export interface ThreadPromptRecord {
  v: 1;
  kind: "prompt";
  run_id: string;
  /** Unix ms. */
  ts: number;
  prompt: string;
  model: string | null;
  /** The bundle the run's input was compiled from. */
  bundle_id?: string;
}

/** The record written when a run of the thread ends. */
export interface ThreadOutcomeRecord {
  v: 1;
  kind: "outcome";
  run_id: string;
  ts: number;
  reason: string;
  output_text: string;
  /** What the run added after its prompt, as input items (what a later run needs to continue it). */
  items: JsonObject[];
  usage: Usage | null;
  /** The run's tape, when it was recorded. */
  tape?: string;
}

export type ThreadRecord = ThreadPromptRecord | ThreadOutcomeRecord;

/** One run of a thread: its prompt record and, once it ended, its outcome. */
export interface ThreadRun {
  run_id: string;
  prompt: ThreadPromptRecord;
  outcome?: ThreadOutcomeRecord;
}

/** A thread read back. */
export interface ThreadLog {
  name: string;
  /** Runs in the order they started. */
  runs: ThreadRun[];
  /** Lines that could not be read (not JSON, unknown record, a record still being written). */
  skipped: number;
}

/** A line of `eddy threads`. */
export interface ThreadSummary {
  name: string;
  runs: number;
  /** Unix ms of the newest record. */
  updated: number;
  /**
   * Why the log could not be read (a FIFO, a folder, a link, too large), when it could not: the
   * other threads are still listed. @defaultValue none
   */
  problem?: string;
}

/** One line of `list()`: a log that cannot be read hides none of the others, and says why. */
async function threadSummary(dir: StateDir, name: string, file: string): Promise<ThreadSummary> {
  let text: string;
  try {
    text = (await readStateFile(dir, file, THREAD_LOG_MAX_BYTES)) ?? "";
  } catch (err) {
    return { name, runs: 0, updated: 0, problem: describeError(err) };
  }
  let log: ThreadLog;
  try {
    log = parseThreadLog(name, text);
  } catch (err) {
    return { name, runs: 0, updated: 0, problem: describeError(err) };
  }
  const updated = log.runs.reduce((t, r) => Math.max(t, r.prompt.ts, r.outcome?.ts ?? 0), 0);
  const mtime = (await lstatState(dir, file))?.mtimeMs ?? 0;
  return { name, runs: log.runs.length, updated: updated || mtime };
}

/** Options of `createThreadStore`. */
export interface ThreadStoreOptions {
  /** The workspace whose `.eddy/` holds the threads. */
  workspace: string;
  /** @defaultValue Date.now */
  clock?: () => number;
}

/** Threads and bundles of one workspace. */
export interface ThreadStore {
  /** `<workspace>/.eddy` */
  readonly root: string;
  /** Every thread, by name. */
  list(): Promise<ThreadSummary[]>;
  /** One thread's log; an unknown name reads as a thread with no runs. */
  read(name: string): Promise<ThreadLog>;
  /** Appends a record (one line, one write). */
  append(
    name: string,
    record: Omit<ThreadPromptRecord, "v" | "ts"> | Omit<ThreadOutcomeRecord, "v" | "ts">,
  ): Promise<ThreadRecord>;
  /** Stores a bundle (if not stored yet) and returns its id. */
  saveBundle(bundle: ContextBundle): Promise<string>;
  /** Loads a stored bundle and checks it against its id. */
  loadBundle(id: string): Promise<ContextBundle>;
  /**
   * Holds a thread for this process (a chat session, a run) until released: another that asks
   * gets `thread_busy` (context/thread-hold.ts). `holder` names it in that message.
   */
  hold(name: string, holder: string): Promise<ThreadHold>;
}

/** The largest thread log or bundle read (`.eddy/threads/NAME.jsonl`, `.eddy/bundles/ID.json`). */
export const THREAD_LOG_MAX_BYTES = 256 * 1024 * 1024;

/**
 * The threads and bundles under `<workspace>/.eddy`. Nothing there is reached through a symlink:
 * `.eddy`, its folders and its files are opened without following one (src/util/state-dir.ts), so
 * a repository that ships `.eddy/threads` as a link elsewhere gets a clear error, not writes
 * outside the workspace.
 */
export function createThreadStore(options: ThreadStoreOptions): ThreadStore {
  const { workspace } = options;
  const clock = options.clock ?? Date.now;
  const folder = (sub: "threads" | "bundles", create: boolean) =>
    openStateDir(workspace, [".eddy", sub], { create });
  const logFile = (name: string) => `${checkThreadName(name)}.jsonl`;

  return {
    root: join(workspace, ".eddy"),

    async list() {
      const dir = await folder("threads", false);
      if (dir === undefined) return [];
      try {
        const out: ThreadSummary[] = [];
        for (const name of threadNames(await listStateDir(dir)))
          out.push(await threadSummary(dir, name, logFile(name)));
        return out;
      } finally {
        await dir.close();
      }
    },

    async read(name) {
      const file = logFile(name);
      const dir = await folder("threads", false);
      if (dir === undefined) return { name, runs: [], skipped: 0 };
      try {
        const text = await readStateFile(dir, file, THREAD_LOG_MAX_BYTES);
        return text === undefined ? { name, runs: [], skipped: 0 } : parseThreadLog(name, text);
      } finally {
        await dir.close();
      }
    },

    async append(name, fields) {
      const file = logFile(name);
      const dir = (await folder("threads", true)) as StateDir;
      try {
        const record = { v: 1, ...fields, ts: clock() } as ThreadRecord;
        await appendLine(dir, file, `${JSON.stringify(record)}\n`);
        return record;
      } finally {
        await dir.close();
      }
    },

    async saveBundle(bundle) {
      const dir = (await folder("bundles", true)) as StateDir;
      try {
        return await saveBundle(dir, bundle);
      } finally {
        await dir.close();
      }
    },

    hold(name, holder) {
      const threads = async () => (await folder("threads", true)) as StateDir;
      return holdThread(threads, checkThreadName(name), holder, clock);
    },

    async loadBundle(id) {
      checkBundleId(id);
      const dir = await folder("bundles", false);
      try {
        const text =
          dir === undefined ? undefined : await readStateFile(dir, `${id}.json`, THREAD_LOG_MAX_BYTES);
        return loadBundle(text, id, join(workspace, ".eddy", "bundles"));
      } finally {
        await dir?.close();
      }
    },
  };
}

/** The valid thread names among the file names of the threads folder, sorted. */
function threadNames(files: string[]): string[] {
  return files
    .filter((f) => f.endsWith(".jsonl"))
    .map((f) => f.slice(0, -".jsonl".length))
    .filter((n) => THREAD_NAME_PATTERN.test(n) && !n.endsWith("."))
    .sort();
}

/** Stores `bundle` under its content id in `dir` (once) and returns the id. */
async function saveBundle(dir: StateDir, bundle: ContextBundle): Promise<string> {
  const id = bundleId(bundle);
  const existing = await lstatState(dir, `${id}.json`);
  if (existing?.isFile()) return id;
  // Write then rename: a reader never sees half a bundle, and two writers of one id write the same
  // bytes. A symlink in the way is replaced by the rename, never followed.
  await writeStateFileAtomic(dir, `${id}.json`, canonicalJson(bundle));
  return id;
}

function checkBundleId(id: string): void {
  if (!/^[0-9a-f]{64}$/.test(id))
    throw new EddyError("invalid_argument", `${JSON.stringify(id)} is not a bundle id (64 hex digits)`, {
      fault: "user",
    });
}

/** The bundle stored as `id` (its file's text, if any), checked against its id. */
function loadBundle(text: string | undefined, id: string, where: string): ContextBundle {
  if (text === undefined)
    throw new EddyError("invalid_argument", `bundle ${id} is not in ${where}`, { fault: "user" });
  if (createHash("sha256").update(text).digest("hex") !== id)
    throw new EddyError(
      "invalid_argument",
      `bundle ${id} was changed after it was stored (its content no longer matches its id)`,
      { fault: "user" },
    );
  return JSON.parse(text) as ContextBundle;
}

/** The name, checked: a bad one throws a one-line error saying what is allowed. */
export function checkThreadName(name: string): string {
  if (!THREAD_NAME_PATTERN.test(name) || name.endsWith(".")) {
    throw new EddyError(
      "invalid_argument",
      `thread name ${JSON.stringify(name.length > 80 ? `${name.slice(0, 80)}…` : name)} is not allowed: use 1–64 letters, digits, ".", "_" or "-", starting with a letter or digit`,
      { fault: "user" },
    );
  }
  return name;
}

/**
 * Unreadable lines a thread log may hold before it is refused (`thread_log_invalid`): eddy leaves
 * at most one per crash, and each costs failed parses (~20 µs each, a few per line): a 4 MB log of
 * two million bad lines took 45 s, with Ctrl-C unheard (docs/pitfalls.md #101).
 */
export const THREAD_LOG_MAX_UNREADABLE = 1_000;

/**
 * Reads a thread log's text: records by run, in start order; unreadable lines counted, not fatal
 * up to `THREAD_LOG_MAX_UNREADABLE` of them (past it, `thread_log_invalid`, naming the fix).
 * A leading byte order mark is dropped. A line that is not a record may be a torn record with a whole one glued after it (a log written
 * before torn lines were repaired on append): the whole one is recovered.
 */
export function parseThreadLog(name: string, text: string): ThreadLog {
  const runs = new Map<string, ThreadRun>();
  const outcomes = new Map<string, ThreadOutcomeRecord>();
  let skipped = 0;
  // One line at a time (a log of millions of short lines is not split into as many strings at once).
  // A byte order mark before the first record (an editor's) is dropped, as tapes' is (util/json.ts).
  forEachLine(withoutBom(text), (line, index, last) => {
    // The part after the last newline is a record still being written (or empty).
    if (last) {
      if (line !== "") skipped++;
      return;
    }
    if (line.trim() === "") return;
    const found = readRecord(line);
    if (found.torn) skipped++;
    const record = found.record;
    if (record === undefined) skipped++;
    else if (record.kind === "prompt") runs.set(record.run_id, { run_id: record.run_id, prompt: record });
    else outcomes.set(record.run_id, record);
    if (skipped > THREAD_LOG_MAX_UNREADABLE) throw tooManyUnreadable(name, index);
  });
  for (const [runId, outcome] of outcomes) {
    const run = runs.get(runId);
    if (run === undefined) skipped++;
    else run.outcome = outcome;
  }
  return { name, runs: [...runs.values()], skipped };
}

function tooManyUnreadable(name: string, index: number): EddyError {
  return new EddyError(
    "thread_log_invalid",
    `the log of thread ${name} (.eddy/threads/${name}.jsonl) has more than ${THREAD_LOG_MAX_UNREADABLE.toLocaleString("en-US")} unreadable lines by line ${index + 1}: it is not a log eddy wrote; move it away (or delete it) to start the thread anew`,
    { fault: "user" },
  );
}

const RECORD_START = '{"v":1,';

/**
 * Places on a bad line where a glued record is looked for: a crash tears one record, so the whole
 * one is among the first few starts. Every start was tried, each a parse of the rest of the line: a
 * 220 KB line of 20,000 starts took 35 s (docs/pitfalls.md #64).
 */
const GLUED_TRIES = 4;

/** The record on `line`; else the whole record glued after a torn one (`torn`), if there is one. */
function readRecord(line: string): { record?: ThreadRecord; torn: boolean } {
  const record = asThreadRecord(parseJson(line));
  if (record !== undefined) return { record, torn: false };
  let tries = 0;
  for (
    let at = line.indexOf(RECORD_START, 1);
    at > 0 && tries++ < GLUED_TRIES;
    at = line.indexOf(RECORD_START, at + 1)
  ) {
    const glued = asThreadRecord(parseJson(line.slice(at)));
    if (glued !== undefined) return { record: glued, torn: true };
  }
  return { torn: false };
}

/**
 * The JSON value of `text` (lone surrogates made U+FFFD: a bundle must hold them), or undefined —
 * also for a value nesting deeper than `RECORD_MAX_DEPTH` (the walks after would overflow the stack).
 */
function parseJson(text: string): unknown {
  try {
    const value: unknown = JSON.parse(text);
    return nestsDeeperThan(value, RECORD_MAX_DEPTH) ? undefined : wellFormed(value);
  } catch {
    return undefined;
  }
}

/** `value` when it is a well-formed thread record (every field of its kind with the right type). */
export function asThreadRecord(value: unknown): ThreadRecord | undefined {
  if (!isJsonObject(value) || value.v !== 1 || typeof value.run_id !== "string") return undefined;
  // A time a Date can hold (±8.64e15 ms): `eddy threads show` prints it.
  if (typeof value.ts !== "number" || !(Math.abs(value.ts) <= 8.64e15)) return undefined;
  if (value.kind === "prompt") {
    const ok =
      typeof value.prompt === "string" &&
      (value.model === null || typeof value.model === "string") &&
      (value.bundle_id === undefined || typeof value.bundle_id === "string");
    return ok ? (value as unknown as ThreadPromptRecord) : undefined;
  }
  if (value.kind === "outcome") {
    const ok =
      typeof value.reason === "string" &&
      typeof value.output_text === "string" &&
      Array.isArray(value.items) &&
      value.items.every(isSendableItem) &&
      (value.usage === null || isUsage(value.usage)) &&
      (value.tape === undefined || typeof value.tape === "string");
    return ok ? (value as unknown as ThreadOutcomeRecord) : undefined;
  }
  return undefined;
}

/**
 * An item a later run sends back to the model: the fields the provider needs of the kinds eddy
 * sends, with their types. One of another kind passes as it is (a provider's own item); a
 * `function_call` without a string `call_id` made every later turn of the thread fail with the
 * provider's 400, naming nothing in the log.
 */
function isSendableItem(item: unknown): boolean {
  if (!isJsonObject(item)) return false;
  const text = (key: string) => typeof item[key] === "string";
  switch (item.type) {
    case "function_call":
      return text("call_id") && text("name") && text("arguments");
    case "function_call_output":
      return text("call_id") && (text("output") || Array.isArray(item.output));
    case "message":
      return (
        text("role") && (text("content") || (Array.isArray(item.content) && item.content.every(isJsonObject)))
      );
    default:
      return typeof item.type === "string" || (item.type === undefined && text("role"));
  }
}

function isUsage(value: unknown): boolean {
  return (
    isJsonObject(value) &&
    ["input_tokens", "output_tokens", "total_tokens"].every((k) => typeof value[k] === "number")
  );
}

/**
 * Appends one line with one write on an `O_APPEND` descriptor (see the module comment). A log
 * whose last line has no newline (a crash mid-write) gets one first, in the same write, so the
 * torn record stays one unreadable line and never swallows the new one.
 */
async function appendLine(dir: StateDir, file: string, line: string): Promise<void> {
  const handle = (await openStateFile(
    dir,
    file,
    constants.O_RDWR | constants.O_APPEND | constants.O_CREAT,
  )) as FileHandle;
  try {
    const bytes = Buffer.from((await endsTorn(handle)) ? `\n${line}` : line, "utf8");
    let offset = 0;
    while (offset < bytes.length) {
      const { bytesWritten } = await handle.write(bytes, offset, bytes.length - offset);
      offset += bytesWritten;
    }
  } finally {
    await handle.close();
  }
}

/** Whether the file's last byte is something other than a newline. */
async function endsTorn(handle: FileHandle): Promise<boolean> {
  const { size } = await handle.stat();
  if (size === 0) return false;
  const last = Buffer.alloc(1);
  await handle.read(last, 0, 1, size - 1);
  return last[0] !== 0x0a;
}
