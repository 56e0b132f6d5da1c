/**
 * A small typed client for `eddy serve`'s runs API (api.ts), over `fetch`: no Node-only import,
 * so it runs in browsers too. `events()` is an async iterator of a run's frames that reconnects
 * with `Last-Event-ID` when the connection drops, so a client loses no frame and sees none twice.
 */

import type { ThreadLog, ThreadSummary } from "../context/threads.js";
import { EddyError } from "../errors.js";
import type { Frame } from "../frames/frame.js";
import type { PartialRunSpec } from "../loop/run-spec.js";
import { decodeSse, iterateBytes } from "../sse/decoder.js";
import { abortableSleep } from "../util/abort.js";
import { fetchCause } from "../util/fetch-cause.js";
import { parsedNestsTooDeep, RECORD_MAX_DEPTH } from "../util/json.js";
import { readText } from "../util/stream.js";
import type { RunView } from "./runs.js";

/** Options of `createServeClient`. */
export interface ServeClientOptions {
  /** The server's address, e.g. `http://127.0.0.1:7341` (with or without a trailing `/v1`). */
  baseUrl: string;
  /** The server's bearer token, when it has one. @defaultValue none */
  token?: string;
  /** @defaultValue globalThis.fetch */
  fetch?: typeof fetch;
  /**
   * How long a call other than `events()` may take, answer read included, before it fails with a
   * `serve_error`. @defaultValue CLIENT_DEFAULTS.timeoutMs (30 s)
   */
  timeoutMs?: number;
  /** The largest answer a call other than `events()` reads. @defaultValue CLIENT_DEFAULTS.maxResponseBytes (16 MiB) */
  maxResponseBytes?: number;
}

/** The client's defaults. */
export const CLIENT_DEFAULTS = {
  timeoutMs: 30_000,
  maxResponseBytes: 16 * 1024 * 1024,
  /** How much of an error answer is read for its message. */
  maxErrorBytes: 64 * 1024,
  /** `events()`: longest silence on a connection before it is made again (`RunEventsOptions.idleTimeoutMs`). */
  eventsIdleMs: 60_000,
} as const;

/** One event of a run: its id (for `Last-Event-ID`) and the frame. */
export interface RunEvent {
  id: number;
  frame: Frame;
}

/** Options of `events()`. */
export interface RunEventsOptions {
  /** Start after this event id. @defaultValue -1 (from the first) */
  after?: number;
  signal?: AbortSignal;
  /** Reconnections in a row without a new event before giving up. @defaultValue 5 */
  maxReconnects?: number;
  /** Milliseconds before a reconnection (doubled each time, up to 8×). @defaultValue 250 */
  reconnectDelayMs?: number;
  /**
   * Longest silence on a connection (no byte: eddy serve sends a keep-alive comment every 15 s)
   * before it is dropped and made again after the last event. @defaultValue CLIENT_DEFAULTS.eventsIdleMs (60 s)
   */
  idleTimeoutMs?: number;
}

/** The client (see the module comment). Every method throws `EddyError` `serve_error` with the server's message on a 4xx/5xx. */
export interface ServeClient {
  /** Starts a run (`POST /v1/runs`). */
  start(spec: PartialRunSpec): Promise<{ id: string; status: string }>;
  get(id: string): Promise<RunView>;
  list(): Promise<RunView[]>;
  /** The run's frames until its stream ends (the run ended, or awaits a decision). */
  events(id: string, options?: RunEventsOptions): AsyncIterable<RunEvent>;
  cancel(id: string): Promise<{ id: string; status: string }>;
  /** Decides a deferred approval; `pending_calls` are those still undecided. */
  decide(
    id: string,
    callId: string,
    decision: "allow" | "deny",
  ): Promise<{ id: string; status: string; pending_calls: string[] }>;
  /** Steers a running run: `message` reaches the model at its next turn boundary (`POST /v1/runs/ID/steer`). */
  steer(id: string, message: string): Promise<{ id: string; status: string }>;
  /** Resumes a run listed `interrupted` from its tape (`POST /v1/runs/ID/resume`); follow it with `events(id, {after})`. */
  resume(id: string): Promise<{ id: string; status: string }>;
  /** Steers the run going on on a thread (`POST /v1/threads/NAME/steer`). */
  steerThread(thread: string, message: string): Promise<{ id: string; status: string }>;
  threads(): Promise<ThreadSummary[]>;
  thread(name: string): Promise<ThreadLog>;
  /** Sends a message on a thread: a run on it (`POST /v1/threads/NAME/messages`). */
  send(thread: string, input: string, spec?: PartialRunSpec): Promise<{ id: string; status: string }>;
}

/**
 * Creates a client.
 *
 * @example
 * ```ts
 * const eddy = createServeClient({ baseUrl: "http://127.0.0.1:7341", token });
 * const { id } = await eddy.start({ input: "What is in package.json?" });
 * for await (const { frame } of eddy.events(id)) if (frame.type === "output_text_delta") process.stdout.write(frame.delta);
 * ```
 */
