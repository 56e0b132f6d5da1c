/**
 * A batch's folder: `results.jsonl` (one line per finished task, appended as each finishes),
 * `tapes/ID.tape`, `summary.json` (counts by reason, tokens, duration percentiles, wall time of
 * every invocation) and `batch.json` (the batch's id, so a queue and per-task workspaces find it
 * again). Running the same batch into the same folder again skips the tasks that have a result
 * line, and adds its own wall time to the summary's (`runs`).
 */
import { randomUUID } from "node:crypto";
import { existsSync, lstatSync, renameSync, rmSync, type Stats, statSync } from "node:fs";
import { join, relative } from "node:path";
import { EddyError } from "../errors.js";
import type { FrameError, RunEndReason } from "../frames/frame.js";
import type { Usage } from "../protocol/types.js";
import { makeDirSync } from "../util/make-dir.js";
import {
  appendRegularFileSync,
  kindOf,
  readRegularTextSync,
  reasonOf,
  writeRegularFileSync,
} from "../util/regular-file.js";
import { openStateDir, realFolderSync, type StateDir } from "../util/state-dir.js";
import { holdStateLock, type StateLock } from "../util/state-lock.js";
import { type BatchResult, succeeded } from "./run-task.js";
import { fileTapeStore, type TapeStore } from "./tape-store.js";

/** One line of `results.jsonl`. */
export interface ResultLine {
  id: string;
  reason: RunEndReason;
  output_text: string;
  result: unknown;
  usage: Usage;
  turns: number;
  tool_calls: number;
  duration_ms: number;
  /** The tape, relative to the batch folder. */
  tape: string | null;
  error: FrameError | null;
  metadata?: Record<string, unknown>;
  /** The task's own workspace, kept because it failed. */
  workspace?: string;
  /** How often the run was resumed after its process died. */
  resumed?: number;
  /** Special files (FIFOs, sockets, devices) the task's workspace copy left out. */
  skipped_files?: string[];
}

/** One invocation of the batch on its folder (`summary.json` `runs`). */
export interface BatchRunRecord {
  /** When it started (ISO 8601); null when an older summary did not say. */
  started_at: string | null;
  wall_ms: number;
  /** Tasks that got their result in this invocation (not skipped ones). */
  tasks_run: number;
}

/** `summary.json`. */
export interface BatchSummary {
  /** Tasks in the tasks file (good lines). */
  tasks: number;
  /** Tasks with a result. */
  finished: number;
  /** Tasks without one (interrupted, or still queued). */
  pending: number;
  by_reason: Partial<Record<RunEndReason, number>>;
  /** Finished tasks that did not complete (`--retry-failed` runs them again). */
  failed: number;
  usage: { input_tokens: number; output_tokens: number; total_tokens: number };
  duration_ms: { p50: number; p95: number; max: number };
  /** The wall time of every invocation on this folder, added up. */
  wall_ms: number;
  /** Every invocation, oldest first: a rerun keeps the earlier ones and adds its own. */
  runs: BatchRunRecord[];
  /** Lines of the tasks file that were skipped. */
  bad_lines: number;
  finished_at: string;
}

/** An opened batch folder. */
export interface BatchDir {
  readonly path: string;
  /** Stable across invocations (kept in `batch.json`). */
  readonly id: string;
  readonly tapes: TapeStore;
  /** The result lines so far, by task id. */
  readonly results: Map<string, ResultLine>;
  /** The `summary.json` an earlier invocation wrote, if any (unreadable: none). */
  readonly summary: BatchSummary | undefined;
  /** Appends a task's result line (and remembers it). */
  append(result: BatchResult): ResultLine;
  /** Drops these tasks' result lines (before running them again). */
  drop(ids: ReadonlySet<string>): void;
  writeSummary(summary: BatchSummary): void;
}

/** Opens (creating when missing) the batch folder `path`; `secrets` never reach its tapes. */
/**
 * Holds the batch folder `path` for this process (`batch.lock`, naming it; free once its process
 * is gone): a second `eddy batch` on the same folder is refused rather than both appending result
 * lines for the same tasks. Created when missing.
 */
