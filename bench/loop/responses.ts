/**
 * The two responses of one agent turn (as in bench/README.md), generated
 * per request: #1 is a function_call `noop({"n":1})` streamed in 3 argument deltas; #2 (the answer
 * to a request whose `input` carries a `function_call_output`) is a 160-character message in 40
 * text deltas of 4 characters. Snapshots are full ResponseResources that echo the request's model,
 * instructions, tools and previous_response_id, as a real server does.
 *
 * Also the responder module the replay server loads (`createResponder`, and `createMessageResponder`
 * for WebSocket mode: the same events as JSON messages), and the pre-generated
 * replies the in-process contenders use.
 */
import type { MessageReply, MessageResponder, Reply, Responder } from "../provider/responder.js";

export const MODEL = "bench-model";
export const PROMPT = "Call noop with n = 1, then answer.";
export const CALL_ID = "call_noop_1";
export const NOOP_ARGUMENTS = '{"n":1}';
const ARGUMENT_DELTAS = ['{"n"', ":", "1}"];
const PHRASE = "The noop tool ran once with n = 1 and answered ok. Café, naïve, 東京: all done. ";
/** The final answer: 160 characters (UTF-16 units; no astral characters, so slicing is safe). */
export const ANSWER = PHRASE.repeat(3).slice(0, 160);
export const TEXT_DELTAS = 40;

/** How the server writes a reply: each SSE event its own write, or the whole body in one. */
export type Writes = "event" | "whole";

type Json = Record<string, unknown>;

/** The parts of a request a response echoes, and whether it is the follow-up. */
export interface RequestEcho {
  model: unknown;
  instructions: unknown;
  tools: unknown;
  previousResponseId: unknown;
  followUp: boolean;
}

/** Reads what the response needs from a request body. */
export function echoOf(body: Json): RequestEcho {
  const input = body.input;
  return {
    model: body.model ?? MODEL,
    instructions: body.instructions ?? null,
    tools: Array.isArray(body.tools) ? body.tools : [],
    previousResponseId: body.previous_response_id ?? null,
    followUp: Array.isArray(input) && input.some((i) => (i as Json | null)?.type === "function_call_output"),
  };
}

function resource(id: string, echo: RequestEcho, status: string, output: Json[], usage: Json | null): Json {
  return {
    id,
    object: "response",
    created_at: 1772062745,
    completed_at: status === "completed" ? 1772062746 : null,
    status,
    incomplete_details: null,
    model: echo.model,
    previous_response_id: echo.previousResponseId,
    instructions: echo.instructions,
    output,
    error: null,
    tools: echo.tools,
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
    max_tool_calls: null,
    store: true,
    background: false,
    service_tier: "default",
    metadata: {},
    safety_identifier: null,
    prompt_cache_key: null,
  };
}

function usage(input: number, output: number): Json {
  return {
    input_tokens: input,
    input_tokens_details: { cached_tokens: 0 },
    output_tokens: output,
    output_tokens_details: { reasoning_tokens: 0 },
    total_tokens: input + output,
  };
}

/** The events of response #1 (n = the response's number on this server, for unique ids). */
export function callEvents(n: number, echo: RequestEcho): Json[] {
  const id = `resp_bench_${n}`;
  const itemId = `fc_bench_${n}`;
  const call = (args: string, status: string) => ({
    id: itemId,
    type: "function_call",
    status,
    arguments: args,
    call_id: CALL_ID,
    name: "noop",
  });
  const events: Json[] = [
    { type: "response.created", response: resource(id, echo, "in_progress", [], null) },
    { type: "response.in_progress", response: resource(id, echo, "in_progress", [], null) },
    { type: "response.output_item.added", output_index: 0, item: call("", "in_progress") },
    ...ARGUMENT_DELTAS.map((delta, i) => ({
      type: "response.function_call_arguments.delta",
      item_id: itemId,
      output_index: 0,
      delta,
      obfuscation: `obf${i}xyzw`.slice(0, 8),
    })),
    {
      type: "response.function_call_arguments.done",
      item_id: itemId,
      output_index: 0,
      arguments: NOOP_ARGUMENTS,
    },
    { type: "response.output_item.done", output_index: 0, item: call(NOOP_ARGUMENTS, "completed") },
    {
      type: "response.completed",
      response: resource(id, echo, "completed", [call(NOOP_ARGUMENTS, "completed")], usage(120, 12)),
    },
  ];
  return numbered(events);
}