export function createServeClient(options: ServeClientOptions): ServeClient {
  const base = options.baseUrl.replace(/\/+$/, "").replace(/\/v1$/, "");
  const doFetch = options.fetch ?? globalThis.fetch;
  const headers = (extra: Record<string, string> = {}) => ({
    ...(options.token === undefined ? {} : { authorization: `Bearer ${options.token}` }),
    ...extra,
  });
  const timeoutMs = options.timeoutMs ?? CLIENT_DEFAULTS.timeoutMs;
  const maxBytes = options.maxResponseBytes ?? CLIENT_DEFAULTS.maxResponseBytes;
  const call = async <T>(method: string, path: string, body?: unknown): Promise<T> => {
    const signal = AbortSignal.timeout(timeoutMs);
    try {
      const res = await doFetch(`${base}${path}`, {
        method,
        headers: headers(body === undefined ? {} : { "content-type": "application/json" }),
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        signal,
      });
      if (!res.ok) throw await serveError(res);
      return (await answerOf(res, `${method} ${path}`, maxBytes)) as T;
    } catch (err) {
      if (!signal.aborted || EddyError.isInstance(err)) throw err;
      throw otherSide(`eddy serve did not answer ${method} ${path} within ${timeoutMs} ms`);
    }
  };
  const run = (id: string) => `/v1/runs/${encodeURIComponent(id)}`;
  return {
    start: (spec) => call("POST", "/v1/runs", spec),
    get: (id) => call("GET", run(id)),
    list: async () => (await call<{ data: RunView[] }>("GET", "/v1/runs")).data,
    events: (id, o = {}) => runEvents(doFetch, `${base}${run(id)}/events`, headers(), o),
    cancel: (id) => call("POST", `${run(id)}/cancel`, {}),
    decide: (id, callId, decision) => call("POST", `${run(id)}/decisions`, { call_id: callId, decision }),
    steer: (id, message) => call("POST", `${run(id)}/steer`, { message }),
    resume: (id) => call("POST", `${run(id)}/resume`, {}),
    steerThread: (thread, message) =>
      call("POST", `/v1/threads/${encodeURIComponent(thread)}/steer`, { message }),
    threads: async () => (await call<{ data: ThreadSummary[] }>("GET", "/v1/threads")).data,
    thread: (name) => call("GET", `/v1/threads/${encodeURIComponent(name)}`),
    send: (thread, input, spec = {}) =>
      call("POST", `/v1/threads/${encodeURIComponent(thread)}/messages`, { ...spec, input }),
  };
}

/** An answer's bytes (none for an answer without a body). */
async function* bytesOf(res: Response): AsyncGenerator<Uint8Array> {
  if (res.body !== null) yield* iterateBytes(res.body);
}

/** A failure of the server's (fault `provider`: the other side of the call). */
function otherSide(message: string): EddyError {
  return new EddyError("serve_error", message, { fault: "provider" });
}

/**
 * A call's answer, read up to `maxBytes` and parsed: a `SyntaxError` when it is not JSON, a
 * `serve_error` when it is too large or nests deeper than the stack (docs/pitfalls.md #74).
 */
async function answerOf(res: Response, call: string, maxBytes: number): Promise<unknown> {
  const { text, complete } = await readText(bytesOf(res), maxBytes);
  if (!complete) {
    await res.body?.cancel().catch(() => {});
    throw otherSide(`eddy serve's answer to ${call} is larger than ${maxBytes} bytes`);
  }
  const value: unknown = JSON.parse(text);
  if (parsedNestsTooDeep(text, value, RECORD_MAX_DEPTH))
    throw otherSide(`eddy serve's answer to ${call} nests deeper than ${RECORD_MAX_DEPTH} levels`);
  return value;
}

async function serveError(res: Response): Promise<EddyError> {
  let message = `HTTP ${res.status}`;
  let code: string | undefined;
  try {
    const { text } = await readText(bytesOf(res), CLIENT_DEFAULTS.maxErrorBytes);
    const body = JSON.parse(text) as { error?: { message?: string; code?: string } };
    if (body.error?.message !== undefined) message = `HTTP ${res.status}: ${body.error.message}`;
    code = body.error?.code;
  } catch {
    // Not JSON: the status says enough.
  }
  return new EddyError("serve_error", `eddy serve: ${message}`, {
    fault: res.status >= 500 ? "provider" : "user",
    details: { status: res.status, ...(code === undefined ? {} : { code }) },
  });
}

/** A server that does not answer like `eddy serve`'s events endpoint: a user error naming what it did. */
function notServe(what: string): EddyError {
  return new EddyError(
    "serve_error",
    `eddy serve: not a run's event stream: ${what} (give a run's URL on eddy serve, …/v1/runs/ID)`,
    { fault: "user" },
  );
}

