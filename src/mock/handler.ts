/**
 * The mock Open Responses server as a fetch-style handler: `(Request) => Promise<Response>`,
 * testable in-process with no socket (the way Hono's `app.request` is), and served over HTTP by
 * `listener.ts` through `handler.answer`, the same handler on the mock's own request and answer
 * values (`reply.ts`), which the listener reads and writes without loading fetch's classes.
 *
 * Routes (with or without the `/v1` prefix):
 * - `POST /v1/responses` — create a response, JSON or SSE (`create-response.ts`);
 * - `POST /v1/chat/completions` — the same model through Chat Completions (`chat/create-chat.ts`);
 * - `POST /v1/responses/compact` — compact a conversation (`compact-response.ts`);
 * - `GET /v1/responses/{id}` — a stored response (an OpenAI-compatible extra, not in the spec);
 * - another method on those paths → 405; any other path → 404; both with a JSON error body;
 * - WebSocket mode: `handler.websocket(upgradeRequest)` admits a `GET /v1/responses` upgrade and
 *   opens its session (`websocket-session.ts`); the listener does the WebSocket handshake.
 *
 * With `apiKey` set, a request (or an upgrade) without `Authorization: Bearer <apiKey>` gets 401
 * `invalid_api_key`. Every answer carries a deterministic `x-request-id` (`req_mock_0001`, …).
 */

import type { EddyError } from "../errors.js";
import { sameSecret } from "../util/secret-compare.js";
import { compactResponse } from "./compact-response.js";
import {
  type CreateContext,
  type CreateInfo,
  createResponse,
  type ResponseModel,
} from "./create-response.js";
import { MOCK_DEFAULTS } from "./defaults.js";
import { httpProblem, jsonReply, problemOf, problemReply, serverProblem } from "./http-error.js";
import { createIdGenerator } from "./ids.js";
import { type MockRequestLog, type RecordedRequest, recordedBody, redactHeaders } from "./recording.js";
import { type MockHttpRequest, type MockReply, requestOf, toResponse } from "./reply.js";
import type { RequestConformance } from "./request.js";
import type { Scenario } from "./scenario.js";
import { parseScenario } from "./scenario-load.js";
import { createResponseStore } from "./state.js";
import { isDropError } from "./stream-writer.js";
import {
  openWebSocketSession,
  type WebSocketPeer,
  type WebSocketSession,
  type WebSocketStats,
} from "./websocket-session.js";

/** Options of the mock server. */
export interface MockOptions {
  /**
   * The script of answers. Without one, the demo model answers (see `demo-model.ts`). It is
   * validated when the handler is created (an invalid one throws `scenario_invalid`).
   * @defaultValue none (the demo model answers)
   */
  scenario?: Scenario;
  /**
   * When set, requests must carry `Authorization: Bearer <apiKey>` (else 401 `invalid_api_key`).
   * @defaultValue none (no authentication)
   */
  apiKey?: string;
  /** Milliseconds since the epoch, for `created_at`/`completed_at`. @defaultValue Date.now */
  clock?: () => number;
  /** Middle part of generated ids (`resp_<idPrefix>_0001`). @defaultValue MOCK_DEFAULTS.idPrefix ("mock") */
  idPrefix?: string;
  /**
   * How short forms real clients send are treated (`src/protocol/shorthands.ts`, docs/interop.md):
   * `"lenient"` rewrites each to the spec's canonical form before validation (a message sent as
   * `{role, content}` gets `type: "message"`); `"strict"` answers 400 naming each one, e.g.
   * `input[0].type is required (--strict)`.
   * @defaultValue "lenient"
   */
  conformance?: RequestConformance;
  /**
   * Called once per request when its answer is complete (stream ended, dropped or cancelled).
   * @defaultValue none
   */
  onRequest?: (log: MockRequestLog) => void;
  /**
   * Answers `/responses` requests (HTTP and WebSocket) instead of the scenario or the demo model,
   * e.g. an agent (`eddy serve`); the protocol — validation, conversation state, events, storage,
   * compaction — stays the mock's. `/chat/completions` is then not served (404).
   * @defaultValue none
   */
  model?: ResponseModel;
  /**
   * Whether `requests` keeps every request (a long-running server that does not read it says
   * false: nothing is kept). @defaultValue true
   */
  recordRequests?: boolean;
}

/** The handler, with the record of what it received. */
export interface MockHandler {
  (request: Request): Promise<Response>;
  /** The same answer on the mock's own values (reply.ts): what the listener serves, with no fetch classes. */
  answer(request: MockHttpRequest): Promise<MockReply>;
  /** Every request received, in arrival order (credentials redacted); WebSocket messages too. */
  readonly requests: RecordedRequest[];
  /** Live counters (WebSocket connections and messages). */
  readonly stats: { readonly websocket: Readonly<WebSocketStats> };
  /** Admits (or refuses, with the HTTP answer to send instead of the handshake) a WebSocket upgrade request. */
  websocket(request: Request): WebSocketAdmission;
  /** Ends pending stalls and streams at once (the listener calls it when closing). */
  close(): void;
}

