/**
 * A scripted Chat Completions server (node:http on 127.0.0.1) for provider and loop tests. It plays
 * the mock server's `Scenario` objects (src/mock/scenario.ts) as `POST /v1/chat/completions`
 * answers, so one scenario drives the Open Responses mock and this server alike: a turn's items
 * become `chat.completion.chunk`s the way OpenAI streams them (a role chunk, content in small
 * deltas, each tool call as a first fragment with id and name then argument pieces, a finish
 * chunk, then the usage chunk when the request asks for it), or one `chat.completion` for a
 * request without `stream: true`.
 *
 * Faults count this stream's own SSE messages. `dropAfterEvents` drops the connection at the
 * latest right after the finish chunk: the stream then still lacks its usage chunk and `[DONE]`,
 * so it ends without a terminal event, as a dropped Responses stream does. A scenario `failed`
 * turn streams its items, then an `{"error": …}` chunk. Scenario features this server does not
 * play (`expect`, `rawEvents`, byte-level faults) throw, so a test cannot silently rely on them.
 */
import type { ServerResponse } from "node:http";
import { httpErrorResponse } from "../../src/mock/faults.js";
import type { MockFaults, Scenario, ScenarioItem, ScenarioTurn } from "../../src/mock/index.js";
import type { JsonObject } from "../../src/protocol/types.js";
import { serveLocal } from "./local-http.js";

export interface ChatServerOptions {
  /** Answer every request with a whole `chat.completion` JSON body, even when it asks to stream. */
  ignoreStream?: boolean;
}

export interface ChatServer {
  /** The base URL (`http://127.0.0.1:PORT/v1`). */
  url: string;
  /** The parsed request bodies, in order. */
  requests: JsonObject[];
  close(): Promise<void>;
}

const PLAYED_FAULTS: ReadonlySet<keyof MockFaults> = new Set([
  "httpError",
  "stallBeforeHeadersMs",
  "stallAfterEvents",
  "errorEvent",
  "dropAfterEvents",
  "keepAliveEvery",
  "invalidJsonAfterEvents",
  "omitDone",
]);

/** Starts a server answering request i with the scenario's turn i (the last turn repeats if it says so). */
export async function startChatServer(
  scenario: Scenario,
  options: ChatServerOptions = {},
): Promise<ChatServer> {
  scenario.turns.forEach(checkPlayable);
  const requests: JsonObject[] = [];
  const server = await serveLocal(async (req, res, text) => {
    const body = JSON.parse(text) as JsonObject;
    const index = requests.length;
    requests.push(body);
    const turn = turnAt(scenario, index);
    if (turn === undefined || req.url !== "/v1/chat/completions") {
      res.writeHead(404, { "content-type": "application/json" });
      res.end(
        JSON.stringify({ error: { message: `no turn ${index} or path ${req.url}`, type: "not_found" } }),
      );
      return;
    }
    await answer(res, turn, index, body, options);
  });
  return { ...server, requests };
}

function turnAt(scenario: Scenario, index: number): ScenarioTurn | undefined {
  const last = scenario.turns.at(-1);
  return scenario.turns[index] ?? (last?.repeat ? last : undefined);
}

function checkPlayable(turn: ScenarioTurn): void {
  if (turn.expect !== undefined || turn.rawEvents !== undefined)
    throw new Error("the scripted chat server plays items and faults only (no expect, no rawEvents)");
  for (const [name, value] of Object.entries(turn.faults ?? {}))
    if (value !== undefined && !PLAYED_FAULTS.has(name as keyof MockFaults))
      throw new Error(`the scripted chat server does not play the ${name} fault`);
}

