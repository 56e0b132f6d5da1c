/**
 * One HTTP exchange: send the request, report the headers, then hand over the body's frames one
 * network chunk at a time (an `Attempt`, see attempts.ts). The wire format — how an event-stream
 * body and a whole JSON body become frames — is a parameter, so the Open Responses and the Chat
 * Completions providers share everything else: timeouts, error mapping, connection reuse.
 *
 * The exchange moves through phases (`Phase`): unsent → refused (non-2xx) | whole body (JSON) |
 * not a stream | streaming → draining (after `[DONE]`) → ended. Timeouts (docs/decisions.md #8) are
 * enforced by a `Watchdog` that aborts the request; every failure comes back as a step, never as
 * an exception.
 */
import { EddyError } from "../errors.js";
import type { ProviderEventFrame, ProviderFrame } from "../frames/frame.js";
import { frame } from "../frames/frame.js";
import type { FrameDecoder, FrameDecoderOptions } from "../frames/frame-decoder.js";
import { onAbort } from "../util/abort.js";
import { redactSecrets } from "../util/redact.js";
import { readText } from "../util/stream.js";
import type { AttemptOpening, AttemptStep } from "./attempts.js";
import { cancelledError, ProviderError, responseTooLarge } from "./errors.js";
import { providerErrorFromHttp } from "./http-error.js";
import type { ProviderStreamOptions } from "./provider.js";
import { parseRetryAfter, parseShouldRetry } from "./retry.js";
import type { Transport, TransportResponse } from "./transport.js";
import { Watchdog, WatchdogFired, type WatchdogLimits } from "./watchdog.js";

/** How one API's response bodies become frames. */
export interface WireFormat {
  /** The endpoint path eddy appends to a base URL (for hints), e.g. `/v1/responses`. */
  readonly endpoint: string;
  /** A decoder of an event-stream body. */
  createDecoder(options: FrameDecoderOptions): FrameDecoder;
  /**
   * The frame of a whole JSON body (a server that ignored `stream: true`), or a sentence saying
   * why the JSON is not a response of this API.
   */
  wholeBody(json: unknown, text: string, turn: number, validate: boolean): ProviderEventFrame | string;
}

/** What every attempt of a provider shares. */
export interface HttpAttemptConfig {
  url: string;
  transport: Transport;
  headers: Record<string, string>;
  /** Values never to show in messages (keys, header values). */
  secrets: readonly (string | undefined)[];
  limits: WatchdogLimits;
  validate: boolean;
  /** Largest SSE message, and largest whole JSON body, accepted. */
  maxMessageSize: number;
  /** Largest streamed body read, in bytes (`PROVIDER_DEFAULTS.maxResponseBytes`). */
  maxResponseBytes: number;
  maxErrorBodyBytes: number;
  wire: WireFormat;
  now: () => number;
}

export interface HttpAttemptOptions {
  config: HttpAttemptConfig;
  /** The request body, serialized once per request. */
  body: string;
  turn: number;
  attempt: number;
  stream: ProviderStreamOptions;
}

type Phase =
  | { name: "unsent" }
  | { name: "refused"; response: TransportResponse }
  | { name: "whole_body"; response: TransportResponse }
  | { name: "not_a_stream"; response: TransportResponse; contentType: string }
  | { name: "streaming"; response: TransportResponse; declared: boolean; body: Body | undefined }
  | { name: "draining"; body: Body }
  | { name: "ended"; consumed: boolean };

interface Body {
  chunks: AsyncIterator<Uint8Array>;
  decoder: FrameDecoder;
  /** A byte arrived (the first-byte timeout is over). */
  started: boolean;
  /** The decoder produced a frame. */
  framed: boolean;
  /** Bytes read so far. */
  bytes: number;
}

/** Opens an HTTP attempt (see the module comment). */
export function createHttpAttempt(options: HttpAttemptOptions) {
  return new HttpAttempt(options);
}

