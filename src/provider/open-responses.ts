/**
 * The Open Responses HTTP provider: POSTs a `CreateResponseBody` to `{baseURL}/responses` and turns
 * the SSE body into frames (one `provider_event` per message, docs/decisions.md #1). Attempts,
 * retries and assembly are shared with every other provider (attempts.ts, assembling-stream.ts);
 * this module only knows the endpoint, the headers and the Open Responses wire format.
 *
 * Per attempt it emits `request_started` (the exact body), `response_headers` (status, request id),
 * then the body's frames; a failed attempt adds `request_failed`, and a retry `retry`.
 */
import { EddyError } from "../errors.js";
import { frame, type ProviderEventFrame } from "../frames/frame.js";
import { createFrameDecoder } from "../frames/frame-decoder.js";
import { abortableSleep } from "../util/abort.js";
import { isJsonObject } from "../util/json.js";
import { createAssemblingStream } from "./assembling-stream.js";
import { retryingSource } from "./attempts.js";
import { type ProviderCapabilities, withCapabilities } from "./capabilities.js";
import { compactOverHttp, compactUrl } from "./compact.js";
import { PROVIDER_DEFAULTS } from "./defaults.js";
import { createHttpAttempt, type HttpAttemptConfig, type WireFormat } from "./http-attempt.js";
import type { Provider } from "./provider.js";
import { DEFAULT_RETRY_POLICY, type RetryPolicy } from "./retry.js";
import { fetchTransport, nodeHttpTransport, type Transport } from "./transport.js";
import type { WatchdogLimits } from "./watchdog.js";
import { createWebSocketAttempt, responseCreateMessage } from "./websocket/attempt.js";
import { type WebSocketOptions, webSocketAttemptConfig } from "./websocket/mode.js";
import type { StreamTransport } from "./wire-api.js";

/** Options of `createOpenResponsesProvider`. */
export interface OpenResponsesProviderOptions {
  /** Base URL, with or without a trailing `/` and `/v1` (`https://api.openai.com/v1`, `http://localhost:1234`). */
  baseURL: string;
  /**
   * Sent as `Authorization: Bearer <key>` (or in `apiKeyHeader`). Never recorded anywhere.
   * @defaultValue none (no Authorization header)
   */
  apiKey?: string;
  /**
   * Header that carries the key as-is instead of `Authorization: Bearer` (Azure: `api-key`).
   * @defaultValue "authorization" (as `Bearer <key>`)
   */
  apiKeyHeader?: string;
  /**
   * Extra headers for every request (never recorded).
   * @defaultValue none
   */
  headers?: Record<string, string>;
  /**
   * Use this `fetch` instead of the default node:http transport.
   * @defaultValue none (node:http)
   */
  fetch?: typeof fetch;
  /** Use this transport (wins over `fetch`). @defaultValue nodeHttpTransport() */
  transport?: Transport;
  /**
   * How responses stream back. `"sse"`: one `POST /responses` per request, its events as SSE.
   * `"websocket"`: WebSocket mode — a connection to `/responses` kept open across requests (a
   * run's turns share one), each request one `response.create` message, saving a connection and a
   * request's headers per turn (src/provider/websocket/). `close()` closes the connections.
   * Compaction goes over HTTP either way. The CLI's `--transport sse|websocket`.
   * @defaultValue "sse"
   */
  streamTransport?: StreamTransport;
  /** Settings of WebSocket mode. @defaultValue WEBSOCKET_DEFAULTS */
  webSocket?: WebSocketOptions;
  /** Name for frames, tapes and messages. @defaultValue "openresponses" */
  name?: string;
  /** What the server supports. @defaultValue GENERIC_CAPABILITIES */
  capabilities?: Partial<ProviderCapabilities>;
  /** @defaultValue DEFAULT_RETRY_POLICY (2 retries, 0.5 s doubling to 8 s) */
  retry?: Partial<RetryPolicy>;
  /** @defaultValue PROVIDER_DEFAULTS' connect, first-byte, idle and drain timeouts */
  timeouts?: Partial<WatchdogLimits>;
  /** Validate every event against the spec (errors recorded in frames, never fatal). @defaultValue true */
  validate?: boolean;
  /** Largest SSE message or JSON body accepted, in characters. @defaultValue PROVIDER_DEFAULTS.maxMessageSize (16 MiB) */
  maxMessageSize?: number;
  /** Largest streamed response body read, in bytes. @defaultValue PROVIDER_DEFAULTS.maxResponseBytes (64 MiB) */
  maxResponseBytes?: number;
  /** Jitter source in [0, 1), injected for deterministic tests. @defaultValue Math.random */
  random?: () => number;
  /** Waits between retries, injected for tests. @defaultValue a setTimeout that aborts with the signal */
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
  /** Unix-ms clock (for `Retry-After` dates). @defaultValue Date.now */
  now?: () => number;
}

