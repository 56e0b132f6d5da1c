/**
 * What `grep` looks for, compiled once per call into a scanner of *blocks* of whole lines: the
 * scanner finds candidate matches in the whole block (one search per block, not one per line) and
 * reports the lines they fall on. A line is reported when the pattern matches within that line
 * alone, so results are the same as a line-by-line test; a trailing `\r` is not part of a line.
 *
 * - Literal, case-sensitive: a byte search (`Buffer.indexOf`), nothing decoded until a hit.
 * - Literal, case-insensitive: a JavaScript `RegExp` of the escaped text (no quantifiers, so no
 *   backtracking to speak of).
 * - Regular expressions: RE2 semantics through `re2js`, a pure JavaScript port of RE2 whose
 *   matching time is linear in the input, so a pattern like `(a+)+$` cannot freeze the search the
 *   way a backtracking engine does. JavaScript syntax is translated (`RE2JS.translateRegExp`:
 *   named groups, `\u` escapes, `[^]`); constructs RE2 cannot run in linear time (lookahead,
 *   backreferences) are refused with a message that says so. Lookbehind is allowed (re2js runs
 *   capture-free lookbehind in linear time).
 */
import { RE2JS } from "re2js";
import { toolFailure } from "./common.js";

/** What a line must contain. */
export interface PatternSpec {
  pattern: string;
  /** The pattern is a regular expression (JavaScript syntax, run by RE2). */
  regex: boolean;
  caseSensitive: boolean;
}

/** Finds the matching lines of a block of whole lines. */
export interface LineScanner {
  /**
   * Calls `onLine(index, text)` for each matching line of `block` (whole lines; only the last may
   * lack its "\n"), in order, with the line's 0-based index within the block and its text without
   * the line ending. Stops and returns false as soon as `onLine` returns false.
   */
  scan(block: Buffer, onLine: (index: number, text: string) => boolean): boolean;
}

/** Compiles `spec`; throws `tool_input_invalid` for a pattern that is invalid or not supported. */
export function compileScanner(spec: PatternSpec): LineScanner {
  if (!spec.regex && spec.caseSensitive) return literalScanner(spec.pattern);
  if (!spec.regex) {
    const escaped = spec.pattern.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
    return textScanner(nativeFinder(new RegExp(escaped, "gi")), undefined);
  }
  const re = compileRe2(spec);
  return textScanner(
    re2Finder(re),
    (line) => re.test(line),
    (text) => re.test(text),
  );
}

function compileRe2(spec: PatternSpec): RE2JS {
  const flags = RE2JS.MULTILINE | RE2JS.LOOKBEHINDS | (spec.caseSensitive ? 0 : RE2JS.CASE_INSENSITIVE);
  try {
    return RE2JS.compile(RE2JS.translateRegExp(spec.pattern), flags);
  } catch (re2Error) {
    const quoted = JSON.stringify(spec.pattern);
    try {
      new RegExp(spec.pattern);
    } catch (jsError) {
      throw toolFailure(
        "tool_input_invalid",
        `grep: invalid regular expression ${quoted}: ${(jsError as Error).message}; fix it, or set regex:false to search for the literal text`,
      );
    }
    throw toolFailure(
      "tool_input_invalid",
      `grep: the regular expression ${quoted} uses a construct grep does not support: ${(re2Error as Error).message.replace(/^error parsing regexp: /, "")}. ` +
        "grep runs regular expressions in linear time (RE2 syntax), which rules out lookahead and backreferences; rewrite the pattern without them, or set regex:false to search for the literal text",
    );
  }
}

/** A match in a decoded block: where it starts and ends (UTF-16 indices). */
type Finder = (text: string, from: number) => { start: number; end: number } | undefined;

function nativeFinder(re: RegExp): Finder {
  return (text, from) => {
    re.lastIndex = from;
    const m = re.exec(text);
    return m === null ? undefined : { start: m.index, end: m.index + m[0].length };
  };
}

function re2Finder(re: RE2JS): Finder {
  return (text, from) => {
    const m = re.matcher(text);
    return m.find(from) ? { start: m.start(), end: m.end() } : undefined;
  };
}

const NL = 0x0a;
const CR = 0x0d;

function literalScanner(pattern: string): LineScanner {
  // A line never contains a newline, so such a literal matches nothing.
  if (pattern.includes("\n")) return { scan: () => true };
  const needle = Buffer.from(pattern, "utf8");
  return {
    scan(block, onLine) {
      let pos = 0;
      let counted = 0;
      let index = 0;
      while (pos < block.length) {
        const hit = block.indexOf(needle, pos);
        if (hit === -1) return true;
        const start = hit === 0 ? 0 : block.lastIndexOf(NL, hit - 1) + 1;
        const next = block.indexOf(NL, hit);
        const lineEnd = next === -1 ? block.length : next;
        const end = lineEnd > start && block[lineEnd - 1] === CR ? lineEnd - 1 : lineEnd;
        if (hit + needle.length > end) {
          pos = hit + 1; // the match takes in the line's "\r", which is not part of the line
          continue;
        }
        index += countNewlines(block, counted, start);
        counted = start;
        if (!onLine(index, block.toString("utf8", start, end))) return false;
        pos = lineEnd + 1;
      }
      return true;
    },
  };
}

/**
 * A scanner over the decoded block. `verify` re-tests one line when a match runs past its end (a
 * pattern like `a\sb` can match across a newline in the block); `precheck` rejects a whole block
 * with one fast test before positions are looked for.
 */
function textScanner(
  find: Finder,
  verify: ((line: string) => boolean) | undefined,
  precheck?: (text: string) => boolean,
): LineScanner {
  return {
    scan(block, onLine) {
      let text = block.toString("utf8");
      if (text.includes("\r")) text = text.replace(/\r(?=\n|$)/g, "");
      if (precheck !== undefined && !precheck(text)) return true;
      const endsWithNewline = text.endsWith("\n");
      let pos = 0;
      let counted = 0;
      let index = 0;
      while (pos <= text.length) {
        const hit = find(text, pos);
        if (hit === undefined) return true;
        // A position after the final "\n" is not a line.
        if (hit.start === text.length && (text.length === 0 || endsWithNewline)) return true;
        const start = hit.start === 0 ? 0 : text.lastIndexOf("\n", hit.start - 1) + 1;
        const next = text.indexOf("\n", hit.start);
        const end = next === -1 ? text.length : next;
        pos = end + 1;
        const line = text.slice(start, end);
        if (hit.end > end && verify !== undefined && !verify(line)) continue;
        for (let i = text.indexOf("\n", counted); i !== -1 && i < start; i = text.indexOf("\n", i + 1))
          index++;
        counted = start;
        if (!onLine(index, line)) return false;
      }
      return true;
    },
  };
}

/** The number of "\n" bytes in `block[from, to)`. */
export function countNewlines(block: Buffer, from = 0, to = block.length): number {
  let n = 0;
  for (let i = block.indexOf(NL, from); i !== -1 && i < to; i = block.indexOf(NL, i + 1)) n++;
  return n;
}
