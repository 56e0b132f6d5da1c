/**
 * Server-sent events decoder: bytes → messages, per the WHATWG "event stream interpretation"
 * (https://html.spec.whatwg.org/multipage/server-sent-events.html#event-stream-interpretation),
 * with the departures real Open Responses providers force on a client (docs/decisions.md #12):
 *
 * - A final message without its terminating blank line is dispatched at end of input (the spec
 *   says to discard it; providers that close right after their last event would lose it).
 * - `id` is not carried forward: a message's `id` is its own `id:` field only (no "last event ID").
 * - Memory is bounded: a message (or a single line) longer than `maxMessageSize` is an error, not
 *   an out-of-memory.
 * - On request (`datalessBlocks: "dispatch"`), a block of fields without a `data:` line (an
 *   `event: ping` keep-alive) is dispatched with empty data instead of being dropped, so a client
 *   that records everything can record it.
 *
 * An empty event name (`event:`, `event: `, a bare `event`) is no event name: the message has no
 * `event` (WHATWG dispatches it under the default type, exactly as if the field were absent).
 *
 * The decoder is deterministic: the same bytes give the same messages at any chunking (CRLF pairs,
 * lines and UTF-8 sequences may be split anywhere). It is a push parser with no I/O: feed it chunks,
 * it calls back synchronously. `decodeSse()` adapts it to async iterables and web streams.
 */
import { EddyError } from "../errors.js";
import { createUtf8StreamDecoder } from "./utf8-decoder.js";

/** One dispatched SSE message. */
export interface SseMessage {
  /** The `event:` field, when the message had one. */
  event?: string;
  /** The `data:` lines joined with "\n" (may be empty: a ping). */
  data: string;
  /** The message's text as received (its lines and their line endings, without the blank line). */
  raw: string;
  /** The `id:` field, when present. Open Responses servers should not send it. */
  id?: string;
  /** The `retry:` field, when present and valid. */
  retry?: number;
}

/** Options of `createSseDecoder`. */
export interface SseDecoderOptions {
  /** Called for each dispatched message, in order. */
  onMessage: (message: SseMessage) => void;
  /**
   * Called for each `:` comment line with its text after the colon (keep-alives). Never a message.
   * @defaultValue none (comments are dropped)
   */
  onComment?: (comment: string) => void;
  /**
   * Largest message (or line) accepted, in UTF-16 code units of decoded text. Exceeding it throws
   * an `EddyError` with code `sse_message_too_large`.
   * @defaultValue 16 MiB (16_777_216)
   */
  maxMessageSize?: number;
  /**
   * What becomes of a block that has fields but no `data:` line (`event: ping` then a blank line):
   * `"drop"` it, as WHATWG does, or `"dispatch"` it as a message with empty `data` (its `raw` shows
   * it had no data line). Comment-only blocks are never messages either way.
   * @defaultValue "drop"
   */
  datalessBlocks?: "drop" | "dispatch";
}

/** A push decoder: `feed` chunks in any split, `end()` at the end of input. */
export interface SseDecoder {
  /** Feeds the next chunk of the body (bytes, or already-decoded text). */
  feed(chunk: Uint8Array | string): void;
  /** Signals end of input: flushes a partial UTF-8 sequence, a last unterminated line and a last unterminated message. */
  end(): void;
}

/** The decoder's defaults. */
export const SSE_DEFAULTS = {
  maxMessageSize: 16 * 1024 * 1024,
} as const;

const LF = 10;
const CR = 13;
/** Byte chunks larger than this are decoded in two steps (see `feed`). */
const SPLIT_CHUNKS_OVER = 2048;
const COLON = 58;
const SPACE = 32;

/**
 * Creates a push decoder. See the module comment for the rules it follows.
 *
 * @example
 * ```ts
 * const decoder = createSseDecoder({ onMessage: (m) => console.log(m.event, m.data) });
 * for await (const chunk of response.body) decoder.feed(chunk);
 * decoder.end();
 * ```
 */
