/**
 * The Chat Completions stream as servers send it: `chat.completion.chunk` objects (one per SSE
 * message), the `chat.completion` object of a server that ignored `stream: true`, and the token
 * usage in either. Only the fields eddy reads are typed; every chunk is kept verbatim in its
 * `provider_event` frame.
 */
import type { CreateResponseBody, JsonObject, Usage } from "../../protocol/types.js";
import { isJsonObject } from "../../util/json.js";

/** One fragment of a streamed tool call (`delta.tool_calls[i]`). */
export interface ToolCallDelta {
  /** Which call the fragment belongs to; the id and name come on its first fragment. */
  index?: number;
  id?: string | null;
  type?: string;
  function?: { name?: string | null; arguments?: unknown };
}

/** What one chunk adds to the assistant message (`choices[i].delta`, or a whole `message`). */
export interface ChatDelta {
  role?: string;
  content?: string | null;
  refusal?: string | null;
  /** Raw reasoning: DeepSeek, llama.cpp and older vLLM name it `reasoning_content`. */
  reasoning_content?: string | null;
  /** Raw reasoning: newer vLLM, Ollama and OpenRouter name it `reasoning`. */
  reasoning?: string | null;
  tool_calls?: ToolCallDelta[] | null;
}

/** One choice of a chunk (eddy never asks for more than one; choice 0 is read). */
export interface ChatChoice {
  index?: number;
  delta?: ChatDelta;
  /** In a whole `chat.completion`. */
  message?: ChatDelta;
  finish_reason?: string | null;
}

/** A `chat.completion.chunk` (or a whole `chat.completion`), as far as eddy reads it. */
export interface ChatChunk {
  id?: string;
  object?: string;
  model?: string;
  choices?: ChatChoice[];
  usage?: JsonObject | null;
  /** Groq reports usage here on the last chunk. */
  x_groq?: { usage?: JsonObject | null };
  error?: unknown;
}

/**
 * A light shape check of a parsed chunk (no JSON Schema: the API has no published event schema,
 * and a valid chunk must cost nothing). Messages, or undefined when the shape is right.
 */
export function checkChunk(data: unknown): string[] | undefined {
  if (!isJsonObject(data)) return ["a Chat Completions chunk must be a JSON object"];
  if (data.error !== undefined) return undefined;
  const choices = data.choices;
  if (!Array.isArray(choices)) {
    return isJsonObject(data.usage) ? undefined : ["a Chat Completions chunk needs a `choices` array"];
  }
  for (let i = 0; i < choices.length; i++) {
    const choice = choices[i];
    if (!isJsonObject(choice) || (!isJsonObject(choice.delta) && !isJsonObject(choice.message)))
      return [`choices[${i}] has no \`delta\` object`];
  }
  return undefined;
}

/**
 * Chat Completions usage → Open Responses usage. Cached input tokens come from
 * `prompt_tokens_details.cached_tokens` (OpenAI, vLLM) or `prompt_cache_hit_tokens` (DeepSeek).
 */
export function toUsage(chat: JsonObject): Usage {
  const input = count(chat.prompt_tokens);
  const output = count(chat.completion_tokens);
  const promptDetails = isJsonObject(chat.prompt_tokens_details) ? chat.prompt_tokens_details : {};
  const completionDetails = isJsonObject(chat.completion_tokens_details)
    ? chat.completion_tokens_details
    : {};
  return {
    input_tokens: input,
    output_tokens: output,
    total_tokens: typeof chat.total_tokens === "number" ? chat.total_tokens : input + output,
    input_tokens_details: {
      cached_tokens: count(promptDetails.cached_tokens ?? chat.prompt_cache_hit_tokens),
    },
    output_tokens_details: { reasoning_tokens: count(completionDetails.reasoning_tokens) },
  };
}

/** The usage a chunk reports, if any (`usage`, or Groq's `x_groq.usage`). */
export function chunkUsage(chunk: ChatChunk): JsonObject | undefined {
  if (isJsonObject(chunk.usage)) return chunk.usage;
  const groq = chunk.x_groq?.usage;
  return isJsonObject(groq) ? groq : undefined;
}

/** Characters per token of the estimate used when a server reports no usage. */
const CHARS_PER_TOKEN = 4;

/** The characters a request sends the model (instructions and input), for `estimatedUsage`. */
export function requestChars(body: CreateResponseBody): number {
  const input = body.input;
  return (
    (body.instructions?.length ?? 0) +
    (typeof input === "string" ? input.length : JSON.stringify(input ?? []).length)
  );
}

/** Usage estimated from character counts, marked `estimated: true` (a server that sent none). */
export function estimatedUsage(inputChars: number, outputChars: number): Usage {
  const input = Math.ceil(inputChars / CHARS_PER_TOKEN);
  const output = Math.ceil(outputChars / CHARS_PER_TOKEN);
  const usage = {
    input_tokens: input,
    output_tokens: output,
    total_tokens: input + output,
    input_tokens_details: { cached_tokens: 0 },
    output_tokens_details: { reasoning_tokens: 0 },
    estimated: true,
  };
  return usage as Usage;
}

function count(value: unknown): number {
  return typeof value === "number" && Number.isFinite(value) ? value : 0;
}
