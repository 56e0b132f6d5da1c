/**
 * A planned turn → Chat Completions output: the `chat.completion.chunk` sequence of a stream, or
 * one `chat.completion` object. The shapes follow OpenAI's own streams
 * (`test/fixtures/chat-captures/openai/*.chunks.txt`):
 *
 * - the first chunk's delta is `{role: "assistant", content: "" | null, refusal: null}`;
 * - message text → `delta.content` in word-sized deltas; a refusal part → `delta.refusal`;
 * - reasoning → `delta.reasoning_content` (its raw content, else its summaries), as DeepSeek, xAI,
 *   vLLM and llama.cpp send it (`test/fixtures/chat-captures/deepseek/`);
 * - each function call → `delta.tool_calls[{index}]` fragments: the first has `id`, `type` and
 *   `function.name` with empty `arguments`, the next ones only `index` and an arguments piece;
 * - then a chunk with an empty delta and `finish_reason` (`tool_calls` when the turn made calls,
 *   `stop` otherwise; `length` for an incomplete turn, `content_filter` when its
 *   `incompleteReason` says so); a failed turn ends with an `{"error": {…}}` chunk instead;
 * - with `stream_options.include_usage`, every chunk carries `usage: null` and a last chunk has
 *   `choices: []` and the usage.
 *
 * Items stream in plan order; chat has one assistant message per choice, so the texts of several
 * message items are concatenated.
 */
import type { ItemField, JsonObject } from "../../protocol/types.js";
import { MOCK_DEFAULTS } from "../defaults.js";
import { finalItem } from "../events.js";
import type { ReadyItem, ReadyPlan } from "../plan.js";
import { fragments, obfuscation, textDeltas } from "../text-split.js";
import { computeUsage } from "../usage.js";

/** Everything the chat output depends on. */
export interface ChatOutputOptions {
  plan: ReadyPlan;
  /** The completion id (`chatcmpl_mock_0001`). */
  id: string;
  /** Unix seconds. */
  created: number;
  model: string;
  /** The conversation and instructions the model saw (for the usage estimate). */
  context: readonly unknown[];
  instructions: string | undefined;
}

/** Stream options of the request. */
export interface ChatStreamStyle {
  /** `stream_options.include_usage`. */
  includeUsage: boolean;
  /** Pad each chunk with `obfuscation` (`stream_options.include_obfuscation`, default on). */
  obfuscate: boolean;
}

/** The usage object of Chat Completions. */
export interface ChatUsage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  prompt_tokens_details: { cached_tokens: number; audio_tokens: number };
  completion_tokens_details: {
    reasoning_tokens: number;
    audio_tokens: number;
    accepted_prediction_tokens: number;
    rejected_prediction_tokens: number;
  };
}

const FINGERPRINT = "fp_eddy_mock";

/** The chunks of a streamed completion (see the module comment). */
export function* chatChunks(options: ChatOutputOptions, style: ChatStreamStyle): Generator<JsonObject> {
  const { plan } = options;
  const chunk = (delta: JsonObject, finish: string | null = null): JsonObject => {
    const out: JsonObject = {
      ...envelope(options, "chat.completion.chunk"),
      choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }],
    };
    if (style.includeUsage) out.usage = null;
    if (style.obfuscate) out.obfuscation = obfuscation(JSON.stringify(delta));
    return out;
  };
  const hasText = plan.items.some(
    (i) => i.type === "message" && i.parts.some((p) => p.type === "output_text"),
  );
  yield chunk({ role: "assistant", content: hasText ? "" : null, refusal: null });
  let callIndex = 0;
  for (const item of plan.items) {
    switch (item.type) {
      case "message":
        for (const part of item.parts) {
          const [key, text] =
            part.type === "output_text" ? ["content", part.text] : ["refusal", part.refusal];
          for (const delta of textDeltas(text, MOCK_DEFAULTS.textDeltaChars)) yield chunk({ [key]: delta });
        }
        break;
      case "reasoning":
        for (const delta of fragments(reasoningText(item), MOCK_DEFAULTS.fragmentChars)) {
          yield chunk({ reasoning_content: delta });
        }
        break;
      case "function_call": {
        const index = callIndex++;
        yield chunk({
          tool_calls: [
            { index, id: item.call_id, type: "function", function: { name: item.name, arguments: "" } },
          ],
        });
        for (const piece of fragments(item.arguments, MOCK_DEFAULTS.fragmentChars)) {
          yield chunk({ tool_calls: [{ index, function: { arguments: piece } }] });
        }
        break;
      }
    }
  }
  if (plan.status === "failed") {
    yield { error: failure(plan) };
    return;
  }
  yield chunk({}, finishReason(plan));
  if (style.includeUsage) {
    const last: JsonObject = {
      ...envelope(options, "chat.completion.chunk"),
      choices: [],
      usage: usageOf(options),
    };
    if (style.obfuscate) last.obfuscation = obfuscation(JSON.stringify(last.usage));
    yield last;
  }
}

