/**
 * How an AI SDK model's stream parts become frames. Every part is one `provider_event` whose `data`
 * is the part verbatim, as JSON (`partToJson`: dates as ISO strings, binary data as base64, errors
 * by their fields); the `raw` parts a provider sends with `includeRawChunks` carry its wire events
 * (an Anthropic `content_block_delta`, …), so the tape keeps what the vendor sent too. A live run
 * frames each part through `aiSdkFramesFromSse` as the JSON text of one message, which is exactly
 * what a replay feeds back (replay/replay-provider.ts), so both derive the same frames. With
 * validation on, a light shape check records what is wrong with a part in `errors` (the parts are
 * not Open Responses events). No frame is derived here: the assembling stream derives
 * `output_text_delta` from the translated events (translator.ts).
 */
import { isJsonObject } from "../../util/json.js";
import { checkedFramesFromSse } from "../chat-completions/wire.js";

/** The stream part types of `LanguageModelV3StreamPart` (`@ai-sdk/provider` 3). */
const PART_TYPES: ReadonlySet<string> = new Set([
  "stream-start",
  "response-metadata",
  "text-start",
  "text-delta",
  "text-end",
  "reasoning-start",
  "reasoning-delta",
  "reasoning-end",
  "tool-input-start",
  "tool-input-delta",
  "tool-input-end",
  "tool-approval-request",
  "tool-call",
  "tool-result",
  "file",
  "source",
  "finish",
  "raw",
  "error",
]);

/** Maps one stream part (the JSON text of a message) to its frame. */
export const aiSdkFramesFromSse = checkedFramesFromSse(checkPart);

/** What is wrong with a part's shape, if anything. */
function checkPart(data: unknown): string[] | undefined {
  if (!isJsonObject(data)) return ["an AI SDK stream part must be a JSON object"];
  const type = data.type;
  if (typeof type !== "string") return ["an AI SDK stream part needs a string `type`"];
  if (!PART_TYPES.has(type)) return [`unknown AI SDK stream part type "${type}" (LanguageModelV3StreamPart)`];
  return undefined;
}

/** A stream part as JSON text: what its `provider_event` keeps (see the module comment). */
export function partToJson(part: unknown): string {
  return JSON.stringify(part, jsonValue) ?? "null";
}

/**
 * `partToJson(part)`, or — for a part that cannot be written as JSON (a vendor's raw chunk nested
 * deeper than the stack: `JSON.stringify` overflowed and the run ended as an internal error; a
 * cycle; a getter that throws) — one line saying so, which is not JSON: its frame is then an
 * `invalid_json` `provider_event` keeping that line, live and in a replay alike, as an SSE event
 * too deep or not JSON is (docs/pitfalls.md #74).
 */
export function partText(part: unknown): string {
  try {
    return partToJson(part);
  } catch (err) {
    const reason = err instanceof RangeError ? "it nests deeper than the stack" : errorReason(err);
    return `eddy: an AI SDK stream part${partTypeOf(part)} cannot be written as JSON: ${reason}`;
  }
}

/** ` of type "T"` for a part whose `type` can be read, else nothing. */
function partTypeOf(part: unknown): string {
  try {
    const type = isJsonObject(part) ? part.type : undefined;
    return typeof type === "string" ? ` of type ${JSON.stringify(type.slice(0, 64))}` : "";
  } catch {
    return "";
  }
}

function errorReason(err: unknown): string {
  try {
    return (err instanceof Error ? err.message : String(err)).split("\n", 1)[0]?.slice(0, 200) ?? "";
  } catch {
    return "an error";
  }
}

/** `JSON.stringify` replacer: binary data as base64, errors by their fields, bigints as strings. */
function jsonValue(this: unknown, _key: string, value: unknown): unknown {
  if (value instanceof Uint8Array) return Buffer.from(value).toString("base64");
  if (value instanceof ArrayBuffer) return Buffer.from(value).toString("base64");
  if (typeof value === "bigint") return value.toString();
  if (value instanceof Error) return errorFields(value);
  return value;
}

/**
 * The fields of an error a reader needs (an `APICallError` in an `error` part: its status and the
 * body the provider answered with); never the request (`requestBodyValues`) or headers.
 */
export function errorFields(error: Error): Record<string, unknown> {
  const e = error as Error & Record<string, unknown>;
  const out: Record<string, unknown> = { name: error.name, message: error.message };
  for (const key of ["statusCode", "responseBody", "isRetryable", "data", "url"]) {
    if (e[key] !== undefined) out[key] = e[key];
  }
  return out;
}
