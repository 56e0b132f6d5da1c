/**
 * Open Responses request body → Chat Completions request body. The loop builds one request shape
 * (`CreateResponseBody`) for every provider; this pure function says what the same request is in
 * the older API, so nothing above the provider knows the difference.
 *
 * - `instructions` → the first message, in the dialect's role (`system` or `developer`).
 * - Input items → `messages` (messages.ts): user, assistant and tool messages; reasoning items are
 *   never resent (the API has no way to take them back).
 * - `tools` → `{type: "function", function: {name, description, parameters, strict?}}`;
 *   `tool_choice` and `parallel_tool_calls` as the API spells them; `allowed_tools` becomes the
 *   allowed subset of `tools` (few servers know OpenAI's `allowed_tools` choice).
 * - `max_output_tokens` → the dialect's `max_tokens` or `max_completion_tokens`;
 *   `text.format` → `response_format`; `reasoning.effort` → `reasoning_effort`;
 *   `text.verbosity` → `verbosity`; `top_logprobs` → `logprobs` + `top_logprobs`.
 * - `store`, `include`, `max_tool_calls`, `truncation`, `background`, `metadata` and
 *   `reasoning.summary` exist only in the Responses API and are not sent; fields the Responses
 *   spec does not define (a server's own extensions: `seed`, `stop`, `top_k`, …) pass through.
 * - `previous_response_id` cannot be expressed: the API is stateless, so such a request fails
 *   before anything is sent, as `previous_response_not_found` (the loop then resends the history;
 *   the provider's capabilities make it do so from the start).
 */
import type { CreateResponseBody, JsonObject } from "../../protocol/types.js";
import { isJsonObject } from "../../util/json.js";
import type { ChatDialect } from "./dialect.js";
import { noStoredResponses, toChatMessages, unsupported } from "./messages.js";

/** Responses fields that have no Chat Completions equivalent and are left out. */
const RESPONSES_ONLY: ReadonlySet<string> = new Set([
  "store",
  "include",
  "max_tool_calls",
  "truncation",
  "background",
  "metadata",
  "stream_options",
]);

/** Responses fields this module translates (everything else passes through as is). */
const TRANSLATED: ReadonlySet<string> = new Set([
  "model",
  "instructions",
  "input",
  "previous_response_id",
  "tools",
  "tool_choice",
  "parallel_tool_calls",
  "max_output_tokens",
  "text",
  "reasoning",
  "top_logprobs",
  "stream",
]);

/**
 * The Chat Completions body for `body`. Throws a `ProviderError` of kind `unsupported` when the
 * request cannot be expressed (a chained follow-up, a hosted tool, an item reference, …).
 */
export function toChatRequest(body: CreateResponseBody, dialect: ChatDialect): JsonObject {
  if (typeof body.previous_response_id === "string") throw noStoredResponses();
  const out: JsonObject = {};
  if (body.model !== undefined && body.model !== null) out.model = body.model;
  out.messages = toChatMessages(body.instructions ?? undefined, body.input ?? [], dialect.instructionsRole);
  addTools(out, body);
  if (typeof body.max_output_tokens === "number") out[dialect.maxTokensField] = body.max_output_tokens;
  addText(out, body.text);
  const effort = body.reasoning?.effort;
  if (typeof effort === "string") out.reasoning_effort = effort;
  if (typeof body.top_logprobs === "number") {
    out.logprobs = true;
    out.top_logprobs = body.top_logprobs;
  }
  for (const [key, value] of Object.entries(body)) {
    if (value === undefined || TRANSLATED.has(key) || RESPONSES_ONLY.has(key)) continue;
    out[key] = value;
  }
  out.stream = true;
  if (dialect.streamUsage) out.stream_options = { include_usage: true };
  return out;
}

/** `tools`, `tool_choice` and `parallel_tool_calls`. */
function addTools(out: JsonObject, body: CreateResponseBody): void {
  let tools = (body.tools ?? []).map(toChatTool);
  const choice = body.tool_choice;
  if (isJsonObject(choice) && choice.type === "allowed_tools") {
    const allowed = new Set<unknown>(
      (Array.isArray(choice.tools) ? choice.tools : []).map((t) => (isJsonObject(t) ? t.name : undefined)),
    );
    tools = tools.filter((t) => allowed.has((t.function as JsonObject).name));
    out.tool_choice = typeof choice.mode === "string" ? choice.mode : "auto";
  } else if (isJsonObject(choice)) {
    if (choice.type !== "function" || typeof choice.name !== "string")
      throw unsupported(`tool_choice of type ${JSON.stringify(choice.type)}`);
    out.tool_choice = { type: "function", function: { name: choice.name } };
  } else if (typeof choice === "string") out.tool_choice = choice;
  if (body.tools !== undefined && body.tools !== null) out.tools = tools;
  if (typeof body.parallel_tool_calls === "boolean") out.parallel_tool_calls = body.parallel_tool_calls;
}

function toChatTool(tool: unknown): JsonObject {
  if (!isJsonObject(tool) || tool.type !== "function" || typeof tool.name !== "string") {
    const type = isJsonObject(tool) ? tool.type : typeof tool;
    throw unsupported(
      `the ${JSON.stringify(type)} tool (only function tools exist in the Chat Completions API)`,
    );
  }
  const fn: JsonObject = { name: tool.name };
  if (typeof tool.description === "string") fn.description = tool.description;
  if (isJsonObject(tool.parameters)) fn.parameters = tool.parameters;
  // `strict: false` is every server's default; some servers reject fields they do not know.
  if (tool.strict === true) fn.strict = true;
  return { type: "function", function: fn };
}

/** `text.format` → `response_format`; `text.verbosity` → `verbosity`. */
function addText(out: JsonObject, text: CreateResponseBody["text"]): void {
  if (!isJsonObject(text)) return;
  const format: unknown = text.format;
  if (isJsonObject(format)) {
    if (format.type === "json_schema") {
      const schema: JsonObject = { name: typeof format.name === "string" ? format.name : "output" };
      if (typeof format.description === "string") schema.description = format.description;
      if (isJsonObject(format.schema)) schema.schema = format.schema;
      if (typeof format.strict === "boolean") schema.strict = format.strict;
      out.response_format = { type: "json_schema", json_schema: schema };
    } else if (format.type === "json_object") out.response_format = { type: "json_object" };
  }
  if (typeof text.verbosity === "string") out.verbosity = text.verbosity;
}
