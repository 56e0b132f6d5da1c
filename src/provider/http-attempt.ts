/**
 * One HTTP exchange of the Open Responses provider: send the request, report the headers, then
 * hand over the body's frames one network chunk at a time. It is a pull object rather than an
 * async generator so the provider stream yields each frame through a single generator level (a
 * frame passing through nested `yield*`s costs a promise per level; see bench/RESULTS.md, loop).
 *
 * Timeouts (DESIGN.md §8.6) are enforced by a `Watchdog` that aborts the request; every failure
 * comes back as an `AttemptResult`, never as an exception.
 */
import { EddyError } from "../errors.js";
import { frame, type ProviderEventFrame, type ResponseHeadersFrame } from "../frames/frame.js";
import { createFrameDecoder, type FrameDecoder } from "../frames/frame-decoder.js";
import type { SseFrame } from "../frames/from-sse.js";
import { PROVIDER_DEFAULTS } from "./defaults.js";
import { cancelledError, ProviderError } from "./errors.js";
import { providerErrorFromHttp } from "./http-error.js";
import type { ProviderStreamOptions } from "./provider.js";
import { parseRetryAfter, parseShouldRetry, type RetryPolicy } from "./retry.js";
import type { Transport, TransportResponse } from "./transport.js";
import { Watchdog, WatchdogFired, type WatchdogLimits } from "./watchdog.js";

/** What every attempt of a provider shares. */
export interface AttemptConfig {
  url: string;
  transport: Transport;
  headers: Record<string, string>;
  secrets: (string | undefined)[];
  retry: RetryPolicy;
  limits: WatchdogLimits;
  validate: boolean;
  maxMessageSize: number;
  random: () => number;
  sleep: (ms: number, signal?: AbortSignal) => Promise<void>;
  now: () => number;
}

/** How an attempt ended. `ok` means the stream was read; the assembly says whether it succeeded. */
export type AttemptResult = { ok: true; sawDone: boolean } | { ok: false; error: ProviderError };

/** A step of the body: the next frames, or the end. */
export type AttemptStep = { frames: SseFrame[] } | { done: AttemptResult };

export class HttpAttempt {
  private readonly controller = new AbortController();
  private readonly watchdog: Watchdog;
  private readonly onUserAbort: () => void;
  private response: TransportResponse | undefined;
  private iterator: AsyncIterator<Uint8Array> | undefined;
  private decoder: FrameDecoder | undefined;
  private readonly queue: SseFrame[] = [];
  private firstByte = true;
  /** A `[DONE]` message was seen. */
  private sawDone = false;
  /** The decoder was flushed at the end of the body. */
  private flushed = false;
  /** The body was read to its end (the connection can be reused). */
  private bodyConsumed = false;
  private jsonBody = false;

  constructor(
    private readonly config: AttemptConfig,
    private readonly bodyText: string,
    private readonly turn: number,
    private readonly attempt: number,
    private readonly options: ProviderStreamOptions,
  ) {
    this.watchdog = new Watchdog(this.controller, config.limits, options.isBusy ?? (() => false));
    this.onUserAbort = () => this.controller.abort(options.signal?.reason ?? new Error("aborted"));
  }

  /** Sends the request. Returns the `response_headers` frame, or how the attempt failed. */
  async open(): Promise<ResponseHeadersFrame | AttemptResult> {
    const userSignal = this.options.signal;
    if (userSignal?.aborted) return { ok: false, error: cancelledError() };
    userSignal?.addEventListener("abort", this.onUserAbort, { once: true });
    this.watchdog.start("connect");
    let response: TransportResponse;
    try {
      response = await this.config.transport({
        url: this.config.url,
        headers: this.config.headers,
        body: this.bodyText,
        signal: this.controller.signal,
      });
    } catch (err) {
      return { ok: false, error: this.transportError(err, "connect") };
    }
    this.response = response;
    const requestId = response.headers.get("x-request-id") ?? undefined;
    const headers = frame("response_headers", {
      turn: this.turn,
      attempt: this.attempt,
      status: response.status,
    });
    if (requestId !== undefined) headers.request_id = requestId;
    const contentType = response.headers.get("content-type");
    if (contentType !== null) headers.content_type = contentType;
    this.watchdog.start("first_byte");
    this.jsonBody = contentType?.includes("application/json") === true;
    return headers;
  }

  /** The next frames of the body (one network chunk's worth), or how the attempt ended. */
  async next(): Promise<AttemptStep> {
    const response = this.response;
    if (response === undefined) return { done: { ok: false, error: cancelledError() } };
    try {
      if (response.status < 200 || response.status >= 300)
        return { done: { ok: false, error: await this.httpError(response) } };
      if (this.jsonBody) {
        // A server that ignored `stream: true`: its whole body is one JSON ResponseResource.
        if (this.flushed) return { done: { ok: true, sawDone: false } };
        this.flushed = true;
        const text = await readText(response.body, PROVIDER_DEFAULTS.maxMessageSize);
        this.bodyConsumed = true;
        return { frames: [frameOfWholeBody(text, this.turn, this.config.validate)] };
      }
      return await this.readChunk(response);
    } catch (err) {
      return { done: { ok: false, error: this.transportError(err, this.watchdog.currentPhase) } };
    }
  }

  /** The response reached its terminal event: wait only briefly for `[DONE]` / the end of the body. */
  startDrain(): void {
    this.watchdog.start("drain");
  }

  /** Releases the timer, the abort listener and, unless the body was read to its end, the connection. */
  close(): void {
    this.watchdog.stop();
    this.options.signal?.removeEventListener("abort", this.onUserAbort);
    if (!this.bodyConsumed) {
      if (!this.controller.signal.aborted) this.controller.abort(new Error("attempt abandoned"));
      this.response?.cancel();
    }
  }

