/**
 * A scripted Open Responses provider for loop tests: the real HTTP provider (retries, timeouts,
 * SSE decoding, assembly) over an in-memory transport whose answers are scripted per request.
 * `events` builds spec-ordered event sequences for messages, function calls and reasoning.
 */

import type { JsonObject } from "../../src/protocol/types.js";
import type { ProviderCapabilities } from "../../src/provider/capabilities.js";
import { createOpenResponsesProvider } from "../../src/provider/open-responses.js";
import type { Provider } from "../../src/provider/provider.js";
import type { Transport, TransportResponse } from "../../src/provider/transport.js";

export type ScriptItem =
  | { type: "message"; text: string; phase?: "commentary" | "final_answer" }
  | { type: "function_call"; name: string; arguments: string; call_id?: string }
  | {
      type: "reasoning";
      summary?: string;
      encrypted_content?: string;
      /** Stream the summary in 4-character pieces (its part and delta events) before the item's end. */
      streamSummary?: boolean;
    };

export interface ScriptedResponse {
  items?: ScriptItem[];
  status?: "completed" | "incomplete" | "failed";
  incompleteReason?: string;
  error?: { code: string; message: string };
  /** Stop the stream after this many events (no terminal event). */
  cutAfter?: number;
  /** An HTTP error instead of a stream. */
  http?: { status: number; body: unknown; headers?: Record<string, string> };
  /** Pause before the event at this index (ms). */
  pauses?: Record<number, number>;
  usage?: JsonObject;
  /** Rearranges the built events before they are sent (e.g. to deliver them out of order). */
  reorder?: (events: JsonObject[]) => JsonObject[];
  /**
   * How the body reaches the client: a chunk per event, or the whole body as one chunk (as `fetch`,
   * a proxy that re-chunks, or a reader that fell behind gets it). `pauses` apply per event only.
   * @defaultValue "event"
   */
  chunks?: "event" | "whole";
}

export type Script = ScriptedResponse | ((body: JsonObject, index: number) => ScriptedResponse);

export interface ScriptedProvider extends Provider {
  requests: JsonObject[];
}

/** Builds the events of one response, in spec order, with deterministic ids. */
export function events(response: ScriptedResponse, responseId: string): JsonObject[] {
  const out: JsonObject[] = [];
  let seq = 0;
  const push = (e: JsonObject) => out.push({ ...e, sequence_number: seq++ });
  const resource = (status: string, output: JsonObject[]): JsonObject => ({
    id: responseId,
    object: "response",
    status,
    output,
    usage: response.usage ?? {
      input_tokens: 10,
      output_tokens: 5,
      total_tokens: 15,
      input_tokens_details: { cached_tokens: 0 },
      output_tokens_details: { reasoning_tokens: 0 },
    },
    ...(status === "incomplete"
      ? { incomplete_details: { reason: response.incompleteReason ?? "max_output_tokens" } }
      : {}),
    ...(status === "failed" ? { error: response.error ?? { code: "server_error", message: "failed" } } : {}),
  });
  push({ type: "response.created", response: resource("in_progress", []) });
  const done: JsonObject[] = [];
  (response.items ?? []).forEach((item, index) => {
    const id = `${item.type === "message" ? "msg" : item.type === "reasoning" ? "rs" : "fc"}_${responseId}_${index}`;
    if (item.type === "message") {
      const base = { type: "message", id, role: "assistant", ...(item.phase ? { phase: item.phase } : {}) };
      push({
        type: "response.output_item.added",
        output_index: index,
        item: { ...base, status: "in_progress", content: [] },
      });
      push({
        type: "response.content_part.added",
        item_id: id,
        output_index: index,
        content_index: 0,
        part: { type: "output_text", text: "", annotations: [] },
      });
      for (const piece of item.text.match(/.{1,4}/gsu) ?? []) {
        push({
          type: "response.output_text.delta",
          item_id: id,
          output_index: index,
          content_index: 0,
          delta: piece,
        });
      }
      push({
        type: "response.output_text.done",
        item_id: id,
        output_index: index,
        content_index: 0,
        text: item.text,
      });
      push({
        type: "response.content_part.done",
        item_id: id,
        output_index: index,
        content_index: 0,
        part: { type: "output_text", text: item.text, annotations: [] },
      });
      const final = {
        ...base,
        status: "completed",
        content: [{ type: "output_text", text: item.text, annotations: [] }],
      };
      push({ type: "response.output_item.done", output_index: index, item: final });
      done.push(final);
    } else if (item.type === "function_call") {
      const callId = item.call_id ?? `call_${responseId}_${index}`;
      push({
        type: "response.output_item.added",
        output_index: index,
        item: {
          type: "function_call",
          id,
          call_id: callId,
          name: item.name,
          arguments: "",
          status: "in_progress",
        },
      });
      for (const piece of item.arguments.match(/.{1,6}/gsu) ?? []) {
        push({
          type: "response.function_call_arguments.delta",
          item_id: id,
          output_index: index,
          delta: piece,
        });
      }
      push({
        type: "response.function_call_arguments.done",
        item_id: id,
        output_index: index,
        arguments: item.arguments,
      });
      const final = {
        type: "function_call",
        id,
        call_id: callId,
        name: item.name,
        arguments: item.arguments,
        status: "completed",
      };
      push({ type: "response.output_item.done", output_index: index, item: final });
      done.push(final);
    } else {
      push({
        type: "response.output_item.added",
        output_index: index,
        item: { type: "reasoning", id, summary: [] },
      });
      const summary = item.summary === undefined ? [] : [{ type: "summary_text", text: item.summary }];
      if (item.streamSummary === true && item.summary !== undefined) {
        const at = { item_id: id, output_index: index, summary_index: 0 };
        const part = (text: string) => ({ type: "summary_text", text });
        push({ type: "response.reasoning_summary_part.added", ...at, part: part("") });
        for (const piece of item.summary.match(/.{1,4}/gsu) ?? [])
          push({ type: "response.reasoning_summary_text.delta", ...at, delta: piece });
        push({ type: "response.reasoning_summary_text.done", ...at, text: item.summary });
        push({ type: "response.reasoning_summary_part.done", ...at, part: part(item.summary) });
      }
      const final: JsonObject = { type: "reasoning", id, summary };
      if (item.encrypted_content !== undefined) final.encrypted_content = item.encrypted_content;
      push({ type: "response.output_item.done", output_index: index, item: final });
      done.push(final);
    }
  });
  const status = response.status ?? "completed";
  push({ type: `response.${status}`, response: resource(status, done) });
  return out;
}