/** An event's data as a frame: a JSON object with a string `type` (anything else is refused). */
function frameOf(data: string, id: number): Frame {
  let value: unknown;
  try {
    value = JSON.parse(data);
  } catch {
    throw notServe(`event ${id} is not JSON`);
  }
  if (value === null || typeof value !== "object" || typeof (value as { type?: unknown }).type !== "string")
    throw notServe(`event ${id} is not a frame`);
  // What takes the frame next (a view, a tape) walks it: refused before it overflows the stack (docs/pitfalls.md #74).
  if (parsedNestsTooDeep(data, value, RECORD_MAX_DEPTH))
    throw notServe(`event ${id} nests deeper than ${RECORD_MAX_DEPTH} levels of arrays and objects`);
  return value as Frame;
}

/**
 * Follows the event stream, reconnecting after the last id seen until the stream ends cleanly. A
 * connection silent for `idleTimeoutMs` is dropped and made again; `maxReconnects` failures in a
 * row without a new event end it with a `serve_error` naming the last cause.
 */
async function* runEvents(
  doFetch: typeof fetch,
  url: string,
  headers: Record<string, string>,
  options: RunEventsOptions,
): AsyncGenerator<RunEvent> {
  const cursor = { last: options.after ?? -1, progressed: false };
  let failures = 0;
  const max = options.maxReconnects ?? 5;
  const delay = options.reconnectDelayMs ?? 250;
  for (;;) {
    cursor.progressed = false;
    const idle = idleWatch(options.idleTimeoutMs ?? CLIENT_DEFAULTS.eventsIdleMs, options.signal);
    try {
      yield* oneConnection(doFetch, url, headers, idle, cursor);
      return; // the server ended the stream: the run ended (or awaits a decision)
    } catch (err) {
      if (options.signal?.aborted === true || EddyError.isInstance(err)) throw err;
      failures = cursor.progressed ? 0 : failures + 1;
      if (failures > max) throw streamFailed(url, failures, idle.timedOut ? "it stayed silent" : err);
      await abortableSleep(delay * 2 ** Math.min(3, failures), options.signal);
    } finally {
      idle.stop();
    }
  }
}

/** One connection's events after `cursor.last` (which it moves on). */
async function* oneConnection(
  doFetch: typeof fetch,
  url: string,
  headers: Record<string, string>,
  idle: IdleWatch,
  cursor: { last: number; progressed: boolean },
): AsyncGenerator<RunEvent> {
  const res = await doFetch(url, {
    headers: { ...headers, ...(cursor.last >= 0 ? { "last-event-id": String(cursor.last) } : {}) },
    signal: idle.signal,
  });
  if (!res.ok) throw await serveError(res);
  const type = res.headers.get("content-type") ?? "";
  if (!type.startsWith("text/event-stream"))
    throw notServe(
      `it answered ${type === "" ? "no content type" : type.split(";")[0]}, not an event stream`,
    );
  if (res.body === null) return;
  for await (const message of decodeSse(idle.watch(res.body))) {
    if (message.id === undefined) continue;
    const id = Number(message.id);
    if (!Number.isSafeInteger(id) || id <= cursor.last)
      throw notServe(`an event id ${JSON.stringify(message.id.slice(0, 40))} does not follow ${cursor.last}`);
    cursor.last = id;
    cursor.progressed = true;
    yield { id, frame: frameOf(message.data, id) };
  }
}

/** Aborts a connection once no byte has come for `ms` (or when `outer` aborts). */
interface IdleWatch {
  signal: AbortSignal;
  readonly timedOut: boolean;
  /** The body's bytes, each chunk restarting the clock. */
  watch(body: ReadableStream<Uint8Array>): AsyncIterable<Uint8Array>;
  stop(): void;
}

function idleWatch(ms: number, outer: AbortSignal | undefined): IdleWatch {
  const controller = new AbortController();
  let timedOut = false;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const arm = () => {
    clearTimeout(timer);
    timer = setTimeout(() => {
      timedOut = true;
      controller.abort(new Error(`no byte for ${ms} ms`));
    }, ms);
  };
  const onAbort = () => controller.abort(outer?.reason);
  if (outer?.aborted === true) onAbort();
  else outer?.addEventListener("abort", onAbort, { once: true });
  arm();
  return {
    signal: controller.signal,
    get timedOut() {
      return timedOut;
    },
    async *watch(body) {
      for await (const chunk of iterateBytes(body)) {
        arm();
        yield chunk;
      }
    },
    stop() {
      clearTimeout(timer);
      outer?.removeEventListener("abort", onAbort);
    },
  };
}

/** The stream given up on: the other side's failure, with its last cause in words. */
function streamFailed(url: string, attempts: number, cause: unknown): EddyError {
  const reason = typeof cause === "string" ? cause : causeText(cause);
  return new EddyError(
    "serve_error",
    `eddy serve: the event stream at ${url} failed ${attempts} times in a row without a new event (${reason}); is the server up?`,
    { fault: "provider" },
  );
}

function causeText(err: unknown): string {
  return fetchCause(err) ?? (err instanceof Error ? err.message : String(err));
}
