/**
 * File changes as diffs: `write_file` against what the run last saw of the file (jsdiff's
 * structuredPatch), `apply_patch` by colouring its own envelope lines (it already is a diff).
 */
import { type StructuredPatchHunk, structuredPatch } from "diff";
import { DIFF_MAX_EDITS } from "../../util/diff-bounds.js";
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

/** A `write_file` call as a unified diff. */
export function fileDiff(diff: FileDiffView): HTMLElement {
  const title = diff.append ? `append to ${diff.path}` : `write ${diff.path}`;
  const before = diff.before;
  const hunks = before === null ? undefined : diffHunks(diff.path, before, diff.after);
  if (hunks === undefined) {
    const note =
      before === null
        ? diff.append
          ? "appended content (the file's earlier content was not seen in this run)"
          : "new content (the file's earlier content, if any, was not seen in this run)"
        : "the change is too large to diff here; new content shown";
    const added = diff.after.split("\n");
    return h(
      "div",
      { class: "diff" },
      h("div", { class: "diff-title" }, title, h("span", { class: "muted" }, ` — ${note}`)),
      h("pre", null, ...added.map((line) => h("span", { class: "diff-add" }, `+${line}\n`))),
    );
  }
  const lines: HTMLElement[] = [];
  for (const hunk of hunks) {
    lines.push(
      h(
        "span",
        { class: "diff-hunk" },
        `@@ -${hunk.oldStart},${hunk.oldLines} +${hunk.newStart},${hunk.newLines} @@\n`,
      ),
    );
    for (const line of hunk.lines) lines.push(h("span", { class: lineClass(line) }, `${line}\n`));
  }
  return h(
    "div",
    { class: "diff" },
    h("div", { class: "diff-title" }, title),
    lines.length === 0 ? h("div", { class: "muted" }, "no change") : h("pre", null, ...lines),
  );
}

/** An `apply_patch` envelope with its lines coloured. */
export function patchView(patch: string): HTMLElement {
  const lines = patch.split("\n").map((line) => h("span", { class: lineClass(line) }, `${line}\n`));
  return h("div", { class: "diff" }, h("div", { class: "diff-title" }, "patch"), h("pre", null, ...lines));
}

function lineClass(line: string): string {
  if (line.startsWith("***")) return "diff-file";
  if (line.startsWith("@@")) return "diff-hunk";
  if (line.startsWith("+")) return "diff-add";
  if (line.startsWith("-")) return "diff-del";
  return "diff-ctx";
}
