/**
 * Open Responses request body → the call options of an AI SDK language model
 * (`LanguageModelV3CallOptions` of `@ai-sdk/provider` 3), as JSON: what `request_started.wire_body`
 * records, and what a replay computes again from the body to compare. `liveCallOptions` turns it
 * into the object `doStream` takes (URLs as `URL`s, the abort signal).
 *
 * - `instructions` and `input` → `prompt` (prompt.ts);
 * - function `tools` → `{type: "function", name, description, inputSchema, strict?}`; `tool_choice`
 *   → `{type: "auto" | "none" | "required"}` or `{type: "tool", toolName}`; `allowed_tools` keeps
 *   the allowed subset of `tools` with its mode;
 * - `max_output_tokens` → `maxOutputTokens`, `temperature`, `top_p` → `topP`, the penalties →
 *   `presencePenalty` / `frequencyPenalty`; the common extensions `seed`, `top_k` → `topK` and
 *   `stop` → `stopSequences`;
 * - `text.format` `json_schema` → `responseFormat: {type: "json", schema, name, description}`,
 *   `json_object` → `{type: "json"}`;
 * - the adapter's own settings: `providerOptions` (what a provider package takes beyond the common
 *   options, e.g. Anthropic's `thinking`) and `includeRawChunks`.
 *
 * The rest cannot be said to a model-neutral interface and is left out: `store`, `include`,
 * `parallel_tool_calls`, `max_tool_calls`, `reasoning` (a provider option), `metadata`,
 * `truncation`, `service_tier`, `prompt_cache_key`, `safety_identifier`, `top_logprobs`, `stream`,
 * `stream_options`, `background`. A `previous_response_id` cannot be expressed (the AI SDK keeps no
 * responses): such a request fails before anything is sent as `previous_response_not_found`, so the
 * loop resends the history (docs/decisions.md #5); the capabilities make it stateless from the start.
 */
import type { CreateResponseBody, JsonObject } from "../../protocol/types.js";
import { isJsonObject } from "../../util/json.js";
import { ProviderError } from "../errors.js";
import { toPrompt, unsupported } from "./prompt.js";

/** The adapter settings that shape every request's call options (recorded in tapes: never secrets). */
export interface AiSdkCallSettings {
  /** Provider-specific options, by provider name (`{anthropic: {thinking: …}}`). @defaultValue none */
  providerOptions?: JsonObject;
  /** Ask the provider for its raw chunks too (`raw` stream parts, kept in `provider_event` frames). @defaultValue true */
  includeRawChunks?: boolean;
}

/** The call options for `body`, as JSON. Throws a `ProviderError` (`unsupported`) when it cannot be expressed. */
export function toCallOptions(body: CreateResponseBody, settings: AiSdkCallSettings = {}): JsonObject {
  if (typeof body.previous_response_id === "string") throw noStoredResponses();
  const out: JsonObject = {
    prompt: toPrompt(body.instructions ?? undefined, body.input ?? []),
  };
  addTools(out, body);
  addSampling(out, body as JsonObject);
  addFormat(out, body.text);
  if (settings.providerOptions !== undefined) out.providerOptions = settings.providerOptions;
  out.includeRawChunks = settings.includeRawChunks ?? true;
  return out;
}

/**
 * The object `doStream` takes for call options made by `toCallOptions`: file data that is a URL
 * (a string with `://`, which base64 never holds) as a `URL`, and the signal.
 */
export function liveCallOptions(
  options: JsonObject,
  signal: AbortSignal,
): JsonObject & { abortSignal: AbortSignal } {
  const prompt = Array.isArray(options.prompt) ? options.prompt : [];
  const live = prompt.map((message) => {
    if (!isJsonObject(message) || !Array.isArray(message.content)) return message;
    const content = message.content.map((part) =>
      isJsonObject(part) && part.type === "file" && typeof part.data === "string" && part.data.includes("://")
        ? { ...part, data: new URL(part.data) as unknown as string }
        : part,
    );
    return { ...message, content };
  });
  return { ...options, prompt: live, abortSignal: signal };
}

/**
 * The error of a chained follow-up: nothing is stored on the AI SDK's side, which is what
 * `previous_response_not_found` says, so the loop resends the turn with the whole history and stays
 * stateless (docs/decisions.md #5).
 */
function noStoredResponses(): ProviderError {
  return new ProviderError({
    kind: "unsupported",
    code: "previous_response_not_found",
    message:
      "cannot send previous_response_id through the AI SDK adapter: it keeps no responses, so the history must be resent (stateless mode)",
    retryable: false,
    providerCode: "previous_response_not_found",
  });
}

/** `tools` and `tool_choice`. */
function addTools(out: JsonObject, body: CreateResponseBody): void {
  let tools = (body.tools ?? []).map(toFunctionTool);
  const choice = body.tool_choice;
  if (isJsonObject(choice) && choice.type === "allowed_tools") {
    const allowed = new Set<unknown>(
      (Array.isArray(choice.tools) ? choice.tools : []).map((t) => (isJsonObject(t) ? t.name : undefined)),
    );
    tools = tools.filter((t) => allowed.has(t.name));
    out.toolChoice = { type: typeof choice.mode === "string" ? choice.mode : "auto" };
  } else if (isJsonObject(choice)) {
    if (choice.type !== "function" || typeof choice.name !== "string")
      throw unsupported(`tool_choice of type ${JSON.stringify(choice.type)}`);
    out.toolChoice = { type: "tool", toolName: choice.name };
  } else if (typeof choice === "string") out.toolChoice = { type: choice };
  if (tools.length > 0) out.tools = tools;
}

function toFunctionTool(tool: unknown): JsonObject {
  if (!isJsonObject(tool) || tool.type !== "function" || typeof tool.name !== "string") {
    const type = isJsonObject(tool) ? tool.type : typeof tool;
    throw unsupported(`the ${JSON.stringify(type)} tool (only function tools reach an AI SDK model)`);
  }
  const out: JsonObject = {
    type: "function",
    name: tool.name,
    inputSchema: isJsonObject(tool.parameters) ? tool.parameters : { type: "object", properties: {} },
  };
  if (typeof tool.description === "string") out.description = tool.description;
  if (tool.strict === true) out.strict = true;
  return out;
}

/** Sampling settings with an AI SDK name (the common extensions included). */
const SAMPLING: ReadonlyArray<[string, string]> = [
  ["max_output_tokens", "maxOutputTokens"],
  ["temperature", "temperature"],
  ["top_p", "topP"],
  ["presence_penalty", "presencePenalty"],
  ["frequency_penalty", "frequencyPenalty"],
  ["seed", "seed"],
  ["top_k", "topK"],
];

function addSampling(out: JsonObject, body: JsonObject): void {
  for (const [from, to] of SAMPLING) if (typeof body[from] === "number") out[to] = body[from];
  const stop = body.stop;
  if (typeof stop === "string") out.stopSequences = [stop];
  else if (Array.isArray(stop) && stop.every((s) => typeof s === "string")) out.stopSequences = stop;
}

/** `text.format` → `responseFormat`. */
function addFormat(out: JsonObject, text: CreateResponseBody["text"]): void {
  const format: unknown = isJsonObject(text) ? text.format : undefined;
  if (!isJsonObject(format)) return;
  if (format.type === "json_schema") {
    const json: JsonObject = { type: "json" };
    if (isJsonObject(format.schema)) json.schema = format.schema;
    if (typeof format.name === "string") json.name = format.name;
    if (typeof format.description === "string") json.description = format.description;
    out.responseFormat = json;
  } else if (format.type === "json_object") out.responseFormat = { type: "json" };
}
