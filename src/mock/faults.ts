/**
 * Faults a scenario turn can inject: what a real provider or network does to a client on a bad
 * day. They are what the client, retry and loop tests stand on, so each is one plain field.
 * Combine freely: e.g. `{ lineEnding: "\r\n", chunkBytes: 3, keepAliveEvery: 2 }` is one stream
 * with all three. "Events" are counted as the SSE messages of the stream proper (the `[DONE]`
 * line, comments and injected garbage not included); `afterEvents: 2` means "once the events with
 * `sequence_number` 0 and 1 have been written".
 *
 * A non-streaming request honours `httpError`, `stallBeforeHeadersMs`, `dropAfterEvents` (the
 * connection closes with no answer) and `errorEvent` (answered HTTP 500 with the error payload);
 * the other faults only shape streams.
 */
import { encodeSseComment, type SseLineEnding } from "../sse/encoder.js";
import { type ErrorBody, errorTypeForStatus, jsonReply } from "./http-error.js";
import { type MockReply, toResponse } from "./reply.js";

/** An HTTP error answer instead of a response. */
export interface HttpErrorFault {
  /** The status, e.g. 429, 500, 503, 400. */
  status: number;
  /**
   * The body. An object is sent as JSON; a string is sent as is (e.g. an HTML page from a proxy).
   * @defaultValue `{"error": {type, code, message, param: null}}` with a type and code for the status
   *   (429 → `too_many_requests`/`rate_limit_exceeded`, 5xx → `server_error`, …)
   */
  body?: unknown;
  /** Extra headers, e.g. `{"retry-after": "2"}` or `{"retry-after-ms": "150"}`. */
  headers?: Record<string, string>;
}

/** An in-stream `error` event (spec §8.5): `error`, then `response.failed`, then `[DONE]`. */
export interface ErrorEventFault {
  /** How many events to write first (0 = the error is the first event). */
  afterEvents: number;
  /** @defaultValue "server_error" */
  type?: string;
  /** @defaultValue "server_error" */
  code?: string | null;
  /** @defaultValue "The mock server injected an error (errorEvent fault)." */
  message?: string;
  /** @defaultValue null */
  param?: string | null;
}

/** Per-turn faults. Each field is independent; leave it out for normal behaviour. */
export interface MockFaults {
  /**
   * Answer with an HTTP error instead of a response (after `stallBeforeHeadersMs`, if set).
   * Clients see the status, the headers (`Retry-After`, `retry-after-ms`) and the JSON body.
   */
  httpError?: HttpErrorFault;
  /** Send nothing at all (not even the status line) for this many ms: a first-byte/connect timeout. */
  stallBeforeHeadersMs?: number;
  /** Send status and headers at once, then no body byte for this many ms: a first-byte timeout. */
  stallBeforeBodyMs?: number;
  /** After `afterEvents` events, send nothing for `ms`, then finish normally: an idle timeout. */
  stallAfterEvents?: { afterEvents: number; ms: number };
  /** After `afterEvents` events, emit an `error` event and `response.failed` (then `[DONE]`). */
  errorEvent?: ErrorEventFault;
  /**
   * After this many events, destroy the connection: no terminal event, no `[DONE]`, the socket is
   * reset mid-body (an in-process reader sees the body stream error). 0 = right after the headers.
   */
  dropAfterEvents?: number;
  /** Write a `: keep-alive` comment line after every N events (clients must ignore it). */
  keepAliveEvery?: number;
  /** After this many events, write one `data:` line that is not valid JSON, then go on normally. */
  invalidJsonAfterEvents?: number;
  /** Line endings of the whole stream: `"\r\n"` (CRLF) or `"\r"` (CR) instead of `"\n"`. */
  lineEnding?: SseLineEnding;
  /** End the stream after the terminal event without `data: [DONE]`. */
  omitDone?: boolean;
  /** Write only `data:` lines, no `event:` lines. */
  omitEventLines?: boolean;
  /**
   * Write the body in network chunks of this many bytes, each flushed on its own: events, line
   * endings and multi-byte UTF-8 characters end up split across chunks.
   */
  chunkBytes?: number;
}

/** The HTTP answer of an `httpError` fault. */
export function httpErrorReply(fault: HttpErrorFault, extraHeaders: Record<string, string>): MockReply {
  const headers = { ...extraHeaders, ...fault.headers };
  if (typeof fault.body === "string") {
    const type = fault.body.trimStart().startsWith("<") ? "text/html" : "text/plain";
    return { status: fault.status, headers: { "content-type": type, ...headers }, body: fault.body };
  }
  const body = fault.body === undefined ? { error: defaultPayload(fault.status) } : fault.body;
  return jsonReply(fault.status, body, headers);
}

/** `httpErrorReply` as a fetch `Response`. */
export function httpErrorResponse(fault: HttpErrorFault, extraHeaders: Record<string, string>): Response {
  return toResponse(httpErrorReply(fault, extraHeaders));
}

/**
 * The error an `httpError` fault carries where there is no HTTP status line (a WebSocket error
 * message): the body's `error` object when it has one, else the default payload for the status (a
 * string body becomes part of its message); the fault's headers ride along as `headers`.
 */
export function httpErrorPayload(fault: HttpErrorFault): ErrorBody["error"] {
  const own = (fault.body as { error?: unknown } | null | undefined)?.error;
  const payload: ErrorBody["error"] =
    own !== null && typeof own === "object" && typeof (own as { message?: unknown }).message === "string"
      ? { ...defaultPayload(fault.status), ...(own as Partial<ErrorBody["error"]>) }
      : defaultPayload(fault.status);
  if (typeof fault.body === "string")
    payload.message = `The mock server answered HTTP ${fault.status} (httpError fault): ${fault.body.slice(0, 200)}`;
  return fault.headers === undefined ? payload : { ...payload, headers: fault.headers };
}

function defaultPayload(status: number): ErrorBody["error"] {
  const code =
    status === 429
      ? "rate_limit_exceeded"
      : status === 503
        ? "service_unavailable"
        : status >= 500
          ? "server_error"
          : null;
  return {
    type: errorTypeForStatus(status),
    code,
    message: `The mock server answered HTTP ${status} (httpError fault).`,
    param: null,
  };
}

/** The error payload of an `errorEvent` fault. */
export function errorEventPayload(fault: ErrorEventFault) {
  return {
    type: fault.type ?? "server_error",
    code: fault.code === undefined ? "server_error" : fault.code,
    message: fault.message ?? "The mock server injected an error (errorEvent fault).",
    param: fault.param ?? null,
  };
}

/** The names of the faults set, for the request log line. */
export function faultNames(faults: MockFaults | undefined): string[] {
  if (faults === undefined) return [];
  return Object.entries(faults)
    .filter(([, v]) => v !== undefined && v !== false)
    .map(([k]) => k);
}

/** The keep-alive comment (`: keep-alive`). */
export function keepAliveComment(lineEnding: SseLineEnding): string {
  return encodeSseComment("keep-alive", lineEnding);
}

/** The deliberately broken data line of `invalidJsonAfterEvents`. */
export function invalidJsonLine(lineEnding: SseLineEnding): string {
  return `data: {"type":"response.output_text.delta","sequence_number":${lineEnding}${lineEnding}`;
}