class HttpAttempt {
  private readonly config: HttpAttemptConfig;
  /**
   * Why the attempt was aborted (a `WatchdogFired`, the user's reason, "attempt abandoned"); set once,
   * by `abort`, the only way an attempt is aborted.
   */
  private aborted: { reason: unknown } | undefined;
  /** The transport's signal, made only when the transport reads it (see `TransportRequest.registerAbort`). */
  private controller: AbortController | undefined;
  /** The function the transport registered that aborts its request. */
  private abortRequest: ((reason: unknown) => void) | undefined;
  private readonly watchdog: Watchdog;
  private readonly onUserAbort: () => void;
  /** Ends the subscription to the user's signal (`onAbort`). */
  private unsubscribe: () => void = () => {};
  private phase: Phase = { name: "unsent" };
  /** The transport's answer, released in `close()` unless its body was read to the end. */
  private response: TransportResponse | undefined;
  /** Frames the decoder produced for the current chunk. */
  private readonly queue: ProviderFrame[] = [];
  /** The response reached its terminal event (`startDrain`): a body that breaks after it lost nothing. */
  private answered = false;

  constructor(private readonly options: HttpAttemptOptions) {
    this.config = options.config;
    const { stream } = options;
    this.watchdog = new Watchdog(
      { abort: (reason) => this.abort(reason) },
      this.config.limits,
      stream.isBusy ?? (() => false),
    );
    this.onUserAbort = () => this.abort(stream.signal?.reason ?? new Error("aborted"));
  }

  /** Aborts the request (once): through the function the transport registered, and its signal if made. */
  private abort(reason: unknown): void {
    if (this.aborted !== undefined) return;
    this.aborted = { reason };
    this.controller?.abort(reason);
    this.abortRequest?.(reason);
  }

  /** The request's signal for a transport that reads it; aborted already if the attempt was. */
  private signal(): AbortSignal {
    if (this.controller === undefined) {
      this.controller = new AbortController();
      if (this.aborted !== undefined) this.controller.abort(this.aborted.reason);
    }
    return this.controller.signal;
  }

  async open(): Promise<AttemptOpening> {
    const userSignal = this.options.stream.signal;
    if (userSignal?.aborted) return { type: "failed", error: cancelledError() };
    if (userSignal !== undefined) this.unsubscribe = onAbort(userSignal, this.onUserAbort);
    this.watchdog.start("connect");
    let response: TransportResponse;
    try {
      const attempt = this;
      response = await this.config.transport({
        url: this.config.url,
        headers: this.config.headers,
        body: this.options.body,
        get signal() {
          return attempt.signal();
        },
        registerAbort: (abort) => {
          this.abortRequest = abort;
        },
      });
    } catch (err) {
      return { type: "failed", error: this.transportError(err, "connect") };
    }
    this.response = response;
    const headers = frame("response_headers", {
      turn: this.options.turn,
      attempt: this.options.attempt,
      status: response.status,
    });
    const requestId = response.headers.get("x-request-id");
    if (requestId !== null) headers.request_id = requestId;
    const contentType = response.headers.get("content-type");
    if (contentType !== null) headers.content_type = contentType;
    this.phase = phaseOf(response, contentType);
    this.watchdog.start("first_byte");
    return { type: "opened", headers };
  }

  next(): Promise<AttemptStep> {
    const phase = this.phase;
    // The hot path (one call per network chunk) goes straight to the body; readChunk never throws.
    return phase.name === "streaming" ? this.readChunk(phase) : this.step(phase);
  }

  private async step(phase: Exclude<Phase, { name: "streaming" }>): Promise<AttemptStep> {
    try {
      switch (phase.name) {
        case "unsent":
          return { type: "failed", error: cancelledError() };
        case "refused":
          return { type: "failed", error: await this.httpError(phase.response) };
        case "whole_body":
          return await this.wholeBody(phase.response);
        case "not_a_stream":
          return { type: "failed", error: await this.notAStream(phase.response, phase.contentType) };
        case "draining":
          return await this.drain(phase.body);
        case "ended":
          return { type: "end", sawDone: false };
      }
    } catch (err) {
      return this.failedStep(err);
    }
  }

  private failedStep(err: unknown): AttemptStep {
    return { type: "failed", error: this.transportError(err, this.watchdog.currentPhase) };
  }

  startDrain(answered = true): void {
    // A finished choice still waiting for its usage chunk is not answered: a break then fails it.
    if (answered) this.answered = true;
    this.watchdog.start("drain");
  }

  close(): void {
    this.watchdog.stop();
    this.unsubscribe();
    if (this.phase.name === "ended" && this.phase.consumed) return;
    this.abort(new Error("attempt abandoned"));
    this.response?.cancel();
  }