/** An upgrade refused (401 without the API key, 404 on another path), or admitted: open its session once the handshake is done. */
export type WebSocketAdmission = { refused: Response } | { open(peer: WebSocketPeer): WebSocketSession };

const CREATE = /^(?:\/v1)?\/responses\/?$/;
const CHAT = /^(?:\/v1)?\/chat\/completions\/?$/;
const COMPACT = /^(?:\/v1)?\/responses\/compact\/?$/;
const RETRIEVE = /^(?:\/v1)?\/responses\/([^/]+)\/?$/;

/** Creates the handler (see the module comment). */
export function createMockHandler(options: MockOptions = {}): MockHandler {
  const scenario = options.scenario === undefined ? undefined : parseScenario(options.scenario);
  const ids = createIdGenerator(options.idPrefix ?? MOCK_DEFAULTS.idPrefix);
  const store = createResponseStore();
  const clock = options.clock ?? Date.now;
  const closed = new AbortController();
  const requests: RecordedRequest[] = options.recordRequests === false ? discarding() : [];
  const stats = { websocket: { connections: 0, open: 0, messages: 0 } };
  let turns = 0;
  const conformance = options.conformance ?? MOCK_DEFAULTS.conformance;
  const server = {
    store,
    ids,
    scenario,
    clock,
    conformance,
    nextTurn: () => turns++,
    peekTurn: () => turns,
    ...(options.model === undefined ? {} : { model: options.model }),
  };

  const state: HandlerState = { options, server, closed, requests, stats };
  const answer = (request: MockHttpRequest) => handleHttp(request, state);
  const handle = async (request: Request) => toResponse(await answer(await requestOf(request)));
  const websocket = (request: Request) => admitWebSocket(request, state);
  return Object.assign(handle, { requests, stats, answer, websocket, close: () => closed.abort() });
}

/** What every request of one handler shares. */
interface HandlerState {
  options: MockOptions;
  server: Omit<CreateContext, "connection" | "signal" | "headers">;
  /** Aborted by `close()`. */
  closed: AbortController;
  requests: RecordedRequest[];
  stats: { websocket: WebSocketStats };
}

/** Answers one HTTP request: records it, routes it, turns a failure into its error response. */
async function handleHttp(request: MockHttpRequest, state: HandlerState): Promise<MockReply> {
  const { options, closed } = state;
  const started = performance.now();
  const path = new URL(request.url).pathname;
  const headers = { "x-request-id": state.server.ids.next("req") };
  const text = request.text;
  const record: RecordedRequest = {
    method: request.method,
    transport: "http",
    path,
    headers: redactHeaders(request.headers),
    body: recordedBody(text),
  };
  state.requests.push(record);
  const info: CreateInfo = { stream: false, faults: [] };
  const log: RequestLogger = (status, outcome) => {
    if (info.turn !== undefined) record.turn = info.turn;
    options.onRequest?.({
      method: request.method,
      path,
      transport: "http",
      status,
      ...info,
      outcome,
      durationMs: performance.now() - started,
    });
  };
  try {
    checkAuth(request.headers.authorization, options.apiKey);
    if (Buffer.byteLength(text) > MOCK_DEFAULTS.maxBodyBytes) throw tooLarge();
    return await route({ request, path, text, headers, info, record, log }, state);
  } catch (error) {
    if (isDropError(error)) {
      log(0, "dropped");
      throw error;
    }
    if (request.signal.aborted || closed.signal.aborted) {
      log(0, "cancelled"); // the client left (or the server closed) during a stall: nobody to answer
      return { status: 499, headers, body: null };
    }
    const problem = problemOf(error) ?? serverProblem(error);
    log(problem.status, "answered");
    return problemReply(problem, headers);
  }
}

/** Logs a request's outcome once it is known. */
type RequestLogger = (status: number, outcome: MockRequestLog["outcome"]) => void;

/** One HTTP request, read and recorded. */
interface IncomingRequest {
  request: MockHttpRequest;
  path: string;
  text: string;
  headers: Record<string, string>;
  info: CreateInfo;
  record: RecordedRequest;
  log: RequestLogger;
}

