/**
 * What the mock remembers of each request, for tests to assert on ("the follow-up sent only the
 * function_call_output") and for the request log line. Secrets never enter a record.
 */
import { hasControlChars, safeJson } from "../util/control-chars.js";
import { wholeCut } from "../util/text.js";

/** One request as received. */
export interface RecordedRequest {
  /** The HTTP method, or `"WS"` for a message on a WebSocket. */
  method: string;
  /** An HTTP request, or a `response.create` message on a WebSocket (WebSocket mode). */
  transport: "http" | "websocket";
  /** The WebSocket connection a message came on (1, 2, … in the order they opened). */
  connection?: number;
  /** The URL path, e.g. `/v1/responses`. */
  path: string;
  /**
   * Lower-case header names; credentials (`authorization`, `api-key`, …) are `"[REDACTED]"`. A
   * WebSocket message carries its connection's upgrade request headers.
   */
  headers: Record<string, string>;
  /** The body parsed as JSON, or the raw text when it is not JSON (`""` for none). */
  body: unknown;
  /** The scenario turn (0-based) that answered it, once one did. */
  turn?: number;
}

/** One line of the request log (`onRequest`), written when the answer is complete. */
export interface MockRequestLog {
  /** The HTTP method, or `"WS"` for a message on a WebSocket. */
  method: string;
  path: string;
  transport: "http" | "websocket";
  /** The WebSocket connection (see `RecordedRequest.connection`). */
  connection?: number;
  /**
   * HTTP status (a dropped non-streaming request reports 0; an accepted WebSocket upgrade 101). A
   * WebSocket message reports 200, the `status` of the error message it got, or 0 when dropped.
   */
  status: number;
  /** The request's `model`, when the body had one. */
  model?: string;
  /** The turn (0-based) that answered it. */
  turn?: number;
  stream: boolean;
  /** The response id, when a response was produced. */
  responseId?: string;
  /** The faults applied (`["dropAfterEvents"]`). */
  faults: string[];
  /** How the answer ended: a complete JSON answer or stream, a dropped connection, or a client that went away. */
  outcome: "answered" | "finished" | "dropped" | "cancelled";
  /** From the request's arrival to the answer's end. */
  durationMs: number;
}

const SECRET_HEADERS = new Set(["authorization", "proxy-authorization", "api-key", "x-api-key", "cookie"]);

/** The headers with credentials redacted. */
export function redactHeaders(headers: Readonly<Record<string, string>>): Record<string, string> {
  // fromEntries defines each name as a property of its own, a `__proto__` header too.
  return Object.fromEntries(
    Object.entries(headers).map(([name, value]) => [name, SECRET_HEADERS.has(name) ? "[REDACTED]" : value]),
  );
}

/** The body as JSON when it parses, else the raw text. */
export function recordedBody(text: string): unknown {
  if (text === "") return "";
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/**
 * A one-line rendering of a log entry: `POST /v1/responses 200 model=m turn=0 stream 12ms`. The
 * model is the client's text: one holding a control, direction or line-separator character, or
 * longer than `MODEL_SHOWN` characters, is shown as JSON (such characters as `\u` escapes), cut to
 * that length — a request's `model` wrote escape sequences (window title, clipboard, screen
 * clear) to the terminal running `eddy mock`, and a 60 MB one a 60 MB line.
 */
export function formatRequestLog(log: MockRequestLog): string {
  const parts = [log.method, log.path, String(log.status)];
  if (log.connection !== undefined) parts.push(`ws#${log.connection}`);
  if (log.model !== undefined) parts.push(`model=${shownModel(log.model)}`);
  if (log.turn !== undefined) parts.push(`turn=${log.turn}`);
  if (log.responseId !== undefined) parts.push(log.responseId);
  if (log.stream) parts.push("stream");
  if (log.faults.length > 0) parts.push(`faults=${log.faults.join(",")}`);
  if (log.outcome === "dropped" || log.outcome === "cancelled") parts.push(log.outcome);
  parts.push(`${Math.round(log.durationMs)}ms`);
  return parts.join(" ");
}

/** Characters of a request's model shown in its log line. */
const MODEL_SHOWN = 200;

/** `model` as the log line shows it (see `formatRequestLog`). */
function shownModel(model: string): string {
  if (model.length <= MODEL_SHOWN && !hasControlChars(model) && !/[\u2028\u2029]/.test(model)) return model;
  const cut = model.slice(0, wholeCut(model, MODEL_SHOWN));
  return safeJson(cut.length < model.length ? `${cut}…` : cut);
}
