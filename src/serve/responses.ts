/**
 * The Open Responses face of `eddy serve`: an eddy agent as an Open Responses model. The protocol
 * server is the mock's (src/mock/handler.ts: request validation, `previous_response_id` and the
 * response store, `GET /v1/responses/{id}`, SSE and JSON answers, WebSocket mode with its
 * per-connection cache of `store: false` responses, `POST /v1/responses/compact`) with the agent
 * loop plugged in as its model (`responses-model.ts`), so both speak the same, compliance-tested
 * protocol.
 *
 * Requests reach it through the serve handler's `extra` routes, after the bearer-token check; the
 * body is read up to the server's limit (413 beyond) before the protocol server sees it. WebSocket
 * upgrades (`GET /v1/responses`) are admitted by `websocket`, which checks the same token.
 */
import { createMockHandler, type WebSocketAdmission } from "../mock/handler.js";
import { readBody } from "./handler.js";
import { agentModel, FACE_MAX_RESPONSES } from "./responses-model.js";
import type { ServeRuntime } from "./runs.js";

/** Options of the face. */
export interface ResponsesFaceOptions {
  /** The server's bearer token (WebSocket upgrades must carry it). @defaultValue none */
  token?: string;
  /** Largest request body accepted (413 beyond). @defaultValue 1 MiB */
  maxBodyBytes?: number;
  /** Responses running at once (429 with `Retry-After` beyond). @defaultValue FACE_MAX_RESPONSES (32) */
  maxResponses?: number;
}

/** The face: HTTP routes for the serve handler's `extra`, and WebSocket admission for the listener. */
export interface ResponsesFace {
  /** Answers a request on `/v1/responses…`; `undefined` for any other path. */
  handle(request: Request, path: string): Promise<Response> | undefined;
  /** Admits (or refuses) a WebSocket upgrade on `/v1/responses`. */
  websocket(request: Request): WebSocketAdmission;
  /** Ends open streams (the server is stopping). */
  close(): void;
}

/** The paths the face answers: `/v1/responses`, `/v1/responses/compact`, `/v1/responses/{id}`. */
const FACE_PATH = /^\/v1\/responses(?:\/[^/]*)?\/?$/;

/** Creates the face over the server's runtime (see the module comment). */
export function createResponsesFace(
  runtime: ServeRuntime,
  options: ResponsesFaceOptions = {},
): ResponsesFace {
  const protocol = createMockHandler({
    model: agentModel(runtime, { open: 0, max: options.maxResponses ?? FACE_MAX_RESPONSES }),
    idPrefix: "eddy",
    recordRequests: false,
    ...(options.token === undefined ? {} : { apiKey: options.token }),
  });
  const max = options.maxBodyBytes ?? 1024 * 1024;
  return {
    handle(request, path) {
      if (!FACE_PATH.test(path)) return undefined;
      return forward(request, max, protocol);
    },
    websocket: (request) => protocol.websocket(request),
    close: () => protocol.close(),
  };
}

/** The request with its body read (bounded), handed to the protocol server. */
async function forward(
  request: Request,
  max: number,
  protocol: (request: Request) => Promise<Response>,
): Promise<Response> {
  const hasBody = request.method !== "GET" && request.method !== "HEAD";
  const text = hasBody ? await readBody(request, max) : "";
  return protocol(
    new Request(request.url, {
      method: request.method,
      headers: request.headers,
      signal: request.signal,
      ...(hasBody ? { body: text } : {}),
    }),
  );
}
