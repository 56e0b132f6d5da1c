/**
 * The Open Responses HTTP provider: POSTs a `CreateResponseBody` to `{baseURL}/responses`, turns the
 * SSE body into frames (one `provider_event` per message, DESIGN.md §3.1), assembles the response as
 * it streams, and retries what is safe to retry (§3.8, §8.6) with backoff.
 *
 * Per attempt it emits `request_started` (the exact body), `response_headers` (status, request id),
 * then the body's frames; a failed attempt adds `request_failed`, and a retry `retry`.
 */
import { EddyError } from "../errors.js";
import {
  frame,
  type ProviderEventFrame,
  type ProviderFrame,
  type RequestFailedFrame,
  type ResponseHeadersFrame,
  type RetryFrame,
} from "../frames/frame.js";
import { createFrameDecoder } from "../frames/frame-decoder.js";
import type { SseFrame } from "../frames/from-sse.js";
import { type Assembly, createAssembly, finishAssembly, step } from "./assembler/index.js";
import { type ProviderCapabilities, withCapabilities } from "./capabilities.js";
import { PROVIDER_DEFAULTS } from "./defaults.js";
import { cancelledError, ProviderError } from "./errors.js";
import { providerErrorFromHttp } from "./http-error.js";
import type {
  Provider,
  ProviderOutcome,
  ProviderRequest,
  ProviderStream,
  ProviderStreamOptions,
} from "./provider.js";
import {
  backoffDelayMs,
  DEFAULT_RETRY_POLICY,
  isNonRetryableCode,
  parseRetryAfter,
  parseShouldRetry,
  type RetryPolicy,
} from "./retry.js";
import { fetchTransport, nodeHttpTransport, type Transport, type TransportResponse } from "./transport.js";
import { Watchdog, WatchdogFired, type WatchdogLimits } from "./watchdog.js";

export interface OpenResponsesProviderOptions {
  /** Base URL, with or without a trailing `/` and `/v1` (`https://api.openai.com/v1`, `http://localhost:1234`). */
  baseURL: string;
  /** Sent as `Authorization: Bearer <key>` (or in `apiKeyHeader`). Never recorded anywhere. */
  apiKey?: string;
  /** Header that carries the key as-is instead of `Authorization: Bearer` (Azure: `api-key`). */
  apiKeyHeader?: string;
  /** Extra headers for every request (never recorded). */
  headers?: Record<string, string>;
  /** Use this `fetch` instead of the default node:http transport. */
  fetch?: typeof fetch;
  /** Use this transport (wins over `fetch`). */
  transport?: Transport;
  /** Name for frames, tapes and messages. @defaultValue "openresponses" */
  name?: string;
  capabilities?: Partial<ProviderCapabilities>;
  retry?: Partial<RetryPolicy>;
  timeouts?: Partial<WatchdogLimits>;
  /** @defaultValue PROVIDER_DEFAULTS.validate (true) */
  validate?: boolean;
  /** @defaultValue PROVIDER_DEFAULTS.maxMessageSize */
  maxMessageSize?: number;
  /** Injected for deterministic tests: jitter source, sleeping, unix-ms clock. */
  random?: () => number;
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
  now?: () => number;
}

/**
 * The `/responses` endpoint for a base URL: `/v1/responses` is appended unless the path already
 * ends in `/v1` (then `/responses`) or in `/responses` (used as is). Query strings are kept.
 */
export function resolveResponsesUrl(baseURL: string): string {
  let url: URL;
  try {
    url = new URL(baseURL);
  } catch {
    throw new EddyError(
      "invalid_config",
      `base URL ${JSON.stringify(baseURL)} is not a valid URL (expected e.g. https://api.openai.com/v1)`,
      {
        fault: "user",
      },
    );
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    throw new EddyError("invalid_config", `base URL ${JSON.stringify(baseURL)} must use http or https`, {
      fault: "user",
    });
  }
  const path = url.pathname.replace(/\/+$/, "");
  if (path.endsWith("/responses")) url.pathname = path;
  else if (path.endsWith("/v1")) url.pathname = `${path}/responses`;
  else url.pathname = `${path}/v1/responses`;
  return url.toString();
}

