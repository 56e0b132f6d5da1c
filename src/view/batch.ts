/**
 * A batch folder as `eddy batch … --out DIR` writes it: `DIR/results.jsonl` (one line per task as
 * it finished: `id`, `reason`, `output_text`, `result`, `usage`, `turns`, `tool_calls`,
 * `duration_ms`, `tape`, `error`), `DIR/tapes/ID.tape` and `DIR/summary.json`. A bad results line is
 * skipped and reported with its line number; a task that ran twice (`--retry-failed`) shows its
 * last line; a tape that cannot be read leaves its row without a link, saying why.
 */

import { existsSync } from "node:fs";
import { isAbsolute, join } from "node:path";
import { EddyError } from "../errors.js";
import { TAPE_MAX_BYTES } from "../replay/tape.js";
import { realPathInside } from "../util/inside.js";
import { forEachLine, isJsonObject as isObject, JSON_MAX_DEPTH, nestsDeeperThan } from "../util/json.js";
import { readRegularTextSync } from "../util/regular-file.js";
import { durationText, summaryLabel } from "./labels.js";
import { VIEW_LIMITS } from "./limits.js";
import { shortValue } from "./notes.js";
import { tokenCounts } from "./turn-state.js";
import type { BatchRowView, BatchView } from "./view-data.js";

/** A batch folder's results, with where each task's tape should be. */
export interface BatchFolder {
  view: BatchView;
  /** Tape path per row (parallel to `view.rows`), undefined when the task names none and `tapes/ID.tape` is absent. */
  tapes: Array<string | undefined>;
}

/** Whether `dir` looks like a batch folder (it has `results.jsonl` or `summary.json`). */
export function isBatchFolder(dir: string): boolean {
  return existsSync(join(dir, "results.jsonl")) || existsSync(join(dir, "summary.json"));
}

/** The bounds `readBatchFolder` keeps (`VIEW_LIMITS`; smaller in tests). */
export type BatchLimits = Record<"batchRows" | "batchProblems" | "batchBadLines", number>;

/**
 * Reads a batch folder's `results.jsonl` and `summary.json`. What the page holds is bounded as a
 * run's is (`VIEW_LIMITS`): the first `batchRows` tasks and `batchProblems` problems, the rest
 * counted. A file of a million bad lines (or tasks) is as untrusted as a tape: it made a list of a
 * million problems (rows), minutes of work and a page of hundreds of MB (docs/pitfalls.md #100).
 */
export function readBatchFolder(dir: string, limits: BatchLimits = VIEW_LIMITS): BatchFolder {
  const problems = new BoundedList(limits.batchProblems);
  const byId = new Map<string, { row: BatchRowView; tape: string | undefined }>();
  let leftOut = 0;
  const resultsPath = join(dir, "results.jsonl");
  if (existsSync(resultsPath)) {
    const text = readRegularTextSync(resultsPath, {
      what: "the results file",
      maxBytes: TAPE_MAX_BYTES,
      code: "tape_invalid",
    });
    let bad = 0;
    forEachLine(text, (line, i) => {
      if (line.trim() === "") return;
      // A task past the bound is not looked at (its tape not even looked for), only counted.
      const parsed = parseResultLine(line, dir, (id) => byId.has(id) || byId.size < limits.batchRows);
      if (parsed === "left out") leftOut++;
      else if (typeof parsed !== "string") byId.set(parsed.row.id, parsed);
      else if (++bad > limits.batchBadLines) {
        problems.always(
          `results.jsonl has more than ${limits.batchBadLines.toLocaleString("en-US")} bad lines: it is not read past line ${i + 1}`,
        );
        return false;
      } else problems.push(`results.jsonl line ${i + 1}: ${parsed}`);
      return;
    });
  } else {
    problems.always("no results.jsonl in the folder");
  }
  if (leftOut > 0)
    problems.always(
      `results.jsonl has ${leftOut.toLocaleString("en-US")} more task line(s) than the page shows: the table has its first ${limits.batchRows.toLocaleString("en-US")} tasks`,
    );
  const summary = readSummary(join(dir, "summary.json"), problems, byId.size > 0);
  const entries = [...byId.values()];
  return {
    view: { dir, rows: entries.map((e) => e.row), summary, problems: problems.list() },
    tapes: entries.map((e) => e.tape),
  };
}

/** The first `max` problems, a count of the others, and the notes that are always listed. */
class BoundedList {
  private readonly items: string[] = [];
  private readonly notes: string[] = [];
  private more = 0;

  constructor(private readonly max: number) {}

  push(item: string): void {
    if (this.items.length < this.max) this.items.push(item);
    else this.more++;
  }

  /** A problem about the whole folder (few of them): listed whatever the count. */
  always(note: string): void {
    this.notes.push(note);
  }

  list(): string[] {
    const more =
      this.more === 0 ? [] : [`… and ${this.more.toLocaleString("en-US")} more problem(s), not listed`];
    return [...this.items, ...more, ...this.notes];
  }
}

