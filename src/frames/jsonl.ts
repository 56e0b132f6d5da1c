/**
 * JSONL codec for frames (and tapes): one JSON object per line. The reader names the line of the
 * first bad record, so a truncated or hand-edited file points at its own problem.
 */
import { EddyError } from "../errors.js";
import {
  forEachLine,
  isJsonObject,
  jsonErrorReason,
  nestsDeeperThan,
  RECORD_MAX_DEPTH,
  withoutBom,
} from "../util/json.js";
import { FRAME_TYPES, type Frame, RUN_END_REASONS } from "./frame.js";

const KNOWN_TYPES: ReadonlySet<string> = new Set(FRAME_TYPES);
const END_REASONS: ReadonlySet<string> = new Set(RUN_END_REASONS);

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
export function parseJsonl(text: string, options: JsonlOptions = {}): JsonlRecord[] {
  const out: JsonlRecord[] = [];
  eachJsonlRecord(text, options, (record) => out.push(record));
  return out;
}

export interface JsonlOptions {
  /** A last line that is not valid JSON is a cut write, dropped. @defaultValue false */
  allowPartialLastLine?: boolean;
}

/**
 * `parseJsonl` one record at a time: `visit` sees each as it is parsed and may throw, so a bad line
 * stops the read there, before the rest of a large file is parsed or held (docs/pitfalls.md #63).
 * A leading byte order mark is dropped; a value nesting deeper than `RECORD_MAX_DEPTH` is refused.
 * Says whether a partial last line was dropped (`allowPartialLastLine`).
 */
export function eachJsonlRecord(
  text: string,
  options: JsonlOptions,
  visit: (record: JsonlRecord) => void,
): { partialLastLine: boolean } {
  let partialLastLine = false;
  forEachLine(withoutBom(text), (raw, i, isLast) => {
    const line = raw.endsWith("\r") ? raw.slice(0, -1) : raw;
    if (line.trim() === "") return;
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch (err) {
      if (isLast && options.allowPartialLastLine) {
        partialLastLine = true;
        return false;
      }
      throw lineError(i, `not valid JSON (${jsonErrorReason(err)})`);
    }
    if (!isJsonObject(value)) throw lineError(i, "expected a JSON object");
    if (nestsDeeperThan(value, RECORD_MAX_DEPTH))
      throw lineError(i, `nests deeper than ${RECORD_MAX_DEPTH} levels`);
    visit({ line: i + 1, value: value as Record<string, unknown> });
    return;
  });
  return { partialLastLine };
}

function lineError(index: number, problem: string): EddyError {
  return new EddyError("frame_invalid", `line ${index + 1}: ${problem}`, {
    fault: "user",
    details: { line: index + 1 },
  });
}

/** The JSON kinds a frame's payload fields may have (checked when the field is present). */
type FieldKind =
  | "int"
  | "number"
  | "string"
  | "string|null"
  | "boolean"
  | "object"
  | "object|null"
  | "strings"
  | "objects";

/**
 * The kind of each payload field, by name: a field has the same kind in every frame type that
 * carries it (src/frames/frame.ts), except the few in `KIND_BY_TYPE`. Fields the readers key on or
 * print (`turn`, `call_id`, `name`, …) are checked so a tape, a thread log or a `--json` log from
 * elsewhere cannot hand an object where a string is expected (docs/decisions.md #9).
 */
const FIELD_KINDS: Readonly<Record<string, FieldKind>> = {
  turn: "int",
  attempt: "int",
  output_index: "int",
  content_index: "int",
  index: "int",
  turns: "int",
  tool_calls: "int",
  call_id: "string",
  item_id: "string",
  name: "string",
  arguments: "string",
  output: "string",
  output_text: "string",
  delta: "string",
  raw: "string",
  mode: "string",
  from: "string",
  to: "string",
  code: "string",
  message: "string",
  kind: "string",
  reason: "string",
  decision: "string",
  hook: "string",
  channel: "string",
  stage: "string",
  event_name: "string",
  item_type: "string",
  request_id: "string",
  content_type: "string",
  full_output: "string",
  image_url: "string",
  status: "string",
  model: "string|null",
  response_id: "string|null",
  ok: "boolean",
  retryable: "boolean",
  tripped: "boolean",
  duration_ms: "number",
  delay_ms: "number",
  body: "object",
  item: "object",
  subrun: "object",
  usage: "object|null",
  error: "object",
  pending_calls: "strings",
  errors: "strings",
  tools: "strings",
  instructions: "string",
};

