/**
 * Events → an SSE body, with the turn's faults applied (see `faults.ts`). The body is a pull-based
 * `ReadableStream` with no buffer (`highWaterMark: 0`): the next event is produced only when the
 * consumer asks for it, so a slow client slows the producer and the first event leaves before the
 * last one exists. The first events are one chunk each, later ones are batched (see `Batch`); with
 * `chunkBytes` the bytes are re-cut into chunks of that size. The listener writes and flushes each
 * chunk on its own.
 */
import { setTimeout as sleep } from "node:timers/promises";
import { EddyError } from "../errors.js";
import type { ItemField, JsonObject, ResponseResource } from "../protocol/types.js";
import { encodeSseDone, encodeSseMessage, type SseLineEnding } from "../sse/encoder.js";
import { parseJsonObject } from "../util/json.js";
import { MOCK_DEFAULTS } from "./defaults.js";
import {
  type ErrorEventFault,
  errorEventPayload,
  invalidJsonLine,
  keepAliveComment,
  type MockFaults,
} from "./faults.js";

/** How a streamed body ended. */
export type StreamOutcome = "finished" | "dropped" | "cancelled";

/** Input of `createSseBody`. */
export interface SseBodyOptions {
  /** The events in order: objects are JSON-encoded, strings are sent verbatim as the data line. */
  events: Iterator<JsonObject | string, unknown> | AsyncIterator<JsonObject | string, unknown>;
  faults: MockFaults;
  /**
   * The `response.failed` snapshot for an `errorEvent` fault, from the items whose
   * `output_item.done` was already written (and the last snapshot seen, for raw streams).
   */
  failedResponse: (done: ItemField[], error: { code: string; message: string }, last?: JsonObject) => unknown;
  /** Aborted when the server closes: pending stalls end at once. */
  signal: AbortSignal;
  /** Called once when the body ends. */
  onEnd: (outcome: StreamOutcome) => void;
}

/** True for the error a `dropAfterEvents` fault raises in the body stream. */
export function isDropError(error: unknown): boolean {
  return EddyError.isInstance(error) && error.details.mockDrop === true;
}

/** The SSE body of one streamed response. */
export function createSseBody(options: SseBodyOptions): ReadableStream<Uint8Array> {
  const local = new AbortController();
  const abort = () => local.abort();
  options.signal.addEventListener("abort", abort, { once: true });
  let ended = false;
  const end = (outcome: StreamOutcome) => {
    if (ended) return;
    ended = true;
    options.signal.removeEventListener("abort", abort);
    options.onEnd(outcome);
  };
  const chunks = toChunks(
    stoppingSource(sseText(options, local.signal), options.events),
    options.faults.chunkBytes,
  );
  return new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        try {
          const next = await chunks.next();
          if (next.done === true) {
            controller.close();
            end("finished");
          } else controller.enqueue(next.value);
        } catch (error) {
          controller.error(error);
          end(local.signal.aborted ? "cancelled" : "dropped");
        }
      },
      async cancel() {
        local.abort();
        end("cancelled");
        await chunks.return(undefined);
        await options.events.return?.(); // also when the body was cancelled before its first pull
      },
    },
    { highWaterMark: 0 },
  );
}

/** `pieces`, and once they end (or the reader stops early) the event source is stopped too. */
async function* stoppingSource(pieces: AsyncGenerator<string>, events: SseBodyOptions["events"]) {
  try {
    yield* pieces;
  } finally {
    await events.return?.();
  }
}

/**
 * Collects encoded pieces into chunks. The first chunks carry one piece each (a client sees the
 * first events at once); after that, pieces produced back to back are batched (up to
 * `MOCK_DEFAULTS.batchEvents` pieces or `batchChars` characters), as a busy network would, so long
 * streams are cheap. Before a stall, a drop or the end, what is pending goes out (`flush`).
 */
class Batch {
  private text = "";
  private pieces = 0;
  private chunks = 0;
  add(piece: string): void {
    this.text += piece;
    this.pieces++;
  }
  get ready(): boolean {
    return (
      this.chunks < MOCK_DEFAULTS.unbatchedChunks ||
      this.pieces >= MOCK_DEFAULTS.batchEvents ||
      this.text.length >= MOCK_DEFAULTS.batchChars
    );
  }
  get empty(): boolean {
    return this.pieces === 0;
  }
  take(): string {
    const text = this.text;
    this.text = "";
    this.pieces = 0;
    this.chunks++;
    return text;
  }
}