export function createScriptedProvider(
  scripts: Script[],
  options: { capabilities?: Partial<ProviderCapabilities>; idleMs?: number; retries?: number } = {},
): ScriptedProvider {
  const requests: JsonObject[] = [];
  const transport: Transport = async (request) => {
    const body = JSON.parse(request.body) as JsonObject;
    const index = requests.length;
    requests.push(body);
    const script = scripts[Math.min(index, scripts.length - 1)];
    if (script === undefined) throw new Error("no script");
    const response = typeof script === "function" ? script(body, index) : script;
    return respond(response, `resp_${index + 1}`, request.signal);
  };
  const provider = createOpenResponsesProvider({
    baseURL: "http://scripted.test/v1",
    transport,
    name: "scripted",
    sleep: async () => {},
    retry: { maxRetries: options.retries ?? 2 },
    timeouts: { idleMs: options.idleMs ?? 5000 },
    ...(options.capabilities ? { capabilities: options.capabilities } : {}),
  });
  return Object.assign(provider, { requests });
}

function respond(response: ScriptedResponse, id: string, signal: AbortSignal): TransportResponse {
  const encoder = new TextEncoder();
  if (response.http !== undefined) {
    const text =
      typeof response.http.body === "string" ? response.http.body : JSON.stringify(response.http.body);
    return {
      status: response.http.status,
      headers: headers({ "content-type": "application/json", ...response.http.headers }),
      body: (async function* () {
        yield encoder.encode(text);
      })(),
      cancel: () => {},
    };
  }
  let list = events(response, id);
  if (response.reorder !== undefined) list = response.reorder(list);
  if (response.cutAfter !== undefined) list = list.slice(0, response.cutAfter);
  const pauses = response.pauses ?? {};
  const ended = response.cutAfter === undefined;
  return {
    status: 200,
    headers: headers({ "content-type": "text/event-stream", "x-request-id": `req_${id}` }),
    body: (async function* () {
      if (response.chunks === "whole") {
        const sse = list.map((e) => `event: ${String(e.type)}\ndata: ${JSON.stringify(e)}\n\n`).join("");
        yield encoder.encode(ended ? `${sse}data: [DONE]\n\n` : sse);
        return;
      }
      for (const [i, e] of list.entries()) {
        const pause = pauses[i];
        if (pause !== undefined) await sleep(pause, signal);
        if (signal.aborted) throw signal.reason;
        yield encoder.encode(`event: ${String(e.type)}\ndata: ${JSON.stringify(e)}\n\n`);
      }
      if (ended) yield encoder.encode("data: [DONE]\n\n");
    })(),
    cancel: () => {},
  };
}

function headers(map: Record<string, string>) {
  return { get: (name: string) => map[name.toLowerCase()] ?? null };
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    const t = setTimeout(resolve, ms);
    signal.addEventListener(
      "abort",
      () => {
        clearTimeout(t);
        reject(signal.reason);
      },
      { once: true },
    );
  });
}
