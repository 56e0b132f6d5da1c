/**
 * Reading a `POST /responses` body: JSON, then the short forms real clients send rewritten to the
 * spec's form (or refused, in strict mode), then the checks a real provider makes, each refusal a
 * 400 `invalid_request_error` whose `param` names the field (`model`, `max_tool_calls`,
 * `input[2].call_id`), then the vendored `CreateResponseBody` schema as the backstop.
 */
import { canonicalCreateBody } from "../protocol/shorthands.js";
import type { CreateResponseBody, ItemParam } from "../protocol/types.js";
import { validateCreateResponseBody } from "../protocol/validate.js";
import { isJsonObject, JSON_MAX_DEPTH, nestsDeeperThan } from "../util/json.js";
import { invalidRequest } from "./http-error.js";

/** A request body that passed validation: a schema-valid `CreateResponseBody` with a `model`. */
export type MockRequestBody = CreateResponseBody & { model: string };

/**
 * How a server treats the short forms real clients send (`src/protocol/shorthands.ts`,
 * docs/interop.md): `lenient` rewrites them to the spec's canonical form before validation;
 * `strict` refuses each with a 400 that names it, for client authors testing conformance.
 */
export type RequestConformance = "lenient" | "strict";

/**
 * `text` as a JSON object; a 400 `invalid_json` problem (ending with `hint`) otherwise. Every
 * endpoint's body and every WebSocket message is read with it.
 */
export function parseJsonBody(
  text: string,
  hint = "Send a JSON object with Content-Type: application/json.",
): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    throw invalidRequest(
      `We could not parse the JSON body of your request (${reason}). ${hint}`,
      null,
      "invalid_json",
    );
  }
  if (!isJsonObject(value)) {
    throw invalidRequest("The request body must be a JSON object.", null, "invalid_json");
  }
  // JSON.parse takes any depth; what walks the body after it (validation, masking, the tape) is
  // recursive and would overflow the stack (docs/pitfalls.md #74).
  if (nestsDeeperThan(value)) {
    throw invalidRequest(
      `The request body nests deeper than ${JSON_MAX_DEPTH} levels of arrays and objects.`,
      null,
      "invalid_json",
    );
  }
  return value as Record<string, unknown>;
}

/** Refuses a body without a `model` (400 `missing_required_parameter`, `param: "model"`). */
export function requireModel(body: Record<string, unknown>): void {
  if (body.model === undefined || body.model === null || body.model === "") {
    throw invalidRequest("Missing required parameter: 'model'.", "model", "missing_required_parameter");
  }
}

/**
 * Validates a parsed `CreateResponseBody` (the WebSocket mode's `response.create` message minus its
 * `type`, too), after rewriting its short forms to the canonical form (`lenient`) or refusing them
 * (`strict`). Returns the canonical body.
 */
export function checkCreateBody(
  raw: Record<string, unknown>,
  conformance: RequestConformance = "lenient",
): MockRequestBody {
  const body = canonicalBody(raw, conformance);
  requireModel(body);
  const maxToolCalls = body.max_tool_calls;
  if (typeof maxToolCalls === "number" && (!Number.isInteger(maxToolCalls) || maxToolCalls < 1)) {
    throw invalidRequest(
      `Invalid 'max_tool_calls': expected an integer >= 1, but got ${JSON.stringify(maxToolCalls)} instead.`,
      "max_tool_calls",
      "integer_below_min_value",
    );
  }
  if (body.background === true) {
    throw invalidRequest(
      "The mock server does not support background responses.",
      "background",
      "unsupported_value",
    );
  }
  if (Array.isArray(body.input)) body.input.forEach(checkInputItem);
  const errors = validateCreateResponseBody(body);
  if (errors !== undefined) {
    throw invalidRequest(`Invalid request body: ${errors.join("; ")}`, paramOf(errors[0]), "invalid_value");
  }
  return body as MockRequestBody;
}

/** `raw` in canonical form (`lenient`), or a 400 naming every short form in it (`strict`). */
function canonicalBody(
  raw: Record<string, unknown>,
  conformance: RequestConformance,
): Record<string, unknown> {
  const { body, departures } = canonicalCreateBody(raw);
  const first = departures[0];
  if (conformance === "lenient" || first === undefined) return body;
  const problems = departures.map((d) => d.problem).join("; ");
  throw invalidRequest(
    `${problems} (--strict). Send the canonical form: without --strict the server fills in the spec's defaults.`,
    first.param,
    first.code,
  );
}

/** The request's `input` as items: a string is one user message (spec §2). */
export function inputItems(body: CreateResponseBody): ItemParam[] {
  const input = body.input;
  if (input === undefined || input === null) return [];
  if (typeof input === "string") return [{ type: "message", role: "user", content: input }];
  return input;
}

/** Precise messages for the fields a tool loop gets wrong most (the schema would only name the item). */
function checkInputItem(item: unknown, index: number): void {
  const at = `input[${index}]`;
  if (!isJsonObject(item)) {
    throw invalidRequest(`Invalid '${at}': expected an item object.`, at, "invalid_type");
  }
  const fields = item as Record<string, unknown>;
  if (fields.type === "function_call_output" || fields.type === "function_call") {
    requireId(fields.call_id, `${at}.call_id`);
  }
  if (
    fields.type === "function_call_output" &&
    typeof fields.output !== "string" &&
    !Array.isArray(fields.output)
  ) {
    throw invalidRequest(
      `Missing required parameter: '${at}.output' (a string or an array of content parts).`,
      `${at}.output`,
      "missing_required_parameter",
    );
  }
  if (fields.type === "function_call") {
    if (typeof fields.name !== "string" || fields.name === "") {
      throw invalidRequest(
        `Missing required parameter: '${at}.name'.`,
        `${at}.name`,
        "missing_required_parameter",
      );
    }
    if (typeof fields.arguments !== "string") {
      throw invalidRequest(
        `Invalid '${at}.arguments': expected a JSON string.`,
        `${at}.arguments`,
        "invalid_type",
      );
    }
  }
}

function requireId(value: unknown, param: string): void {
  if (typeof value !== "string" || value.length === 0 || value.length > 64) {
    throw invalidRequest(
      `Invalid '${param}': expected a string of 1 to 64 characters (got ${JSON.stringify(value) ?? "nothing"}).`,
      param,
      value === undefined ? "missing_required_parameter" : "invalid_value",
    );
  }
}

/** `"/input/2/call_id must be string"` → `"input[2].call_id"`; `null` for the root. */
export function paramOf(message: string | undefined): string | null {
  const pointer = message?.match(/^\/\S*/)?.[0];
  if (pointer === undefined || pointer === "/") return null;
  let out = "";
  for (const raw of pointer.slice(1).split("/")) {
    const key = raw.replace(/~1/g, "/").replace(/~0/g, "~");
    out += /^\d+$/.test(key) ? `[${key}]` : out === "" ? key : `.${key}`;
  }
  return out;
}
