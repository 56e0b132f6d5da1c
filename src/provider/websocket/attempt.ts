/**
 * One try at a request in WebSocket mode (an `Attempt`, attempts.ts): take a connection from the
 * pool, send the body as one `response.create` message, then hand over the server's messages —
 * each one `provider_event` frame through the same mapping as an SSE message (no event name), so
 * the derived frames and the validation are those of an SSE turn. A turn ends at its terminal
 * `response.*` event or at an `error` message (schemas/openresponses/openapi.json,
 * `x-openresponses-websocket`).
 *
 * The timeouts are those of HTTP (docs/decisions.md #8), enforced by the same `Watchdog`: connect =
 * the opening handshake (nothing when an open connection is reused), first byte = the first
 * message, idle = the silence between messages (paused while a tool runs). Failures map as over
 * HTTP: an `error` message that answers the request before its response started carries an
 * HTTP-style `status` and becomes the `ProviderError` that status would (same kind, retryability,
 * `Retry-After` from `error.headers`); one that fails a response already streaming is a failed
 * response, as an SSE `error` event is; a dropped connection is a retryable connection error.
 */
import type { ProviderFrame } from "../../frames/frame.js";
import { framesFromSse } from "../../frames/from-sse.js";
import type { CreateResponseBody, JsonObject } from "../../protocol/types.js";
import { onAbort } from "../../util/abort.js";
import { isJsonObject } from "../../util/json.js";
import { redactSecrets } from "../../util/redact.js";
import type { Attempt, AttemptOpening, AttemptStep } from "../attempts.js";
import { cancelledError, ProviderError, responseTooLarge } from "../errors.js";
import { providerErrorFromHttp } from "../http-error.js";
import type { ProviderStreamOptions } from "../provider.js";
import { parseRetryAfter, parseShouldRetry } from "../retry.js";
import { Watchdog, WatchdogFired, type WatchdogLimits } from "../watchdog.js";
import { HandshakeRefused, type WebSocketConnection } from "./connection.js";
import type { WebSocketPool } from "./pool.js";

/** What every WebSocket attempt of a provider shares. */
export interface WebSocketAttemptConfig {
  pool: WebSocketPool;
  /** The connection URL, for messages. */
  url: string;
  /** Values never to show in messages (keys, header values). */
  secrets: readonly (string | undefined)[];
  limits: WatchdogLimits;
  validate: boolean;
  /** Largest response read, in characters of its messages (`PROVIDER_DEFAULTS.maxResponseBytes`). */
  maxResponseBytes: number;
  now: () => number;
}

/** One attempt's request. */
export interface WebSocketAttemptOptions {
  config: WebSocketAttemptConfig;
  body: CreateResponseBody;
  /** The `response.create` message, serialized once per request (or why the body cannot be sent). */
  message: string | ProviderError;
  turn: number;
  stream: ProviderStreamOptions;
}

/** The server events that end a turn on the connection. */
const TURN_ENDS: ReadonlySet<unknown> = new Set([
  "response.completed",
  "response.incomplete",
  "response.failed",
  "error",
]);

/** Fields of a create body that only HTTP has (the spec's `WebSocketResponseCreateEvent` forbids them). */
const HTTP_ONLY = ["stream", "stream_options"] as const;

/**
 * The `response.create` message of a body: `{type: "response.create", …body}` without `stream`
 * and `stream_options`. A background request cannot go over WebSocket: an `unsupported` error.
 */
export function responseCreateMessage(body: CreateResponseBody): string | ProviderError {
  if ((body as JsonObject).background === true) {
    return new ProviderError({
      kind: "unsupported",
      code: "unsupported_request",
      message:
        "background responses cannot be created over WebSocket (the spec allows them over HTTP only): use the sse transport",
      retryable: false,
    });
  }
  const message: JsonObject = { type: "response.create" };
  for (const [key, value] of Object.entries(body)) {
    if (!(HTTP_ONLY as readonly string[]).includes(key) && key !== "type") message[key] = value;
  }
  return JSON.stringify(message);
}

