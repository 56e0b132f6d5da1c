/**
 * A generated, spec-valid Open Responses stream, shaped like a real one: `response.created` and
 * `response.in_progress` with a full ResponseResource, a message item streamed as short text deltas
 * (some multi-byte: accents, CJK, emoji), a function_call streamed as argument deltas, the `.done`
 * events, a terminal `response.completed` carrying the whole output, then `data: [DONE]`.
 * 80% of the deltas are text, 20% arguments (as in bench/README.md).
 */
import { seededRandom } from "../../test/support/chunking.js";

export interface GeneratedStream {
  /** The SSE body. */
  bytes: Uint8Array;
  /** The events, in order (what every contender must deliver; `[DONE]` excluded). */
  events: Record<string, unknown>[];
  textDeltas: number;
  argumentDeltas: number;
  /** The message text and the call arguments the deltas add up to. */
  text: string;
  arguments: string;
}

const WORDS = [
  "The",
  " quick",
  " brown",
  " fox",
  " café",
  " naïve",
  " 北京",
  " 東京は",
  " 🌍",
  " jumps",
  " over",
  " the",
  " lazy",
  " dog",
  ".",
  "\n",
  " — ",
  " données",
  " straße",
  " 👍🏽",
];
const ARG_PIECES = ['{"path":', '"src/', "main", ".ts", '","', "query", '":"', "größe", " 北", '"}'];

const RESPONSE_ID = "resp_0a63f40a2632b74300699f8818e5648196a8fa657ae8091421";
const MESSAGE_ID = "msg_0a63f40a2632b74300699f8819a5e08196ac270722d369af5a";
const CALL_ITEM_ID = "fc_0a63f40a2632b74300699f881bfbc88196aec38f30c3dd24b0";
const CALL_ID = "call_Q3b9dTkJ4mXf0a7LZc2pWn8e";

/** A full, schema-valid ResponseResource with this status, output and usage (the generated streams' snapshots). */
export function responseResource(status: string, output: unknown[], usage: unknown): Record<string, unknown> {
  return {
    id: RESPONSE_ID,
    object: "response",
    created_at: 1772062745,
    completed_at: status === "completed" ? 1772062751 : null,
    status,
    incomplete_details: null,
    model: "gpt-5.2-2025-12-11",
    previous_response_id: null,
    instructions: "You are a helpful assistant. Use the tools when they help.",
    output,
    error: null,
    tools: [
      {
        type: "function",
        name: "read_file",
        description: "Read a file from the workspace.",
        parameters: {
          type: "object",
          properties: { path: { type: "string" }, query: { type: "string" } },
          required: ["path"],
          additionalProperties: false,
        },
        strict: true,
      },
    ],
    tool_choice: "auto",
    truncation: "disabled",
    parallel_tool_calls: false,
    text: { format: { type: "text" }, verbosity: "medium" },
    top_p: 1,
    presence_penalty: 0,
    frequency_penalty: 0,
    top_logprobs: 0,
    temperature: 1,
    reasoning: { effort: null, summary: null },
    usage,
    max_output_tokens: null,
    max_tool_calls: 32,
    store: true,
    background: false,
    service_tier: "default",
    metadata: {},
    safety_identifier: null,
    prompt_cache_key: null,
  };
}

/** Generates a stream with `deltas` delta events in all (80% text, 20% arguments). */
export function generateStream(deltas: number, seed = 1): GeneratedStream {
  const rnd = seededRandom(seed);
  const textDeltas = Math.round(deltas * 0.8);
  const argumentDeltas = deltas - textDeltas;
  const events: Record<string, unknown>[] = [];
  let seq = 0;
  const push = (event: Record<string, unknown>) => {
    events.push({ type: event.type, sequence_number: seq++, ...event });
  };
  const obfuscation = () => Math.floor(rnd() * 2 ** 40).toString(36);

  push({ type: "response.created", response: responseResource("in_progress", [], null) });
  push({ type: "response.in_progress", response: responseResource("in_progress", [], null) });
  const emptyMessage = {
    id: MESSAGE_ID,
    type: "message",
    status: "in_progress",
    content: [],
    role: "assistant",
  };
  push({ type: "response.output_item.added", output_index: 0, item: emptyMessage });
  const part = (text: string) => ({ type: "output_text", annotations: [], logprobs: [], text });
  push({
    type: "response.content_part.added",
    item_id: MESSAGE_ID,
    output_index: 0,
    content_index: 0,
    part: part(""),
  });
  let text = "";
  for (let i = 0; i < textDeltas; i++) {
    const delta = WORDS[Math.floor(rnd() * WORDS.length)] as string;
    text += delta;
    push({
      type: "response.output_text.delta",
      item_id: MESSAGE_ID,
      output_index: 0,
      content_index: 0,
      delta,
      logprobs: [],
      obfuscation: obfuscation(),
    });
  }
  push({
    type: "response.output_text.done",
    item_id: MESSAGE_ID,
    output_index: 0,
    content_index: 0,
    text,
    logprobs: [],
  });
  push({
    type: "response.content_part.done",
    item_id: MESSAGE_ID,
    output_index: 0,
    content_index: 0,
    part: part(text),
  });
  const message = { ...emptyMessage, status: "completed", content: [part(text)] };
  push({ type: "response.output_item.done", output_index: 0, item: message });

  const call = (args: string, status: string) => ({
    id: CALL_ITEM_ID,
    type: "function_call",
    status,
    arguments: args,
    call_id: CALL_ID,
    name: "read_file",
  });
  push({ type: "response.output_item.added", output_index: 1, item: call("", "in_progress") });
  let args = "";
  for (let i = 0; i < argumentDeltas; i++) {
    const delta = ARG_PIECES[i % ARG_PIECES.length] as string;
    args += delta;
    push({
      type: "response.function_call_arguments.delta",
      item_id: CALL_ITEM_ID,
      output_index: 1,
      delta,
      obfuscation: obfuscation(),
    });
  }
  push({
    type: "response.function_call_arguments.done",
    item_id: CALL_ITEM_ID,
    output_index: 1,
    arguments: args,
  });
  push({ type: "response.output_item.done", output_index: 1, item: call(args, "completed") });
  const usage = {
    input_tokens: 1834,
    input_tokens_details: { cached_tokens: 1024 },
    output_tokens: deltas,
    output_tokens_details: { reasoning_tokens: 0 },
    total_tokens: 1834 + deltas,
  };
  push({
    type: "response.completed",
    response: responseResource("completed", [message, call(args, "completed")], usage),
  });

  let body = "";
  for (const e of events) body += `event: ${e.type}\ndata: ${JSON.stringify(e)}\n\n`;
  body += "data: [DONE]\n\n";
  return {
    bytes: new TextEncoder().encode(body),
    events,
    textDeltas,
    argumentDeltas,
    text,
    arguments: args,
  };
}
