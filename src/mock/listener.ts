/**
 * The mock server on a real socket: a thin `node:http` adapter around the handler (its `answer`,
 * on the mock's own request and answer values: reply.ts), bound to 127.0.0.1 only.
 *
 * Streaming is real. Node coalesces `res.write()` calls made in the same tick into one packet, so
 * a loop of writes would deliver a whole stream at once; instead each chunk of the body is written
 * on its own, the loop yields to the event loop (`setImmediate`) after each write and waits for
 * `'drain'` when the socket's buffer is full. A client therefore sees the first event before the
 * server has produced the last one, and a slow client slows the server down (backpressure).
 *
 * WebSocket mode shares the listener: an `upgrade` request is admitted (or refused with its HTTP
 * answer, e.g. 401 before any handshake) by the handler, then `ws` (in `noServer` mode, the
 * maintained WebSocket implementation for Node) does the handshake and framing, and each connection
 * gets a session (`websocket-session.ts`).
 */
import { once } from "node:events";
import {
  createServer,
  type IncomingMessage,
  type Server,
  type ServerResponse,
  STATUS_CODES,
} from "node:http";
import type { AddressInfo } from "node:net";
import type { Duplex } from "node:stream";
import type { WebSocket, WebSocketServer } from "ws";
import { EddyError } from "../errors.js";
import { LISTEN_TIMEOUTS, type ListenTimeouts, refuseConnect, serverOptions } from "../util/http-server.js";
import { importPackage } from "../util/import-package.js";
import { drained } from "../util/stream.js";
import { MOCK_DEFAULTS } from "./defaults.js";
import { createMockHandler, type MockOptions, type WebSocketAdmission } from "./handler.js";
import type { RecordedRequest } from "./recording.js";
import { bodyless, bodyText, type MockHttpRequest, type MockReply } from "./reply.js";
import type { Scenario } from "./scenario.js";
import type { WebSocketPeer, WebSocketStats } from "./websocket-session.js";

/** Options of `createMockServer`: the handler's, plus where to listen. */
export interface MockServerOptions extends Omit<MockOptions, "scenario"> {
  /** How long a client may take to send a request. @defaultValue `LISTEN_TIMEOUTS` */
  timeouts?: Partial<ListenTimeouts>;
  /** A scenario object, or the path of a JSON/YAML scenario file. @defaultValue none (the demo model answers) */
  scenario?: Scenario | string;
  /** @defaultValue 0 (the OS picks a free port) */
  port?: number;
  /**
   * Connections open at once (keep-alive, event streams and WebSockets count); one more is closed
   * as it comes, unanswered, and the next is served once one goes. A whole number of at least 1.
   * @defaultValue MOCK_DEFAULTS.maxConnections (1024)
   */
  maxConnections?: number;
}

/** A running mock server. */
export interface MockServer {
  /** The base URL clients use, e.g. `http://127.0.0.1:54321/v1`. */
  readonly url: string;
  readonly port: number;
  /** Every request received, in arrival order (credentials redacted); WebSocket messages too (`transport: "websocket"`). */
  readonly requests: RecordedRequest[];
  /** Connection counters, read at the time of the call (e.g. to check that a whole run used one connection). */
  readonly stats: MockServerStats;
  /** Stops listening, ends open streams and stalls, and closes every connection (WebSockets included). */
  close(): Promise<void>;
}

/** Connection counters of a running mock server. */
export interface MockServerStats {
  /** TCP connections accepted since the server started: HTTP (keep-alive reuses one) and WebSocket alike. */
  connections: number;
  /** WebSocket mode: connections opened, open now, and client messages received. */
  websocket: WebSocketStats;
}

/**
 * Starts a mock server on 127.0.0.1.
 *
 * @example
 * ```ts
 * const server = await createMockServer({ scenario: "tool-loop.yaml" }); // or a Scenario object, or nothing (demo model)
 * const provider = createOpenResponsesProvider({ baseURL: server.url });
 * // … run agents against it; server.requests records every request
 * await server.close();
 * ```
 */