/** Makes an attempt (see the module comment). */
export function createWebSocketAttempt(options: WebSocketAttemptOptions): Attempt {
  return new WebSocketAttempt(options);
}

type Phase =
  | { name: "unsent" }
  | {
      name: "streaming";
      connection: WebSocketConnection;
      started: boolean;
      responseStarted: boolean;
      /** Characters of the messages read so far. */
      received: number;
    }
  /** The turn ended: `failure` is what the next step reports, `reusable` whether the connection can take another turn. */
  | {
      name: "ended";
      connection: WebSocketConnection | undefined;
      failure: ProviderError | undefined;
      reusable: boolean;
    };

class WebSocketAttempt implements Attempt {
  private readonly config: WebSocketAttemptConfig;
  private readonly controller = new AbortController();
  private readonly watchdog: Watchdog;
  private readonly onUserAbort: () => void;
  /** Ends the subscription to the user's signal (`onAbort`). */
  private unsubscribe: () => void = () => {};
  private phase: Phase = { name: "unsent" };

  constructor(private readonly options: WebSocketAttemptOptions) {
    this.config = options.config;
    const { stream } = options;
    this.watchdog = new Watchdog(this.controller, this.config.limits, stream.isBusy ?? (() => false));
    this.onUserAbort = () => this.controller.abort(stream.signal?.reason ?? new Error("aborted"));
  }

  async open(): Promise<AttemptOpening> {
    const { message, body, stream } = this.options;
    if (stream.signal?.aborted) return { type: "failed", error: cancelledError() };
    if (message instanceof ProviderError) return { type: "failed", error: message };
    const previous = typeof body.previous_response_id === "string" ? body.previous_response_id : undefined;
    const lostOn = previous === undefined ? undefined : this.config.pool.lostWith(previous);
    if (lostOn !== undefined) return { type: "failed", error: lostResponse(previous as string, lostOn) };
    if (stream.signal !== undefined) this.unsubscribe = onAbort(stream.signal, this.onUserAbort);
    this.watchdog.start("connect");
    let connection: WebSocketConnection;
    try {
      connection = await this.config.pool.acquire(previous, this.controller.signal);
    } catch (err) {
      return { type: "failed", error: this.connectError(err) };
    }
    this.phase = { name: "streaming", connection, started: false, responseStarted: false, received: 0 };
    try {
      await connection.send(message);
    } catch (err) {
      return { type: "failed", error: this.brokenError(err, connection) };
    }
    this.watchdog.start("first_byte");
    return { type: "opened", headers: undefined };
  }

  async next(): Promise<AttemptStep> {
    const phase = this.phase;
    if (phase.name === "unsent") return { type: "failed", error: cancelledError() };
    if (phase.name === "ended")
      return phase.failure === undefined
        ? { type: "end", sawDone: false }
        : { type: "failed", error: phase.failure };
    const { connection } = phase;
    for (;;) {
      const texts = connection.take();
      if (texts.length > 0) {
        for (const text of texts) phase.received += text.length;
        if (phase.received > this.config.maxResponseBytes)
          return { type: "failed", error: responseTooLarge(this.config.maxResponseBytes) };
        if (!phase.started) {
          phase.started = true;
          this.watchdog.start("idle");
        } else this.watchdog.touch();
        return { type: "frames", frames: this.framesOf(texts, phase) };
      }
      const signal = this.controller.signal;
      if (signal.aborted) return { type: "failed", error: this.abortError(signal.reason) };
      if (connection.ended !== undefined)
        return { type: "failed", error: this.brokenError(undefined, connection) };
      await connection.wait(signal);
    }
  }

  startDrain(): void {
    // Nothing to drain: a WebSocket turn ends at its terminal event.
  }

  close(): void {
    this.watchdog.stop();
    this.unsubscribe();
    const phase = this.phase;
    if (phase.name === "streaming") this.config.pool.release(phase.connection, false);
    else if (phase.name === "ended" && phase.connection !== undefined)
      this.config.pool.release(phase.connection, phase.reusable);
  }

