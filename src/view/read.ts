/**
 * Reading tapes for viewing. The header goes through replay/'s `parseTape` (format, version and
 * required keys checked exactly as replay does); the frames are read more leniently than replay
 * reads them, because a viewer must show what replay refuses: frame types from a newer eddy (shown
 * generically), a file cut mid-line by a crash (shown up to the cut), a frame log without a header
 * (`eddy run --json` output).
 *
 * A tape file is read a chunk at a time, line by line, and each frame is handed on as it is read:
 * a 200 MB tape is never in memory whole (docs/pitfalls.md, "The run viewer"). A line longer than
 * `VIEW_LIMITS.lineBytes` is not read at all (it is reported by its size); anything but a regular
 * file (a FIFO, `/dev/zero`) is refused.
 */
import { closeSync, constants, fstatSync, openSync, readSync } from "node:fs";
import { StringDecoder } from "node:string_decoder";
import { EddyError } from "../errors.js";
import { FRAME_TYPES, type Frame, type FrameEnvelope } from "../frames/frame.js";
import { envelopeProblem } from "../frames/jsonl.js";
import { parseTape, type TapeHeader } from "../replay/tape.js";
import { parsedNestsTooDeep, parseJsonObject, RECORD_MAX_DEPTH, withoutBom } from "../util/json.js";
import { kindOf } from "../util/regular-file.js";
import { VIEW_LIMITS } from "./limits.js";

/** A frame as read from a tape: any `type`, the envelope checked. */
export type FrameRecord = FrameEnvelope & { type: string } & Record<string, unknown>;

/** A tape read for viewing, held in memory. */
export interface ViewTape {
  /** The path or name it was read from. */
  source: string;
  /** Absent for a frame log without a header (`eddy run --json` output). */
  header?: TapeHeader;
  frames: FrameRecord[];
  /** Each frame's line exactly as written, parallel to `frames`. */
  lines: string[];
  /** The last line was cut mid-record (dropped), as a crash leaves a tape. */
  cut: boolean;
}

/** What reading a tape frame by frame reports besides the frames. */
export interface TapeScan {
  header?: TapeHeader;
  cut: boolean;
  /** Frame lines read. */
  frames: number;
  /** Lines that were not read (too long), one line each. */
  problems: string[];
}

/** Receives a tape's frames as they are read. */
export interface TapeVisitor {
  /** Called once the header line (or the first frame of a log without one) has been seen. */
  header?(header: TapeHeader | undefined): void;
  frame(record: FrameRecord, line: string): void;
  /** A line too long to read (`VIEW_LIMITS.lineBytes`), by its 1-based number and size. */
  unread?(line: number, bytes: number): void;
}

/** One line of a tape: `text` is undefined for a line too long to read. */
interface TapeLine {
  text: string | undefined;
  bytes: number;
  number: number;
  /** A newline ended it (only a file's last line may lack one). */
  terminated: boolean;
}

const KNOWN: ReadonlySet<string> = new Set(FRAME_TYPES);

/** The record as a typed `Frame` when its type is one this eddy knows, else undefined. */
export function knownFrame(record: FrameRecord): Frame | undefined {
  return KNOWN.has(record.type) ? (record as unknown as Frame) : undefined;
}

/** Parses tape text (or a JSONL frame log). A bad header or a line that is not a frame is a one-line `EddyError`. */
export function parseViewTape(text: string, source: string): ViewTape {
  const frames: FrameRecord[] = [];
  const lines: string[] = [];
  const scan = scanViewTape(textLines(text), source, {
    frame: (record, line) => {
      frames.push(record);
      lines.push(line);
    },
  });
  const tape: ViewTape = { source, frames, lines, cut: scan.cut };
  if (scan.header !== undefined) tape.header = scan.header;
  return tape;
}

/** Reads a tape file frame by frame (see the module comment). */
export function readViewTape(path: string, visitor: TapeVisitor): TapeScan {
  return scanViewTape(fileLines(path), path, visitor);
}

