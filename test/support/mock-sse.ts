/**
 * Helpers for tests of the mock Open Responses server: send a request to the in-process handler,
 * read an SSE body into messages/events (with the chunks as they arrived), and check a stream
 * against the spec (schema, `event:` = `type`, sequence numbers, item lifecycle order).
 */
import { validateResponseResource, validateStreamingEvent } from "../../src/protocol/validate.js";
import { createSseDecoder, type SseMessage } from "../../src/sse/decoder.js";

/** What a client reading an SSE body saw. */
export interface ReadSse {
  messages: SseMessage[];
  /** Parsed `data` of every message but `[DONE]` (invalid JSON stays a string). */
  events: Array<Record<string, unknown> | string>;
  comments: string[];
  /** The body's raw chunks, as delivered. */
  chunks: Uint8Array[];
  /** Whether `data: [DONE]` came. */
  done: boolean;
  /** The error the body stream failed with, if it did. */
  error?: unknown;
  text: string;
}

/** Posts `body` (an object is JSON-encoded) to `/v1/responses` of `handler`. */
export function post(
  handler: (request: Request) => Promise<Response>,
  body: unknown,
  init: { path?: string; headers?: Record<string, string>; method?: string } = {},
): Promise<Response> {
  return handler(
    new Request(`http://mock.test${init.path ?? "/v1/responses"}`, {
      method: init.method ?? "POST",
      headers: { "content-type": "application/json", ...init.headers },
      body: typeof body === "string" ? body : JSON.stringify(body),
    }),
  );
}

/** Reads a whole SSE body. A body that fails (a dropped connection) ends the read with `error`. */
export async function readSse(body: ReadableStream<Uint8Array> | null): Promise<ReadSse> {
  const out: ReadSse = { messages: [], events: [], comments: [], chunks: [], done: false, text: "" };
  if (body === null) return out;
  const decoder = createSseDecoder({
    onMessage: (m) => {
      out.messages.push(m);
      if (m.data === "[DONE]") out.done = true;
      else {
        try {
          out.events.push(JSON.parse(m.data) as Record<string, unknown>);
        } catch {
          out.events.push(m.data);
        }
      }
    },
    onComment: (c) => out.comments.push(c),
  });
  const text = new TextDecoder();
  const reader = body.getReader();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      out.chunks.push(value);
      out.text += text.decode(value, { stream: true });
      decoder.feed(value);
    }
    decoder.end();
  } catch (error) {
    out.error = error;
  }
  return out;
}

/** Every spec violation of a complete stream (empty = valid). */
export function streamProblems(read: ReadSse): string[] {
  const problems: string[] = [];
  const objects = read.events.filter((e): e is Record<string, unknown> => typeof e !== "string");
  for (const [i, m] of read.messages.entries()) {
    if (m.data === "[DONE]") continue;
    const e = read.events[i];
    if (typeof e === "string") {
      problems.push(`message ${i} is not JSON`);
      continue;
    }
    const errors = validateStreamingEvent(e);
    if (errors !== undefined) problems.push(`event ${i} (${String(e?.type)}): ${errors.join("; ")}`);
    if (m.event !== e?.type) problems.push(`event ${i}: event line ${m.event} != type ${String(e?.type)}`);
  }
  objects.forEach((e, i) => {
    if (e.sequence_number !== i) problems.push(`event ${i}: sequence_number ${String(e.sequence_number)}`);
  });
  const types = objects.map((e) => String(e.type));
  if (types[0] !== "response.created") problems.push(`first event is ${types[0]}`);
  if (types[1] !== "response.in_progress") problems.push(`second event is ${types[1]}`);
  const terminal = types.filter((t) =>
    ["response.completed", "response.failed", "response.incomplete"].includes(t),
  );
  if (terminal.length !== 1) problems.push(`${terminal.length} terminal events`);
  else if (types.indexOf(terminal[0] as string) !== types.length - 1)
    problems.push("terminal event is not last");
  const last = objects[objects.length - 1];
  if (last?.response !== undefined) {
    const errors = validateResponseResource(last.response);
    if (errors !== undefined) problems.push(`terminal response: ${errors.join("; ")}`);
  }
  problems.push(...orderProblems(objects));
  if (!read.done) problems.push("no [DONE]");
  return problems;
}

/** Item lifecycle (spec §7): added → parts/deltas → done, one item open at a time, parts closed before the item. */
function orderProblems(events: Record<string, unknown>[]): string[] {
  const problems: string[] = [];
  let open: number | undefined;
  let openPart: string | undefined;
  let next = 0;
  for (const e of events) {
    const type = String(e.type);
    const index = e.output_index as number | undefined;
    if (type === "response.output_item.added") {
      if (open !== undefined) problems.push(`item ${index} added while ${open} is open`);
      if (index !== next) problems.push(`item ${index} added, expected output_index ${next}`);
      open = index;
    } else if (type === "response.output_item.done") {
      if (open !== index) problems.push(`item ${index} done but ${open} is open`);
      if (openPart !== undefined) problems.push(`item ${index} done with part ${openPart} open`);
      open = undefined;
      next++;
    } else if (index !== undefined && index !== open) {
      problems.push(`${type} for item ${index} outside its lifecycle`);
    }
    const part = `${String(e.content_index ?? "")}/${String(e.summary_index ?? "")}`;
    if (type === "response.content_part.added" || type === "response.reasoning_summary_part.added")
      openPart = part;
    if (type === "response.content_part.done" || type === "response.reasoning_summary_part.done") {
      if (openPart !== part) problems.push(`${type} closes ${part}, open is ${openPart}`);
      openPart = undefined;
    }
    if (/\.(delta|done)$/.test(type) && /output_text|refusal|reasoning\.|reasoning_summary_text/.test(type)) {
      if (openPart !== part) problems.push(`${type} outside its part (${part}, open ${openPart})`);
    }
  }
  return problems;
}

/** The parsed events of a read, objects only. */
export function eventObjects(read: ReadSse): Record<string, unknown>[] {
  return read.events.filter((e): e is Record<string, unknown> => typeof e !== "string");
}

/** The terminal event's response. */
export function terminalResponse(read: ReadSse): Record<string, unknown> {
  const last = eventObjects(read).at(-1);
  return (last?.response ?? {}) as Record<string, unknown>;
}
