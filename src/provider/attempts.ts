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
import type { FrameSource, StreamControl } from "./assembling-stream.js";
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
  /** The response reached its terminal event: wait only briefly for the rest of the body. */
  startDrain(): void;
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
  return async function* attempts(control) {
    const { turn, body } = control.request;
    const signal = control.options.signal;
    let attempt = control.request.firstAttempt ?? 1;
    for (let retries = 0; ; retries++) {
      const started = frame("request_started", { turn, attempt, body });
      if (options.wireBody !== undefined) started.wire_body = options.wireBody;
      if (options.transport !== undefined) started.transport = options.transport;
      yield [started];
      const exchange = options.openAttempt(attempt, control);
      let error: ProviderError | undefined;
      try {
        const opening = await exchange.open();
        if (opening.type === "failed") error = opening.error;
        else {
          if (opening.headers !== undefined) yield [opening.headers];
          let draining = false;
          for (;;) {
            const step = await exchange.next();
            if (step.type === "failed") {
              error = step.error;
              break;
            }
            if (step.type === "end") {
              error = control.endOfStreamError(step.sawDone);
              break;
            }
            yield step.frames;
            if (!draining && control.terminal !== null && control.terminal !== "error") {
              draining = true;
              exchange.startDrain();
            }
          }
        }
      } finally {
        exchange.close();
      }
      if (error === undefined) return undefined;
      yield [failedFrame(turn, attempt, error)];
      if (!error.retryable || retries >= options.retry.maxRetries || !control.canResend()) return error;
      attempt++;
      const delay = backoffDelayMs(options.retry, retries + 1, options.random, error.retryAfterMs);
      yield [frame("retry", { turn, attempt, delay_ms: delay, reason: error.frameCode })];
      try {
        await options.sleep(delay, signal);
      } catch {
        // Cancelled while waiting: the announced attempt ends before it starts.
        const cancelled = cancelledError();
        yield [failedFrame(turn, attempt, cancelled)];
        return cancelled;
      }
    }
  };
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