/** The events of response #2. */
export function answerEvents(n: number, echo: RequestEcho): Json[] {
  const id = `resp_bench_${n}`;
  const itemId = `msg_bench_${n}`;
  const part = (text: string) => ({ type: "output_text", annotations: [], logprobs: [], text });
  const message = (status: string, content: Json[]) => ({
    id: itemId,
    type: "message",
    status,
    content,
    role: "assistant",
  });
  const where = { item_id: itemId, output_index: 0, content_index: 0 };
  const deltaLength = ANSWER.length / TEXT_DELTAS;
  const events: Json[] = [
    { type: "response.created", response: resource(id, echo, "in_progress", [], null) },
    { type: "response.in_progress", response: resource(id, echo, "in_progress", [], null) },
    { type: "response.output_item.added", output_index: 0, item: message("in_progress", []) },
    { type: "response.content_part.added", ...where, part: part("") },
    ...Array.from({ length: TEXT_DELTAS }, (_, i) => ({
      type: "response.output_text.delta",
      ...where,
      delta: ANSWER.slice(i * deltaLength, (i + 1) * deltaLength),
      logprobs: [],
      obfuscation: "k2Jd9sLq".slice(0, 4 + (i % 5)),
    })),
    { type: "response.output_text.done", ...where, text: ANSWER, logprobs: [] },
    { type: "response.content_part.done", ...where, part: part(ANSWER) },
    { type: "response.output_item.done", output_index: 0, item: message("completed", [part(ANSWER)]) },
    {
      type: "response.completed",
      response: resource(id, echo, "completed", [message("completed", [part(ANSWER)])], usage(160, 40)),
    },
  ];
  return numbered(events);
}

function numbered(events: Json[]): Json[] {
  return events.map((e, sequence_number) => ({ type: e.type, sequence_number, ...e }));
}

const encoder = new TextEncoder();

/** The SSE body of `events` plus `[DONE]`, cut as the server writes it. */
export function toReply(events: readonly Json[], writes: Writes): Reply {
  const texts = events.map((e) => `event: ${e.type}\ndata: ${JSON.stringify(e)}\n\n`);
  texts.push("data: [DONE]\n\n");
  const firstDelta = events.findIndex((e) => e.type === "response.output_text.delta");
  if (writes === "whole") {
    return { chunks: [encoder.encode(texts.join(""))], ...(firstDelta === -1 ? {} : { firstDeltaChunk: 0 }) };
  }
  return {
    chunks: texts.map((t) => encoder.encode(t)),
    ...(firstDelta === -1 ? {} : { firstDeltaChunk: firstDelta }),
  };
}

/** The events answering a request body (or a `response.create` message); `n` numbers the responses (ids). */
function eventsFor(body: string, n: number): Json[] {
  const echo = echoOf(JSON.parse(body) as Json);
  return echo.followUp ? answerEvents(n, echo) : callEvents(n, echo);
}

/** The reply to a request body; `n` numbers the responses (ids). */
export function replyTo(body: string, n: number, writes: Writes): Reply {
  return toReply(eventsFor(body, n), writes);
}

/**
 * The reply to a `response.create` message in WebSocket mode: the same events, each one JSON text
 * message (no `[DONE]`: a turn ends at its terminal `response.*` event); writes `whole` sends them
 * in one socket write.
 */
export function messagesTo(message: string, n: number, writes: Writes): MessageReply {
  const events = eventsFor(message, n);
  const firstDelta = events.findIndex((e) => e.type === "response.output_text.delta");
  return {
    messages: events.map((e) => JSON.stringify(e)),
    corked: writes === "whole",
    ...(firstDelta === -1 ? {} : { firstDeltaMessage: firstDelta }),
  };
}

/** Responses served by this thread's responders: response n is the server's n-th request. */
let served = 0;

/**
 * The responder module's entry (replay-server.ts): `init` is the `Writes` mode. Responses are
 * numbered across re-inits, so response n always answers the server's n-th request.
 */
export function createResponder(init: unknown): Responder {
  const writes = init as Writes;
  return (body) => replyTo(body, ++served, writes);
}

/** The same in WebSocket mode (replay-worker.ts); numbered with the HTTP responses. */
export function createMessageResponder(init: unknown): MessageResponder {
  const writes = init as Writes;
  return (message) => messagesTo(message, ++served, writes);
}