  /** The frames of some messages; a message that ends the turn ends the attempt (later ones belong to no turn). */
  private framesOf(texts: string[], phase: Extract<Phase, { name: "streaming" }>): ProviderFrame[] {
    const frames: ProviderFrame[] = [];
    const options = {
      turn: this.options.turn,
      validate: this.config.validate,
      transport: "websocket" as const,
    };
    const push = (f: ProviderFrame) => frames.push(f);
    for (let i = 0; i < texts.length; i++) {
      const before = frames.length;
      framesFromSse({ data: texts[i] as string, raw: "" }, options, push);
      const f = frames[before];
      const data = f?.type === "provider_event" && isJsonObject(f.data) ? f.data : undefined;
      if (data === undefined) continue;
      const foreign = this.foreignResponse(data, phase);
      if (foreign !== undefined) {
        // Not this request's answer (a late one of an earlier request): none of it is taken.
        frames.length = before;
        this.watchdog.stop();
        this.phase = { name: "ended", connection: phase.connection, failure: foreign, reusable: false };
        break;
      }
      this.noteResponse(data, phase);
      if (TURN_ENDS.has(data.type)) {
        this.endTurn(data, phase, i === texts.length - 1);
        break;
      }
    }
    return frames;
  }

  /**
   * The error when the response a message starts is not this request's: one that continues
   * another response than the request names (`previous_response_id`). One connection answers one
   * request at a time, so such a response is a late answer to an earlier one; taken, it would be
   * this turn's answer. Undefined when it is this request's, or when the server does not say.
   */
  private foreignResponse(
    data: JsonObject,
    phase: Extract<Phase, { name: "streaming" }>,
  ): ProviderError | undefined {
    if (phase.responseStarted || data.type !== "response.created") return undefined;
    const response = isJsonObject(data.response) ? data.response : undefined;
    if (response === undefined || !("previous_response_id" in response)) return undefined;
    const asked = this.options.body.previous_response_id ?? null;
    const answered = response.previous_response_id ?? null;
    if (answered === asked) return undefined;
    return new ProviderError({
      kind: "stream_failed",
      code: "invalid_response",
      message: `the server answered over WebSocket with a response continuing ${JSON.stringify(answered)}, not this request's previous_response_id ${JSON.stringify(asked)} (a late answer to an earlier request?); the connection is not used again`,
      retryable: true,
    });
  }

  /** Remembers on the connection each response created there (follow-ups are routed back to it). */
  private noteResponse(data: JsonObject, phase: Extract<Phase, { name: "streaming" }>): void {
    if (data.type !== "response.created" && data.type !== "response.in_progress") return;
    phase.responseStarted = true;
    const response = isJsonObject(data.response) ? data.response : undefined;
    if (typeof response?.id === "string")
      phase.connection.remember(response.id, this.options.body.store !== false);
  }

  /**
   * The turn is over. An `error` before the response started answers the request like an HTTP
   * status (the connection stays usable); one after it fails the response as an SSE `error` event
   * does, and the connection is not reused, in case the server still sends that response's
   * `response.failed`. Messages after the end make the connection unusable too.
   */
  private endTurn(data: JsonObject, phase: Extract<Phase, { name: "streaming" }>, last: boolean): void {
    const refusal = data.type === "error" && !phase.responseStarted && typeof data.status === "number";
    this.watchdog.stop();
    this.phase = {
      name: "ended",
      connection: phase.connection,
      failure: refusal ? this.statusError(data) : undefined,
      reusable: last && (data.type !== "error" || refusal),
    };
  }

  /** An `error` message with an HTTP-style status, mapped as that HTTP answer would be. */
  private statusError(data: JsonObject): ProviderError {
    const error = isJsonObject(data.error) ? data.error : {};
    const headers = isJsonObject(error.headers) ? error.headers : {};
    const source = {
      get: (name: string) => (typeof headers[name] === "string" ? (headers[name] as string) : null),
    };
    return providerErrorFromHttp({
      status: data.status as number,
      bodyText: JSON.stringify({ error }),
      url: this.config.url,
      retryAfterMs: parseRetryAfter(source, this.config.now()),
      shouldRetry: parseShouldRetry(source),
      secrets: this.config.secrets,
    });
  }