/**
 * The `/responses` endpoint for a base URL: `/v1/responses` is appended unless the path already
 * ends in `/v1` (then `/responses`) or in `/responses` (used as is). Query strings are kept.
 */
export function resolveResponsesUrl(baseURL: string): string {
  return resolveEndpointUrl(baseURL, "responses");
}

/** `{base}/v1/{endpoint}` by the rule of `resolveResponsesUrl`. */
export function resolveEndpointUrl(baseURL: string, endpoint: string): string {
  let url: URL;
  try {
    url = new URL(baseURL);
  } catch {
    throw new EddyError(
      "invalid_config",
      `base URL ${JSON.stringify(baseURL)} is not a valid URL (expected e.g. https://api.openai.com/v1)`,
      { fault: "user" },
    );
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    throw new EddyError("invalid_config", `base URL ${JSON.stringify(baseURL)} must use http or https`, {
      fault: "user",
    });
  }
  const path = url.pathname.replace(/\/+$/, "");
  if (path.endsWith(`/${endpoint}`)) url.pathname = path;
  else if (path.endsWith("/v1")) url.pathname = `${path}/${endpoint}`;
  else url.pathname = `${path}/v1/${endpoint}`;
  return url.toString();
}

/** How Open Responses bodies become frames. */
export const RESPONSES_WIRE: WireFormat = {
  endpoint: "/v1/responses",
  createDecoder: createFrameDecoder,
  wholeBody(json, _text, turn, validate) {
    // A ResponseResource (the server ignored `stream: true`) or a proxy's `{"error": {…}}`.
    if (!isJsonObject(json) || (json.object !== "response" && !isJsonObject(json.error)))
      return "got a JSON body that is not an Open Responses response";
    const f: ProviderEventFrame = frame("provider_event", { turn, status: "event", data: json });
    if (validate)
      f.errors = ["expected an SSE stream (text/event-stream) for a streaming request; got a JSON body"];
    return f;
  },
};

/**
 * A provider for any Open Responses server.
 *
 * @example
 * ```ts
 * const provider = createOpenResponsesProvider({ baseURL: "https://api.openai.com/v1", apiKey: key });
 * const run = runAgent({ provider, model: "gpt-5-mini", input: "Hello" });
 * ```
 */
export function createOpenResponsesProvider(options: OpenResponsesProviderOptions): Provider {
  const config = httpAttemptConfig(options, "responses", RESPONSES_WIRE);
  const compactConfig = { ...config, url: compactUrl(config.url) };
  const retry = { ...DEFAULT_RETRY_POLICY, ...options.retry };
  const random = options.random ?? Math.random;
  const sleep = options.sleep ?? abortableSleep;
  const ws =
    options.streamTransport === "websocket" ? webSocketAttemptConfig(config, options.webSocket) : undefined;

  return {
    name: options.name ?? "openresponses",
    capabilities: withCapabilities(options.capabilities),
    secrets: config.secrets as string[],
    close: async () => ws?.pool.close(),
    stream(request, streamOptions = {}) {
      const { turn } = request;
      if (ws !== undefined) {
        const message = responseCreateMessage(request.body);
        const source = retryingSource({
          retry,
          random,
          sleep,
          transport: "websocket",
          openAttempt: () =>
            createWebSocketAttempt({ config: ws, body: request.body, message, turn, stream: streamOptions }),
        });
        return createAssemblingStream({ request, options: streamOptions, source, notes: config.validate });
      }
      const body = JSON.stringify(request.body);
      const source = retryingSource({
        retry,
        random,
        sleep,
        openAttempt: (attempt) => createHttpAttempt({ config, body, turn, attempt, stream: streamOptions }),
      });
      return createAssemblingStream({ request, options: streamOptions, source, notes: config.validate });
    },
    compact: (request, compactOptions) => compactOverHttp(compactConfig, request, compactOptions),
  };
}

