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
 * file systems do not promise this.
 */
import { createHash } from "node:crypto";
import { mkdir, open, readdir, readFile, rename, stat, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { EddyError } from "../errors.js";
import type { JsonObject, Usage } from "../protocol/types.js";
import { bundleId, type ContextBundle, canonicalJson } from "./bundle.js";

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
}

/** The threads and bundles under `<workspace>/.eddy`. */
export function createThreadStore(options: ThreadStoreOptions): ThreadStore {
  const root = join(options.workspace, ".eddy");
  const threads = join(root, "threads");
  const bundles = join(root, "bundles");
  const clock = options.clock ?? Date.now;
  const logPath = (name: string) => join(threads, `${checkThreadName(name)}.jsonl`);

  return {
    root,

    async list() {
      const out: ThreadSummary[] = [];
      for (const name of await threadNames(threads)) {
        const log = await this.read(name);
        // A loop, not Math.max(...): spreading a long thread's timestamps overflows the stack.
        let updated = 0;
        for (const r of log.runs) updated = Math.max(updated, r.prompt.ts, r.outcome?.ts ?? 0);
        out.push({ name, runs: log.runs.length, updated: updated || (await stat(logPath(name))).mtimeMs });
      }
      return out;
    },

    async read(name) {
      let text: string;
      try {
        text = await readFile(logPath(name), "utf8");
      } catch (err) {
        if (isNotFound(err)) return { name, runs: [], skipped: 0 };
        throw err;
      }
      return parseThreadLog(name, text);
    },

    async append(name, fields) {
      const path = logPath(name);
      await mkdir(threads, { recursive: true });
      const record = { v: 1, ...fields, ts: clock() } as ThreadRecord;
      await appendLine(path, `${JSON.stringify(record)}\n`);
      return record;
    },

    saveBundle: (bundle) => saveBundle(bundles, bundle),
    loadBundle: (id) => loadBundle(bundles, id),
  };
}

/** The valid thread names with a log under `threads`, sorted; none when the folder is missing. */
async function threadNames(threads: string): Promise<string[]> {
  let files: string[];
  try {
    files = await readdir(threads);
  } catch (err) {
    if (isNotFound(err)) return [];
    throw err;
  }
  return files
    .filter((f) => f.endsWith(".jsonl"))
    .map((f) => f.slice(0, -".jsonl".length))
    .filter((n) => THREAD_NAME_PATTERN.test(n))
    .sort();
}

/** Stores `bundle` under its content id in `bundles` (once) and returns the id. */
async function saveBundle(bundles: string, bundle: ContextBundle): Promise<string> {
  const id = bundleId(bundle);
  const path = join(bundles, `${id}.json`);
  if (await exists(path)) return id;
  await mkdir(bundles, { recursive: true });
  // Write then rename: a reader never sees half a bundle, and two writers of one id write the same bytes.
  const tmp = `${path}.${process.pid}.${Math.random().toString(36).slice(2)}.tmp`;
  await writeFile(tmp, canonicalJson(bundle));
  await rename(tmp, path);
  return id;
}

/** The bundle stored as `id` in `bundles`, checked against its id. */
async function loadBundle(bundles: string, id: string): Promise<ContextBundle> {
  if (!/^[0-9a-f]{64}$/.test(id))
    throw new EddyError("invalid_argument", `${JSON.stringify(id)} is not a bundle id (64 hex digits)`, {
      fault: "user",
    });
  let text: string;
  try {
    text = await readFile(join(bundles, `${id}.json`), "utf8");
  } catch (err) {
    if (isNotFound(err))
      throw new EddyError("invalid_argument", `bundle ${id} is not in ${bundles}`, { fault: "user" });
    throw err;
  }
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
      `thread name ${JSON.stringify(name)} is not allowed: use 1–64 letters, digits, ".", "_" or "-", starting with a letter or digit`,
      { fault: "user" },
    );
  }
  return name;
}

/** Reads a thread log's text: records by run, in start order; unreadable lines counted, not fatal. */
export function parseThreadLog(name: string, text: string): ThreadLog {
  const runs = new Map<string, ThreadRun>();
  const outcomes = new Map<string, ThreadOutcomeRecord>();
  let skipped = 0;
  const lines = text.split("\n");
  // The part after the last newline is a record still being written (or empty).
  if (lines.at(-1) !== "") skipped++;
  for (const line of lines.slice(0, -1)) {
    if (line.trim() === "") continue;
    let record: ThreadRecord;
    try {
      record = JSON.parse(line) as ThreadRecord;
    } catch {
      skipped++;
      continue;
    }
    if (record?.v !== 1 || typeof record.run_id !== "string") skipped++;
    else if (record.kind === "prompt") runs.set(record.run_id, { run_id: record.run_id, prompt: record });
    else if (record.kind === "outcome") outcomes.set(record.run_id, record);
    else skipped++;
  }
  for (const [runId, outcome] of outcomes) {
    const run = runs.get(runId);
    if (run === undefined) skipped++;
    else run.outcome = outcome;
  }
  return { name, runs: [...runs.values()], skipped };
}

/** Appends one line with one write on an `O_APPEND` descriptor (see the module comment). */
async function appendLine(path: string, line: string): Promise<void> {
  const bytes = Buffer.from(line, "utf8");
  const handle = await open(path, "a");
  try {
    let offset = 0;
    while (offset < bytes.length) {
      const { bytesWritten } = await handle.write(bytes, offset, bytes.length - offset);
      offset += bytesWritten;
    }
  } finally {
    await handle.close();
  }
}

async function exists(path: string): Promise<boolean> {
  try {
    await stat(path);
    return true;
  } catch (err) {
    if (isNotFound(err)) return false;
    throw err;
  }
}

function isNotFound(err: unknown): boolean {
  return (err as NodeJS.ErrnoException)?.code === "ENOENT";
}