export function createOpenResponsesProvider(options: OpenResponsesProviderOptions): Provider {
  const url = resolveResponsesUrl(options.baseURL);
  const transport =
    options.transport ?? (options.fetch !== undefined ? fetchTransport(options.fetch) : nodeHttpTransport());
  const config: AttemptConfig = {
    url,
    transport,
    headers: buildHeaders(options),
    secrets: [options.apiKey, ...Object.values(options.headers ?? {})],
    retry: { ...DEFAULT_RETRY_POLICY, ...options.retry },
    limits: {
      connectMs: options.timeouts?.connectMs ?? PROVIDER_DEFAULTS.connectTimeoutMs,
      firstByteMs: options.timeouts?.firstByteMs ?? PROVIDER_DEFAULTS.firstByteTimeoutMs,
      idleMs: options.timeouts?.idleMs ?? PROVIDER_DEFAULTS.idleTimeoutMs,
      drainMs: options.timeouts?.drainMs ?? PROVIDER_DEFAULTS.drainTimeoutMs,
    },
    validate: options.validate ?? PROVIDER_DEFAULTS.validate,
    maxMessageSize: options.maxMessageSize ?? PROVIDER_DEFAULTS.maxMessageSize,
    random: options.random ?? Math.random,
    sleep: options.sleep ?? abortableSleep,
    now: options.now ?? Date.now,
  };
  return {
    name: options.name ?? "openresponses",
    capabilities: withCapabilities(options.capabilities),
    stream: (request, streamOptions = {}) => new HttpProviderStream(config, request, streamOptions),
  };
}

interface AttemptConfig {
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

function buildHeaders(options: OpenResponsesProviderOptions): Record<string, string> {
  const headers: Record<string, string> = {
    "content-type": "application/json",
    accept: "text/event-stream, application/json",
    "user-agent": "eddy",
  };
  for (const [k, v] of Object.entries(options.headers ?? {})) headers[k.toLowerCase()] = v;
  if (options.apiKey !== undefined && options.apiKey !== "") {
    if (options.apiKeyHeader !== undefined) headers[options.apiKeyHeader.toLowerCase()] = options.apiKey;
    else headers.authorization = `Bearer ${options.apiKey}`;
  }
  return headers;
}

type AttemptResult = { ok: true } | { ok: false; error: ProviderError };

class HttpProviderStream implements ProviderStream {
  assembly: Assembly = createAssembly();
  readonly result: Promise<ProviderOutcome>;
  private settle!: (outcome: ProviderOutcome) => void;
  private settled = false;
  private readonly bodyText: string;
  /** The current attempt's body was read to its end (the connection can be reused). */
  private bodyConsumed = false;

  constructor(
    private readonly config: AttemptConfig,
    private readonly request: ProviderRequest,
    private readonly options: ProviderStreamOptions,
  ) {
    this.result = new Promise((resolve) => {
      this.settle = resolve;
    });
    this.bodyText = JSON.stringify(request.body);
  }

  [Symbol.asyncIterator](): AsyncIterator<ProviderFrame> {
    return this.run();
  }

  private finish(outcome: ProviderOutcome): void {
    if (this.settled) return;
    this.settled = true;
    this.settle(outcome);
  }

  private async *run(): AsyncGenerator<ProviderFrame> {
    const { turn } = this.request;
    const signal = this.options.signal;
    let attempt = this.request.firstAttempt ?? 1;
    let retries = 0;
    try {
      for (;;) {
        this.assembly = createAssembly();
        yield frame("request_started", { turn, attempt, body: this.request.body });
        const result: AttemptResult = yield* this.attempt(attempt);
        if (result.ok) {
          this.finish({ ok: true, response: finishAssembly(this.assembly) });
          return;
        }
        const { error } = result;
        yield failedFrame(turn, attempt, error);
        const safe =
          error.retryable &&
          retries < this.config.retry.maxRetries &&
          !this.assembly.outputEmitted &&
          this.assembly.calls.length === 0 &&
          (this.options.canRetry?.() ?? true) &&
          !(signal?.aborted ?? false);
        if (!safe) {
          this.finish({ ok: false, error, response: finishAssembly(this.assembly) });
          return;
        }
        retries++;
        attempt++;
        const delay = backoffDelayMs(this.config.retry, retries, this.config.random, error.retryAfterMs);
        const retry: RetryFrame = frame("retry", { turn, attempt, delay_ms: delay, reason: error.frameCode });
        yield retry;
        try {
          await this.config.sleep(delay, signal);
        } catch {
          // Cancelled while waiting: the announced attempt ends before it starts.
          const error = cancelledError();
          yield failedFrame(turn, attempt, error);
          this.finish({ ok: false, error, response: finishAssembly(this.assembly) });
          return;
        }
      }
    } finally {
      // The consumer stopped iterating early (break / return): the request is abandoned.
      this.finish({ ok: false, error: cancelledError(), response: finishAssembly(this.assembly) });
    }
  }