export async function holdBatchDir(path: string, holder = "eddy batch"): Promise<StateLock> {
  try {
    makeDirSync(path);
  } catch (err) {
    throw new EddyError("invalid_config", `cannot create the batch folder ${path}: ${reasonOf(err)}`, {
      fault: "user",
    });
  }
  const open = async () => (await openStateDir(path, [], { create: false })) as StateDir;
  try {
    return await holdStateLock(open, "batch.lock", holder, (other, dir) => {
      const pid = other.pid === undefined ? "" : `, process ${other.pid}`;
      return new EddyError(
        "invalid_config",
        `the batch folder ${dir.path} is in use by another ${JSON.stringify(other.holder)}${pid}: wait for it to end, or give another --out (if no eddy batch runs there, delete ${dir.path}/batch.lock)`,
        { fault: "user" },
      );
    });
  } catch (err) {
    if (EddyError.isInstance(err)) throw err;
    // A folder that exists but takes no file (read-only, not the user's, /proc/…) was an internal error.
    throw new EddyError(
      "invalid_config",
      `cannot write in the batch folder ${path}: ${reasonOf(err)}; give another --out`,
      { fault: "user" },
    );
  }
}

export function openBatchDir(path: string, secrets: readonly string[] = []): BatchDir {
  const tapesDir = join(path, "tapes");
  try {
    makeDirSync(tapesDir);
  } catch (err) {
    const which = existsSync(path) ? `its tapes folder ${tapesDir}` : `the batch folder ${path}`;
    throw new EddyError("invalid_config", `cannot create ${which}: ${reasonOf(err)}`, { fault: "user" });
  }
  // A symlink planted as `tapes` would take every tape elsewhere: refused (the folder itself is
  // the user's choice). Its files are opened without following one (`WRITING`, fileTapeStore).
  realFolderSync(path, ["tapes"]);
  // Files replaced whole at the end: one that cannot be (a directory in its place) is said now,
  // before any task runs, not after all of them; so is a symlinked results.jsonl.
  for (const name of ["summary.json", "batch.json"]) checkReplaceable(join(path, name));
  checkNotSymlink(join(path, "results.jsonl"));
  const resultsPath = join(path, "results.jsonl");
  const results = readResults(resultsPath);
  const tapes = fileTapeStore(join(path, "tapes"), secrets);
  return {
    path,
    id: batchId(path),
    tapes,
    results,
    summary: readSummary(join(path, "summary.json")),
    append(result) {
      const line = toResultLine(result, path);
      appendRegularFileSync(resultsPath, `${JSON.stringify(line)}\n`, WRITING);
      results.set(line.id, line);
      return line;
    },
    drop(ids) {
      if (ids.size === 0) return;
      for (const id of ids) results.delete(id);
      const text = [...results.values()].map((l) => `${JSON.stringify(l)}\n`).join("");
      replaceFile(resultsPath, text);
    },
    writeSummary(summary) {
      replaceFile(join(path, "summary.json"), `${JSON.stringify(summary, null, 2)}\n`);
    },
  };
}

/**
 * How the batch folder's own files are written and read: errors name the file (a user error).
 * Never through a symlink, nor into a file with other hard links: one planted in the folder would
 * have eddy append to, or empty, any file (or read `summary.json` and `batch.json` from it).
 */
const WRITING = { what: "the batch file", code: "invalid_config", noFollow: true } as const;
const READING = {
  ...WRITING,
  maxBytes: 1024 * 1024 * 1024,
  limitReason: "the most eddy reads of a batch file",
};

/** Writes `path` whole: a temporary file beside it, renamed over it (a reader never sees half). */
function replaceFile(path: string, text: string): void {
  writeRegularFileSync(`${path}.tmp`, text, WRITING);
  try {
    renameSync(`${path}.tmp`, path);
  } catch (err) {
    rmSync(`${path}.tmp`, { force: true });
    throw new EddyError("invalid_config", `cannot write the batch file ${path}: ${reasonOf(err)}`, {
      fault: "user",
      cause: err,
    });
  }
}