export async function createMockServer(options: MockServerOptions = {}): Promise<MockServer> {
  const { scenario, port = MOCK_DEFAULTS.port, timeouts, maxConnections, ...rest } = options;
  const connectionCap = checkedMaxConnections(maxConnections);
  const loaded =
    typeof scenario === "string"
      ? await (await import("./scenario-load.js")).loadScenario(scenario)
      : scenario;
  const handler = createMockHandler(loaded === undefined ? rest : { ...rest, scenario: loaded });
  const unreadMs = timeouts?.unreadMs ?? LISTEN_TIMEOUTS.unreadMs;
  const server = createServer(serverOptions(timeouts), (req, res) => {
    if (answeredUnsupportedMethod(req, res)) return;
    serve(req, res, handler.answer, unreadMs).catch(() => res.destroy());
  });
  refuseConnect(server);
  // Past it, node closes a new connection as it comes (a thousand idle sockets took a thousand fds).
  server.maxConnections = connectionCap;
  const sockets = attachWebSockets(server, handler.websocket, { unreadMs });
  let connections = 0;
  server.on("connection", () => connections++);
  server.listen(port, MOCK_DEFAULTS.host);
  try {
    await once(server, "listening");
  } catch (error) {
    throw new EddyError(
      "invalid_config",
      `mock server: cannot listen on ${MOCK_DEFAULTS.host}:${port} (${describe(error)})`,
      {
        fault: "user",
        cause: error,
      },
    );
  }
  const address = server.address() as AddressInfo;
  let closing: Promise<void> | undefined;
  return {
    url: `http://${MOCK_DEFAULTS.host}:${address.port}/v1`,
    port: address.port,
    requests: handler.requests,
    get stats() {
      return { connections, websocket: { ...handler.stats.websocket } };
    },
    close() {
      closing ??= new Promise<void>((resolve) => {
        handler.close();
        sockets.close();
        server.close(() => resolve());
        server.closeAllConnections();
      });
      return closing;
    },
  };
}

/** `MockServerOptions.maxConnections`, or its default; anything but a whole number ≥ 1 is a user error naming it. */
function checkedMaxConnections(value: unknown): number {
  if (value === undefined) return MOCK_DEFAULTS.maxConnections;
  if (typeof value === "number" && Number.isSafeInteger(value) && value >= 1) return value;
  const shown = typeof value === "string" ? JSON.stringify(value.slice(0, 40)) : String(value);
  throw new EddyError(
    "invalid_config",
    `mock server: maxConnections must be a whole number of at least 1, not ${shown}`,
    { fault: "user" },
  );
}

/**
 * Methods a fetch `Request` cannot carry (TRACE; CONNECT comes as its own event; node answers TRACK 400): the
 * handlers take `Request`s, and making one threw, so the client got a closed socket and no answer.
 * They are answered 501 here instead (shared by `eddy serve`'s listener).
 */
const UNSUPPORTED_METHODS: ReadonlySet<string> = new Set(["TRACE", "CONNECT"]);

/** True when `req`'s method is one no handler here takes; it has been answered 501. */
export function answeredUnsupportedMethod(req: IncomingMessage, res: ServerResponse): boolean {
  const method = req.method ?? "";
  if (!UNSUPPORTED_METHODS.has(method)) return false;
  const error = {
    type: "invalid_request_error",
    code: "method_not_supported",
    message: `${method} is not supported by this server`,
    param: null,
  };
  res
    .writeHead(501, { "content-type": "application/json", connection: "close" })
    .end(JSON.stringify({ error }));
  return true;
}

async function serve(
  req: IncomingMessage,
  res: ServerResponse,
  answer: (r: MockHttpRequest) => Promise<MockReply>,
  unreadMs: number,
) {
  const body = await readBody(req);
  if (body === undefined) {
    res.writeHead(413, { "content-type": "application/json" });
    res.end(
      JSON.stringify({
        error: {
          type: "invalid_request_error",
          code: "request_too_large",
          message: "The request body is too large.",
          param: null,
        },
      }),
    );
    return;
  }
  const gone = new AbortController();
  res.once("close", () => gone.abort());
  let reply: MockReply;
  try {
    reply = await answer(nodeRequestOf(req, body, gone.signal));
  } catch {
    res.destroy(); // a dropped connection (or a handler bug): the client sees the socket close
    return;
  }
  const outHeaders = headerRecord(Object.entries(reply.headers));
  if (typeof reply.body === "string") {
    const bytes = Buffer.from(reply.body);
    res.writeHead(reply.status, { ...outHeaders, "content-length": String(bytes.length) }).end(bytes);
    return;
  }
  if (reply.body === null) {
    res.writeHead(reply.status, outHeaders).end();
    return;
  }
  res.writeHead(reply.status, outHeaders);
  res.flushHeaders(); // headers go out now, so "stall before the first body byte" is observable
  await pipeStream(reply.body, res, unreadMs);
}

