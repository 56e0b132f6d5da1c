/**
 * What `grep` looks for, compiled once per call into a scanner of *blocks* of whole lines. A line
 * matches when the pattern matches within that line alone; a trailing `\r` is not part of a line.
 *
 * - Literal, case-sensitive: a byte search (`Buffer.indexOf`) over the block; nothing is decoded
 *   until a hit.
 * - Literal, case-insensitive: a JavaScript `RegExp` of the escaped text (no quantifiers, so no
 *   backtracking to speak of).
 * - Regular expressions: RE2 semantics through `re2js`, a pure JavaScript port of RE2 whose
 *   matching time is linear in the input, so a pattern like `(a+)+$` cannot freeze the search the
 *   way a backtracking engine does. JavaScript syntax is translated (`RE2JS.translateRegExp`:
 *   named groups, `\u` escapes, `[^]`); constructs RE2 cannot run in linear time (lookahead,
 *   backreferences) are refused with a message that says so. Lookbehind is allowed (re2js runs
 *   capture-free lookbehind in linear time).
 *
 * The two pattern kinds first test the whole block (one fast DFA pass in re2js, which also
 * rejects on a missing required literal), and only a block that matches is tested line by line.
 * In multi-line mode every line match is also a block match (`^`/`$` match at line ends, a
 * lookbehind sees a newline before the line), except for RE2's `\A`/`\z`, which skip that test.
 */
import { createRequire } from "node:module";
import type * as Re2js from "re2js";
import type { RE2JS } from "re2js";
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
    const re = new RegExp(spec.pattern.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"), "i");
    return textScanner((text) => re.test(text), true);
  }
  const re = compileRe2(spec);
  return textScanner((text) => re.test(text), !/\\[Az]/.test(re.pattern()));
}

function compileRe2(spec: PatternSpec): RE2JS {
  // re2js (260 kB of JavaScript) loads with the first regular expression, not with every run; its
  // CommonJS build, so that compiling stays synchronous.
  const { RE2JS } = createRequire(import.meta.url)("re2js") as typeof Re2js;
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

/** A scanner over the decoded block: `test` on the whole block first (when `precheck`), then per line. */
function textScanner(test: (text: string) => boolean, precheck: boolean): LineScanner {
  return {
    scan(block, onLine) {
      let text = block.toString("utf8");
      if (text.includes("\r")) text = text.replace(/\r(?=\n|$)/g, "");
      if (precheck && !test(text)) return true;
      let index = 0;
      for (let start = 0; start < text.length; index++) {
        const next = text.indexOf("\n", start);
        const end = next === -1 ? text.length : next;
        const line = text.slice(start, end);
        if (test(line) && !onLine(index, line)) return false;
        start = end + 1;
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