export function createSseDecoder(options: SseDecoderOptions): SseDecoder {
  const { onMessage, onComment } = options;
  const dispatchDataless = options.datalessBlocks === "dispatch";
  const maxMessageSize = options.maxMessageSize ?? SSE_DEFAULTS.maxMessageSize;
  const utf8 = createUtf8StreamDecoder(); // bad bytes become U+FFFD; keeps a BOM (feedText strips the first)

  /**
   * The unterminated tail of earlier chunks: always part of one line, never containing CR or LF.
   * Kept in pieces and joined only when a line end arrives: concatenating on every feed would make
   * a long line (a 1 MB `response.completed`) arriving in small chunks cost O(N²).
   */
  let partial: string[] = [];
  let partialLength = 0;
  /** Raw text of the current message from earlier chunks. */
  let rawPrefix = "";
  /** The current message's fields. `dataLines === 0` means no data field yet. */
  let data = "";
  let dataLines = 0;
  let eventName: string | undefined;
  let id: string | undefined;
  let retry: number | undefined;
  let hasFields = false;
  /** A CR ended the previous chunk: an LF at the start of the next one belongs to it. */
  let skipLeadingLF = false;
  /** ...and that CR ended a field line, so the LF is part of the current message's raw text. */
  let skippedLFIsRaw = false;
  let firstText = true;
  let ended = false;

  function fail(what: string, size: number): never {
    throw new EddyError(
      "sse_message_too_large",
      `SSE ${what} of ${size} characters exceeds maxMessageSize (${maxMessageSize}): the stream is not read further. If the provider really sends messages this large, a program can raise the provider's maxMessageSize (createOpenResponsesProvider)`,
      { fault: "provider", details: { size, maxMessageSize } },
    );
  }

  function dispatch(raw: string): void {
    if (dataLines > 0 || (dispatchDataless && hasFields)) {
      const message: SseMessage = { data, raw };
      if (eventName !== undefined) message.event = eventName;
      if (id !== undefined) message.id = id;
      if (retry !== undefined) message.retry = retry;
      onMessage(message);
    }
    // A block with no data field (only `event:` or `id:`) dispatches nothing, per WHATWG, unless
    // `datalessBlocks` says to dispatch it.
    data = "";
    dataLines = 0;
    eventName = undefined;
    id = undefined;
    retry = undefined;
    hasFields = false;
  }

  function field(line: string): void {
    const c0 = line.charCodeAt(0);
    if (c0 === COLON) {
      onComment?.(line.charCodeAt(1) === SPACE ? line.slice(2) : line.slice(1));
      return;
    }
    hasFields = true;
    const colon = line.indexOf(":");
    const name = colon === -1 ? line : line.slice(0, colon);
    let value = colon === -1 ? "" : line.slice(colon + 1);
    if (value.charCodeAt(0) === SPACE) value = value.slice(1);
    switch (name) {
      case "data":
        appendData(value);
        break;
      case "event":
        eventName = value === "" ? undefined : value;
        break;
      case "id":
        if (!value.includes("\0")) id = value;
        break;
      case "retry":
        if (/^\d+$/.test(value)) retry = Number(value);
        break;
      default:
        // Unknown fields are ignored (WHATWG).
        break;
    }
  }

  /**
   * The line `buf[start, end)`. Fast paths, reading `buf` in place (one slice, not two), for the two
   * fields every Open Responses event has; everything else goes through `field`.
   */
  function lineAt(buf: string, start: number, end: number): void {
    const c0 = buf.charCodeAt(start);
    if (c0 === 100 /* d */ && buf.startsWith("data:", start)) {
      hasFields = true;
      appendData(buf.slice(buf.charCodeAt(start + 5) === SPACE ? start + 6 : start + 5, end));
    } else if (c0 === 101 /* e */ && buf.startsWith("event:", start)) {
      hasFields = true;
      const from = buf.charCodeAt(start + 6) === SPACE ? start + 7 : start + 6;
      eventName = from >= end ? undefined : buf.slice(from, end);
    } else {
      field(buf.slice(start, end));
    }
  }

  function appendData(value: string): void {
    if (dataLines === 0) data = value;
    else data = `${data}\n${value}`;
    dataLines++;
    if (data.length > maxMessageSize) fail("message", data.length);
  }

  function processText(text: string): void {
    const crAt = text.indexOf("\r");
    if (crAt === -1 && text.indexOf("\n") === -1) {
      // No line end at all: the whole text continues the current line.
      skipLeadingLF = false;
      partial.push(text);
      partialLength += text.length;
      if (partialLength > maxMessageSize) fail("line", partialLength);
      return;
    }
    let buf = text;
    if (partialLength > 0) {
      partial.push(text);
      buf = partial.join("");
      partial = [];
      partialLength = 0;
    }
    let pos = 0;
    if (skipLeadingLF) {
      skipLeadingLF = false;
      if (buf.charCodeAt(0) === LF) {
        pos = 1;
        if (skippedLFIsRaw) rawPrefix += "\n";
      }
    }
    let msgStart = pos;
    const len = buf.length;
    // Only `text` can hold CRs (the partial line never does), so an LF-only chunk takes the fast path.
    const hasCR = crAt !== -1;
    let nextCR = hasCR ? buf.indexOf("\r", pos) : -1;
    while (pos < len) {
      let end = buf.indexOf("\n", pos);
      let next: number;
      if (hasCR) {
        if (nextCR !== -1 && nextCR < pos) nextCR = buf.indexOf("\r", pos);
        if (nextCR !== -1 && (end === -1 || nextCR < end)) {
          end = nextCR;
          if (end + 1 < len) next = buf.charCodeAt(end + 1) === LF ? end + 2 : end + 1;
          else {
            next = end + 1;
            skipLeadingLF = true; // the LF of this CRLF may start the next chunk
            skippedLFIsRaw = end !== pos;
          }
        } else if (end === -1) break;
        else next = end + 1;
      } else {
        if (end === -1) break;
        next = end + 1;
      }
      if (end === pos) {
        // Blank line: dispatch. raw = the message's lines, without this blank line.
        const raw = rawPrefix.length > 0 ? rawPrefix + buf.slice(msgStart, pos) : buf.slice(msgStart, pos);
        rawPrefix = "";
        dispatch(raw);
        msgStart = next;
      } else {
        lineAt(buf, pos, end);
      }
      pos = next;
    }
    if (msgStart < pos) {
      rawPrefix += buf.slice(msgStart, pos);
      if (rawPrefix.length > maxMessageSize) fail("message", rawPrefix.length);
    }
    if (pos < len) {
      partial.push(buf.slice(pos));
      partialLength = len - pos;
      if (partialLength > maxMessageSize) fail("line", partialLength);
    }
  }

  function feedText(decoded: string): void {
    let text = decoded;
    if (firstText && text.length > 0) {
      firstText = false;
      if (text.charCodeAt(0) === 0xfeff) text = text.slice(1); // a leading BOM (WHATWG: stripped once)
    }
    if (text.length > 0) processText(text);
  }

  return {
    feed(chunk) {
      if (ended) throw new EddyError("sse_stream_error", "SSE decoder: feed() after end()");
      if (typeof chunk === "string") {
        feedText(chunk);
        return;
      }
      // A large chunk is decoded in two steps, the first ending with its first blank line: that
      // message is dispatched before the rest of the chunk is even decoded (time to first frame).
      const cut = chunk.length > SPLIT_CHUNKS_OVER ? firstMessageEnd(chunk) : -1;
      if (cut > 0 && cut < chunk.length) {
        feedText(utf8.decode(chunk.subarray(0, cut)));
        feedText(utf8.decode(chunk.subarray(cut)));
      } else {
        feedText(utf8.decode(chunk));
      }
    },
    end() {
      if (ended) return;
      ended = true;
      const tail = utf8.flush();
      if (tail.length > 0) processText(tail);
      // A last line without its line ending is still a line; a last message without its blank line is still a message.
      if (partialLength > 0) {
        const line = partial.join("");
        partial = [];
        partialLength = 0;
        rawPrefix += line;
        field(line);
      }
      if (hasFields || dataLines > 0) {
        const raw = rawPrefix;
        rawPrefix = "";
        dispatch(raw);
      }
    },
  };
}

