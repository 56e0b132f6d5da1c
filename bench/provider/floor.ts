/**
 * The floor over HTTP: the least a correct client of these streams must do, hand-written. It is the
 * floor of bench/sse (streaming TextDecoder, split on the blank line, take the `data: ` text,
 * JSON.parse; LF only, no comments, no multi-line data) fed chunk by chunk as they arrive, plus the
 * two ways to POST: global fetch (undici) and node:http with a keep-alive agent. The loop
 * benchmark's floor-loop is built from the same pieces.
 */
import * as http from "node:http";

export type EventSink = (event: Record<string, unknown>) => void;

const DONE = "[DONE]";

/**
 * The floor parser, incremental: `feed` each chunk as it arrives. Text without a blank line waits
 * in pieces (joined once one arrives), so a long event in small chunks costs linear time.
 */
export function floorParser(sink: EventSink): (chunk: Uint8Array) => void {
  const decoder = new TextDecoder();
  let pending: string[] = [];
  let pendingEndsWithLF = false;
  return (chunk) => {
    const text = decoder.decode(chunk, { stream: true });
    if (text.length === 0) return;
    pending.push(text);
    if (text.indexOf("\n\n") === -1 && !(pendingEndsWithLF && text.charCodeAt(0) === 10)) {
      pendingEndsWithLF = text.charCodeAt(text.length - 1) === 10;
      return;
    }
    const buffer = pending.length === 1 ? text : pending.join("");
    let start = 0;
    for (let end = buffer.indexOf("\n\n"); end !== -1; end = buffer.indexOf("\n\n", start)) {
      const dataAt = buffer.indexOf("data: ", start);
      const data = buffer.slice(dataAt + 6, end);
      if (data !== DONE) sink(JSON.parse(data) as Record<string, unknown>);
      start = end + 2;
    }
    pending = start < buffer.length ? [buffer.slice(start)] : [];
    pendingEndsWithLF = buffer.charCodeAt(buffer.length - 1) === 10;
  };
}

/** A function call as the floor takes it: from the `response.completed` snapshot's output. */
export interface FloorCall {
  call_id: string;
  name: string;
  arguments: string;
}

/** What the floor assembles from one response's events. */
export interface FloorResponse {
  /** Concatenated `response.output_text.delta` deltas. */
  text: string;
  /** The function_call items of the `response.completed` output. */
  calls: FloorCall[];
  responseId: string | undefined;
  events: number;
  completed: boolean;
}

/** An event sink that assembles a `FloorResponse`; `onDelta` sees each text delta as it arrives. */
export function floorAssembler(onDelta?: (delta: string) => void): {
  sink: EventSink;
  response: FloorResponse;
} {
  const response: FloorResponse = { text: "", calls: [], responseId: undefined, events: 0, completed: false };
  const sink: EventSink = (event) => {
    response.events++;
    switch (event.type) {
      case "response.output_text.delta": {
        const delta = event.delta as string;
        response.text += delta;
        onDelta?.(delta);
        break;
      }
      case "response.completed": {
        const snapshot = event.response as { id: string; output: Record<string, unknown>[] };
        response.responseId = snapshot.id;
        response.completed = true;
        for (const item of snapshot.output) {
          if (item.type === "function_call") response.calls.push(item as unknown as FloorCall);
        }
        break;
      }
    }
  };
  return { sink, response };
}

/** POSTs `body` (JSON text) and hands each body chunk to `onChunk` as it arrives. */
export type Poster = (body: string, onChunk: (chunk: Uint8Array) => void) => Promise<void>;

const HEADERS = { "content-type": "application/json", accept: "text/event-stream" };

/** POST with the global fetch (undici; keep-alive by default), body read with a stream reader. */
export function fetchPoster(url: string): Poster {
  return async (body, onChunk) => {
    const res = await fetch(url, { method: "POST", headers: HEADERS, body });
    if (res.status !== 200 || res.body === null) throw new Error(`HTTP ${res.status}`);
    const reader = res.body.getReader();
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return;
      onChunk(value);
    }
  };
}

/** POST with node:http over a keep-alive agent, body read with 'data' events. */
export function nodeHttpPoster(url: string): Poster {
  const agent = new http.Agent({ keepAlive: true });
  const { hostname, port, pathname } = new URL(url);
  return (body, onChunk) =>
    new Promise<void>((resolve, reject) => {
      const req = http.request(
        {
          hostname,
          port,
          path: pathname,
          method: "POST",
          agent,
          headers: { ...HEADERS, "content-length": Buffer.byteLength(body) },
        },
        (res) => {
          if (res.statusCode !== 200) reject(new Error(`HTTP ${res.statusCode}`));
          res.on("data", onChunk);
          res.on("end", resolve);
          res.on("error", reject);
        },
      );
      req.on("error", reject);
      req.end(body);
    });
}
