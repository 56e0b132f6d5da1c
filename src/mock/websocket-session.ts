/**
 * WebSocket mode (`x-openresponses-websocket` on `/responses` in
 * `schemas/openresponses/openapi.json`): one session per upgraded connection, independent of the
 * socket library (the listener wires it to `ws`; tests can drive it with any peer).
 *
 * - Each client message is a `response.create` event: a `CreateResponseBody` plus `type`, without
 *   `stream`, `stream_options` or `background` (those are refused). It is answered with the same
 *   events as an SSE stream, one JSON text message each, and no `[DONE]`: a turn ends with its
 *   terminal `response.*` event or with an `error` message.
 * - One response at a time: a `response.create` while one is running gets an error (409
 *   `response_in_progress`) and the running one goes on. A response stops running, for this rule,
 *   when its terminal event has been sent: a client that sends the next `response.create` on
 *   receiving it is never refused, even while the server still finishes the turn (an agent behind
 *   `eddy serve`'s face closing its run; found by a test at load average 10). A fault scripted to
 *   fire after the last event (`invalidJsonAfterEvents`, `errorEvent` past the end) may then reach
 *   the client after its next `response.create` was taken.
 * - `store: false` responses are kept in a cache of this connection only: `previous_response_id`
 *   finds them here (then in the server's store), another connection does not, and they are gone
 *   when the connection closes. An unknown id is `previous_response_not_found` (404). A turn that
 *   fails evicts the `previous_response_id` it named from the cache, so a failed continuation cannot
 *   be retried on stale state.
 * - Failures are `WebSocketErrorEvent`s: `{type: "error", status, error: {type, code, message,
 *   param}}` with the status an HTTP answer would have had. A mid-stream `errorEvent` fault also
 *   carries the stream's next `sequence_number` (so it is a valid `ErrorStreamingEvent` too) and,
 *   unlike SSE, is not followed by `response.failed`: the error ends the turn.
 * - Faults: `httpError` → an error message with that status (the fault's headers in
 *   `error.headers`); `stallBeforeHeadersMs`/`stallBeforeBodyMs` → silence before the first event;
 *   `stallAfterEvents`, `errorEvent`, `invalidJsonAfterEvents` (one text message that is not JSON)
 *   as over SSE; `keepAliveEvery` → a ping frame; `dropAfterEvents` → the connection is destroyed
 *   (no close frame). `lineEnding`, `omitDone`, `omitEventLines` and `chunkBytes` shape SSE bytes
 *   only and do nothing here.
 */
import { setTimeout as sleep, setImmediate as tick } from "node:timers/promises";
import type { ErrorPayload, JsonObject, ResponseResource } from "../protocol/types.js";
import { safeJson } from "../util/control-chars.js";
import { parseJsonObject } from "../util/json.js";
import {
  type CreateContext,
  type CreateInfo,
  isLifecycle,
  isTerminalType,
  keepTerminal,
  type PreparedResponse,
  prepareResponse,
} from "./create-response.js";
import { MOCK_DEFAULTS } from "./defaults.js";
import { type ErrorEventFault, errorEventPayload, httpErrorPayload } from "./faults.js";
import { httpProblem, invalidRequest, problemOf, serverProblem } from "./http-error.js";
import type { MockRequestLog, RecordedRequest } from "./recording.js";
import { recordedBody } from "./recording.js";
import { checkCreateBody, type MockRequestBody, parseJsonBody, type RequestConformance } from "./request.js";
import { createResponseStore } from "./state.js";
import type { StreamOutcome } from "./stream-writer.js";

/** The connection as a session sees it (the listener adapts a `ws` WebSocket to this). */
export interface WebSocketPeer {
  /** Sends one text message. A returned promise resolves when the socket can take more (backpressure). */
  send(text: string): void | Promise<void>;
  /** Sends a ping frame (the `keepAliveEvery` fault). */
  ping(): void;
  /** Destroys the connection at once, without a close frame (the `dropAfterEvents` fault). */
  drop(): void;
}

/** One WebSocket connection's session. */
export interface WebSocketSession {
  /** A client message: its text, or `undefined` for a binary message (refused). */
  receive(text: string | undefined): void;
  /** The connection closed: stalls end, the running response stops, the cache is dropped. */
  end(): void;
  /** Resolves when no response is running (at once when none is). */
  settled(): Promise<void>;
}

/** Counters of WebSocket mode, for tests that assert how a client used its connections. */
export interface WebSocketStats {
  /** Connections opened (upgrades accepted) since the server started. */
  connections: number;
  /** Connections open now. */
  open: number;
  /** Client messages received, on all connections. */
  messages: number;
}

/** What a session works with. */
export interface WebSocketSessionOptions {
  /** The server's state, shared with HTTP requests (the turn counter included). */
  server: Omit<CreateContext, "connection" | "signal" | "headers">;
  /** Aborted when the server closes. */
  signal: AbortSignal;
  peer: WebSocketPeer;
  /** This connection's number (1, 2, …). */
  connection: number;
  /** The upgrade request's path. */
  path: string;
  /** The upgrade request's headers, credentials redacted (each message's record carries them). */
  headers: Record<string, string>;
  /** Every message is recorded here. */
  requests: RecordedRequest[];
  onRequest: ((log: MockRequestLog) => void) | undefined;
  stats: WebSocketStats;
}