/** A file of the folder that `replaceFile` will replace: missing, or a regular file (or a link to one). */
function checkReplaceable(path: string): void {
  let stats: Stats;
  try {
    stats = statSync(path);
  } catch {
    return; // missing (or a dangling link, which the rename replaces)
  }
  if (!stats.isFile())
    throw new EddyError(
      "invalid_config",
      `the batch file ${path} is ${kindOf(stats)}, not a regular file: remove it, or choose another folder with --out`,
      { fault: "user" },
    );
}

/**
 * A symlink, or a file with other hard links, where the folder's file `path` is appended to:
 * refused before any task runs (appending would write into the file it shares with another name).
 */
function checkNotSymlink(path: string): void {
  const stats = lstatOrUndefined(path);
  if (stats?.isSymbolicLink() === true)
    throw new EddyError(
      "invalid_config",
      `the batch file ${path} is a symlink, and eddy never writes its own files through one (it could point anywhere): remove it, or choose another folder with --out`,
      { fault: "user" },
    );
  if (stats?.isFile() === true && stats.nlink > 1)
    throw new EddyError(
      "invalid_config",
      `the batch file ${path} has ${stats.nlink} hard links, and eddy never writes its own files into one that has other names (it could be any file): remove it, or choose another folder with --out`,
      { fault: "user" },
    );
}

function lstatOrUndefined(path: string): Stats | undefined {
  try {
    return lstatSync(path);
  } catch {
    return undefined;
  }
}

/** The text of one of the folder's own files, a regular file read with a bound; undefined when there is none. */
function readOwnFile(path: string): string | undefined {
  return existsSync(path) ? readRegularTextSync(path, READING) : undefined;
}

/** The result lines of `results.jsonl`; a last line cut mid-write (a crash) is dropped and rewritten. */
function readResults(path: string): Map<string, ResultLine> {
  const out = new Map<string, ResultLine>();
  const text = readOwnFile(path);
  if (text === undefined) return out;
  const lines = text.split("\n");
  let clean = true;
  for (const [i, raw] of lines.entries()) {
    if (raw.trim() === "") continue;
    try {
      const line = JSON.parse(raw) as ResultLine;
      if (typeof line.id === "string") out.set(line.id, line);
    } catch {
      if (i < lines.length - 1 && lines.slice(i + 1).some((l) => l.trim() !== ""))
        throw new EddyError("invalid_config", `${path}: line ${i + 1} is not valid JSON; fix or remove it`, {
          fault: "user",
        });
      clean = false;
    }
  }
  if (!clean || (text !== "" && !text.endsWith("\n")))
    writeRegularFileSync(path, [...out.values()].map((l) => `${JSON.stringify(l)}\n`).join(""), WRITING);
  return out;
}

/** An earlier `summary.json`; one that is missing or not JSON is none (the new summary starts afresh). */
function readSummary(path: string): BatchSummary | undefined {
  try {
    const text = readOwnFile(path);
    if (text === undefined) return undefined;
    const value: unknown = JSON.parse(text);
    return value !== null && typeof value === "object" ? (value as BatchSummary) : undefined;
  } catch {
    return undefined;
  }
}

function batchId(path: string): string {
  const file = join(path, "batch.json");
  try {
    const id = (JSON.parse(readOwnFile(file) ?? "{}") as { id?: unknown }).id;
    if (typeof id === "string" && /^[a-z0-9]{8,40}$/.test(id)) return id;
  } catch {}
  const id = randomUUID().replace(/-/g, "").slice(0, 16);
  replaceFile(file, `${JSON.stringify({ id, created_at: new Date().toISOString() })}\n`);
  return id;
}