async function answer(
  res: ServerResponse,
  turn: ScenarioTurn,
  index: number,
  body: JsonObject,
  options: ChatServerOptions,
): Promise<void> {
  const faults = turn.faults ?? {};
  if (faults.stallBeforeHeadersMs !== undefined) await sleep(faults.stallBeforeHeadersMs);
  if (res.destroyed) return;
  if (faults.httpError !== undefined) {
    const reply = httpErrorResponse(faults.httpError, {});
    res.writeHead(reply.status, Object.fromEntries(reply.headers));
    res.end(await reply.text());
    return;
  }
  const model = typeof body.model === "string" ? body.model : "scripted";
  if (body.stream !== true || options.ignoreStream === true) {
    res.writeHead(200, { "content-type": "application/json" });
    res.end(JSON.stringify(chatCompletion(turn, { id: `chatcmpl-${index}`, model })));
    return;
  }
  const includeUsage = (body.stream_options as JsonObject | undefined)?.include_usage === true;
  const events = chatChunks(turn, { id: `chatcmpl-${index}`, model, includeUsage });
  res.writeHead(200, { "content-type": "text/event-stream" });
  res.flushHeaders();
  await writeEvents(res, events, faults);
}

async function writeEvents(res: ServerResponse, events: ChatEvents, faults: MockFaults): Promise<void> {
  const { chunks } = events;
  const dropAt =
    faults.dropAfterEvents === undefined ? undefined : Math.min(faults.dropAfterEvents, events.finishAt + 1);
  for (let i = 0; i <= chunks.length; i++) {
    if (res.destroyed) return;
    if (i === dropAt) {
      res.socket?.destroy();
      return;
    }
    if (faults.stallAfterEvents?.afterEvents === i) await sleep(faults.stallAfterEvents.ms, res);
    if (faults.errorEvent?.afterEvents === i) {
      const e = faults.errorEvent;
      const error = {
        message: e.message ?? "injected error",
        type: e.type ?? "server_error",
        code: e.code ?? "server_error",
      };
      await write(res, `data: ${JSON.stringify({ error })}\n\n`);
      break;
    }
    if (faults.invalidJsonAfterEvents === i) await write(res, 'data: {"choices": [\n\n');
    const chunk = chunks[i];
    if (chunk === undefined) break;
    await write(res, `data: ${JSON.stringify(chunk)}\n\n`);
    if (faults.keepAliveEvery !== undefined && (i + 1) % faults.keepAliveEvery === 0)
      await write(res, ": keep-alive\n\n");
  }
  if (!faults.omitDone && !res.destroyed) await write(res, "data: [DONE]\n\n");
  res.end();
}

async function write(res: ServerResponse, text: string): Promise<void> {
  res.write(text);
  // A macrotask between writes, so they are separate TCP writes.
  await new Promise((r) => setImmediate(r));
}

export interface ChunkOptions {
  id: string;
  model: string;
  /** Send the usage chunk (the request asked with `stream_options.include_usage`). */
  includeUsage: boolean;
}

/** A turn's chunks, and the index of its finish chunk (-1 when it has none: a failed turn). */
export interface ChatEvents {
  chunks: JsonObject[];
  finishAt: number;
}