/** Where a field's kind differs by frame type. */
const KIND_BY_TYPE: Readonly<Record<string, Readonly<Record<string, FieldKind>>>> = {
  response_headers: { status: "int" },
  request_failed: { status: "int" },
  turn_prepared: { model: "string", max_output_tokens: "int" },
  context_compacted: { model: "string", output: "objects" },
};

function hasKind(value: unknown, kind: FieldKind): boolean {
  switch (kind) {
    case "int":
      return Number.isInteger(value);
    case "number":
      return typeof value === "number" && Number.isFinite(value);
    case "string":
      return typeof value === "string";
    case "string|null":
      return value === null || typeof value === "string";
    case "boolean":
      return typeof value === "boolean";
    case "object":
      return isJsonObject(value);
    case "object|null":
      return value === null || isJsonObject(value);
    case "strings":
      return Array.isArray(value) && value.every((v) => typeof v === "string");
    case "objects":
      return Array.isArray(value) && value.every(isJsonObject);
  }
}

/**
 * What is wrong with a frame's envelope (`type`, `seq`, `ts`, `run_id`), if anything. Every reader
 * of frame lines checks it; the viewer (src/view/read.ts) stops there, as it shows frames of
 * types it does not know.
 */
export function envelopeProblem(v: Record<string, unknown>): string | undefined {
  if (typeof v.type !== "string") return "has no string `type`";
  if (!Number.isInteger(v.seq)) return "has no integer `seq`";
  if (typeof v.ts !== "number") return "has no numeric `ts`";
  if (typeof v.run_id !== "string") return "has no string `run_id`";
  return undefined;
}

/** What is wrong with a frame-shaped value (`undefined`: nothing), nested sub-run frames included. */
function frameProblem(v: Record<string, unknown>, depth: number): string | undefined {
  const envelope = envelopeProblem(v);
  if (envelope !== undefined) return envelope;
  const type = v.type as string;
  if (!KNOWN_TYPES.has(type)) return `has unknown frame type "${type.slice(0, 40)}"`;
  const special = KIND_BY_TYPE[type];
  for (const key in v) {
    const kind = special?.[key] ?? FIELD_KINDS[key];
    const value = v[key];
    if (kind === undefined || value === undefined) continue;
    if (!hasKind(value, kind)) return `(${type}) has a \`${key}\` that is not ${KIND_NAMES[kind]}`;
  }
  // The readers switch on why a run ended (its exit code, whether it resumes): a reason no eddy
  // writes is refused here, not met as an internal error after it was printed (docs/pitfalls.md #98).
  if (type === "run_ended" && !END_REASONS.has(v.reason as string))
    return `(run_ended) has a \`reason\` that is not one eddy writes (${RUN_END_REASONS.join(", ")})`;
  if (v.subrun !== undefined) return subrunProblem(v.subrun as Record<string, unknown>, depth);
  return undefined;
}

const KIND_NAMES: Readonly<Record<FieldKind, string>> = {
  int: "an integer",
  number: "a finite number",
  string: "a string",
  "string|null": "a string or null",
  boolean: "true or false",
  object: "an object",
  "object|null": "an object or null",
  strings: "a list of strings",
  objects: "a list of objects",
};

/** Sub-agents nest at most this deep in a frame (agent tools inside agent tools). */
const MAX_SUBRUN_DEPTH = 16;

function subrunProblem(subrun: Record<string, unknown>, depth: number): string | undefined {
  if (typeof subrun.agent !== "string" || !Array.isArray(subrun.frames))
    return "has a `subrun` without a string `agent` and a `frames` list";
  if (depth >= MAX_SUBRUN_DEPTH) return `nests sub-runs more than ${MAX_SUBRUN_DEPTH} deep`;
  for (const [i, inner] of subrun.frames.entries()) {
    if (!isJsonObject(inner)) return `has a sub-run frame ${i} that is not an object`;
    const problem = frameProblem(inner, depth + 1);
    if (problem !== undefined) return `has a sub-run frame ${i} that ${problem}`;
  }
  return undefined;
}

/**
 * Checks that a record is a frame (envelope, known type, and the kinds of the payload fields it
 * has, nested sub-run frames included) and returns it typed. A field may be absent (older tapes
 * lack some); a present one of the wrong kind is `frame_invalid`.
 */
export function asFrame(record: JsonlRecord): Frame {
  const problem = frameProblem(record.value, 0);
  if (problem !== undefined) {
    throw new EddyError("frame_invalid", `line ${record.line}: frame ${problem}`, {
      fault: "user",
      details: { line: record.line },
    });
  }
  return record.value as unknown as Frame;
}

/** Parses a JSONL frame log (e.g. `eddy run --json` output) into frames. */
export function parseFrames(text: string): Frame[] {
  return parseJsonl(text).map(asFrame);
}
