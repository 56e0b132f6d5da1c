/**
 * Lines for the approval prompt that hide nothing silently (docs/pitfalls.md #78): what a call
 * would run or write is shown whole, or the prompt says how much is not shown. A long run of
 * blank characters inside a line becomes a visible marker (`⟨300 spaces⟩`), a run of blank lines
 * one marker line (`⟨260 empty lines⟩`, a diff's `+`/`-`/` ` prefix kept), and a long line is
 * wrapped onto continuation lines (`↳ …`), never cut.
 */

import { wholeCut } from "../util/text.js";

/** Longest line shown; a longer one continues on the next lines. */
export const MAX_LINE_CHARS = 200;
/** Blank characters in a row from which a run is shown as a marker (indentation stays as it is). */
const MIN_BLANK_RUN = 24;
/** Blank lines in a row from which a run is shown as one marker line. */
const MIN_BLANK_LINES = 3;

/** Spaces, tabs, other Unicode spaces and the invisible format characters that show as nothing. */
const BLANK_RUN = new RegExp(`[\\s\\u200b-\\u200d\\u2060\\ufeff]{${MIN_BLANK_RUN},}`, "g");
/** A blank line, maybe behind a diff's one-character prefix. */
const BLANK_LINE = /^([+\- ]?)[\s\u200b-\u200d\u2060\ufeff]*$/;

/** `lines` (already free of control sequences) as lines to show, every character accounted for. */
export function visibleLines(lines: readonly string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < lines.length; ) {
    const line = lines[i] as string;
    const prefix = BLANK_LINE.exec(line)?.[1];
    let end = i + 1;
    if (prefix !== undefined) {
      while (end < lines.length && BLANK_LINE.exec(lines[end] as string)?.[1] === prefix) end++;
    }
    if (end - i >= MIN_BLANK_LINES) out.push(`${prefix}⟨${end - i} empty lines⟩`);
    else for (let k = i; k < end; k++) out.push(...wrap(markBlankRuns(lines[k] as string)));
    i = end;
  }
  return out;
}

/**
 * The first `max` of `lines`, and when there are more, a last line saying how many lines and
 * characters are not shown and that the call should be denied unless they were checked.
 */
export function capLines(lines: readonly string[], max: number): string[] {
  if (lines.length <= max) return [...lines];
  const hidden = lines.slice(max);
  const chars = hidden.reduce((sum, line) => sum + line.length, 0);
  return [
    ...lines.slice(0, max),
    `… ${hidden.length} more lines (${chars} characters) are not shown: answer n unless you have checked them`,
  ];
}

function markBlankRuns(line: string): string {
  return line.replace(BLANK_RUN, (run) => {
    const what = /^ +$/.test(run) ? "spaces" : /^\t+$/.test(run) ? "tabs" : "blank characters";
    return `⟨${run.length} ${what}⟩`;
  });
}

/** `line` in pieces of at most `MAX_LINE_CHARS` (never splitting a surrogate pair), continuations marked. */
function wrap(line: string): string[] {
  if (line.length <= MAX_LINE_CHARS) return [line];
  const pieces: string[] = [];
  for (let at = 0; at < line.length; ) {
    const end = wholeCut(line, at + MAX_LINE_CHARS);
    pieces.push(at === 0 ? line.slice(at, end) : `↳ ${line.slice(at, end)}`);
    at = end;
  }
  return pieces;
}