/** The `chat.completion.chunk`s a turn streams (see the module comment). */
export function chatChunks(turn: ScenarioTurn, options: ChunkOptions): ChatEvents {
  const chunk = (delta: JsonObject, finish: string | null = null): JsonObject => ({
    id: options.id,
    object: "chat.completion.chunk",
    created: 1_700_000_000,
    model: options.model,
    choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }],
  });
  const chunks: JsonObject[] = [chunk({ role: "assistant", content: "" })];
  let callIndex = 0;
  for (const item of turn.items ?? []) {
    switch (item.type) {
      case "reasoning":
        for (const text of [...list(item.content), ...list(item.summary)])
          for (const piece of pieces(text, 4)) chunks.push(chunk({ reasoning_content: piece }));
        break;
      case "message":
        for (const text of list(item.text))
          for (const piece of pieces(text, 4)) chunks.push(chunk({ content: piece }));
        if (item.refusal !== undefined)
          for (const piece of pieces(item.refusal, 4)) chunks.push(chunk({ refusal: piece }));
        break;
      case "function_call": {
        const index = callIndex++;
        const id = item.call_id ?? `call_${options.id}_${index}`;
        chunks.push(
          chunk({
            tool_calls: [{ index, id, type: "function", function: { name: item.name, arguments: "" } }],
          }),
        );
        for (const piece of pieces(argumentsOf(item), 5))
          chunks.push(chunk({ tool_calls: [{ index, function: { arguments: piece } }] }));
        break;
      }
    }
  }
  const status = turn.status ?? "completed";
  if (status === "failed") {
    const error = turn.error ?? { code: "server_error", message: "failed" };
    chunks.push({ error: { ...error, type: "server_error" } });
    return { chunks, finishAt: chunks.length };
  }
  chunks.push(chunk({}, finishReason(turn)));
  const finishAt = chunks.length - 1;
  if (options.includeUsage)
    chunks.push({
      id: options.id,
      object: "chat.completion.chunk",
      created: 1_700_000_000,
      model: options.model,
      choices: [],
      usage: usageOf(turn),
    });
  return { chunks, finishAt };
}

/** The `chat.completion` of a turn (a request without `stream: true`). */
export function chatCompletion(turn: ScenarioTurn, options: { id: string; model: string }): JsonObject {
  const items = turn.items ?? [];
  const content = items.flatMap((i) => (i.type === "message" ? list(i.text) : [])).join("");
  const reasoning = items
    .flatMap((i) => (i.type === "reasoning" ? [...list(i.content), ...list(i.summary)] : []))
    .join("");
  const calls = items
    .filter((i): i is Extract<ScenarioItem, { type: "function_call" }> => i.type === "function_call")
    .map((i, index) => ({
      id: i.call_id ?? `call_${options.id}_${index}`,
      type: "function",
      function: { name: i.name, arguments: argumentsOf(i) },
    }));
  const message: JsonObject = { role: "assistant", content: content === "" ? null : content };
  if (reasoning !== "") message.reasoning_content = reasoning;
  if (calls.length > 0) message.tool_calls = calls;
  return {
    id: options.id,
    object: "chat.completion",
    created: 1_700_000_000,
    model: options.model,
    choices: [{ index: 0, message, logprobs: null, finish_reason: finishReason(turn) }],
    usage: usageOf(turn),
  };
}

function finishReason(turn: ScenarioTurn): string {
  if (turn.status === "incomplete") return "length";
  return (turn.items ?? []).some((i) => i.type === "function_call") ? "tool_calls" : "stop";
}

function usageOf(turn: ScenarioTurn): JsonObject {
  const input = turn.usage?.input_tokens ?? 10;
  const output = turn.usage?.output_tokens ?? 5;
  return {
    prompt_tokens: input,
    completion_tokens: output,
    total_tokens: input + output,
    prompt_tokens_details: { cached_tokens: turn.usage?.cached_tokens ?? 0 },
    completion_tokens_details: { reasoning_tokens: turn.usage?.reasoning_tokens ?? 0 },
  };
}

function argumentsOf(item: Extract<ScenarioItem, { type: "function_call" }>): string {
  if (item.arguments === undefined) return "{}";
  return typeof item.arguments === "string" ? item.arguments : JSON.stringify(item.arguments);
}

function list(value: string | string[] | undefined): string[] {
  return value === undefined ? [] : Array.isArray(value) ? value : [value];
}

function pieces(text: string, size: number): string[] {
  return text.match(new RegExp(`.{1,${size}}`, "gsu")) ?? [];
}

/** Waits `ms`, or until the client has gone away (so a stalled answer never outlives its test). */
function sleep(ms: number, res?: ServerResponse): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    res?.once("close", done);
    function done() {
      clearTimeout(timer);
      res?.off("close", done);
      resolve();
    }
  });
}