  private connectError(err: unknown): ProviderError {
    if (err instanceof HandshakeRefused) {
      return providerErrorFromHttp({
        status: err.status,
        bodyText: err.body,
        url: this.config.url,
        requestId: err.headers.get("x-request-id") ?? undefined,
        retryAfterMs: parseRetryAfter(err.headers, this.config.now()),
        shouldRetry: parseShouldRetry(err.headers),
        secrets: this.config.secrets,
      });
    }
    const signal = this.controller.signal;
    if (signal.aborted) return this.abortError(signal.reason);
    return this.connectionError(`cannot open a WebSocket to ${this.config.url}: ${describe(err)}`, err);
  }

  /** The connection broke (or would not take the message) before the turn ended. */
  private brokenError(err: unknown, connection: WebSocketConnection): ProviderError {
    const signal = this.controller.signal;
    if (signal.aborted) return this.abortError(signal.reason);
    const end = connection.ended;
    // ws closes with 1009 and reports WS_ERR_UNSUPPORTED_MESSAGE_LENGTH for a message over maxPayload.
    const tooBig =
      (end?.error as { code?: unknown } | undefined)?.code === "WS_ERR_UNSUPPORTED_MESSAGE_LENGTH";
    if (end?.code === 1009 || tooBig) {
      return new ProviderError({
        kind: "decode",
        code: "sse_message_too_large",
        message: `a WebSocket message from ${this.config.url} was larger than maxMessageSize (the connection was closed with code 1009)`,
        retryable: false,
      });
    }
    const how = end === undefined ? describe(err) : closeDescription(end.code, end.reason, end.error);
    return this.connectionError(
      `the WebSocket connection to ${this.config.url} closed before the response ended: ${how}`,
      err ?? end?.error,
    );
  }

  private connectionError(message: string, cause: unknown): ProviderError {
    return new ProviderError({
      kind: "connection",
      code: "provider_connection",
      message: redactSecrets(message, this.config.secrets),
      retryable: true,
      cause,
    });
  }

  /** A timeout (the watchdog) or a cancellation (the caller). */
  private abortError(reason: unknown): ProviderError {
    if (!(reason instanceof WatchdogFired)) return cancelledError();
    const what =
      reason.phase === "connect"
        ? { code: "connect_timeout" as const, text: `no WebSocket handshake within ${reason.limitMs} ms` }
        : reason.phase === "first_byte"
          ? { code: "first_byte_timeout" as const, text: `no message within ${reason.limitMs} ms` }
          : { code: "idle_timeout" as const, text: `no message for ${reason.limitMs} ms while streaming` };
    return new ProviderError({
      kind: "timeout",
      code: what.code,
      message: redactSecrets(`timeout: ${what.text} (${this.config.url})`, this.config.secrets),
      retryable: true,
    });
  }
}

/**
 * A `store: false` response whose connection has closed: no server can continue it, so the
 * attempt fails as the server would (`previous_response_not_found`, not retried) and the loop
 * resends the run's history statelessly (docs/decisions.md #5).
 */
function lostResponse(responseId: string, connection: number): ProviderError {
  return new ProviderError({
    kind: "connection",
    code: "previous_response_not_found",
    message: `response ${responseId} was not stored (store: false) and lived only on WebSocket connection #${connection}, which has closed`,
    retryable: false,
    providerCode: "previous_response_not_found",
  });
}

function closeDescription(code: number, reason: string, error: Error | undefined): string {
  const detail = error?.message ?? (reason === "" ? undefined : reason);
  return `close code ${code}${code === 1006 ? " (no close frame: the connection was dropped)" : ""}${detail === undefined ? "" : `, ${detail}`}`;
}

function describe(err: unknown): string {
  if (!(err instanceof Error)) return String(err);
  const code = (err as { code?: unknown }).code;
  return typeof code === "string" && !err.message.includes(code) ? `${code} ${err.message}` : err.message;
}
