/**
 * How a diff treats line endings, one definition for both places that diff a file's change: the
 * approval prompt in the terminal (src/cli/approval-view.ts) and the run viewer's page
 * (src/view/client/diff-view.ts, which scripts/build.mjs bundles for the browser on its own). A
 * CRLF file is compared by its lines' text and its endings are said once, so a one-line change is
 * not shown as every line changed (docs/pitfalls.md #113, #120); an `apply_patch` envelope, a diff
 * already, is shown by the same rules (docs/pitfalls.md #122). It imports nothing, so the page's
 * bundle takes it as it is (docs/pitfalls.md #114).
 */

/** What ends the lines of a text: no line break at all, LF, CRLF, or both. */
export type Endings = "none" | "LF" | "CRLF" | "mixed";

/** The line endings of `text` (a CR not before an LF is not a line ending). */
export function endingsOf(text: string): Endings {
  let lf = 0;
  let crlf = 0;
  for (let i = text.indexOf("\n"); i !== -1; i = text.indexOf("\n", i + 1)) {
    lf++;
    if (text.charCodeAt(i - 1) === 13) crlf++;
  }
  if (lf === 0) return "none";
  return crlf === 0 ? "LF" : crlf === lf ? "CRLF" : "mixed";
}

/** The two sides of a change as they are diffed, and the one note about their line endings. */
export interface DiffableText {
  before: string;
  after: string;
  /** What the endings are or become, e.g. `CRLF line endings, not shown below`; none for LF. */
  note?: string;
}

/**
 * `before` → `after` as they are diffed: without the CR of each CRLF when a side is all CRLF (the
 * note says so). A side that mixes CRLF and LF keeps its CRs, for the view to mark each one (`⟨CR⟩`),
 * so no change of a single line's ending is hidden; a CR not before an LF is always kept.
 */
export function diffableEndings(before: string, after: string): DiffableText {
  const b = endingsOf(before);
  const a = endingsOf(after);
  if (b === "mixed" || a === "mixed")
    return { before, after, note: "mixed CRLF and LF line endings; each CR shows as ⟨CR⟩" };
  if (b !== "CRLF" && a !== "CRLF") return { before, after };
  const note =
    b === "CRLF" && a === "LF"
      ? "its CRLF line endings become LF, on every line"
      : b === "LF" && a === "CRLF"
        ? "its LF line endings become CRLF, on every line"
        : "CRLF line endings, not shown below";
  return { before: before.replaceAll("\r\n", "\n"), after: after.replaceAll("\r\n", "\n"), note };
}

/** One text as it is shown, and the one note about its line endings (`DiffableText`, one side). */
export interface ShownText {
  text: string;
  /** As `DiffableText.note`: `CRLF line endings, not shown below`, the mixed note; none for LF. */
  note?: string;
}

/**
 * A text that is a diff already (an `apply_patch` envelope) as it is shown: the rules of
 * `diffableEndings` with the text on both sides, so an all-CRLF text loses the CR of each CRLF and
 * says so once, and a mixed one keeps every CR for the view to mark (docs/pitfalls.md #122).
 */
export function shownEndings(text: string): ShownText {
  const { after, note } = diffableEndings(text, text);
  return note === undefined ? { text: after } : { text: after, note };
}
