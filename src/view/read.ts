/**
 * Reading tapes for viewing. The header goes through replay/'s `parseTape` (format, version and
 * required keys checked exactly as replay does); the frames are read more leniently than replay
 * reads them, because a viewer must show what replay refuses: frame types from a newer eddy (shown
 * generically), a file cut mid-line by a crash (shown up to the cut), a frame log without a header
 * (`eddy run --json` output).
 */
import { EddyError } from "../errors.js";
import { FRAME_TYPES, type Frame, type FrameEnvelope } from "../frames/frame.js";
import { parseTape, readTapeFileText, type TapeHeader } from "../replay/tape.js";
import { parseJsonObject } from "../util/json.js";

/** A frame as read from a tape: any `type`, the envelope checked. */
export type FrameRecord = FrameEnvelope & { type: string } & Record<string, unknown>;

/** A tape read for viewing. */
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

const KNOWN: ReadonlySet<string> = new Set(FRAME_TYPES);

/** The record as a typed `Frame` when its type is one this eddy knows, else undefined. */
export function knownFrame(record: FrameRecord): Frame | undefined {
  return KNOWN.has(record.type) ? (record as unknown as Frame) : undefined;
}

/** Parses tape text (or a JSONL frame log). A bad header or a line that is not a frame is a one-line `EddyError`. */
export function parseViewTape(text: string, source: string): ViewTape {
  const all = text.split("\n");
  const lines: Array<{ text: string; number: number }> = [];
  all.forEach((raw, i) => {
    const line = raw.endsWith("\r") ? raw.slice(0, -1) : raw;
    if (line.trim() !== "") lines.push({ text: line, number: i + 1 });
  });
  if (lines.length === 0) throw invalid(`${source}: the tape is empty`);
  let header: TapeHeader | undefined;
  let start = 0;
  const first = parseJsonObject(lines[0]?.text ?? "");
  if (first !== undefined && first.type === "tape_header") {
    header = parseTape(`${lines[0]?.text}\n`, source).header;
    start = 1;
  }
  const frames: FrameRecord[] = [];
  const kept: string[] = [];
  let cut = false;
  for (let i = start; i < lines.length; i++) {
    const { text: line, number } = lines[i] as { text: string; number: number };
    const value = parseJsonObject(line);
    if (value === undefined) {
      // A crash leaves at most one partial record, at the end, with no newline after it.
      if (i === lines.length - 1 && !text.endsWith("\n")) {
        cut = true;
        break;
      }
      throw invalid(`${source}: line ${number} is not a JSON object`);
    }
    const problem = envelopeProblem(value);
    if (problem !== undefined) throw invalid(`${source}: line ${number}: the frame ${problem}`);
    frames.push(value as FrameRecord);
    kept.push(line);
  }
  if (header === undefined && frames.length === 0) throw invalid(`${source}: no frames in the file`);
  const tape: ViewTape = { source, frames, lines: kept, cut };
  if (header !== undefined) tape.header = header;
  return tape;
}

/** Reads and parses a tape file for viewing. */
export function readViewTape(path: string): ViewTape {
  return parseViewTape(readTapeFileText(path), path);
}

function envelopeProblem(v: Record<string, unknown>): string | undefined {
  if (typeof v.type !== "string") return "has no string `type`";
  if (!Number.isInteger(v.seq)) return "has no integer `seq`";
  if (typeof v.ts !== "number") return "has no numeric `ts`";
  if (typeof v.run_id !== "string") return "has no string `run_id`";
  return undefined;
}

function invalid(message: string): EddyError {
  return new EddyError("tape_invalid", message, { fault: "user" });
}
