/**
 * The Chat Completions streams the chat benchmark serves, and the floor that reads them.
 *
 * - `chatStreamOf(generated)`: the same content as a generated Open Responses stream
 *   (bench/sse/stream.ts: text deltas, then one function call's argument deltas), as
 *   `chat.completion.chunk`s the way OpenAI streams them: a role chunk, one chunk per delta (the
 *   call's first fragment with id and name), a finish chunk, a usage chunk, `[DONE]`.
 * - `chatCallReply` / `chatAnswerReply`: one agent turn as chat chunks (bench/loop/responses.ts's
 *   two responses: `noop({"n":1})` in 3 fragments, then the 160-character answer in 40 deltas).
 * - `floorChatAssembler`: what a minimal correct client does with the chunks (text from the
 *   content deltas, each call's arguments concatenated by index), fed by bench/provider/floor.ts's
 *   parser.
 */
import { ANSWER, CALL_ID, MODEL, NOOP_ARGUMENTS, TEXT_DELTAS } from "../loop/responses.js";
import type { EventSink } from "../provider/floor.js";
import type { Reply } from "../provider/responder.js";
import type { GeneratedStream } from "../sse/stream.js";

type Json = Record<string, unknown>;

/** A chat stream with the content of a generated Responses stream. */
export interface ChatStream {
  bytes: Uint8Array;
  /** SSE messages (chunks), `[DONE]` excluded. */
  chunks: number;
  text: string;
  arguments: string;
}

const encoder = new TextEncoder();

function chunk(id: string, delta: Json, finish: string | null = null): Json {
  return {
    id,
    object: "chat.completion.chunk",
    created: 1772062745,
    model: "gpt-4.1-2025-04-14",
    system_fingerprint: "fp_bench",
    choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }],
    usage: null,
  };
}

function usageChunk(id: string, prompt: number, completion: number): Json {
  return {
    id,
    object: "chat.completion.chunk",
    created: 1772062745,
    model: "gpt-4.1-2025-04-14",
    choices: [],
    usage: {
      prompt_tokens: prompt,
      completion_tokens: completion,
      total_tokens: prompt + completion,
      prompt_tokens_details: { cached_tokens: 0 },
      completion_tokens_details: { reasoning_tokens: 0 },
    },
  };
}

function sse(chunks: readonly Json[]): string[] {
  return [...chunks.map((c) => `data: ${JSON.stringify(c)}\n\n`), "data: [DONE]\n\n"];
}

/** The generated stream's deltas as chat chunks (see the module comment). */
export function chatStreamOf(generated: GeneratedStream): ChatStream {
  const id = "chatcmpl-bench";
  const chunks: Json[] = [chunk(id, { role: "assistant", content: "", refusal: null })];
  let first = true;
  for (const event of generated.events) {
    if (event.type === "response.output_text.delta") chunks.push(chunk(id, { content: event.delta }));
    else if (event.type === "response.function_call_arguments.delta") {
      const fragment: Json = first
        ? {
            index: 0,
            id: "call_Q3b9dTkJ4mXf0a7LZc2pWn8e",
            type: "function",
            function: { name: "read_file", arguments: event.delta },
          }
        : { index: 0, function: { arguments: event.delta } };
      first = false;
      chunks.push(chunk(id, { tool_calls: [fragment] }));
    }
  }
  chunks.push(chunk(id, {}, "tool_calls"), usageChunk(id, 1834, generated.events.length));
  return {
    bytes: encoder.encode(sse(chunks).join("")),
    chunks: chunks.length,
    text: generated.text,
    arguments: generated.arguments,
  };
}

const ARGUMENT_FRAGMENTS = ['{"n"', ":", "1}"];

/** Turn response #1: the noop call in 3 fragments; one write per chunk. */
export function chatCallReply(): Reply {
  const id = "chatcmpl-bench-1";
  const chunks: Json[] = [chunk(id, { role: "assistant", content: null })];
  ARGUMENT_FRAGMENTS.forEach((args, i) => {
    const fragment: Json =
      i === 0
        ? { index: 0, id: CALL_ID, type: "function", function: { name: "noop", arguments: args } }
        : { index: 0, function: { arguments: args } };
    chunks.push(chunk(id, { tool_calls: [fragment] }));
  });
  chunks.push(chunk(id, {}, "tool_calls"), usageChunk(id, 120, 12));
  return { chunks: sse(chunks).map((t) => encoder.encode(t)) };
}

/** Turn response #2: the 160-character answer in 40 deltas; one write per chunk. */
export function chatAnswerReply(): Reply {
  const id = "chatcmpl-bench-2";
  const size = ANSWER.length / TEXT_DELTAS;
  const chunks: Json[] = [chunk(id, { role: "assistant", content: "" })];
  for (let i = 0; i < TEXT_DELTAS; i++)
    chunks.push(chunk(id, { content: ANSWER.slice(i * size, (i + 1) * size) }));
  chunks.push(chunk(id, {}, "stop"), usageChunk(id, 160, 40));
  return { chunks: sse(chunks).map((t) => encoder.encode(t)), firstDeltaChunk: 2 };
}

/** What the floor assembles from chat chunks. */
export interface FloorChat {
  text: string;
  /** Each call's arguments, by index. */
  calls: { id: string; name: string; arguments: string }[];
  chunks: number;
}

/** A chunk sink assembling a `FloorChat`; `onDelta` sees each text delta. */
export function floorChatAssembler(onDelta?: (delta: string) => void): {
  sink: EventSink;
  response: FloorChat;
} {
  const response: FloorChat = { text: "", calls: [], chunks: 0 };
  const sink: EventSink = (data) => {
    response.chunks++;
    const delta = (data.choices as { delta?: Json }[] | undefined)?.[0]?.delta;
    if (delta === undefined) return;
    if (typeof delta.content === "string" && delta.content !== "") {
      response.text += delta.content;
      onDelta?.(delta.content);
    }
    const calls = delta.tool_calls as {
      index: number;
      id?: string;
      function: { name?: string; arguments?: string };
    }[];
    if (calls === undefined) return;
    for (const c of calls) {
      let call = response.calls[c.index];
      if (call === undefined) {
        call = { id: c.id ?? "", name: c.function.name ?? "", arguments: "" };
        response.calls[c.index] = call;
      }
      call.arguments += c.function.arguments ?? "";
    }
  };
  return { sink, response };
}

/** The chat request bodies of the turn, as a hand-written client sends them. */
export const NOOP_CHAT_TOOL = {
  type: "function",
  function: {
    name: "noop",
    description: "Does nothing and answers ok.",
    parameters: {
      type: "object",
      properties: { n: { type: "number" } },
      required: ["n"],
      additionalProperties: false,
    },
  },
};

/** The follow-up messages after the call (the floor loop's second request). */
export function followUpMessages(prompt: string, output: string): Json[] {
  return [
    { role: "user", content: prompt },
    {
      role: "assistant",
      content: null,
      tool_calls: [{ id: CALL_ID, type: "function", function: { name: "noop", arguments: NOOP_ARGUMENTS } }],
    },
    { role: "tool", tool_call_id: CALL_ID, content: output },
  ];
}

export { MODEL };