/** The header and the frames of a tape's lines, handed to `visitor` one at a time. */
function scanViewTape(lines: Iterable<TapeLine>, source: string, visitor: TapeVisitor): TapeScan {
  const scan: TapeScan = { cut: false, frames: 0, problems: [] };
  let first = true;
  for (const read of lines) {
    // An editor's byte order mark before the header, as `eddy replay` takes it (util/json.ts).
    const line = first && read.text !== undefined ? { ...read, text: withoutBom(read.text) } : read;
    if (line.text !== undefined && line.text.trim() === "") continue;
    if (first) {
      first = false;
      const header = headerOf(line, source);
      if (header !== undefined) scan.header = header;
      visitor.header?.(header);
      if (header !== undefined) continue;
    }
    if (line.text === undefined) {
      scan.problems.push(
        `line ${line.number} (${megabytes(line.bytes)}) was not read: longer than the ${megabytes(VIEW_LIMITS.lineBytes)} a frame may have here`,
      );
      visitor.unread?.(line.number, line.bytes);
      continue;
    }
    const value = parseJsonObject(line.text);
    if (value === undefined) {
      // A crash leaves at most one partial record, at the end, with no newline after it.
      if (!line.terminated) {
        scan.cut = true;
        break;
      }
      throw invalid(`${source}: line ${line.number} is not a JSON object`);
    }
    // As `eddy replay` refuses it (frames/jsonl.ts): the walks after would overflow the stack.
    if (parsedNestsTooDeep(line.text, value, RECORD_MAX_DEPTH))
      throw invalid(`${source}: line ${line.number} nests deeper than ${RECORD_MAX_DEPTH} levels`);
    const problem = envelopeProblem(value);
    if (problem !== undefined) throw invalid(`${source}: line ${line.number}: the frame ${problem}`);
    scan.frames++;
    visitor.frame(value as FrameRecord, line.text);
  }
  if (first) throw invalid(`${source}: the tape is empty`);
  if (scan.header === undefined && scan.frames === 0 && scan.problems.length === 0)
    throw invalid(`${source}: no frames in the file`);
  return scan;
}

/** The tape header, when the first line is one (checked as replay checks it). */
function headerOf(line: TapeLine, source: string): TapeHeader | undefined {
  if (line.text === undefined) return undefined;
  const first = parseJsonObject(line.text);
  if (first === undefined || first.type !== "tape_header") return undefined;
  return parseTape(`${line.text}\n`, source).header;
}

/** The lines of a text. */
function* textLines(text: string): Generator<TapeLine> {
  let start = 0;
  let number = 1;
  while (start < text.length) {
    const nl = text.indexOf("\n", start);
    const end = nl === -1 ? text.length : nl;
    const raw = text.slice(start, end);
    const line = raw.endsWith("\r") ? raw.slice(0, -1) : raw;
    yield { text: line, bytes: Buffer.byteLength(line), number, terminated: nl !== -1 };
    start = end + 1;
    number++;
  }
}

// Non-blocking, so a FIFO is refused at once instead of waiting for a writer.
const O_READ = constants.O_RDONLY | (constants.O_NONBLOCK ?? 0) | (constants.O_NOCTTY ?? 0);

/** The lines of a file, read a chunk at a time; a line over `VIEW_LIMITS.lineBytes` is skipped unread. */
function* fileLines(path: string): Generator<TapeLine> {
  let fd: number;
  try {
    fd = openSync(path, O_READ);
  } catch (err) {
    throw invalid(
      `cannot read tape ${path}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`,
    );
  }
  try {
    const stats = fstatSync(fd);
    if (!stats.isFile())
      throw invalid(`tape ${path} is ${kindOf(stats)}, not a regular file: give a tape file`);
    yield* chunkLines(fd);
  } finally {
    closeSync(fd);
  }
}

function* chunkLines(fd: number): Generator<TapeLine> {
  const buffer = Buffer.allocUnsafe(1 << 20);
  const decoder = new StringDecoder("utf8");
  let parts: string[] = [];
  let bytes = 0;
  let number = 1;
  const line = (terminated: boolean): TapeLine => {
    const text = bytes > VIEW_LIMITS.lineBytes ? undefined : parts.join("") + decoder.end();
    if (text === undefined) decoder.end();
    const out = { text: text?.endsWith("\r") ? text.slice(0, -1) : text, bytes, number, terminated };
    parts = [];
    bytes = 0;
    number++;
    return out;
  };
  for (;;) {
    const n = readSync(fd, buffer, 0, buffer.length, null);
    if (n === 0) break;
    let start = 0;
    while (start < n) {
      const nl = buffer.indexOf(10, start);
      const end = nl === -1 || nl >= n ? n : nl;
      bytes += end - start;
      if (bytes <= VIEW_LIMITS.lineBytes) parts.push(decoder.write(buffer.subarray(start, end)));
      else if (parts.length > 0) parts = [];
      if (end === n) break;
      yield line(true);
      start = end + 1;
    }
  }
  if (bytes > 0) yield line(false);
}

function megabytes(bytes: number): string {
  return `${(bytes / (1024 * 1024)).toFixed(bytes < 10 * 1024 * 1024 ? 1 : 0)} MB`;
}

function invalid(message: string): EddyError {
  return new EddyError("tape_invalid", message, { fault: "user" });
}
