/**
 * File changes as diffs: `write_file` against what the run last saw of the file (jsdiff's
 * structuredPatch), `apply_patch` by colouring its own envelope lines (it already is a diff); line
 * endings in both as src/util/line-endings.ts says.
 */
import { type StructuredPatchHunk, structuredPatch } from "diff";
import { DIFF_MAX_EDITS } from "../../util/diff-bounds.js";
import { diffableEndings, shownEndings } from "../../util/line-endings.js";
import type { FileDiffView } from "../view-data.js";
import { h } from "./dom.js";

/** Beyond this many characters on either side, the diff is not computed (the new content is shown). */
const DIFF_MAX_CHARS = 400_000;

/**
 * The hunks of `before` → `after`, or undefined when the change is too large to diff: past
 * `DIFF_MAX_EDITS` (the approval prompt's bound too) the new content is shown, as for a file too
 * large (docs/pitfalls.md #89).
 */
export function diffHunks(path: string, before: string, after: string): StructuredPatchHunk[] | undefined {
  if (before.length > DIFF_MAX_CHARS || after.length > DIFF_MAX_CHARS) return undefined;
  // Against an empty side a diff is linear: only a change between two texts is bounded.
  const bounded = before !== "" && after !== "";
  const patch = structuredPatch(path, path, before, after, "", "", {
    context: 3,
    ...(bounded ? { maxEditLength: DIFF_MAX_EDITS } : {}),
  });
  return patch?.hunks;
}

/** What the page shows of a `write_file` call: its title, notes, and diff lines (text ends in \n). */
export interface FileDiffLines {
  title: string;
  /** Said after the title: the file's line endings, why the new content is shown whole. */
  notes: string[];
  lines: Array<{ class: string; text: string }>;
  /** When there are no lines: what to say instead. */
  empty?: string;
}

/**
 * A `write_file` call as the lines of a unified diff. A CRLF file is diffed by its lines' text, its
 * line endings said once in the notes, and each CR left in a line shows as `⟨CR⟩` (a mixed file's,
 * a lone CR), as in the approval prompt (src/util/line-endings.ts, docs/pitfalls.md #113, #120).
 */
export function fileDiffLines(diff: FileDiffView): FileDiffLines {
  const title = diff.append ? `append to ${diff.path}` : `write ${diff.path}`;
  const { before, after, note } = diffableEndings(diff.before ?? "", diff.after);
  const hunks = diff.before === null ? undefined : diffHunks(diff.path, before, after);
  const notes = note === undefined ? [] : [note];
  if (hunks === undefined) {
    notes.push(
      diff.before === null
        ? diff.append
          ? "appended content (the file's earlier content was not seen in this run)"
          : "new content (the file's earlier content, if any, was not seen in this run)"
        : "the change is too large to diff here; new content shown",
    );
    const added = after.split("\n").map((line) => ({ class: "diff-add", text: `+${crShown(line)}\n` }));
    return { title, notes, lines: added };
  }
  const lines: FileDiffLines["lines"] = [];
  for (const hunk of hunks) {
    const range = `@@ -${hunk.oldStart},${hunk.oldLines} +${hunk.newStart},${hunk.newLines} @@\n`;
    lines.push({ class: "diff-hunk", text: range });
    for (const line of hunk.lines) lines.push({ class: lineClass(line), text: `${crShown(line)}\n` });
  }
  if (lines.length > 0) return { title, notes, lines };
  return { title, notes, lines, empty: diff.before === diff.after ? "no change" : "no other change" };
}

/** A `write_file` call as a unified diff (`fileDiffLines`). */
export function fileDiff(diff: FileDiffView): HTMLElement {
  const view = fileDiffLines(diff);
  return diffBox(
    view.title,
    view.notes,
    view.empty !== undefined ? h("div", { class: "muted" }, view.empty) : linesPre(view.lines),
  );
}

/** A diff's box: its title with its notes, then its body (both diff views). */
function diffBox(title: string, notes: readonly string[], body: HTMLElement): HTMLElement {
  const shown = notes.map((n) => h("span", { class: "muted" }, ` — ${n}`));
  return h("div", { class: "diff" }, h("div", { class: "diff-title" }, title, ...shown), body);
}

/** Classed lines in a `pre`. */
function linesPre(lines: ReadonlyArray<{ class: string; text: string }>): HTMLElement {
  return h("pre", null, ...lines.map((line) => h("span", { class: line.class }, line.text)));
}

/** A diff line with each CR it keeps as a marker: the page would show a raw CR as nothing at all. */
function crShown(line: string): string {
  return line.replaceAll("\r", "⟨CR⟩");
}

/** What the page shows of an `apply_patch` envelope: notes (its line endings) and coloured lines. */
export interface PatchLines {
  notes: string[];
  lines: Array<{ class: string; text: string }>;
}

/**
 * An `apply_patch` envelope's lines, each classed by its first character. A CRLF envelope (what
 * the tool's parser takes as well as LF) shows without the CRs and says its endings once; a mixed
 * one keeps each CR, shown as `⟨CR⟩`, as a lone CR always is (src/util/line-endings.ts,
 * docs/pitfalls.md #120, #122): each line used to reach the page with its raw CR.
 */
export function patchLines(patch: string): PatchLines {
  const { text, note } = shownEndings(patch);
  const lines = text.split("\n").map((line) => ({ class: lineClass(line), text: `${crShown(line)}\n` }));
  return { notes: note === undefined ? [] : [note], lines };
}

/** An `apply_patch` envelope with its lines coloured (`patchLines`). */
export function patchView(patch: string): HTMLElement {
  const view = patchLines(patch);
  return diffBox("patch", view.notes, linesPre(view.lines));
}

function lineClass(line: string): string {
  if (line.startsWith("***")) return "diff-file";
  if (line.startsWith("@@")) return "diff-hunk";
  if (line.startsWith("+")) return "diff-add";
  if (line.startsWith("-")) return "diff-del";
  return "diff-ctx";
}
