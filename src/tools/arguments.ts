/**
 * Strict parsing of a function call's `arguments` string (docs/pitfalls.md #39, #49). The raw string
 * must be one JSON object that matches the tool's schema; nothing is repaired, nothing defaults to
 * `{}` silently. The only leniency is docs/decisions.md #7: empty arguments (`""`) mean `{}` when the
 * schema accepts `{}`. Every refusal says what was wrong, quotes a bounded prefix of what the model
 * sent, and shows the expected schema, so the model can fix the call.
 */
import { isJsonObject } from "../util/json.js";
import { TOOL_DEFAULTS } from "./defaults.js";
import type { CompiledSchema } from "./schema.js";
import type { ToolError } from "./tool.js";
import { shortenText } from "./utf8.js";

/** Parsed and validated arguments, or the model-readable reason they were refused. */
export type ParsedArguments = { ok: true; value: unknown } | { ok: false; error: ToolError };

const SCHEMA_PREVIEW_CHARS = 2000;

/** Parses and validates `raw` for tool `tool`. Never throws. */
export function parseToolArguments(tool: string, raw: string, schema: CompiledSchema): ParsedArguments {
  if (raw.length > TOOL_DEFAULTS.maxArgumentsChars) {
    return refuse(
      `The arguments for ${tool} are ${raw.length} characters long, over the limit of ${TOOL_DEFAULTS.maxArgumentsChars}. Split the work into smaller calls.`,
    );
  }
  if (raw.trim() === "") {
    const check = schema.validate({});
    if (check.ok) return check;
    return refuse(
      `${tool} was called with empty arguments, but it needs: ${check.problems.join("; ")}. ${expected(schema)}`,
    );
  }
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch (error) {
    const reason = (error as Error).message;
    if (looksCutOff(raw)) {
      return refuse(
        `The arguments for ${tool} were cut off: the JSON ends before it is complete (${raw.length} characters; ${reason}). ` +
          `This usually means the call hit an output length limit. Send a smaller call (for a large file, write it in parts: write_file with append:true). ` +
          `The arguments began: ${preview(raw)}`,
      );
    }
    return refuse(
      `The arguments for ${tool} are not valid JSON (${reason}). Send exactly one JSON object, with no trailing commas or comments. ` +
        `The arguments began: ${preview(raw)}. ${expected(schema)}`,
    );
  }
  if (!isJsonObject(value)) {
    return refuse(
      `The arguments for ${tool} must be a JSON object, got ${describeJson(value)}${stringHint(value)}. ${expected(schema)}`,
    );
  }
  const check = schema.validate(value);
  if (check.ok) return check;
  return refuse(`Invalid arguments for ${tool}: ${check.problems.join("; ")}. ${expected(schema)}`);
}

function refuse(message: string): ParsedArguments {
  return { ok: false, error: { code: "tool_input_invalid", message } };
}

function expected(schema: CompiledSchema): string {
  return `Expected arguments (JSON Schema): ${shortenText(JSON.stringify(schema.jsonSchema), SCHEMA_PREVIEW_CHARS)}`;
}

function preview(raw: string): string {
  return JSON.stringify(shortenText(raw, TOOL_DEFAULTS.argumentsPreviewChars));
}

function describeJson(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  if (typeof value === "string") return "a string";
  return `a ${typeof value}`;
}

/** A string that itself holds a JSON object is the common double-encoding mistake: say so. */
function stringHint(value: unknown): string {
  if (typeof value !== "string") return "";
  try {
    const inner: unknown = JSON.parse(value);
    if (isJsonObject(inner)) {
      return " that contains JSON (the arguments were encoded twice: send the object itself, not a string)";
    }
  } catch {
    // Not JSON inside: the plain description is enough.
  }
  return "";
}

/**
 * True when `raw` reads as the beginning of a JSON document that stops early: it ends inside a
 * string or with brackets still open. (Trailing commas or stray text before a closed document do
 * not count: those are malformed, not cut off.) Only called after `JSON.parse` failed.
 */
export function looksCutOff(raw: string): boolean {
  let depth = 0;
  let inString = false;
  let escaped = false;
  for (let i = 0; i < raw.length; i++) {
    const c = raw.charCodeAt(i);
    if (inString) {
      if (escaped) escaped = false;
      else if (c === 0x5c /* \ */) escaped = true;
      else if (c === 0x22 /* " */) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x7b /* { */ || c === 0x5b /* [ */) depth++;
    else if (c === 0x7d /* } */ || c === 0x5d /* ] */) depth--;
  }
  return inString || depth > 0;
}
