/**
 * What the replay server answers: a responder turns a request body into the body chunks to write
 * (and, in WebSocket mode, a `response.create` message into the messages to send).
 * A responder module (loaded inside the server's worker thread) exports `createResponder(init)`;
 * `init` is structured-cloned from the main thread, so it carries data, never functions.
 */

/** One answer: the SSE body, cut into the pieces the server writes one by one. */
export interface Reply {
  chunks: readonly Uint8Array[];
  /** Index of the chunk holding the first `response.output_text.delta`, if any (for last-hop times). */
  firstDeltaChunk?: number;
}

/** Picks the reply to a request from its body text. Runs in the server's worker thread. */
export type Responder = (body: string) => Reply;

/** One answer in WebSocket mode: the events as JSON text messages, one message each. */
export interface MessageReply {
  messages: readonly string[];
  /** Index of the message holding the first `response.output_text.delta`, if any (for last-hop times). */
  firstDeltaMessage?: number;
  /**
   * Send the messages in one socket write (the socket corked around them), as an HTTP reply in one
   * chunk, instead of one write each. @defaultValue false
   */
  corked?: boolean;
}

/** Picks the reply to a `response.create` message from its text. Runs in the server's worker thread. */
export type MessageResponder = (message: string) => MessageReply;

/** The shape of a responder module. */
export interface ResponderModule {
  createResponder(init: unknown): Responder;
  /**
   * WebSocket mode: answers `response.create` messages on connections upgraded at
   * `GET …/responses`. Without it the server refuses upgrades.
   */
  createMessageResponder?(init: unknown): MessageResponder;
}

/** A pre-generated stream the provider benchmark serves: the body and where to cut it. */
export interface ServedStream {
  /** Requests whose `model` is this key get this stream. */
  key: string;
  bytes: Uint8Array;
  /** Chunk end offsets (the last one is `bytes.length`). */
  ends: number[];
}

/** Cuts `bytes` at `ends` (no copies). */
export function cut(bytes: Uint8Array, ends: readonly number[]): Uint8Array[] {
  const out: Uint8Array[] = [];
  let start = 0;
  for (const end of ends) {
    out.push(bytes.subarray(start, end));
    start = end;
  }
  return out;
}

/** The end offsets of `chunks` laid end to end. */
export function endsOf(chunks: readonly Uint8Array[]): number[] {
  const ends: number[] = [];
  let at = 0;
  for (const c of chunks) {
    at += c.length;
    ends.push(at);
  }
  return ends;
}

const MODEL = /"model"\s*:\s*"([^"]*)"/;

/**
 * The provider benchmark's responder: the request's `model` names the stream to replay (every
 * client under test sets the model, so no contender needs a special header).
 */
export function createResponder(init: unknown): Responder {
  const streams = new Map<string, Reply>();
  for (const s of init as ServedStream[]) streams.set(s.key, { chunks: cut(s.bytes, s.ends) });
  return (body) => {
    const key = MODEL.exec(body)?.[1] ?? "";
    const reply = streams.get(key);
    if (reply === undefined) throw new Error(`no stream for model ${JSON.stringify(key)}`);
    return reply;
  };
}