/** The `chat.completion` object of a non-streaming request (a failed turn has none: see `failure`). */
export function chatCompletion(options: ChatOutputOptions): JsonObject {
  const { plan } = options;
  const text = partsText(plan.items, "output_text");
  const refusal = partsText(plan.items, "refusal");
  const reasoning = plan.items
    .filter((i) => i.type === "reasoning")
    .map(reasoningText)
    .join("");
  const calls = plan.items.flatMap((i) =>
    i.type === "function_call"
      ? [{ id: i.call_id, type: "function", function: { name: i.name, arguments: i.arguments } }]
      : [],
  );
  const message: JsonObject = {
    role: "assistant",
    content: text === "" && (calls.length > 0 || refusal !== "") ? null : text,
    refusal: refusal === "" ? null : refusal,
    annotations: [],
  };
  if (calls.length > 0) message.tool_calls = calls;
  if (reasoning !== "") message.reasoning_content = reasoning;
  return {
    ...envelope(options, "chat.completion"),
    choices: [{ index: 0, message, logprobs: null, finish_reason: finishReason(plan) }],
    usage: usageOf(options),
  };
}

/** The error payload of a failed turn (an error chunk when streaming, HTTP 500 otherwise). */
export function failure(plan: ReadyPlan): JsonObject {
  const error = plan.error ?? { code: "server_error", message: "The mock response failed." };
  return { message: error.message, type: "server_error", code: error.code, param: null };
}

function envelope(options: ChatOutputOptions, object: string): JsonObject {
  return {
    id: options.id,
    object,
    created: options.created,
    model: options.model,
    service_tier: "default",
    system_fingerprint: FINGERPRINT,
  };
}

function finishReason(plan: ReadyPlan): string {
  if (plan.status === "incomplete")
    return plan.incompleteReason === "content_filter" ? "content_filter" : "length";
  return plan.items.some((i) => i.type === "function_call") ? "tool_calls" : "stop";
}

function reasoningText(item: Extract<ReadyItem, { type: "reasoning" }>): string {
  return (item.content.length > 0 ? item.content : item.summary).join("\n\n");
}

function partsText(items: readonly ReadyItem[], type: "output_text" | "refusal"): string {
  let out = "";
  for (const item of items) {
    if (item.type !== "message") continue;
    for (const part of item.parts) {
      if (part.type === "output_text" && type === "output_text") out += part.text;
      if (part.type === "refusal" && type === "refusal") out += part.refusal;
    }
  }
  return out;
}

/** The Responses usage estimate (the same rules as `/responses`), in Chat Completions names. */
function usageOf(options: ChatOutputOptions): ChatUsage {
  const { plan } = options;
  const status = plan.status === "incomplete" ? "incomplete" : "completed";
  const output: ItemField[] = plan.items.map((item, i) =>
    finalItem(item, i === plan.items.length - 1 ? status : "completed", {
      includeEncrypted: false,
      obfuscate: false,
    }),
  );
  const usage = computeUsage({
    context: options.context,
    instructions: options.instructions,
    output,
    overrides: plan.usage,
  });
  return {
    prompt_tokens: usage.input_tokens,
    completion_tokens: usage.output_tokens,
    total_tokens: usage.total_tokens,
    prompt_tokens_details: { cached_tokens: usage.input_tokens_details.cached_tokens, audio_tokens: 0 },
    completion_tokens_details: {
      reasoning_tokens: usage.output_tokens_details.reasoning_tokens,
      audio_tokens: 0,
      accepted_prediction_tokens: 0,
      rejected_prediction_tokens: 0,
    },
  };
}
