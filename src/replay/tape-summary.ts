/**
 * What a tape says about its run without reading all of it: the header, the first and the last
 * frame and how many frames there are. `eddy serve` lists the runs of its data folder this way at
 * start (docs/architecture.md, "eddy serve"): reading every tape whole held every frame of every
 * run in memory and read every byte of the folder before the server answered (3,000 runs of 64 KB:
 * 1.6 s and 330 MB).
 *
 * Only the header line, the first frame's line and the last line are read and checked, with the
 * same checks `parseTape` makes; the frame count is the last frame's `seq` + 1. A tape that is not
 * plainly shaped — a cut header, blank lines, an older format whose frames are derived on reading,
 * a `seq` that does not fit — is read whole with `readTape`, so the answer, or the error, is what
 * `readTape` gives. A line in the middle is checked when the tape is read whole (its events).
 */
import { readSync } from "node:fs";
import type { Frame } from "../frames/frame.js";
import { asFrame } from "../frames/jsonl.js";
import { isJsonObject } from "../util/json.js";
import { withRegularFileSync } from "../util/regular-file.js";
import { readTape, TAPE_MAX_BYTES, type TapeHeader } from "./tape.js";
import { checkTapeHeader } from "./tape-header.js";
import { DERIVED_FRAMES_FORMAT } from "./upgrade-frames.js";

/** A tape's header and ends. */
export interface TapeSummary {
  header: TapeHeader;
  /** The first frame (`run_started` in a tape eddy wrote), if any. */
  first: Frame | undefined;
  /** The last frame, if any (`run_ended` when the run ended). */
  last: Frame | undefined;
  /** How many frames the tape holds. */
  frames: number;
}

/** The summary of the tape at `path` (see the module comment); throws what `readTape` throws. */
export function summarizeTape(path: string): TapeSummary {
  const quick = withRegularFileSync(
    path,
    { what: "tape", maxBytes: TAPE_MAX_BYTES, code: "tape_invalid" },
    (fd, size) => quickSummary(fd, size),
  );
  return quick ?? summaryOf(readTape(path));
}

function summaryOf(tape: { header: TapeHeader; frames: Frame[] }): TapeSummary {
  const { header, frames } = tape;
  return { header, first: frames[0], last: frames.at(-1), frames: frames.length };
}

/** The summary from the header, the first line and the last one; undefined when the tape must be read whole. */
function quickSummary(fd: number, size: number): TapeSummary | undefined {
  const headerLine = lineFrom(fd, 0, size);
  if (headerLine === undefined || !headerLine.complete) return undefined;
  const header = parsed(headerLine.text, (value) => checkTapeHeader(value, "tape"));
  if (header === undefined || header.format < DERIVED_FRAMES_FORMAT) return undefined;
  const afterHeader = headerLine.end + 1;
  if (afterHeader >= size) return { header, first: undefined, last: undefined, frames: 0 };
  const firstLine = lineFrom(fd, afterHeader, size);
  if (firstLine === undefined) return undefined;
  const first = parsed(firstLine.text, (value) => asFrame({ line: 2, value }));
  if (first === undefined) {
    // A cut write at the end of the file (not JSON) is no frame, as parseJsonl reads it.
    const cut = !firstLine.complete && jsonOf(firstLine.text) === undefined;
    return cut ? { header, first: undefined, last: undefined, frames: 0 } : undefined;
  }
  const lastLine = lastRecord(fd, size, afterHeader);
  if (lastLine === undefined) return undefined;
  const last =
    lastLine.start === afterHeader ? first : parsed(lastLine.text, (value) => asFrame({ line: 0, value }));
  const lastIsFirst = lastLine.start === afterHeader;
  if (last === undefined || first.seq !== 0 || (!lastIsFirst && last.seq < 1)) return undefined;
  return { header, first, last, frames: last.seq + 1 };
}

/** `check(JSON.parse(text))` when `text` is one JSON object that passes it; undefined otherwise. */
function parsed<T>(text: string, check: (value: Record<string, unknown>) => T): T | undefined {
  const json = jsonOf(text);
  if (json === undefined || !isJsonObject(json.value)) return undefined;
  try {
    return check(json.value as Record<string, unknown>);
  } catch {
    return undefined;
  }
}

/** The JSON value of a line (a trailing CR dropped, as parseJsonl drops it); undefined when it is not JSON. */
function jsonOf(text: string): { value: unknown } | undefined {
  try {
    return { value: JSON.parse(text.endsWith("\r") ? text.slice(0, -1) : text) };
  } catch {
    return undefined;
  }
}

/** Reads start small (most lines are a few KiB) and double up to `MAX_CHUNK` for a long line. */
const FIRST_CHUNK = 4 * 1024;
const MAX_CHUNK = 1024 * 1024;
const NEWLINE = 0x0a;

interface Line {
  text: string;
  /** Offset of its first byte. */
  start: number;
  /** Offset of the newline that ends it, or the file's size. */
  end: number;
  /** It ends with a newline. */
  complete: boolean;
}

/** The line that starts at `start` (undefined when it is blank: the tape is read whole then). */
function lineFrom(fd: number, start: number, size: number): Line | undefined {
  const parts: Buffer[] = [];
  for (let at = start, want = FIRST_CHUNK; at < size; want = Math.min(want * 2, MAX_CHUNK)) {
    const chunk = readAt(fd, at, Math.min(want, size - at));
    if (chunk.length === 0) break;
    const nl = chunk.indexOf(NEWLINE);
    if (nl >= 0) {
      parts.push(chunk.subarray(0, nl));
      return nonBlank({ text: Buffer.concat(parts).toString("utf8"), start, end: at + nl, complete: true });
    }
    parts.push(chunk);
    at += chunk.length;
  }
  return nonBlank({ text: Buffer.concat(parts).toString("utf8"), start, end: size, complete: false });
}

/**
 * The tape's last record at or after `floor`: the text after the last newline when it is a JSON
 * object (a line written whole but for its newline), else the last line that ends with a newline
 * (what follows it is a cut write, dropped as parseJsonl drops it).
 */
function lastRecord(fd: number, size: number, floor: number): Line | undefined {
  const lastNewline = newlineBefore(fd, size, floor);
  if (lastNewline < size - 1) {
    const trailing = lineFrom(fd, lastNewline + 1, size);
    if (trailing === undefined) return undefined;
    if (jsonOf(trailing.text) !== undefined) return trailing;
  }
  if (lastNewline < floor) return undefined;
  const start = newlineBefore(fd, lastNewline, floor) + 1;
  return lineFrom(fd, Math.max(start, floor), size);
}

/** The offset of the last newline before `end` and at or after `floor`; `floor - 1` when there is none. */
function newlineBefore(fd: number, end: number, floor: number): number {
  for (let to = end, want = FIRST_CHUNK; to > floor; want = Math.min(want * 2, MAX_CHUNK)) {
    const from = Math.max(floor, to - want);
    const chunk = readAt(fd, from, to - from);
    const nl = chunk.lastIndexOf(NEWLINE);
    if (nl >= 0) return from + nl;
    to = from;
  }
  return floor - 1;
}

function readAt(fd: number, position: number, length: number): Buffer {
  const buffer = Buffer.allocUnsafe(length);
  const read = readSync(fd, buffer, 0, length, position);
  return buffer.subarray(0, read);
}

function nonBlank(line: Line): Line | undefined {
  return line.text.trim() === "" ? undefined : line;
}