/** The endpoint a request's path names: create (Responses or Chat Completions), compact, retrieve. */
async function route(r: IncomingRequest, state: HandlerState): Promise<MockReply> {
  const { request, path, text, headers, info, log } = r;
  const server = state.server;
  // The Chat Completions half (and the zod schema of its bodies) loads with the first chat request.
  const create = CREATE.test(path)
    ? createResponse
    : CHAT.test(path) && server.model === undefined
      ? (await import("./chat/create-chat.js")).createChatCompletion
      : undefined;
  if (create !== undefined) {
    allow(request.method, "POST", path);
    const result = await create(
      text,
      {
        ...server,
        headers,
        // Stalls end when the server closes or the client goes away.
        signal: AbortSignal.any([state.closed.signal, request.signal]),
      },
      info,
    );
    if (info.turn !== undefined) r.record.turn = info.turn;
    void result.ended.then((outcome) => log(result.reply.status, outcome));
    return result.reply;
  }
  if (COMPACT.test(path)) {
    allow(request.method, "POST", path);
    const compacted = compactResponse(text, server, info);
    log(200, "answered");
    return jsonReply(200, compacted, headers);
  }
  const retrieve = RETRIEVE.exec(path);
  if (retrieve !== null) {
    allow(request.method, "GET", path);
    const stored = server.store.get(decoded(retrieve[1] ?? ""));
    if (stored === undefined)
      throw notFound(
        `No response found with id '${(retrieve[1] ?? "").slice(0, 100)}'.`,
        "response_not_found",
      );
    log(200, "answered");
    return jsonReply(200, stored.resource, headers);
  }
  throw notFound(
    `Invalid URL (${request.method} ${path}): the mock serves POST /v1/responses, POST /v1/responses/compact and POST /v1/chat/completions.`,
    "not_found",
  );
}

/** Admits a WebSocket upgrade on `/v1/responses` (with the right key), or refuses it. */
function admitWebSocket(request: Request, state: HandlerState): WebSocketAdmission {
  const { options, stats } = state;
  const path = new URL(request.url).pathname;
  const log = (status: number, connection?: number) =>
    options.onRequest?.({
      method: request.method,
      path,
      transport: "websocket",
      ...(connection === undefined ? {} : { connection }),
      status,
      stream: false,
      faults: [],
      outcome: "answered",
      durationMs: 0,
    });
  try {
    checkAuth(request.headers.get("authorization") ?? undefined, options.apiKey);
    if (!CREATE.test(path))
      throw notFound(
        `Invalid URL (WebSocket ${path}): WebSocket mode is served on /v1/responses.`,
        "not_found",
      );
  } catch (error) {
    const problem = problemOf(error) ?? serverProblem(error);
    log(problem.status);
    return { refused: toResponse(problemReply(problem, { "x-request-id": state.server.ids.next("req") })) };
  }
  return {
    open(peer) {
      const connection = stats.websocket.connections + 1;
      log(101, connection);
      return openWebSocketSession({
        server: state.server,
        signal: state.closed.signal,
        peer,
        connection,
        path,
        headers: redactHeaders(Object.fromEntries(request.headers)),
        requests: state.requests,
        onRequest: options.onRequest,
        stats: stats.websocket,
      });
    },
  };
}

/** A list that keeps nothing (`recordRequests: false`): `push` drops what it is given. */
function discarding(): RecordedRequest[] {
  const list: RecordedRequest[] = [];
  list.push = () => 0;
  return list;
}

/** A path segment, percent-decoded (a malformed escape is kept as sent: it names no response). */
function decoded(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}

function checkAuth(header: string | undefined, apiKey: string | undefined): void {
  if (apiKey === undefined) return;
  const token = header?.match(/^Bearer\s+(.+)$/i)?.[1]?.trim();
  // In constant time: eddy serve's face checks its token here for WebSocket upgrades.
  if (token !== undefined && sameSecret(token, apiKey)) return;
  throw httpProblem({
    status: 401,
    error: {
      type: "invalid_request_error",
      code: "invalid_api_key",
      message:
        token === undefined
          ? "You didn't provide an API key. Send it in the Authorization header: 'Authorization: Bearer YOUR_KEY'."
          : "Incorrect API key provided.",
      param: null,
    },
  });
}

function allow(method: string, allowed: string, path: string): void {
  if (method === allowed) return;
  throw httpProblem({
    status: 405,
    error: {
      type: "invalid_request_error",
      code: "method_not_allowed",
      message: `Method ${method} is not allowed on ${path}; use ${allowed}.`,
      param: null,
    },
    headers: { allow: allowed },
  });
}

function notFound(message: string, code: string): EddyError {
  return httpProblem({ status: 404, error: { type: "invalid_request_error", code, message, param: null } });
}

function tooLarge(): EddyError {
  return httpProblem({
    status: 413,
    error: {
      type: "invalid_request_error",
      code: "request_too_large",
      message: `The request body is larger than ${MOCK_DEFAULTS.maxBodyBytes} bytes.`,
      param: null,
    },
  });
}