/** The body as text chunks (see `Batch`), with the faults applied. */
async function* sseText(options: SseBodyOptions, signal: AbortSignal): AsyncGenerator<string> {
  const { faults } = options;
  const nl: SseLineEnding = faults.lineEnding ?? "\n";
  const batch = new Batch();
  if (faults.stallBeforeBodyMs !== undefined) await sleep(faults.stallBeforeBodyMs, undefined, { signal });
  const done: ItemField[] = [];
  let lastSnapshot: JsonObject | undefined;
  let lastSeq = -1;
  let terminalSeen = false;
  let count = 0;
  let drop = false;
  const addErrorEvent = (fault: ErrorEventFault) => {
    const payload = errorEventPayload(fault);
    const error = { type: "error", sequence_number: ++lastSeq, error: payload };
    batch.add(encodeEvent(error, error, faults, nl));
    if (terminalSeen) return;
    const failure = { code: payload.code ?? payload.type, message: payload.message };
    const response = options.failedResponse(done, failure, lastSnapshot);
    if (response !== undefined) {
      const failed = { type: "response.failed", sequence_number: ++lastSeq, response };
      batch.add(encodeEvent(failed, failed, faults, nl));
    }
  };
  for (;;) {
    if (faults.dropAfterEvents === count) {
      drop = true;
      break;
    }
    if (faults.errorEvent?.afterEvents === count) {
      addErrorEvent(faults.errorEvent);
      break;
    }
    if (faults.invalidJsonAfterEvents === count) batch.add(invalidJsonLine(nl));
    const next = await options.events.next();
    if (next.done === true) {
      // Faults set past the end of the stream happen before `[DONE]`.
      if (faults.invalidJsonAfterEvents !== undefined && faults.invalidJsonAfterEvents > count) {
        batch.add(invalidJsonLine(nl));
      }
      if (faults.dropAfterEvents !== undefined && faults.dropAfterEvents > count) drop = true;
      else if (faults.errorEvent !== undefined && faults.errorEvent.afterEvents > count)
        addErrorEvent(faults.errorEvent);
      break;
    }
    const event = next.value;
    const parsed = typeof event === "string" ? parseJsonObject(event) : event;
    batch.add(encodeEvent(event, parsed, faults, nl));
    count++;
    if (parsed !== undefined) {
      if (typeof parsed.sequence_number === "number") lastSeq = Math.max(lastSeq, parsed.sequence_number);
      if (
        parsed.type === "response.output_item.done" &&
        parsed.item !== null &&
        typeof parsed.item === "object"
      ) {
        done.push(parsed.item as ItemField);
      }
      if (parsed.response !== null && typeof parsed.response === "object") {
        lastSnapshot = parsed.response as JsonObject;
        const status = (parsed.response as ResponseResource).status;
        if (status === "completed" || status === "failed" || status === "incomplete") terminalSeen = true;
      }
    }
    if (faults.keepAliveEvery !== undefined && count % faults.keepAliveEvery === 0)
      batch.add(keepAliveComment(nl));
    const stall = faults.stallAfterEvents;
    if (stall !== undefined && stall.afterEvents === count) {
      if (!batch.empty) yield batch.take();
      await sleep(stall.ms, undefined, { signal });
    } else if (batch.ready) {
      yield batch.take();
    }
  }
  if (drop) {
    if (!batch.empty) yield batch.take(); // what was written before the drop still arrives
    throw connectionDropped(count);
  }
  if (faults.omitDone !== true) batch.add(encodeSseDone(nl));
  if (!batch.empty) yield batch.take();
}

function encodeEvent(
  event: JsonObject | string,
  parsed: JsonObject | undefined,
  faults: MockFaults,
  nl: SseLineEnding,
): string {
  const data = typeof event === "string" ? event : JSON.stringify(event);
  const type = parsed?.type;
  if (faults.omitEventLines === true || typeof type !== "string" || /[\r\n]/.test(type)) {
    return encodeSseMessage({ data }, nl);
  }
  return encodeSseMessage({ event: type, data }, nl);
}

/** The error of a `dropAfterEvents` fault: the body stream (or, without a body, the handler) fails with it. */
export function connectionDropped(count: number): EddyError {
  return new EddyError(
    "provider_connection",
    `mock: connection dropped after ${count} events (dropAfterEvents fault)`,
    {
      fault: "provider",
      details: { mockDrop: true },
    },
  );
}

const encoder = new TextEncoder();

/** Text pieces → byte chunks: one per piece, or re-cut into `size`-byte chunks (splitting UTF-8 sequences). */
async function* toChunks(
  pieces: AsyncGenerator<string>,
  size: number | undefined,
): AsyncGenerator<Uint8Array> {
  if (size === undefined) {
    for await (const piece of pieces) yield encoder.encode(piece);
    return;
  }
  let pending = new Uint8Array(0);
  try {
    for await (const piece of pieces) {
      const bytes = encoder.encode(piece);
      const joined = new Uint8Array(pending.length + bytes.length);
      joined.set(pending);
      joined.set(bytes, pending.length);
      let offset = 0;
      for (; offset + size <= joined.length; offset += size) yield joined.slice(offset, offset + size);
      pending = joined.slice(offset);
    }
  } catch (error) {
    // A drop still delivers what was written before it.
    if (pending.length > 0 && isDropError(error)) yield pending;
    throw error;
  }
  if (pending.length > 0) yield pending;
}