/** A node request as the handler reads it (no body for GET and HEAD). */
function nodeRequestOf(req: IncomingMessage, body: Buffer, signal: AbortSignal): MockHttpRequest {
  const method = req.method ?? "GET";
  return {
    method,
    url: `http://${MOCK_DEFAULTS.host}${req.url ?? "/"}`,
    headers: headerRecord(Object.entries(req.headers)),
    text: bodyless(method) ? "" : bodyText(body),
    signal,
  };
}

/** HTTP's whitespace around a header value, which `Headers` trims. */
const OUTER_WHITESPACE = /^[\t\n\r ]+|[\t\n\r ]+$/g;

/**
 * Header entries as `Headers` would hold them: names in lower case and in order, a value trimmed,
 * a repeated name's values joined with `, `.
 */
function headerRecord(entries: [string, string | string[] | undefined][]): Record<string, string> {
  const joined = new Map<string, string>();
  for (const [name, value] of entries) {
    if (value === undefined) continue;
    const key = name.toLowerCase();
    const text = (Array.isArray(value) ? value.join(", ") : value).replace(OUTER_WHITESPACE, "");
    const before = joined.get(key);
    joined.set(key, before === undefined ? text : `${before}, ${text}`);
  }
  // fromEntries defines each name as a property of its own, a `__proto__` header too.
  return Object.fromEntries([...joined].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}

/** The fetch `Request` of a node upgrade request, for a WebSocket admission (no body). */
function upgradeRequest(req: IncomingMessage): Request {
  const headers = new Headers(headerRecord(Object.entries(req.headers)));
  return new Request(`http://${MOCK_DEFAULTS.host}${req.url ?? "/"}`, {
    method: req.method ?? "GET",
    headers,
  });
}

/**
 * The listener's `ws` server, created (and `ws` loaded) by the first upgrade request, so a mock
 * that serves only HTTP never loads it. Once closed, it terminates every connection and refuses
 * new ones.
 */
interface LazyWebSocketServer {
  get(): Promise<WebSocketServer | undefined>;
  close(): void;
}

function webSocketServer(maxPayload: number): LazyWebSocketServer {
  let server: Promise<WebSocketServer> | undefined;
  let closed = false;
  const shut = (s: WebSocketServer) => {
    for (const ws of s.clients) ws.terminate();
    s.close();
  };
  return {
    async get() {
      if (closed) return undefined;
      server ??= importPackage<typeof import("ws")>("ws").then(
        ({ WebSocketServer }) =>
          new WebSocketServer({
            noServer: true,
            maxPayload,
            perMessageDeflate: false,
          }),
      );
      const s = await server;
      return closed ? undefined : s;
    },
    close() {
      closed = true;
      void server?.then(shut);
    },
  };
}

/**
 * Serves WebSocket mode on `server`: each `upgrade` request is admitted or refused by `admit` (a
 * mock handler's `websocket`, or `eddy serve`'s face), then `ws` does the handshake. A message
 * larger than `maxMessageBytes` (default: the mock's body limit) closes its connection (1009).
 * `close()` terminates every connection and refuses new ones.
 */
export function attachWebSockets(
  server: Server,
  admit: (request: Request) => WebSocketAdmission,
  options: { unreadMs?: number; maxMessageBytes?: number } = {},
): { close(): void } {
  const sockets = webSocketServer(options.maxMessageBytes ?? MOCK_DEFAULTS.maxBodyBytes);
  const unreadMs = options.unreadMs ?? LISTEN_TIMEOUTS.unreadMs;
  server.on("upgrade", (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    upgrade({ req, socket, head, admit, lazySockets: sockets, unreadMs }).catch(() => socket.destroy());
  });
  return sockets;
}

/** An upgrade request and what answers it. */
interface Upgrade {
  req: IncomingMessage;
  socket: Duplex;
  head: Buffer;
  admit: (request: Request) => WebSocketAdmission;
  lazySockets: LazyWebSocketServer;
  /** `ListenTimeouts.unreadMs` */
  unreadMs: number;
}

/** An upgrade request: refused with the handler's HTTP answer, or handed to `ws` and given a session. */
async function upgrade({ req, socket, head, admit, lazySockets, unreadMs }: Upgrade): Promise<void> {
  const admission = admit(upgradeRequest(req));
  if ("refused" in admission) {
    const response = admission.refused;
    const body = Buffer.from(await response.arrayBuffer());
    const lines = [`HTTP/1.1 ${response.status} ${STATUS_CODES[response.status] ?? ""}`];
    response.headers.forEach((value, name) => {
      lines.push(`${name}: ${value}`);
    });
    lines.push(`content-length: ${body.length}`, "connection: close", "", "");
    socket.end(Buffer.concat([Buffer.from(lines.join("\r\n")), body]));
    return;
  }
  const sockets = await lazySockets.get();
  if (sockets === undefined) {
    socket.destroy(); // the server is closing
    return;
  }
  sockets.handleUpgrade(req, socket, head, (ws) => {
    const session = admission.open(peerOf(ws, unreadMs));
    // binaryType is "nodebuffer" (the default), so a message arrives as one Buffer.
    ws.on("message", (data, isBinary) =>
      session.receive(isBinary ? undefined : (data as Buffer).toString("utf8")),
    );
    ws.on("close", () => session.end());
    ws.on("error", () => ws.terminate()); // a protocol error from the client: the socket is gone
  });
}

/**
 * A session's view of a `ws` WebSocket: sends wait for the socket only past the high-water mark,
 * and a client that leaves them unread for `unreadMs` is dropped (`ListenTimeouts.unreadMs`).
 */
function peerOf(ws: WebSocket, unreadMs: number): WebSocketPeer {
  return {
    send(text) {
      if (ws.readyState !== ws.OPEN) return;
      if (ws.bufferedAmount < MOCK_DEFAULTS.websocketHighWaterBytes) {
        ws.send(text);
        return;
      }
      return new Promise<void>((resolve) => {
        const timer = setTimeout(() => ws.terminate(), unreadMs);
        const done = () => {
          clearTimeout(timer);
          ws.off("close", done);
          resolve();
        };
        ws.once("close", done); // a socket that closes meanwhile may never call back
        ws.send(text, done);
      });
    },
    ping: () => ws.ping(),
    drop: () => ws.terminate(),
  };
}

/**
 * Waits until `res` takes more (`'drain'`) or closes; a client that leaves it full for `unreadMs`
 * has stopped reading: its connection is closed (which cancels the stream being written).
 */
export async function drainedOrCut(res: ServerResponse, unreadMs: number): Promise<void> {
  const timer = setTimeout(() => res.destroy(), unreadMs);
  try {
    await drained(res);
  } finally {
    clearTimeout(timer);
  }
}

/** Writes each chunk on its own, yielding between writes and honouring backpressure. */
async function pipeStream(
  body: ReadableStream<Uint8Array>,
  res: ServerResponse,
  unreadMs: number,
): Promise<void> {
  const reader = body.getReader();
  const cancel = () => void reader.cancel().catch(() => {});
  if (res.destroyed) {
    cancel(); // the client left while the answer was being prepared
    return;
  }
  res.once("close", cancel);
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      if (res.destroyed) return;
      if (!res.write(value)) await drainedOrCut(res, unreadMs);
      await new Promise<void>((resolve) => setImmediate(resolve));
    }
    res.end();
  } catch {
    res.destroy(); // the body failed (a dropAfterEvents fault): reset the connection mid-body
  } finally {
    res.off("close", cancel);
  }
}

/** The request body, or `undefined` when it exceeds `MOCK_DEFAULTS.maxBodyBytes`. */
async function readBody(req: IncomingMessage): Promise<Buffer | undefined> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MOCK_DEFAULTS.maxBodyBytes) return undefined;
    chunks.push(chunk);
  }
  return Buffer.concat(chunks);
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
