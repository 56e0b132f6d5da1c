/**
 * File changes as diffs: `write_file` against what the run last saw of the file (jsdiff's
 * structuredPatch), `apply_patch` by colouring its own envelope lines (it already is a diff).
 */
import { structuredPatch } from "diff";
import type { FileDiffView } from "../view-data.js";
import { h } from "./dom.js";

/** Beyond this many characters on either side, the diff is not computed (the new content is shown). */
const DIFF_MAX_CHARS = 400_000;

/** A `write_file` call as a unified diff. */
export function fileDiff(diff: FileDiffView): HTMLElement {
  const title = diff.append ? `append to ${diff.path}` : `write ${diff.path}`;
  const before = diff.before;
  if (before === null || before.length > DIFF_MAX_CHARS || diff.after.length > DIFF_MAX_CHARS) {
    const note =
      before === null
        ? diff.append
          ? "appended content (the file's earlier content was not seen in this run)"
          : "new content (the file's earlier content, if any, was not seen in this run)"
        : "the file is too large to diff here; new content shown";
    const added = diff.after.split("\n");
    return h(
      "div",
      { class: "diff" },
      h("div", { class: "diff-title" }, title, h("span", { class: "muted" }, ` — ${note}`)),
      h("pre", null, ...added.map((line) => h("span", { class: "diff-add" }, `+${line}\n`))),
    );
  }
  const patch = structuredPatch(diff.path, diff.path, before, diff.after, "", "", { context: 3 });
  const lines: HTMLElement[] = [];
  for (const hunk of patch.hunks) {
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