/** The one client event WebSocket mode has, and the HTTP-only fields it must not carry. */
const CREATE = "response.create";
const HTTP_ONLY = ["stream", "stream_options", "background"];

/** Opens the session of one accepted connection (see the module comment). */
export function openWebSocketSession(options: WebSocketSessionOptions): WebSocketSession {
  const { stats } = options;
  const gone = new AbortController();
  const signal = AbortSignal.any([gone.signal, options.signal]);
  const cache = createResponseStore(MOCK_DEFAULTS.websocketCacheSize, MOCK_DEFAULTS.websocketCacheChars);
  /** The turn that holds the connection, until its terminal event is sent or it ends. */
  let running: object | undefined;
  /** Every turn not yet ended (one that released the connection may still be finishing). */
  const inFlight = new Set<Promise<void>>();
  stats.connections++;
  stats.open++;

  /** Answers one message; `busy` when a response is running already (then it is only refused). */
  async function turn(text: string | undefined, busy: boolean, release: () => void): Promise<void> {
    const started = performance.now();
    const record: RecordedRequest = {
      method: "WS",
      transport: "websocket",
      connection: options.connection,
      path: options.path,
      headers: options.headers,
      body: recordedBody(text ?? ""),
    };
    options.requests.push(record);
    const info: CreateInfo = { stream: true, faults: [] };
    const { previous, ...ended } = await answer(text, busy, {
      options,
      cache,
      signal,
      info,
      record,
      release,
    });
    if (ended.failed && previous !== undefined) cache.delete(previous);
    if (info.turn !== undefined) record.turn = info.turn;
    options.onRequest?.({
      method: "WS",
      path: options.path,
      transport: "websocket",
      connection: options.connection,
      status: ended.outcome === "dropped" ? 0 : ended.status,
      ...info,
      outcome: ended.outcome,
      durationMs: performance.now() - started,
    });
  }

  return {
    receive(text) {
      stats.messages++;
      if (signal.aborted) return;
      if (running !== undefined) {
        void turn(text, true, () => {}); // refused at once; the running response goes on
        return;
      }
      const token = {};
      const release = () => {
        if (running === token) running = undefined;
      };
      running = token;
      const done: Promise<void> = turn(text, false, release).finally(() => {
        release();
        inFlight.delete(done);
      });
      inFlight.add(done);
    },
    end() {
      if (gone.signal.aborted) return;
      gone.abort();
      stats.open--;
    },
    settled: async () => {
      await Promise.all(inFlight);
    },
  };
}

/** What one turn needs besides its message. */
interface TurnContext {
  options: WebSocketSessionOptions;
  cache: ReturnType<typeof createResponseStore>;
  signal: AbortSignal;
  info: CreateInfo;
  record: RecordedRequest;
  /** Frees the connection for the next response (called once the terminal event is sent). */
  release: () => void;
}

/** How a turn ended, and the response it continued (forgotten when the turn failed). */
interface TurnEnd {
  status: number;
  outcome: MockRequestLog["outcome"];
  failed: boolean;
  previous: string | undefined;
}

/** Answers one message: the response's events, or an `error` message; never throws. */
async function answer(text: string | undefined, busy: boolean, t: TurnContext): Promise<TurnEnd> {
  const { options, info, record, signal } = t;
  const peer = options.peer;
  let previous: string | undefined;
  try {
    if (busy) throw inProgress();
    const message = parseMessage(text);
    if (typeof message.previous_response_id === "string") previous = message.previous_response_id;
    const { type: _type, ...sent } = message;
    const body = createBody(sent, options.server.conformance);
    const ctx: CreateContext = { ...options.server, connection: t.cache, signal, headers: {} };
    const prepared = await prepareResponse(body, ctx, info, sent);
    if (info.turn !== undefined) record.turn = info.turn;
    if (prepared.kind === "http_error") {
      await peer.send(errorMessage(prepared.fault.status, httpErrorPayload(prepared.fault)));
      return { status: prepared.fault.status, outcome: "answered", failed: true, previous };
    }
    return { status: 200, ...(await sendEvents(prepared, peer, signal, t.release)), previous };
  } catch (error) {
    if (signal.aborted) return { status: 0, outcome: "cancelled", failed: true, previous }; // nobody left to answer
    const problem = problemOf(error) ?? serverProblem(error);
    await peer.send(errorMessage(problem.status, problem.error));
    return { status: problem.status, outcome: "answered", failed: true, previous };
  }
}

/** The refusal of a `response.create` sent while a response runs on the connection. */
function inProgress() {
  return httpProblem({
    status: 409,
    error: {
      type: "invalid_request_error",
      code: "response_in_progress",
      message:
        "A response is already in progress on this connection. WebSocket mode runs one response at a time: send the next response.create after the terminal event of this one.",
      param: null,
    },
  });
}

