/**
 * The stable model-facing tool output (docs/decisions.md #7): the JSON string of
 * `{tool, ok, exit_code, stdout, stderr, artifacts?, error?}` with keys in exactly that order and
 * nothing nondeterministic in it. Capping happens *inside* the object (on `stdout`/`stderr`)
 * before serializing, so a capped output is still valid JSON and still at most the cap in bytes.
 */
import { TOOL_DEFAULTS } from "./defaults.js";
import type { ToolError, ToolResult } from "./tool.js";
import { cutMiddle, shortenText } from "./utf8.js";

/** The model-facing object. Serialize it only with `encodeToolOutput` (key order matters). */
export interface ToolOutput {
  tool: string;
  ok: boolean;
  exit_code: number;
  stdout: string;
  stderr: string;
  artifacts?: Record<string, unknown>;
  error?: ToolError;
}

/** A serialized output, ready to go into `function_call_output.output`. */
export interface EncodedToolOutput {
  /** Exactly the string to send to the model (and to put in `tool_ended.output`). */
  output: string;
  /** True when `stdout`/`stderr` (or, in extreme cases, artifacts) were cut to fit the cap. */
  truncated: boolean;
  /** The uncapped JSON string; present only when `truncated`. */
  fullOutput?: string;
}

/** Options of `encodeToolOutput`. */
export interface EncodeOptions {
  /** @defaultValue TOOL_DEFAULTS.outputCapBytes */
  capBytes?: number;
  /** How to ask for less output, told to the model in the truncation note. */
  hint?: string;
}

const GENERIC_HINT = "ask for less output (a narrower path, range or pattern) to see the rest";
const TRUNCATED_ARTIFACTS = { truncated: true, note: "artifacts omitted: they did not fit the output cap" };

/** Builds the output object from a tool's result, with keys in the fixed order of docs/decisions.md #7. */
export function toToolOutput(tool: string, result: ToolResult): ToolOutput {
  const output: ToolOutput = {
    tool,
    ok: result.ok,
    exit_code: result.exitCode,
    stdout: result.stdout,
    stderr: result.stderr,
  };
  if (result.artifacts !== undefined) output.artifacts = result.artifacts;
  if (result.error !== undefined) output.error = { code: result.error.code, message: result.error.message };
  return output;
}

/** Serializes with keys in the fixed order of docs/decisions.md #7 whatever order the object was built in. */
function serialize(o: ToolOutput): string {
  const ordered: ToolOutput = {
    tool: o.tool,
    ok: o.ok,
    exit_code: o.exit_code,
    stdout: o.stdout,
    stderr: o.stderr,
  };
  if (o.artifacts !== undefined) ordered.artifacts = o.artifacts;
  if (o.error !== undefined) ordered.error = { code: o.error.code, message: o.error.message };
  return JSON.stringify(ordered);
}

/**
 * Serializes `output`, capping it at `capBytes` UTF-8 bytes. Over the cap, `stdout` and `stderr`
 * keep a head and a tail (cut on character boundaries) around a note that says how many bytes
 * were cut and how to see more; the result is valid JSON of at most `capBytes` bytes.
 */
export function encodeToolOutput(output: ToolOutput, options: EncodeOptions = {}): EncodedToolOutput {
  const cap = Math.max(options.capBytes ?? TOOL_DEFAULTS.outputCapBytes, TOOL_DEFAULTS.minOutputCapBytes);
  const full = serialize(output);
  const fullBytes = Buffer.byteLength(full);
  if (fullBytes <= cap) return { output: full, truncated: false };
  const hint = options.hint ?? GENERIC_HINT;
  let base = output;
  let capped = capStreams(base, cap, hint);
  if (capped === undefined) {
    // The envelope alone is over the cap (huge artifacts or error message): shrink it, then retry.
    base = { ...output, artifacts: TRUNCATED_ARTIFACTS };
    if (output.error !== undefined)
      base.error = {
        code: output.error.code,
        message: shortenText(output.error.message, TOOL_DEFAULTS.errorMessageMaxChars),
      };
    capped = capStreams(base, cap, hint) ?? serialize({ ...base, stdout: "", stderr: "" });
  }
  return { output: capped, truncated: true, fullOutput: full };
}

/** Caps stdout/stderr until the serialized object fits; `undefined` if even empty streams do not. */
function capStreams(output: ToolOutput, cap: number, hint: string): string | undefined {
  const out = Buffer.from(output.stdout, "utf8");
  const err = Buffer.from(output.stderr, "utf8");
  const envelopeBytes = Buffer.byteLength(serialize({ ...output, stdout: "", stderr: "" }));
  const room = cap - envelopeBytes;
  let budget = room;
  // JSON escaping can make the serialized text longer than the raw bytes (up to 6×): shrink the
  // raw budget by the observed expansion until it fits. Converges in a few rounds.
  for (let round = 0; round < 32 && budget >= 0; round++) {
    const [outKeep, errKeep] = splitBudget(budget, out.length, err.length);
    const text = serialize({
      ...output,
      stdout: capText(out, outKeep, "stdout", hint),
      stderr: capText(err, errKeep, "stderr", hint),
    });
    const over = Buffer.byteLength(text) - cap;
    if (over <= 0) return text;
    budget = Math.min(budget - 16, Math.floor((budget * room) / (room + over)) - 8);
  }
  return undefined;
}

/** Shares `budget` bytes between the streams: stderr gets up to a quarter unless stdout needs less. */
function splitBudget(budget: number, outLen: number, errLen: number): [number, number] {
  if (outLen + errLen <= budget) return [outLen, errLen];
  const errShare = Math.floor(budget / 4);
  if (errLen <= errShare) return [budget - errLen, errLen];
  if (outLen <= budget - errShare) return [outLen, budget - outLen];
  return [budget - errShare, errShare];
}

/** `bytes` as text cut to `keep` bytes (note included): head, note, tail. */
function capText(bytes: Buffer, keep: number, stream: "stdout" | "stderr", hint: string): string {
  if (bytes.length <= keep) return bytes.toString("utf8");
  const note = (cut: number) =>
    `\n[… eddy: ${cut} of ${bytes.length} bytes of ${stream} cut here; ${hint} …]\n`;
  // The note is sized with the largest possible count so the real one never makes it longer.
  const noteBytes = Buffer.byteLength(note(bytes.length));
  if (keep < noteBytes) return "";
  const middle = cutMiddle(bytes, keep - noteBytes);
  if (middle === undefined) return bytes.toString("utf8");
  return `${middle.head}${note(middle.cutBytes)}${middle.tail}`;
}