  /** A server that ignored `stream: true`: its whole body is one JSON document. */
  private async wholeBody(response: TransportResponse): Promise<AttemptStep> {
    const { text, complete } = await readText(response.body, this.config.maxMessageSize);
    this.phase = { name: "ended", consumed: complete };
    if (!complete) {
      const error = new ProviderError({
        kind: "decode",
        code: "sse_message_too_large",
        message: `the JSON body is larger than ${this.config.maxMessageSize} characters (maxMessageSize)`,
        retryable: false,
      });
      return { type: "failed", error };
    }
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      return {
        type: "failed",
        error: this.wrongBody(`got a JSON content type with a body that is not JSON (${snippet(text)})`),
      };
    }
    const f = this.config.wire.wholeBody(json, text, this.options.turn, this.config.validate);
    if (typeof f === "string") return { type: "failed", error: this.wrongBody(f) };
    return { type: "frames", frames: [f] };
  }

  private async notAStream(response: TransportResponse, contentType: string): Promise<ProviderError> {
    const { text } = await readText(response.body, this.config.maxErrorBodyBytes);
    this.phase = { name: "ended", consumed: false };
    return this.wrongBody(`got ${contentType.split(";")[0]}, not an event stream (${snippet(text)})`);
  }

  /** One network chunk's frames. Never throws: a failure is a step. */
  private async readChunk(phase: Extract<Phase, { name: "streaming" }>): Promise<AttemptStep> {
    try {
      phase.body ??= {
        chunks: phase.response.body[Symbol.asyncIterator](),
        decoder: this.config.wire.createDecoder({
          turn: this.options.turn,
          validate: this.config.validate,
          maxMessageSize: this.config.maxMessageSize,
          onFrame: (f) => this.queue.push(f),
        }),
        started: false,
        framed: false,
        bytes: 0,
      };
      const body = phase.body;
      const queue = this.queue;
      queue.length = 0;
      for (;;) {
        // The read is inlined (not `pull`): one async frame per network chunk, not three.
        let next: IteratorResult<Uint8Array>;
        try {
          next = await body.chunks.next();
        } catch (err) {
          // After the terminal event, a connection that breaks (a Content-Length that lied, a reset
          // before [DONE]) took nothing the response needed.
          if (this.drainCut() || this.answered) return this.ended(false);
          throw err;
        }
        if (next.done === true) return this.endOfBody(body, phase.declared);
        this.received(body);
        body.bytes += next.value.length;
        if (body.bytes > this.config.maxResponseBytes)
          return { type: "failed", error: responseTooLarge(this.config.maxResponseBytes) };
        try {
          body.decoder.feed(next.value);
        } catch (err) {
          return { type: "failed", error: decodeError(err) };
        }
        const done = queue.findIndex((f) => f.type === "provider_event" && f.status === "done");
        if (done !== -1) {
          queue.length = done + 1; // nothing after [DONE] is read
          this.phase = { name: "draining", body };
          this.watchdog.start("drain");
        }
        if (queue.length > 0) {
          body.framed = true;
          return { type: "frames", frames: queue.splice(0) };
        }
      }
    } catch (err) {
      return this.failedStep(err);
    }
  }

  /** After `[DONE]`: the rest of the body is read unparsed, so a keep-alive connection can be reused. */
  private async drain(body: Body): Promise<AttemptStep> {
    for (;;) {
      const next = await this.pull(body);
      if (next === "drained" || next.done === true) return this.ended(true, next !== "drained");
    }
  }

  /** The next chunk; "drained" when the drain timeout cut the body short. */
  private async pull(body: Body): Promise<IteratorResult<Uint8Array> | "drained"> {
    let next: IteratorResult<Uint8Array>;
    try {
      next = await body.chunks.next();
    } catch (err) {
      if (this.drainCut() || this.answered) return "drained";
      throw err;
    }
    if (next.done !== true) this.received(body);
    return next;
  }

  /** The body failed because the drain timeout cut it short (not a broken stream). */
  private drainCut(): boolean {
    const reason = this.aborted?.reason;
    return reason instanceof WatchdogFired && reason.phase === "drain";
  }

  /** Bytes arrived: the first ends the first-byte timeout, the rest keep the idle one at bay. */
  private received(body: Body): void {
    if (!body.started) {
      body.started = true;
      if (this.watchdog.currentPhase === "first_byte") this.watchdog.start("idle");
    } else this.watchdog.touch();
  }

  /**
   * End of body without `[DONE]`: flush the decoder (a last message without its blank line). A
   * body that declared no content type and held no SSE message at all was not an event stream.
   */
  private endOfBody(body: Body, declared: boolean): AttemptStep {
    this.phase = { name: "ended", consumed: true };
    try {
      body.decoder.end();
    } catch (err) {
      return { type: "failed", error: decodeError(err) };
    }
    if (this.queue.length > 0) {
      body.framed = true;
      return { type: "frames", frames: this.queue.splice(0) };
    }
    if (!declared && !body.framed) {
      const what = body.started
        ? "a body without content type or SSE events"
        : "an empty body without content type";
      return { type: "failed", error: this.wrongBody(`got ${what}, not an event stream`) };
    }
    return { type: "end", sawDone: false };
  }

  private ended(sawDone: boolean, consumed = false): AttemptStep {
    this.phase = { name: "ended", consumed };
    return { type: "end", sawDone };
  }

  private wrongBody(what: string): ProviderError {
    return new ProviderError({
      kind: "decode",
      code: "not_event_stream",
      message: redactSecrets(
        `${what} from POST ${this.config.url} — check the base URL (--base-url): eddy appends ${this.config.wire.endpoint} unless it already ends in /v1`,
        this.config.secrets,
      ),
      retryable: false,
    });
  }

  private async httpError(response: TransportResponse): Promise<ProviderError> {
    let text = "";
    try {
      text = (await readText(response.body, this.config.maxErrorBodyBytes)).text;
    } catch (err) {
      if (this.aborted !== undefined && !(this.aborted.reason instanceof WatchdogFired)) throw err;
    }
    this.phase = { name: "ended", consumed: true };
    return providerErrorFromHttp({
      status: response.status,
      bodyText: text,
      url: this.config.url,
      endpoint: this.config.wire.endpoint,
      requestId: response.headers.get("x-request-id") ?? undefined,
      retryAfterMs: parseRetryAfter(response.headers, this.config.now()),
      shouldRetry: parseShouldRetry(response.headers),
      secrets: this.config.secrets,
      location: response.headers.get("location") ?? undefined,
    });
  }

  private transportError(err: unknown, phase: string): ProviderError {
    const reason = this.aborted?.reason;
    if (reason instanceof WatchdogFired) return timeoutError(reason, this.config.url, err);
    if (this.options.stream.signal?.aborted) return cancelledError();
    const detail = describeNetworkError(err);
    return new ProviderError({
      kind: "connection",
      code: "provider_connection",
      message: redactSecrets(
        phase === "connect"
          ? `cannot reach ${this.config.url}: ${detail}`
          : `the connection to ${this.config.url} broke while streaming: ${detail}`,
        this.config.secrets,
      ),
      retryable: true,
      cause: err,
    });
  }
}

