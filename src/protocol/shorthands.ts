/**
 * The short forms real clients send in a `CreateResponseBody`, and the canonical form the spec
 * gives each one. The spec marks some fields required while giving them a `default` (a message
 * item's `type` is required, default `"message"`); the official API, and so every client written
 * against it, leaves them out. `canonicalCreateBody` finds each such departure and writes the
 * spec's value in its place, once, before validation, so everything after it (the schema check,
 * the stored conversation, a model) sees the spec's form only. Nothing is invented: a departure is
 * rewritten only where the spec (or the official API's documented behaviour) says what the absent
 * or null value means. docs/interop.md lists them.
 */
import { isJsonObject } from "../util/json.js";

/** One short form found in a request body. */
export interface Departure {
  /** Where it is, as an error `param`: `input[0].type`, `tools[1].strict`. */
  param: string;
  /** What the spec requires there, one clause: `input[0].type is required`. */
  problem: string;
  /** The error code a strict server answers with. */
  code: "missing_required_parameter" | "invalid_type" | "invalid_value";
}

/** A body in canonical form, and the short forms that were rewritten to get it. */
export interface CanonicalBody {
  /** The body with every departure replaced by the spec's form (the input object when there was none). */
  body: Record<string, unknown>;
  /** Every departure, in document order; empty when the body was canonical already. */
  departures: Departure[];
}

/**
 * Finds the short forms in a parsed create body (`POST /responses`, a WebSocket `response.create`,
 * `POST /responses/compact`) and returns the body in the spec's canonical form beside the list of
 * what was rewritten. A lenient server goes on with `body`; a strict one refuses `departures`. The
 * input object is never changed; fields the rules do not know are left as they are (the schema
 * check judges them).
 *
 * @example
 * ```ts
 * const { body, departures } = canonicalCreateBody({ model: "m", input: [{ role: "user", content: "hi" }] });
 * // body.input[0] = { type: "message", role: "user", content: "hi" }
 * // departures = [{ param: "input[0].type", problem: "input[0].type is required", code: "missing_required_parameter" }]
 * ```
 */
export function canonicalCreateBody(raw: Record<string, unknown>): CanonicalBody {
  const departures: Departure[] = [];
  let body = withoutNulls(raw, NOT_NULLABLE, "", departures);
  const input = canonicalList(raw.input, "input", canonicalInputItem, departures);
  if (input !== raw.input) body = { ...body, input };
  const tools = canonicalList(raw.tools, "tools", canonicalTool, departures);
  if (tools !== raw.tools) body = { ...body, tools };
  return { body, departures };
}

/**
 * Request fields the official SDK lets a client set to `null` ("not set") where the spec's schema
 * has no `null`: `null` there means the field is absent, so the spec's default applies.
 */
const NOT_NULLABLE = ["include", "stream", "background", "store", "service_tier", "truncation"] as const;

/** `value` without the `keys` that are `null` (the same object when none is). */
function withoutNulls(
  value: Record<string, unknown>,
  keys: readonly string[],
  at: string,
  departures: Departure[],
): Record<string, unknown> {
  const nulls = keys.filter((key) => value[key] === null);
  if (nulls.length === 0) return value;
  const out = { ...value };
  for (const key of nulls) {
    delete out[key];
    const param = `${at}${key}`;
    departures.push({ param, problem: `${param} must not be null (leave it out)`, code: "invalid_type" });
  }
  return out;
}

/** Rewrites one element of a list, returning the same object when nothing changed. */
type ElementRule = (
  value: Record<string, unknown>,
  at: string,
  departures: Departure[],
) => Record<string, unknown>;

/** A list with `rule` applied to each object element (the same array when nothing changed; non-arrays as they are). */
function canonicalList(value: unknown, at: string, rule: ElementRule, departures: Departure[]): unknown {
  if (!Array.isArray(value)) return value;
  let out: unknown[] | undefined;
  value.forEach((element: unknown, index) => {
    if (!isJsonObject(element)) return;
    const next = rule(element as Record<string, unknown>, `${at}[${index}]`, departures);
    if (next === element) return;
    out ??= [...value];
    out[index] = next;
  });
  return out ?? value;
}

/**
 * An input item. A message sent as `{role, content}` (the official SDK's `EasyInputMessage`; the
 * AI SDK and the Agents SDK send every message this way) is a message item: the spec's default for
 * `type` is `"message"` (`UserMessageItemParam` and its siblings in
 * `schemas/openresponses/openapi.json`). An item with neither `type` nor `role` is an
 * `item_reference`, whose `type` the spec itself makes optional.
 */
function canonicalInputItem(item: Record<string, unknown>, at: string, departures: Departure[]) {
  let out = item;
  if (item.type === undefined && typeof item.role === "string") {
    departures.push({
      param: `${at}.type`,
      problem: `${at}.type is required`,
      code: "missing_required_parameter",
    });
    out = { type: "message", ...item };
  }
  // The SDK types an assistant message's `phase` as nullable; the spec has no `null` for it.
  if (out.type === "message" && out.role === "assistant")
    out = withoutNulls(out, ["phase"], `${at}.`, departures);
  return out;
}

/** A function tool whose `strict` is `null` (nullable in the SDK's `FunctionTool`, boolean in the spec's `FunctionToolParam`): absent. */
function canonicalTool(tool: Record<string, unknown>, at: string, departures: Departure[]) {
  return tool.type === "function" ? withoutNulls(tool, ["strict"], `${at}.`, departures) : tool;
}
