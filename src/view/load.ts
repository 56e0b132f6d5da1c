/**
 * What `eddy view TAPE…|DIR` shows: tapes given by path (a run list when there are several), a
 * batch folder (its task table, each task linking to its run), or a folder of tapes. Runs are read
 * lazily, one at a time, as the page is rendered, each tape a frame at a time.
 */
import { readdirSync, statSync } from "node:fs";
import { basename, join, relative } from "node:path";
import { EddyError } from "../errors.js";
import { realPathInside } from "../util/inside.js";
import { isBatchFolder, notAViewFolder, readBatchFolder } from "./batch.js";
import type { PageInput, PageRun } from "./page.js";
import { RawLines } from "./raw-lines.js";
import { readViewTape } from "./read.js";
import { RunBuilder, type TapeFacts } from "./run-model.js";
import type { BatchView, RunIndexEntry } from "./view-data.js";

/** The page input for the paths given on the command line. Unreadable tapes given by path throw. */
export function collectViewInput(paths: string[]): PageInput {
  if (paths.length === 0) throw usage("give one or more tapes, or a batch folder (eddy view TAPE…|DIR)");
  const dirs = paths.filter(isDirectory);
  if (dirs.length > 0 && paths.length > 1) {
    throw usage(`${dirs[0]} is a folder: give either tapes or one batch folder, not both`);
  }
  const dir = dirs[0];
  if (dir === undefined) {
    return {
      title:
        paths.length === 1
          ? `eddy view — ${basename(paths[0] as string)}`
          : `eddy view — ${paths.length} runs`,
      runs: tapeRuns(paths),
    };
  }
  if (isBatchFolder(dir)) {
    const folder = readBatchFolder(dir);
    return {
      title: `eddy batch — ${basename(dir)} (${folder.view.rows.length} tasks)`,
      runs: batchRuns(folder.view, folder.tapes),
      batch: folder.view,
    };
  }
  const tapes = tapesIn(dir);
  if (tapes.length === 0) throw notAViewFolder(dir);
  return { title: `eddy view — ${basename(dir)} (${tapes.length} runs)`, runs: tapeRuns(tapes) };
}

/** A tape of a folder, or why it is not read. */
type FolderTape = string | { path: string; problem: string };

function* tapeRuns(paths: FolderTape[]): Generator<PageRun> {
  for (const tape of paths) {
    if (typeof tape === "string") yield runOf(tape, basename(tape));
    else yield { entry: { label: basename(tape.path), source: tape.path, problem: tape.problem } };
  }
}

// The rows get their `run` index (or `tape_problem`) as the runs are consumed; the page serializes
// the batch view after all runs, so the table sees them.
function* batchRuns(batch: BatchView, tapes: Array<string | undefined>): Generator<PageRun> {
  let index = 0;
  for (const [i, row] of batch.rows.entries()) {
    const path = tapes[i];
    if (path === undefined) {
      row.tape_problem ??= "no tape";
      continue;
    }
    try {
      const run = runOf(path, row.id);
      row.run = index++;
      yield run;
    } catch (err) {
      row.tape_problem = err instanceof Error ? err.message : String(err);
    }
  }
}

/** One run of the page, its tape read frame by frame into a bounded view (limits.ts). */
function runOf(path: string, label: string): PageRun {
  let builder: RunBuilder | undefined;
  const raw = new RawLines();
  const scan = readViewTape(path, {
    header: (header) => {
      builder = new RunBuilder(header);
    },
    frame: (record, line) => {
      builder?.add(record);
      raw.add(line, record);
    },
    unread: (line, bytes) => raw.unread(line, bytes),
  });
  const facts: TapeFacts = { cut: scan.cut, frames: scan.frames, problems: scan.problems };
  if (scan.header !== undefined) facts.header = scan.header;
  const view = (builder ?? new RunBuilder()).finish(facts);
  const entry: RunIndexEntry = {
    label,
    source: path,
    run_id: view.run_id,
    reason: view.reason,
    model: view.model,
    turns: view.turns,
    tool_calls: view.tool_calls,
    tokens: view.tokens,
    duration_ms: view.duration_ms,
  };
  return { entry, payload: raw.payload(view) };
}

/**
 * `*.tape` and `*.jsonl` files in `dir` and `dir/tapes`, sorted by name. A symlink whose real path
 * leaves `dir` is not read (the page is shared; it would copy a tape from anywhere into it): it is
 * listed with a note naming it, never its target.
 */
function tapesIn(dir: string): FolderTape[] {
  const found: FolderTape[] = [];
  for (const d of [dir, join(dir, "tapes")]) {
    if (!isDirectory(d)) continue;
    const inside = realPathInside(dir, d);
    for (const name of readdirSync(d).sort()) {
      const path = join(d, name);
      if (!/\.(tape|jsonl)$/.test(name) || isDirectory(path)) continue;
      const real = inside === undefined ? undefined : realPathInside(dir, path);
      found.push(real !== undefined ? path : { path, problem: outsideNote(dir, path) });
    }
  }
  return found;
}

function outsideNote(dir: string, path: string): string {
  return `${relative(dir, path)} is a symlink leading outside ${basename(dir)} (or nowhere): not read`;
}

function isDirectory(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}

function usage(message: string): EddyError {
  return new EddyError("invalid_argument", message, { fault: "user" });
}
