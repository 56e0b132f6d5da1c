/**
 * The streams of the scaling benchmark, each generated at any size: a Chat Completions response
 * with `n` tool calls (one fragment each, the shape that made assembly quadratic), one call's
 * arguments in `n` fragments, and an Open Responses response with `n` function_call items. The
 * deltas-per-item stream is bench/sse/stream.ts's (text deltas, then one call's argument deltas).
 * Bodies are cut into 16 KiB chunks, as a socket would deliver them.
 */
import type { Transport } from "../../src/provider/transport.js";
import { responseResource } from "../sse/stream.js";

type Json = Record<string, unknown>;

const encoder = new TextEncoder();
const CHUNK_BYTES = 16 * 1024;
const CREATED = 1772062745;
const CHAT_MODEL = "gpt-4.1-2025-04-14";

/** An SSE body, pre-cut. */
export interface Body {
  chunks: Uint8Array[];
  bytes: number;
  /** SSE messages in the body, `[DONE]` excluded. */
  messages: number;
}

function bodyOf(messages: readonly string[]): Body {
  const bytes = encoder.encode(`${messages.join("")}data: [DONE]\n\n`);
  const chunks: Uint8Array[] = [];
  for (let at = 0; at < bytes.length; at += CHUNK_BYTES) chunks.push(bytes.subarray(at, at + CHUNK_BYTES));
  return { chunks, bytes: bytes.length, messages: messages.length };
}

function chatChunk(delta: Json, finish: string | null = null): string {
  const chunk = {
    id: "chatcmpl-scaling",
    object: "chat.completion.chunk",
    created: CREATED,
    model: CHAT_MODEL,
    choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }],
  };
  return `data: ${JSON.stringify(chunk)}\n\n`;
}

function chatUsage(completion: number): string {
  const usage = { prompt_tokens: 50, completion_tokens: completion, total_tokens: 50 + completion };
  const chunk = {
    id: "chatcmpl-scaling",
    object: "chat.completion.chunk",
    created: CREATED,
    model: CHAT_MODEL,
    choices: [],
    usage,
  };
  return `data: ${JSON.stringify(chunk)}\n\n`;
}

/** A chat response with `n` calls of `read_file`, each in one fragment (id, name and whole arguments). */
export function chatCalls(n: number): Body {
  const messages = [chatChunk({ role: "assistant", content: null })];
  for (let i = 0; i < n; i++) {
    const fragment = {
      index: i,
      id: `call_${i}`,
      type: "function",
      function: { name: "read_file", arguments: `{"path":"f${i}.txt"}` },
    };
    messages.push(chatChunk({ tool_calls: [fragment] }));
  }
  messages.push(chatChunk({}, "tool_calls"), chatUsage(n * 8));
  return bodyOf(messages);
}

/** A chat response with one call whose arguments come in `n` fragments (`{"text":"aaa…"}`). */
export function chatArgumentFragments(n: number): Body {
  const first = { index: 0, id: "call_0", type: "function", function: { name: "write_file", arguments: "" } };
  const messages = [chatChunk({ role: "assistant", content: null }), chatChunk({ tool_calls: [first] })];
  for (let i = 0; i < n; i++) {
    const piece = i === 0 ? '{"text":"' : i === n - 1 ? 'a"}' : "a";
    messages.push(chatChunk({ tool_calls: [{ index: 0, function: { arguments: piece } }] }));
  }
  messages.push(chatChunk({}, "tool_calls"), chatUsage(n));
  return bodyOf(messages);
}

/** An Open Responses response with `n` function_call items, the terminal event carrying them all. */
export function responsesItems(n: number): Body {
  const messages: string[] = [];
  let seq = 0;
  const push = (event: Json) => {
    const e = { type: event.type, sequence_number: seq++, ...event };
    messages.push(`event: ${e.type}\ndata: ${JSON.stringify(e)}\n\n`);
  };
  push({ type: "response.created", response: responseResource("in_progress", [], null) });
  const items: Json[] = [];
  for (let i = 0; i < n; i++) {
    const args = `{"path":"f${i}.txt"}`;
    const item = (status: string, a: string) => ({
      id: `fc_${i}`,
      type: "function_call",
      status,
      arguments: a,
      call_id: `call_${i}`,
      name: "read_file",
    });
    push({ type: "response.output_item.added", output_index: i, item: item("in_progress", "") });
    push({
      type: "response.function_call_arguments.delta",
      item_id: `fc_${i}`,
      output_index: i,
      delta: args,
    });
    push({
      type: "response.function_call_arguments.done",
      item_id: `fc_${i}`,
      output_index: i,
      arguments: args,
    });
    const done = item("completed", args);
    push({ type: "response.output_item.done", output_index: i, item: done });
    items.push(done);
  }
  const usage = {
    input_tokens: 50,
    input_tokens_details: { cached_tokens: 0 },
    output_tokens: n * 8,
    output_tokens_details: { reasoning_tokens: 0 },
    total_tokens: 50 + n * 8,
  };
  push({ type: "response.completed", response: responseResource("completed", items, usage) });
  return bodyOf(messages);
}

/** The same body for every request, chunk by chunk, each behind an await (like socket reads). */
export function bodyTransport(body: Body): Transport {
  return async () => ({
    status: 200,
    headers: { get: (name: string) => (name.toLowerCase() === "content-type" ? "text/event-stream" : null) },
    body: (async function* () {
      for (const chunk of body.chunks) yield chunk;
    })(),
    cancel: () => {},
  });
}

/** A body from raw bytes (bench/sse/stream.ts's generated stream). */
export function bodyOfBytes(bytes: Uint8Array, messages: number): Body {
  const chunks: Uint8Array[] = [];
  for (let at = 0; at < bytes.length; at += CHUNK_BYTES) chunks.push(bytes.subarray(at, at + CHUNK_BYTES));
  return { chunks, bytes: bytes.length, messages };
}
