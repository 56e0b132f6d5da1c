/**
 * The Open Responses HTTP provider: POSTs a `CreateResponseBody` to `{baseURL}/responses`, turns the
 * SSE body into frames (one `provider_event` per message, DESIGN.md §3.1), assembles the response as
 * it streams, and retries what is safe to retry (§3.8, §8.6) with backoff.
 *
 * Per attempt it emits `request_started` (the exact body), `response_headers` (status, request id),
 * then the body's frames; a failed attempt adds `request_failed`, and a retry `retry`.
 */
import { EddyError } from "../errors.js";
import { frame, type ProviderFrame, type RequestFailedFrame } from "../frames/frame.js";
import type { SseFrame } from "../frames/from-sse.js";
import { type Assembly, createAssembly, finishAssembly, step } from "./assembler/index.js";
import { type ProviderCapabilities, withCapabilities } from "./capabilities.js";
import { PROVIDER_DEFAULTS } from "./defaults.js";
import { cancelledError, ProviderError } from "./errors.js";
import { type AttemptConfig, type AttemptResult, HttpAttempt } from "./http-attempt.js";
import type {
  Provider,
  ProviderOutcome,
  ProviderRequest,
  ProviderStream,
  ProviderStreamOptions,
} from "./provider.js";
import { backoffDelayMs, DEFAULT_RETRY_POLICY, isNonRetryableCode, type RetryPolicy } from "./retry.js";
import { fetchTransport, nodeHttpTransport, type Transport } from "./transport.js";
import type { WatchdogLimits } from "./watchdog.js";

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

class HttpProviderStream implements ProviderStream {
  assembly: Assembly = createAssembly();
  readonly result: Promise<ProviderOutcome>;
  private settle!: (outcome: ProviderOutcome) => void;
  private settled = false;
  private readonly bodyText: string;

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
        const exchange = new HttpAttempt(this.config, this.bodyText, turn, attempt, this.options);
        let result: AttemptResult;
        try {
          const opened = await exchange.open();
          if ("type" in opened) {
            yield opened;
            for (;;) {
              const next = await exchange.next();
              if ("done" in next) {
                result = next.done;
                break;
              }
              for (const f of next.frames) {
                const wasTerminal = this.assembly.terminal;
                yield this.observe(f);
                if (
                  wasTerminal === null &&
                  this.assembly.terminal !== null &&
                  this.assembly.terminal !== "error"
                ) {
                  exchange.startDrain();
                }
              }
            }
          } else result = opened;
        } finally {
          exchange.close();
        }
        const error = result.ok ? this.streamError(result.sawDone) : result.error;
        if (error === undefined) {
          this.finish({ ok: true, response: finishAssembly(this.assembly) });
          return;
        }
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
        yield frame("retry", { turn, attempt, delay_ms: delay, reason: error.frameCode });
        try {
          await this.config.sleep(delay, signal);
        } catch {
          // Cancelled while waiting: the announced attempt ends before it starts.
          const cancelled = cancelledError();
          yield failedFrame(turn, attempt, cancelled);
          this.finish({ ok: false, error: cancelled, response: finishAssembly(this.assembly) });
          return;
        }
      }
    } finally {
      // The consumer stopped iterating early (break / return): the request is abandoned.
      if (!this.settled)
        this.finish({ ok: false, error: cancelledError(), response: finishAssembly(this.assembly) });
    }
  }

  /** Steps the assembly with a frame's event just before the frame is handed out (DESIGN.md §1). */
  private observe(f: SseFrame): SseFrame {
    if (f.type === "provider_event" && f.status === "event") step(this.assembly, f.data);
    return f;
  }

  /** The error of a stream that was read to its end: none for completed/incomplete responses. */
  private streamError(sawDone: boolean): ProviderError | undefined {
    const a = this.assembly;
    switch (a.terminal) {
      case "completed":
      case "incomplete":
        return undefined;
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
        return new ProviderError(fields);
      }
      default:
        return new ProviderError({
          kind: "truncated",
          code: "stream_truncated",
          message: sawDone
            ? "the stream sent [DONE] without a terminal response event (response.completed/incomplete/failed)"
            : "the stream ended before a terminal response event (response.completed/incomplete/failed)",
          retryable: true,
        });
    }
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