/**
 * The offset just past the first blank line (LF LF, or LF CR LF) of `bytes`, or -1. A CR-only
 * stream has none; that only costs it the early dispatch, never correctness: the decoder gives the
 * same messages wherever a chunk is cut.
 */
function firstMessageEnd(bytes: Uint8Array): number {
  for (let i = bytes.indexOf(LF); i !== -1; i = bytes.indexOf(LF, i + 1)) {
    const next = bytes[i + 1];
    if (next === LF) return i + 2;
    if (next === CR && bytes[i + 2] === LF) return i + 3;
  }
  return -1;
}

/** A byte source: a web `ReadableStream` (fetch bodies) or any async iterable (node streams). */
export type ByteSource = ReadableStream<Uint8Array> | AsyncIterable<Uint8Array>;

/** Options of `decodeSse`. */
export interface DecodeSseOptions {
  /** Receives each comment line (keep-alives). @defaultValue none (comments are dropped) */
  onComment?: (comment: string) => void;
  /** Largest message accepted. @defaultValue SSE_DEFAULTS.maxMessageSize (16 MiB) */
  maxMessageSize?: number;
  /** See `SseDecoderOptions.datalessBlocks`. @defaultValue "drop" */
  datalessBlocks?: "drop" | "dispatch";
}

/** Decodes a byte source into SSE messages. Comments go to `onComment`, never into the iteration. */
export async function* decodeSse(
  source: ByteSource,
  options: DecodeSseOptions = {},
): AsyncGenerator<SseMessage> {
  const queue: SseMessage[] = [];
  const decoderOptions: SseDecoderOptions = { onMessage: (m) => queue.push(m) };
  if (options.onComment) decoderOptions.onComment = options.onComment;
  if (options.maxMessageSize !== undefined) decoderOptions.maxMessageSize = options.maxMessageSize;
  if (options.datalessBlocks !== undefined) decoderOptions.datalessBlocks = options.datalessBlocks;
  const decoder = createSseDecoder(decoderOptions);
  for await (const chunk of iterateBytes(source)) {
    decoder.feed(chunk);
    for (let i = 0; i < queue.length; i++) yield queue[i] as SseMessage;
    queue.length = 0;
  }
  decoder.end();
  yield* queue;
}

/** Iterates a web ReadableStream or an async iterable of bytes, releasing the reader on early exit. */
export async function* iterateBytes(source: ByteSource): AsyncGenerator<Uint8Array> {
  if (!isReadableStream(source)) {
    yield* source;
    return;
  }
  const reader = source.getReader();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return;
      yield value;
    }
  } finally {
    reader.releaseLock();
  }
}

function isReadableStream(source: ByteSource): source is ReadableStream<Uint8Array> {
  return typeof (source as ReadableStream<Uint8Array>).getReader === "function";
}
