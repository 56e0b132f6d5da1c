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
import { isJsonObject as isObject } from "../util/json.js";
import { readRegularTextSync } from "../util/regular-file.js";
import { durationText, summaryLabel } from "./labels.js";
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

/** Reads a batch folder's `results.jsonl` and `summary.json`. */
export function readBatchFolder(dir: string): BatchFolder {
  const problems: string[] = [];
  const byId = new Map<string, { row: BatchRowView; tape: string | undefined }>();
  const resultsPath = join(dir, "results.jsonl");
  if (existsSync(resultsPath)) {
    readRegularTextSync(resultsPath, {
      what: "the results file",
      maxBytes: TAPE_MAX_BYTES,
      code: "tape_invalid",
    })
      .split("\n")
      .forEach((line, i) => {
        if (line.trim() === "") return;
        const parsed = parseResultLine(line, dir);
        if (typeof parsed === "string") problems.push(`results.jsonl line ${i + 1}: ${parsed}`);
        else byId.set(parsed.row.id, parsed);
      });
  } else {
    problems.push("no results.jsonl in the folder");
  }
  const summary = readSummary(join(dir, "summary.json"), problems, byId.size > 0);
  const entries = [...byId.values()];
  return {
    view: { dir, rows: entries.map((e) => e.row), summary, problems },
    tapes: entries.map((e) => e.tape),
  };
}

function parseResultLine(
  line: string,
  dir: string,
): { row: BatchRowView; tape: string | undefined } | string {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    return "not valid JSON";
  }
  if (!isObject(value)) return "not a JSON object";
  const id = typeof value.id === "string" || typeof value.id === "number" ? String(value.id) : undefined;
  if (id === undefined) return 'no "id"';
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
function readSummary(path: string, problems: string[], withRows: boolean): Array<[string, string]> {
  if (!existsSync(path)) return [];
  let value: unknown;
  try {
    value = JSON.parse(readRegularTextSync(path, { what: "summary.json", maxBytes: TAPE_MAX_BYTES }));
  } catch (err) {
    problems.push(`summary.json: ${err instanceof SyntaxError ? "not valid JSON" : (err as Error).message}`);
    return [];
  }
  const pairs: Array<[string, unknown]> = [];
  flatten(value, "", pairs);
  return pairs
    .filter(([key]) => !(withRows && key.startsWith("by_reason.")))
    .map(([key, v]) => [summaryLabel(key), summaryValue(key, v)]);
}

/** `{a: {b: 1}}` → `[["a.b", 1]]`; arrays and scalars as they are. */
function flatten(value: unknown, prefix: string, out: Array<[string, unknown]>): void {
  if (isObject(value)) {
    for (const [k, v] of Object.entries(value)) flatten(v, prefix === "" ? k : `${prefix}.${k}`, out);
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
