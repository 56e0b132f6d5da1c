/**
 * Applies the hunks of one `*** Update File:` operation to a file's text, in memory. Each hunk's
 * old lines (context and `-`) are searched from where the previous hunk ended, first exactly, then
 * ignoring trailing whitespace, then surrounding whitespace, then typographic punctuation (the
 * Codex fallbacks). The file's line ending (LF or CRLF) and its final newline (or lack of one) are
 * kept. A hunk that does not match names the first line that could not be found.
 */
import type { UpdateChunk } from "./patch-parser.js";

/** A hunk that does not fit the file. */
export class PatchMismatchError extends Error {
  override readonly name = "PatchMismatchError";
}

type Normalize = (line: string) => string;

const PUNCTUATION: [RegExp, string][] = [
  [/[\u2010-\u2015\u2212]/g, "-"],
  [/[\u2018\u2019\u201a\u201b]/g, "'"],
  [/[\u201c\u201d\u201e\u201f]/g, '"'],
  [/[\u00a0\u2002-\u200a\u202f\u205f\u3000]/g, " "],
];

/** Comparison levels, strictest first. */
const LEVELS: Normalize[] = [
  (l) => l,
  (l) => l.trimEnd(),
  (l) => l.trim(),
  (l) => PUNCTUATION.reduce((s, [re, to]) => s.replace(re, to), l.trim()),
];

/** The input of the `apply_chunks` worker task. */
export interface ChunksInput {
  content: string;
  chunks: UpdateChunk[];
  path: string;
}

/** The updated text, or why the hunks do not fit. */
export type ChunksOutcome = { updated: string } | { mismatch: string };

/** `applyChunks` with a mismatch as a value (for the worker: errors lose their class crossing threads). */
export function applyChunksTask(input: ChunksInput): ChunksOutcome {
  try {
    return { updated: applyChunks(input.content, input.chunks, input.path) };
  } catch (error) {
    if (error instanceof PatchMismatchError) return { mismatch: error.message };
    throw error;
  }
}

/** Returns `content` with `chunks` applied. Throws `PatchMismatchError` naming `path` and the line. */
export function applyChunks(content: string, chunks: readonly UpdateChunk[], path: string): string {
  const eol = content.includes("\r\n") ? "\r\n" : "\n";
  const lines = content === "" ? [] : content.split(eol === "\r\n" ? /\r?\n/ : "\n");
  const finalNewline = content === "" || content.endsWith("\n");
  if (content !== "" && finalNewline) lines.pop();

  const replacements: { start: number; length: number; lines: string[] }[] = [];
  let cursor = 0;
  for (const chunk of chunks) {
    if (chunk.context !== undefined) {
      const at = seek(lines, [chunk.context], cursor, false);
      if (at < 0) {
        throw new PatchMismatchError(
          `${path}: could not find the @@ context line ${JSON.stringify(chunk.context)}${after(cursor)} (hunk at patch line ${chunk.patchLine})`,
        );
      }
      cursor = at + 1;
    }
    if (chunk.oldLines.length === 0) {
      // Pure insertion: after the @@ context line if there is one, else at the end of the file.
      const at = chunk.context !== undefined ? cursor : lines.length;
      replacements.push({ start: at, length: 0, lines: chunk.newLines });
      cursor = at;
      continue;
    }
    let oldLines = chunk.oldLines;
    let newLines = chunk.newLines;
    let at = seek(lines, oldLines, cursor, chunk.endOfFile);
    if (at < 0 && oldLines[oldLines.length - 1] === "") {
      // A trailing empty context line is often the file's final newline, not a real line.
      oldLines = oldLines.slice(0, -1);
      if (newLines[newLines.length - 1] === "") newLines = newLines.slice(0, -1);
      at = seek(lines, oldLines, cursor, chunk.endOfFile);
    }
    if (at < 0) throw mismatch(lines, chunk, cursor, path);
    replacements.push({ start: at, length: oldLines.length, lines: newLines });
    cursor = at + oldLines.length;
  }

  replacements.sort((a, b) => a.start - b.start);
  for (let r = replacements.length - 1; r >= 0; r--) {
    const { start, length, lines: added } = replacements[r] as (typeof replacements)[number];
    lines.splice(start, length, ...added);
  }
  if (lines.length === 0) return "";
  return lines.join(eol) + (finalNewline ? eol : "");
}

/** Index where `pattern` occurs in `lines` at or after `start` (at the end first if `endOfFile`), or -1. */
export function seek(
  lines: readonly string[],
  pattern: readonly string[],
  start: number,
  endOfFile: boolean,
): number {
  if (pattern.length === 0) return start;
  if (pattern.length > lines.length) return -1;
  const lastStart = lines.length - pattern.length;
  for (const normalize of LEVELS) {
    const wanted = pattern.map(normalize);
    const matchesAt = (i: number) => wanted.every((w, k) => normalize(lines[i + k] ?? "") === w);
    if (endOfFile && lastStart >= start && matchesAt(lastStart)) return lastStart;
    for (let i = start; i <= lastStart; i++) if (matchesAt(i)) return i;
  }
  return -1;
}

/** Says which old line broke the match: the longest prefix of the hunk that is found, then the next line. */
function mismatch(
  lines: readonly string[],
  chunk: UpdateChunk,
  cursor: number,
  path: string,
): PatchMismatchError {
  const old = chunk.oldLines;
  let matched = 0;
  for (let k = old.length - 1; k >= 1; k--) {
    if (seek(lines, old.slice(0, k), cursor, false) >= 0) {
      matched = k;
      break;
    }
  }
  const bad = JSON.stringify(old[matched] ?? "");
  const where =
    matched === 0
      ? `the line ${bad} was not found${after(cursor)}`
      : `the line ${bad} was not found after ${JSON.stringify(old[matched - 1] ?? "")} (the hunk's first ${matched} line(s) matched)`;
  return new PatchMismatchError(
    `${path}: a hunk (patch line ${chunk.patchLine}) does not match the file: ${where}. ` +
      "Read the file again and copy the context and '-' lines exactly.",
  );
}

function after(cursor: number): string {
  return cursor === 0 ? "" : ` after line ${cursor} (where the previous hunk ended)`;
}
