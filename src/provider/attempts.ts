/**
 * Attempts with retries: the frame source of every live transport (HTTP today, WebSocket and Chat
 * Completions beside it). Each attempt is a pull object (`Attempt`) made by the transport; this
 * module owns what is common to all of them — the `request_started`, `request_failed` and `retry`
 * frames, the retry policy with backoff and `Retry-After` (docs/decisions.md #8), starting the
 * drain once the response has ended, and cancellation while waiting.
 */
import {
  frame,
  type ProviderFrame,
  type RequestFailedFrame,
  type ResponseHeadersFrame,
} from "../frames/frame.js";
import type { JsonObject } from "../protocol/types.js";
import type { BatchSink, FrameSource, StreamControl } from "./assembling-stream.js";
import { cancelledError, type ProviderError } from "./errors.js";
import { backoffDelayMs, type RetryPolicy } from "./retry.js";

/** How opening an attempt went: the transport's answer (HTTP headers; none over WebSocket), or a failure. */
export type AttemptOpening =
  | { type: "opened"; headers: ResponseHeadersFrame | undefined }
  | { type: "failed"; error: ProviderError };

/** A step of an attempt's body: frames, the end of the stream, or a failure. */
export type AttemptStep =
  | { type: "frames"; frames: ProviderFrame[] }
  | { type: "end"; sawDone: boolean }
  | { type: "failed"; error: ProviderError };

/** One try at a request, as a pull object: open it, pull its frames, close it. Never throws. */
export interface Attempt {
  open(): Promise<AttemptOpening>;
  /** The next frames (one network chunk's worth), or how the attempt ended. */
  next(): Promise<AttemptStep>;
  /**
   * The response reached its terminal event (`answered`), or is finished and waits only for its
   * end (a Chat Completions choice's usage chunk, `answered` false): wait only briefly for the rest
   * of the body. Only an answered response keeps what it has when the body then breaks.
   */
  startDrain(answered?: boolean): void;
  /** Releases timers, listeners and, unless the body was read to its end, the connection. */
  close(): void;
}

export interface RetryingSourceOptions {
  retry: RetryPolicy;
  /** Jitter source in [0, 1). */
  random: () => number;
  /** Waits `ms`; rejects when `signal` aborts. */
  sleep: (ms: number, signal?: AbortSignal) => Promise<void>;
  /** Makes attempt number `attempt` of the request. */
  openAttempt: (attempt: number, control: StreamControl) => Attempt;
  /**
   * The body actually sent, when the wire format is not Open Responses: recorded as
   * `request_started.wire_body` on every attempt. @defaultValue none
   */
  wireBody?: JsonObject;
  /**
   * Set for attempts over a WebSocket connection: recorded as `request_started.transport`.
   * @defaultValue none (HTTP)
   */
  transport?: "websocket";
}

/** The frame source that runs attempts until one succeeds, one may not be retried, or retries run out. */
export function retryingSource(options: RetryingSourceOptions): FrameSource {
  return async function attempts(control, emit) {
    const { turn, body } = control.request;
    const signal = control.options.signal;
    let attempt = control.request.firstAttempt ?? 1;
    for (let retries = 0; ; retries++) {
      const started = frame("request_started", { turn, attempt, body });
      if (options.wireBody !== undefined) started.wire_body = options.wireBody;
      if (options.transport !== undefined) started.transport = options.transport;
      // Sent only once the consumer took `request_started` (a rate limiter holds it back).
      if (!(await emit([started]))) return undefined;
      const exchange = options.openAttempt(attempt, control);
      let error: ProviderError | undefined;
      try {
        const tried = await streamAttempt(exchange, control, emit);
        if (tried === STOPPED) return undefined;
        error = tried;
      } finally {
        exchange.close();
      }
      if (error === undefined) return undefined;
      if (!(await emit([failedFrame(turn, attempt, error)]))) return undefined;
      if (!error.retryable || retries >= options.retry.maxRetries || !control.canResend()) return error;
      attempt++;
      const delay = backoffDelayMs(options.retry, retries + 1, options.random, error.retryAfterMs);
      if (!(await emit([frame("retry", { turn, attempt, delay_ms: delay, reason: error.frameCode })])))
        return undefined;
      try {
        await options.sleep(delay, signal);
      } catch {
        // Cancelled while waiting: the announced attempt ends before it starts.
        const cancelled = cancelledError();
        await emit([failedFrame(turn, attempt, cancelled)]);
        return cancelled;
      }
    }
  };
}

const STOPPED = Symbol("stopped");

/**
 * One attempt's frames to `emit`, chunk by chunk: the error that ended it (undefined when its
 * stream was read to its end), or STOPPED when the consumer stopped. A batch the consumer takes at
 * once is not awaited (the hot path: no promise between a network chunk and the loop).
 */
async function streamAttempt(
  exchange: Attempt,
  control: StreamControl,
  emit: BatchSink,
): Promise<ProviderError | undefined | typeof STOPPED> {
  const opening = await exchange.open();
  if (opening.type === "failed") return opening.error;
  if (opening.headers !== undefined && !(await emit([opening.headers]))) return STOPPED;
  let draining = false;
  for (;;) {
    const step = await exchange.next();
    if (step.type === "failed") return step.error;
    if (step.type === "end") return control.endOfStreamError(step.sawDone);
    const taken = emit(step.frames);
    if (taken !== true && (taken === false || !(await taken))) return STOPPED;
    const answered = control.terminal !== null && control.terminal !== "error";
    if (!draining && (answered || control.finishing)) {
      draining = true;
      exchange.startDrain(answered);
    }
  }
}

/** The `request_failed` frame of a failed attempt. */
export function failedFrame(turn: number, attempt: number, error: ProviderError): RequestFailedFrame {
  const f: RequestFailedFrame = frame("request_failed", {
    turn,
    attempt,
    code: error.frameCode,
    message: error.message,
    kind: error.kind,
    retryable: error.retryable,
  });
  if (error.status !== undefined) f.status = error.status;
  if (error.errorType !== undefined) f.error_type = error.errorType;
  if (typeof error.param === "string") f.param = error.param;
  if (error.requestId !== undefined) f.request_id = error.requestId;
  return f;
}
