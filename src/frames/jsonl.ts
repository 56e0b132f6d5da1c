/**
 * JSONL codec for frames (and tapes): one JSON object per line. The reader names the line of the
 * first bad record, so a truncated or hand-edited file points at its own problem.
 */
import { EddyError } from "../errors.js";
import { isJsonObject } from "../util/json.js";
import { FRAME_TYPES, type Frame } from "./frame.js";

const KNOWN_TYPES: ReadonlySet<string> = new Set(FRAME_TYPES);

/** One frame as a JSONL line (with its trailing "\n"). */
export function encodeFrameLine(frame: Frame): string {
  return `${JSON.stringify(frame)}\n`;
}

/** A parsed JSONL record with the 1-based line it came from. */
export interface JsonlRecord {
  line: number;
  value: Record<string, unknown>;
}

/**
 * Parses JSONL text into objects. Blank lines are skipped; a last line without "\n" is accepted
 * (a file cut mid-write loses only its last, partial record when `allowPartialLastLine` is set).
 */
export function parseJsonl(text: string, options: { allowPartialLastLine?: boolean } = {}): JsonlRecord[] {
  const lines = text.split("\n");
  const out: JsonlRecord[] = [];
  for (let i = 0; i < lines.length; i++) {
    const raw = lines[i] ?? "";
    const line = raw.endsWith("\r") ? raw.slice(0, -1) : raw;
    if (line.trim() === "") continue;
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch (err) {
      const isLast = i === lines.length - 1;
      if (isLast && options.allowPartialLastLine) break;
      throw new EddyError("frame_invalid", `line ${i + 1}: not valid JSON (${(err as Error).message})`, {
        fault: "user",
        details: { line: i + 1 },
      });
    }
    if (!isJsonObject(value)) {
      throw new EddyError("frame_invalid", `line ${i + 1}: expected a JSON object`, {
        fault: "user",
        details: { line: i + 1 },
      });
    }
    out.push({ line: i + 1, value: value as Record<string, unknown> });
  }
  return out;
}

/** Checks that a record is a frame (envelope + known type) and returns it typed. */
export function asFrame(record: JsonlRecord): Frame {
  const v = record.value;
  const problem =
    typeof v.type !== "string"
      ? "has no string `type`"
      : !KNOWN_TYPES.has(v.type)
        ? `has unknown frame type "${v.type}"`
        : typeof v.run_id !== "string"
          ? "has no string `run_id`"
          : !Number.isInteger(v.seq)
            ? "has no integer `seq`"
            : typeof v.ts !== "number"
              ? "has no numeric `ts`"
              : undefined;
  if (problem !== undefined) {
    throw new EddyError("frame_invalid", `line ${record.line}: frame ${problem}`, {
      fault: "user",
      details: { line: record.line },
    });
  }
  return v as unknown as Frame;
}

/** Parses a JSONL frame log (e.g. `eddy run --json` output) into frames. */
export function parseFrames(text: string): Frame[] {
  return parseJsonl(text).map(asFrame);
}