/**
 * What every HTTP attempt of a provider shares, from the provider's options. Credentials in the
 * base URL (`https://user:password@host/v1`) are taken out of it — so no message or frame ever
 * shows them — and sent as `Authorization: Basic` unless an API key is given.
 */
export function httpAttemptConfig(
  options: Omit<OpenResponsesProviderOptions, "name" | "capabilities" | "retry" | "random" | "sleep">,
  endpoint: string,
  wire: WireFormat,
): HttpAttemptConfig {
  const { url, username, password } = withoutCredentials(resolveEndpointUrl(options.baseURL, endpoint));
  const transport =
    options.transport ?? (options.fetch !== undefined ? fetchTransport(options.fetch) : nodeHttpTransport());
  const headers = buildHeaders(options);
  if (password !== "" && headers.authorization === undefined)
    headers.authorization = `Basic ${Buffer.from(`${username}:${password}`).toString("base64")}`;
  return {
    url,
    transport,
    headers,
    secrets: credentialValues(headers, [options.apiKey, password]),
    limits: {
      connectMs: options.timeouts?.connectMs ?? PROVIDER_DEFAULTS.connectTimeoutMs,
      firstByteMs: options.timeouts?.firstByteMs ?? PROVIDER_DEFAULTS.firstByteTimeoutMs,
      idleMs: options.timeouts?.idleMs ?? PROVIDER_DEFAULTS.idleTimeoutMs,
      drainMs: options.timeouts?.drainMs ?? PROVIDER_DEFAULTS.drainTimeoutMs,
    },
    validate: options.validate ?? PROVIDER_DEFAULTS.validate,
    maxMessageSize: options.maxMessageSize ?? PROVIDER_DEFAULTS.maxMessageSize,
    maxResponseBytes: options.maxResponseBytes ?? PROVIDER_DEFAULTS.maxResponseBytes,
    maxErrorBodyBytes: PROVIDER_DEFAULTS.maxErrorBodyBytes,
    wire,
    now: options.now ?? Date.now,
  };
}

/** Header names whose values are credentials (matched case-insensitively). */
const CREDENTIAL_HEADER = /authorization|api[-_]?key|token|secret|password|cookie|signature/i;

/**
 * The values never to show: the key, the URL password, and every credential header's value (and,
 * for `Bearer`/`Basic` schemes, the credential without its scheme). Other headers (a referer, an
 * app title) are not secrets: masking them would shred ordinary text in frames.
 */
function credentialValues(headers: Record<string, string>, extra: readonly (string | undefined)[]): string[] {
  const out = new Set<string>();
  for (const value of extra) if (value !== undefined && value.length >= 4) out.add(value);
  for (const [name, value] of Object.entries(headers)) {
    if (!CREDENTIAL_HEADER.test(name)) continue;
    out.add(value);
    const scheme = /^(?:Bearer|Basic|Token)\s+(.+)$/i.exec(value);
    if (scheme?.[1] !== undefined && scheme[1].length >= 4) out.add(scheme[1]);
  }
  return [...out];
}

/** The URL without `user:password@`, and what was there. */
function withoutCredentials(raw: string): { url: string; username: string; password: string } {
  const url = new URL(raw);
  const username = decodeURIComponent(url.username);
  const password = decodeURIComponent(url.password);
  if (username === "" && password === "") return { url: raw, username, password };
  url.username = "";
  url.password = "";
  return { url: url.toString(), username, password };
}

function buildHeaders(
  options: Pick<OpenResponsesProviderOptions, "headers" | "apiKey" | "apiKeyHeader">,
): Record<string, string> {
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