/** A result as its `results.jsonl` line (paths relative to the batch folder). */
export function toResultLine(result: BatchResult, dir: string): ResultLine {
  const line: ResultLine = {
    id: result.id,
    reason: result.reason,
    output_text: result.outputText,
    result: result.result ?? null,
    usage: result.usage,
    turns: result.turns,
    tool_calls: result.toolCalls,
    duration_ms: result.durationMs,
    tape: result.tape === undefined ? null : relative(dir, result.tape),
    error: result.error ?? null,
  };
  if (result.metadata !== undefined) line.metadata = result.metadata;
  if (result.workspace !== undefined) line.workspace = result.workspace;
  if (result.resumes !== undefined) line.resumed = result.resumes.length;
  if (result.skippedFiles !== undefined) line.skipped_files = result.skippedFiles;
  return line;
}

/** Whether a result line is a failure (`--retry-failed` runs it again). */
export function isFailure(line: ResultLine): boolean {
  return !succeeded(line.reason);
}

/** What `summarize` needs besides the result lines. */
export interface SummaryFacts {
  /** Tasks in the tasks file. */
  tasks: number;
  badLines: number;
  /** This invocation. */
  run: BatchRunRecord;
  /** The summary an earlier invocation wrote: its runs are kept. @defaultValue none */
  previous?: BatchSummary | undefined;
}

/** `summary.json` from the result lines: this invocation's run added to the earlier ones. */
export function summarize(lines: readonly ResultLine[], facts: SummaryFacts): BatchSummary {
  const byReason: Partial<Record<RunEndReason, number>> = {};
  const usage = { input_tokens: 0, output_tokens: 0, total_tokens: 0 };
  for (const line of lines) {
    byReason[line.reason] = (byReason[line.reason] ?? 0) + 1;
    usage.input_tokens += line.usage?.input_tokens ?? 0;
    usage.output_tokens += line.usage?.output_tokens ?? 0;
    usage.total_tokens += line.usage?.total_tokens ?? 0;
  }
  const durations = lines.map((l) => l.duration_ms).sort((a, b) => a - b);
  const runs = [...earlierRuns(facts.previous), { ...facts.run, wall_ms: Math.round(facts.run.wall_ms) }];
  return {
    tasks: facts.tasks,
    finished: lines.length,
    pending: Math.max(0, facts.tasks - lines.length),
    by_reason: byReason,
    failed: lines.filter(isFailure).length,
    usage,
    duration_ms: {
      p50: percentile(durations, 0.5),
      p95: percentile(durations, 0.95),
      max: durations.at(-1) ?? 0,
    },
    wall_ms: runs.reduce((sum, r) => sum + r.wall_ms, 0),
    runs,
    bad_lines: facts.badLines,
    finished_at: new Date().toISOString(),
  };
}

/**
 * The runs an earlier summary recorded; a summary from before `runs` existed counts as one run
 * (its `wall_ms`, started `wall_ms` before its `finished_at`). Entries that are not runs are dropped.
 */
function earlierRuns(previous: BatchSummary | undefined): BatchRunRecord[] {
  if (previous === undefined) return [];
  const num = (v: unknown) => (typeof v === "number" && Number.isFinite(v) && v >= 0 ? v : undefined);
  if (Array.isArray(previous.runs)) {
    return previous.runs.flatMap((r: Partial<BatchRunRecord> | null) => {
      const wall = num(r?.wall_ms);
      if (r === null || typeof r !== "object" || wall === undefined) return [];
      return [
        {
          started_at: typeof r.started_at === "string" ? r.started_at : null,
          wall_ms: wall,
          tasks_run: num(r.tasks_run) ?? 0,
        },
      ];
    });
  }
  const wall = num(previous.wall_ms);
  if (wall === undefined) return [];
  const finished = typeof previous.finished_at === "string" ? Date.parse(previous.finished_at) : Number.NaN;
  const started = Number.isNaN(finished) ? null : new Date(finished - wall).toISOString();
  return [{ started_at: started, wall_ms: wall, tasks_run: num(previous.finished) ?? 0 }];
}

/** Nearest-rank percentile of sorted values (0 for none). */
function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return 0;
  return sorted[Math.min(sorted.length - 1, Math.ceil(p * sorted.length) - 1)] as number;
}