/** Which phase a response's status and content type lead to. */
function phaseOf(response: TransportResponse, contentType: string | null): Phase {
  if (response.status < 200 || response.status >= 300) return { name: "refused", response };
  const type = contentType?.toLowerCase() ?? "";
  if (type.includes("application/json")) return { name: "whole_body", response };
  // No content type at all: read it as a stream (some servers omit it); anything else is not one.
  if (type === "" || type.includes("text/event-stream"))
    return { name: "streaming", response, declared: type !== "", body: undefined };
  return { name: "not_a_stream", response, contentType: type };
}

/** The error of a timeout the watchdog enforced (`url` names where the request went). */
export function timeoutError(fired: WatchdogFired, url: string, cause: unknown): ProviderError {
  const what =
    fired.phase === "connect"
      ? { code: "connect_timeout" as const, text: `no response headers within ${fired.limitMs} ms` }
      : fired.phase === "first_byte"
        ? { code: "first_byte_timeout" as const, text: `no response body within ${fired.limitMs} ms` }
        : { code: "idle_timeout" as const, text: `no bytes for ${fired.limitMs} ms while streaming` };
  return new ProviderError({
    kind: "timeout",
    code: what.code,
    message: `timeout: ${what.text} (${url})`,
    retryable: true,
    cause,
  });
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

function snippet(text: string): string {
  const oneLine = text.replace(/\s+/g, " ").trim();
  if (oneLine === "") return "empty body";
  return oneLine.length > 120 ? `${oneLine.slice(0, 120)}…` : oneLine;
}