  /** One HTTP exchange. Yields its frames; returns whether it produced a usable response. */
  private async *attempt(attempt: number): AsyncGenerator<ProviderFrame, AttemptResult> {
    const { config, request, options } = this;
    const { turn } = request;
    const controller = new AbortController();
    const userSignal = options.signal;
    const onAbort = () => controller.abort(userSignal?.reason ?? new Error("aborted"));
    if (userSignal?.aborted) return { ok: false, error: cancelledError() };
    userSignal?.addEventListener("abort", onAbort, { once: true });
    const watchdog = new Watchdog(controller, config.limits, options.isBusy ?? (() => false));
    let response: TransportResponse | undefined;
    this.bodyConsumed = false;
    try {
      watchdog.start("connect");
      try {
        response = await config.transport({
          url: config.url,
          headers: config.headers,
          body: this.bodyText,
          signal: controller.signal,
        });
      } catch (err) {
        return { ok: false, error: this.transportError(err, controller.signal, "connect") };
      }
      const requestId = response.headers.get("x-request-id") ?? undefined;
      const headersFrame: ResponseHeadersFrame = frame("response_headers", {
        turn,
        attempt,
        status: response.status,
      });
      if (requestId !== undefined) headersFrame.request_id = requestId;
      const contentType = response.headers.get("content-type");
      if (contentType !== null) headersFrame.content_type = contentType;
      yield headersFrame;

      watchdog.start("first_byte");
      if (response.status < 200 || response.status >= 300) {
        return { ok: false, error: await this.readHttpError(response, controller.signal, requestId) };
      }
      if (contentType?.includes("application/json")) {
        // A server that ignored `stream: true`: its whole body is one JSON ResponseResource.
        const text = await readText(response.body, PROVIDER_DEFAULTS.maxMessageSize);
        for (const f of framesOfWholeBody(text, turn, config.validate)) yield this.observe(f);
        return this.outcome(false);
      }
      return yield* this.readStream(response, watchdog, controller.signal);
    } catch (err) {
      return { ok: false, error: this.transportError(err, controller.signal, watchdog.currentPhase) };
    } finally {
      watchdog.stop();
      userSignal?.removeEventListener("abort", onAbort);
      if (!this.bodyConsumed) {
        if (!controller.signal.aborted) controller.abort(new Error("attempt abandoned"));
        response?.cancel();
      }
    }
  }