/** The message as a JSON object with the `response.create` type (400 problems otherwise). */
function parseMessage(text: string | undefined): Record<string, unknown> {
  if (text === undefined) {
    throw invalidRequest(
      "Binary messages are not supported: send each response.create as a JSON text message.",
      null,
      "invalid_message",
    );
  }
  const message = parseJsonBody(text, "Send each response.create event as one JSON text message.");
  if (message.type !== CREATE) {
    throw invalidRequest(
      `Unsupported client event type ${JSON.stringify(message.type) ?? "(none)"}: WebSocket mode takes '${CREATE}' messages only.`,
      "type",
      "invalid_value",
    );
  }
  return message;
}

/** The create body of a `response.create` message (its fields but `type`), checked as an HTTP body is. */
function createBody(fields: Record<string, unknown>, conformance: RequestConformance): MockRequestBody {
  for (const field of HTTP_ONLY) {
    if (field in fields) {
      throw invalidRequest(
        `'${field}' is not allowed in a WebSocket response.create: ${field === "background" ? "background responses are HTTP only" : "responses always stream as messages on the socket"}. Remove it.`,
        field,
        "unsupported_parameter",
      );
    }
  }
  return checkCreateBody(fields, conformance);
}

/**
 * Sends the events, one message each, with the turn's faults (see the module comment). The first
 * `MOCK_DEFAULTS.unbatchedChunks` events each get a turn of the event loop (a client sees the first
 * event before the last exists), later ones every `batchEvents` events.
 */
async function sendEvents(
  prepared: Extract<PreparedResponse, { kind: "events" }>,
  peer: WebSocketPeer,
  signal: AbortSignal,
  release: () => void,
): Promise<{ outcome: StreamOutcome; failed: boolean }> {
  const { faults } = prepared;
  const events = keepTerminal(prepared.events, prepared.keep);
  // (`stallBeforeHeadersMs` already ran in `prepareResponse`.)
  if (faults.stallBeforeBodyMs !== undefined) await sleep(faults.stallBeforeBodyMs, undefined, { signal });
  let count = 0;
  let lastSeq = -1;
  let failed = false;
  const fail = async (fault: ErrorEventFault) => {
    await peer.send(errorMessage(500, errorEventPayload(fault), ++lastSeq));
    failed = true;
  };
  for (;;) {
    if (signal.aborted) return { outcome: "cancelled", failed: true };
    if (faults.dropAfterEvents === count) {
      peer.drop();
      return { outcome: "dropped", failed: true };
    }
    if (faults.errorEvent?.afterEvents === count) {
      await fail(faults.errorEvent);
      break;
    }
    if (faults.invalidJsonAfterEvents === count) await peer.send(INVALID_JSON);
    const next = await events.next();
    if (next.done === true) {
      // Faults set past the end of the stream happen after its last event, as over SSE.
      if (faults.invalidJsonAfterEvents !== undefined && faults.invalidJsonAfterEvents > count)
        await peer.send(INVALID_JSON);
      if (faults.dropAfterEvents !== undefined && faults.dropAfterEvents > count) {
        peer.drop();
        return { outcome: "dropped", failed: true };
      }
      if (faults.errorEvent !== undefined && faults.errorEvent.afterEvents > count)
        await fail(faults.errorEvent);
      break;
    }
    const event = next.value;
    const parsed: JsonObject | undefined = typeof event === "string" ? parseJsonObject(event) : event;
    if (isLifecycle(parsed) && isTerminalType(parsed.type)) {
      failed ||= (parsed.response as ResponseResource).status === "failed";
      // Stored already (`keepTerminal`): the connection is free before the client can answer it.
      release();
    }
    await peer.send(typeof event === "string" ? event : JSON.stringify(event));
    count++;
    if (typeof parsed?.sequence_number === "number") lastSeq = Math.max(lastSeq, parsed.sequence_number);
    if (faults.keepAliveEvery !== undefined && count % faults.keepAliveEvery === 0) peer.ping();
    const stall = faults.stallAfterEvents;
    if (stall !== undefined && stall.afterEvents === count) await sleep(stall.ms, undefined, { signal });
    else if (count <= MOCK_DEFAULTS.unbatchedChunks || count % MOCK_DEFAULTS.batchEvents === 0) await tick();
  }
  return { outcome: "finished", failed };
}

/** The text message of the `invalidJsonAfterEvents` fault. */
const INVALID_JSON = '{"type":"response.output_text.delta","sequence_number":';

/** A `WebSocketErrorEvent` (plus `sequence_number` for a mid-stream error), inert as `problemResponse`'s body. */
function errorMessage(status: number, error: ErrorPayload, sequenceNumber?: number): string {
  return safeJson({
    type: "error",
    status,
    ...(sequenceNumber === undefined ? {} : { sequence_number: sequenceNumber }),
    // `WebSocketErrorEvent` requires a string `code`; the type stands in when the payload has none.
    error: { ...error, code: error.code ?? error.type },
  });
}