function parseResultLine(
  line: string,
  dir: string,
  shown: (id: string) => boolean,
): { row: BatchRowView; tape: string | undefined } | string {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    return "not valid JSON";
  }
  if (!isObject(value)) return "not a JSON object";
  // Its fields are walked (an error shown as JSON): 100,000 levels overflowed the stack.
  if (nestsDeeperThan(value, JSON_MAX_DEPTH)) return `nests deeper than ${JSON_MAX_DEPTH} levels`;
  const id = typeof value.id === "string" || typeof value.id === "number" ? String(value.id) : undefined;
  if (id === undefined) return 'no "id"';
  if (!shown(id)) return "left out";
  const num = (v: unknown) => (typeof v === "number" && Number.isFinite(v) ? v : null);
  const tokens = isObject(value.usage) ? tokenCounts(value.usage) : undefined;
  const row: BatchRowView = {
    id,
    reason: typeof value.reason === "string" ? value.reason : "unknown",
    turns: num(value.turns),
    tool_calls: num(value.tool_calls),
    tokens_in: tokens?.input ?? null,
    tokens_out: tokens?.output ?? null,
    duration_ms: num(value.duration_ms),
  };
  if (value.error !== undefined && value.error !== null) {
    const e = value.error;
    row.error =
      isObject(e) && typeof e.message === "string"
        ? `${String(e.code ?? "error")}: ${e.message}`
        : shortValue(e, 300);
  }
  if (typeof value.output_text === "string" && value.output_text !== "") {
    row.output = shortValue(value.output_text.split("\n").find((l) => l.trim() !== "") ?? "", 160);
  }
  const tape = tapePath(value.tape, id, dir);
  if (tape.problem !== undefined) row.tape_problem = tape.problem;
  return { row, tape: tape.path };
}

/**
 * The task's tape: its `tape` field (absolute, or relative to the folder), else `tapes/ID.tape` if
 * it exists; its real path, and only when that is inside the folder. A results line is as untrusted
 * as the tapes: `"tape": "/home/me/other.tape"` or a symlink out of the folder would copy a tape
 * from anywhere into a page meant to be shared. Such a tape is refused, alike whether it exists.
 */
function tapePath(field: unknown, id: string, dir: string): { path?: string; problem?: string } {
  const named = typeof field === "string" && field !== "";
  const path = named ? (isAbsolute(field) ? field : join(dir, field)) : join(dir, "tapes", `${id}.tape`);
  const real = realPathInside(dir, path);
  if (real === undefined) {
    const shown = named ? shortValue(field, 200) : `tapes/${shortValue(id, 200)}.tape`;
    return {
      problem: `the tape ${shown} is not inside the batch folder (or leads out of it through a symlink): not read`,
    };
  }
  if (!named && !existsSync(real)) return {};
  return { path: real };
}

/**
 * `summary.json` as the page's tiles: `[label, value]` in words (`labels.ts`), durations as
 * durations, `runs` as their count and wall times. `by_reason.*` is left out when the folder has
 * result lines: the page counts reasons from them.
 */
function readSummary(path: string, problems: BoundedList, withRows: boolean): Array<[string, string]> {
  if (!existsSync(path)) return [];
  let value: unknown;
  try {
    value = JSON.parse(readRegularTextSync(path, { what: "summary.json", maxBytes: TAPE_MAX_BYTES }));
  } catch (err) {
    problems.always(
      `summary.json: ${err instanceof SyntaxError ? "not valid JSON" : (err as Error).message}`,
    );
    return [];
  }
  if (nestsDeeperThan(value, JSON_MAX_DEPTH)) {
    problems.always(`summary.json: nests deeper than ${JSON_MAX_DEPTH} levels`);
    return [];
  }
  const pairs: Array<[string, unknown]> = [];
  flatten(value, "", pairs);
  const tiles = pairs.filter(([key]) => !(withRows && key.startsWith("by_reason.")));
  if (tiles.length > VIEW_LIMITS.listEntries)
    problems.always(
      `summary.json has more than ${VIEW_LIMITS.listEntries} values: the first ${VIEW_LIMITS.listEntries} are shown`,
    );
  return tiles.slice(0, VIEW_LIMITS.listEntries).map(([key, v]) => [summaryLabel(key), summaryValue(key, v)]);
}

/** `{a: {b: 1}}` → `[["a.b", 1]]`; arrays and scalars as they are. Stops once `out` has more than a page shows. */
function flatten(value: unknown, prefix: string, out: Array<[string, unknown]>): void {
  if (isObject(value)) {
    for (const [k, v] of Object.entries(value)) {
      if (out.length > VIEW_LIMITS.listEntries * 2) return;
      flatten(v, prefix === "" ? k : `${prefix}.${k}`, out);
    }
  } else {
    out.push([prefix === "" ? "summary" : prefix, value]);
  }
}

function summaryValue(key: string, value: unknown): string {
  const isMs = key.endsWith("_ms") || key.startsWith("duration_ms.");
  if (typeof value === "number") return isMs ? durationText(value) : value.toLocaleString("en-US");
  if (key === "runs" && Array.isArray(value)) {
    const walls = value.map((r) => (isObject(r) && typeof r.wall_ms === "number" ? r.wall_ms : undefined));
    if (walls.every((w) => w !== undefined))
      return `${value.length}${value.length > 0 ? ` (${walls.map((w) => durationText(w as number)).join(" + ")})` : ""}`;
  }
  return shortValue(value, 200);
}

/** Thrown when a folder has neither batch results nor tapes. */
export function notAViewFolder(dir: string): EddyError {
  return new EddyError(
    "invalid_argument",
    `${dir} is neither a batch folder (results.jsonl, summary.json, tapes/) nor a folder of .tape files`,
    { fault: "user" },
  );
}