  private async *readStream(
    response: TransportResponse,
    watchdog: Watchdog,
    signal: AbortSignal,
  ): AsyncGenerator<ProviderFrame, AttemptResult> {
    const queue: SseFrame[] = [];
    let sawDone = false;
    const decoder = createFrameDecoder({
      turn: this.request.turn,
      validate: this.config.validate,
      maxMessageSize: this.config.maxMessageSize,
      onFrame: (f) => queue.push(f),
    });
    const iterator = response.body[Symbol.asyncIterator]();
    let firstByte = true;
    for (;;) {
      let next: IteratorResult<Uint8Array>;
      try {
        next = await iterator.next();
      } catch (err) {
        if (signal.reason instanceof WatchdogFired && signal.reason.phase === "drain") break;
        throw err;
      }
      if (next.done) {
        this.bodyConsumed = true;
        break;
      }
      if (firstByte) {
        firstByte = false;
        watchdog.start("idle");
      } else watchdog.touch();
      // After [DONE] the rest of the body is drained unread, so a keep-alive connection can be reused.
      if (sawDone) continue;
      try {
        decoder.feed(next.value);
      } catch (err) {
        return { ok: false, error: decodeError(err) };
      }
      for (let i = 0; i < queue.length && !sawDone; i++) {
        const f = queue[i] as SseFrame;
        if (f.type === "provider_event" && f.status === "done") sawDone = true; // nothing after [DONE] is read
        const wasTerminal = this.assembly.terminal;
        yield this.observe(f);
        if (wasTerminal === null && this.assembly.terminal !== null && this.assembly.terminal !== "error") {
          watchdog.start("drain");
        }
      }
      queue.length = 0;
      if (sawDone) watchdog.start("drain");
    }
    if (!sawDone) {
      try {
        decoder.end();
      } catch (err) {
        return { ok: false, error: decodeError(err) };
      }
      for (const f of queue) yield this.observe(f);
      queue.length = 0;
    }
    return this.outcome(sawDone);
  }

  /** Steps the assembly with a frame's event just before the frame is handed out (DESIGN.md §1). */
  private observe(frame: SseFrame): SseFrame {
    if (frame.type === "provider_event" && frame.status === "event") step(this.assembly, frame.data);
    return frame;
  }

  private outcome(sawDone: boolean): AttemptResult {
    const a = this.assembly;
    switch (a.terminal) {
      case "completed":
      case "incomplete":
        return { ok: true };
      case "failed":
      case "error": {
        const code = a.error?.code ?? null;
        const fields: ConstructorParameters<typeof ProviderError>[0] = {
          kind: "stream_failed",
          code: code === "previous_response_not_found" ? "previous_response_not_found" : "response_failed",
          message: `the provider failed the response${code ? ` (${code})` : ""}: ${a.error?.message ?? "no reason given"}`,
          retryable: !isNonRetryableCode(code) && a.error?.type !== "invalid_request_error",
          providerCode: code,
        };
        if (a.error?.type !== undefined) fields.errorType = a.error.type;
        if (a.error?.param !== undefined) fields.param = a.error.param;
        return { ok: false, error: new ProviderError(fields) };
      }
      default:
        return {
          ok: false,
          error: new ProviderError({
            kind: "truncated",
            code: "stream_truncated",
            message: sawDone
              ? "the stream sent [DONE] without a terminal response event (response.completed/incomplete/failed)"
              : "the stream ended before a terminal response event (response.completed/incomplete/failed)",
            retryable: true,
          }),
        };
    }
  }

  private async readHttpError(
    response: TransportResponse,
    signal: AbortSignal,
    requestId: string | undefined,
  ): Promise<ProviderError> {
    let text = "";
    try {
      text = await readText(response.body, PROVIDER_DEFAULTS.maxErrorBodyBytes);
    } catch (err) {
      if (signal.aborted && !(signal.reason instanceof WatchdogFired)) throw err;
    }
    return providerErrorFromHttp({
      status: response.status,
      bodyText: text,
      url: this.config.url,
      requestId,
      retryAfterMs: parseRetryAfter(response.headers, this.config.now()),
      shouldRetry: parseShouldRetry(response.headers),
      secrets: this.config.secrets,
    });
  }

  private transportError(err: unknown, signal: AbortSignal, phase: string): ProviderError {
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

function failedFrame(turn: number, attempt: number, error: ProviderError): RequestFailedFrame {
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

function framesOfWholeBody(text: string, turn: number, validate: boolean): ProviderEventFrame[] {
  const f: ProviderEventFrame = frame("provider_event", { turn, status: "event" });
  try {
    f.data = JSON.parse(text);
    f.errors = ["expected an SSE stream (text/event-stream) for a streaming request; got a JSON body"];
    if (!validate) delete f.errors;
  } catch {
    f.status = "invalid_json";
    f.raw = text;
    f.errors = ["the JSON body is not valid JSON"];
  }
  return [f];
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

/** setTimeout as a promise that rejects when `signal` aborts. */
export function abortableSleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason);
      return;
    }
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}