  private async readChunk(response: TransportResponse): Promise<AttemptStep> {
    this.iterator ??= response.body[Symbol.asyncIterator]();
    this.decoder ??= createFrameDecoder({
      turn: this.turn,
      validate: this.config.validate,
      maxMessageSize: this.config.maxMessageSize,
      onFrame: (f) => this.queue.push(f),
    });
    const queue = this.queue;
    queue.length = 0;
    for (;;) {
      let next: IteratorResult<Uint8Array>;
      try {
        next = await this.iterator.next();
      } catch (err) {
        const reason: unknown = this.controller.signal.reason;
        if (reason instanceof WatchdogFired && reason.phase === "drain") return this.end();
        throw err;
      }
      if (next.done) {
        this.bodyConsumed = true;
        return this.end();
      }
      if (this.firstByte) {
        this.firstByte = false;
        this.watchdog.start("idle");
      } else this.watchdog.touch();
      // After [DONE] the rest of the body is drained unread, so a keep-alive connection can be reused.
      if (this.sawDone) continue;
      try {
        this.decoder.feed(next.value);
      } catch (err) {
        return { done: { ok: false, error: decodeError(err) } };
      }
      const done = queue.findIndex((f) => f.type === "provider_event" && f.status === "done");
      if (done !== -1) {
        queue.length = done + 1; // nothing after [DONE] is read
        this.sawDone = true;
        this.watchdog.start("drain");
      }
      if (queue.length > 0) return { frames: queue.splice(0) };
    }
  }

  /** End of body: flush the decoder once (a last message without its blank line), then report the end. */
  private end(): AttemptStep {
    if (!this.sawDone && !this.flushed && this.decoder !== undefined) {
      this.flushed = true;
      try {
        this.decoder.end();
      } catch (err) {
        return { done: { ok: false, error: decodeError(err) } };
      }
      if (this.queue.length > 0) return { frames: this.queue.splice(0) };
    }
    return { done: { ok: true, sawDone: this.sawDone } };
  }

  private async httpError(response: TransportResponse): Promise<ProviderError> {
    let text = "";
    try {
      text = await readText(response.body, PROVIDER_DEFAULTS.maxErrorBodyBytes);
    } catch (err) {
      const signal = this.controller.signal;
      if (signal.aborted && !(signal.reason instanceof WatchdogFired)) throw err;
    }
    return providerErrorFromHttp({
      status: response.status,
      bodyText: text,
      url: this.config.url,
      requestId: response.headers.get("x-request-id") ?? undefined,
      retryAfterMs: parseRetryAfter(response.headers, this.config.now()),
      shouldRetry: parseShouldRetry(response.headers),
      secrets: this.config.secrets,
    });
  }

  private transportError(err: unknown, phase: string): ProviderError {
    const signal = this.controller.signal;
    const reason: unknown = signal.aborted ? signal.reason : undefined;
    if (reason instanceof WatchdogFired) {
      const what =
        reason.phase === "connect"
          ? { code: "connect_timeout" as const, text: `no response headers within ${reason.limitMs} ms` }
          : reason.phase === "first_byte"
            ? { code: "first_byte_timeout" as const, text: `no response body within ${reason.limitMs} ms` }
            : { code: "idle_timeout" as const, text: `no bytes for ${reason.limitMs} ms while streaming` };
      return new ProviderError({
        kind: "timeout",
        code: what.code,
        message: `timeout: ${what.text} (${this.config.url})`,
        retryable: true,
        cause: err,
      });
    }
    if (this.options.signal?.aborted) return cancelledError();
    const detail = describeNetworkError(err);
    return new ProviderError({
      kind: "connection",
      code: "provider_connection",
      message:
        phase === "connect"
          ? `cannot reach ${this.config.url}: ${detail}`
          : `the connection to ${this.config.url} broke while streaming: ${detail}`,
      retryable: true,
      cause: err,
    });
  }
}

function decodeError(err: unknown): ProviderError {
  return new ProviderError({
    kind: "decode",
    code: EddyError.isInstance(err) ? err.code : "sse_stream_error",
    message: err instanceof Error ? err.message : String(err),
    retryable: false,
    cause: err,
  });
}

function describeNetworkError(err: unknown): string {
  if (!(err instanceof Error)) return String(err);
  const cause = (err as { cause?: unknown }).cause;
  const code = (err as { code?: unknown }).code ?? (cause as { code?: unknown } | undefined)?.code;
  const message = cause instanceof Error ? cause.message : err.message;
  return typeof code === "string" && !message.includes(code) ? `${code} ${message}` : message;
}

function frameOfWholeBody(text: string, turn: number, validate: boolean): ProviderEventFrame {
  const f: ProviderEventFrame = frame("provider_event", { turn, status: "event" });
  try {
    f.data = JSON.parse(text);
    if (validate)
      f.errors = ["expected an SSE stream (text/event-stream) for a streaming request; got a JSON body"];
  } catch {
    f.status = "invalid_json";
    f.raw = text;
    f.errors = ["the JSON body is not valid JSON"];
  }
  return f;
}

async function readText(body: AsyncIterable<Uint8Array>, maxBytes: number): Promise<string> {
  const decoder = new TextDecoder();
  let text = "";
  let bytes = 0;
  for await (const chunk of body) {
    bytes += chunk.byteLength;
    text += decoder.decode(chunk, { stream: true });
    if (bytes >= maxBytes) break;
  }
  return text + decoder.decode();
}
