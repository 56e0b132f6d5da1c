/**
 * `eddy serve` on a real socket: a thin `node:http` adapter around the fetch-style handler. The
 * request body is handed over as a stream (the handler stops reading at its limit); a response
 * body is written chunk by chunk, waiting for `'drain'` when the socket is full, so a slow client
 * holds back only its own stream; a client that goes away cancels its stream.
 *
 * Without a token the server listens on a loopback address only: anyone who can reach it can run
 * the server's tools.
 *
 * A client that sends its request slowly (a header a minute, a body byte by byte) holds a
 * connection only for a bounded time: the request's headers must arrive within `headersMs` and the
 * whole request within `requestMs` (`LISTEN_TIMEOUTS`, `serverOptions` in src/util/http-server.ts, as
 * for `eddy mock`), else the connection gets a 408 and is closed. A response may take as long as it
 * takes: an event stream is not a request. But a client that stops reading one (its socket full
 * for `unreadMs`) has its connection closed, which cancels the stream.
 */
import { once } from "node:events";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { Readable } from "node:stream";
import { EddyError } from "../errors.js";
import type { WebSocketAdmission } from "../mock/handler.js";
import { answeredUnsupportedMethod, attachWebSockets, drainedOrCut } from "../mock/listener.js";
import { LISTEN_TIMEOUTS, type ListenTimeouts, refuseConnect, serverOptions } from "../util/http-server.js";
import type { ServeHandler } from "./handler.js";

/** Options of `listen`. */
export interface ListenOptions {
  /** @defaultValue `LISTEN_TIMEOUTS` */
  timeouts?: Partial<ListenTimeouts>;
  /** @defaultValue "127.0.0.1" */
  host?: string;
  /** @defaultValue 0 (the OS picks a free port) */
  port?: number;
  /** Whether the handler requires a token: without one, only a loopback host is accepted. */
  authenticated: boolean;
  /**
   * Admits WebSocket upgrades (the Open Responses face's WebSocket mode, src/serve/responses.ts).
   * @defaultValue none (upgrades are refused)
   */
  websocket?: (request: Request) => WebSocketAdmission;
  /**
   * Largest WebSocket message accepted: a bigger one closes its connection (1009, message too
   * big). WebSocket mode took 64 MiB messages, 64 times what the same request may be over HTTP.
   * @defaultValue SERVE_MAX_MESSAGE_BYTES (1 MiB, the handler's and the face's body limit)
   */
  maxMessageBytes?: number;
  /**
   * Connections open at once (event streams and WebSockets included); one more is closed as it
   * comes, so a client opening thousands cannot take every file descriptor. @defaultValue SERVE_MAX_CONNECTIONS (512)
   */
  maxConnections?: number;
  /**
   * Connections open at once from one address: one client (an unauthenticated one too: a token is
   * checked per request, a connection is taken before) cannot hold every connection the server
   * has. @defaultValue SERVE_MAX_CONNECTIONS_PER_ADDRESS (64)
   */
  maxConnectionsPerAddress?: number;
}

/** The default of `ListenOptions.maxConnections`. */
export const SERVE_MAX_CONNECTIONS = 512;
/** The default of `ListenOptions.maxMessageBytes`. */
export const SERVE_MAX_MESSAGE_BYTES = 1024 * 1024;
/** The default of `ListenOptions.maxConnectionsPerAddress`. */
export const SERVE_MAX_CONNECTIONS_PER_ADDRESS = 64;

/** A listening server. */
export interface ServeListener {
  /** `http://HOST:PORT` */
  readonly url: string;
  readonly port: number;
  /** Stops listening and closes every connection (open event streams included). */
  close(): Promise<void>;
}

const LOOPBACK = new Set(["127.0.0.1", "::1", "localhost"]);

/** Whether `host` is a loopback address. */
export function isLoopback(host: string): boolean {
  return LOOPBACK.has(host) || /^127\.\d+\.\d+\.\d+$/.test(host);
}

/** Serves `handler` on HOST:PORT (see the module comment). */
export async function listen(handler: ServeHandler, options: ListenOptions): Promise<ServeListener> {
  const host = options.host ?? "127.0.0.1";
  if (!options.authenticated && !isLoopback(host))
    throw new EddyError(
      "invalid_config",
      `eddy serve: refusing to listen on ${host} without a token — set --token (or EDDY_SERVE_TOKEN), or listen on 127.0.0.1`,
      { fault: "user" },
    );
  const unreadMs = options.timeouts?.unreadMs ?? LISTEN_TIMEOUTS.unreadMs;
  const server = createServer(serverOptions(options.timeouts), (req, res) => {
    if (answeredUnsupportedMethod(req, res)) return;
    serve(req, res, handler, { host, unreadMs }).catch(() => res.destroy());
  });
  refuseConnect(server);
  server.maxConnections = options.maxConnections ?? SERVE_MAX_CONNECTIONS;
  limitPerAddress(server, options.maxConnectionsPerAddress ?? SERVE_MAX_CONNECTIONS_PER_ADDRESS);
  const sockets =
    options.websocket === undefined
      ? undefined
      : attachWebSockets(server, options.websocket, {
          unreadMs,
          maxMessageBytes: options.maxMessageBytes ?? SERVE_MAX_MESSAGE_BYTES,
        });
  server.listen(options.port ?? 0, host);
  try {
    await once(server, "listening");
  } catch (error) {
    throw new EddyError(
      "invalid_config",
      `eddy serve: cannot listen on ${host}:${options.port ?? 0} (${error instanceof Error ? error.message : String(error)})`,
      { fault: "user", cause: error },
    );
  }
  const address = server.address() as AddressInfo;
  const shown = host.includes(":") ? `[${host}]` : host;
  let closing: Promise<void> | undefined;
  return {
    url: `http://${shown}:${address.port}`,
    port: address.port,
    close() {
      closing ??= new Promise<void>((resolve) => {
        sockets?.close();
        server.close(() => resolve());
        server.closeAllConnections();
      });
      return closing;
    },
  };
}

/** Closes a connection as it comes when its address holds `limit` already. */
function limitPerAddress(server: Server, limit: number): void {
  const open = new Map<string, number>();
  server.on("connection", (socket: Socket) => {
    const address = socket.remoteAddress ?? "";
    const count = open.get(address) ?? 0;
    if (count >= limit) {
      socket.destroy();
      return;
    }
    open.set(address, count + 1);
    socket.once("close", () => {
      const left = (open.get(address) ?? 1) - 1;
      if (left === 0) open.delete(address);
      else open.set(address, left);
    });
  });
}

async function serve(
  req: IncomingMessage,
  res: ServerResponse,
  handler: ServeHandler,
  { host, unreadMs }: { host: string; unreadMs: number },
) {
  const gone = new AbortController();
  res.once("close", () => gone.abort());
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers))
    if (value !== undefined) headers.set(name, Array.isArray(value) ? value.join(", ") : value);
  const method = req.method ?? "GET";
  const hasBody = method !== "GET" && method !== "HEAD";
  const request = new Request(`http://${host.includes(":") ? `[${host}]` : host}${req.url ?? "/"}`, {
    method,
    headers,
    signal: gone.signal,
    ...(hasBody ? { body: Readable.toWeb(req) as ReadableStream<Uint8Array>, duplex: "half" } : {}),
  } as RequestInit);
  const response = await handler(request);
  const out: Record<string, string> = {};
  response.headers.forEach((value, name) => {
    out[name] = value;
  });
  if (response.body === null) {
    res.writeHead(response.status, out).end();
    return;
  }
  if (!out["content-type"]?.startsWith("text/event-stream")) {
    const bytes = Buffer.from(await response.arrayBuffer());
    // A body the handler did not read (refused early): close the connection rather than drain it.
    if (hasBody && !req.readableEnded) out.connection = "close";
    res.writeHead(response.status, { ...out, "content-length": String(bytes.length) }).end(bytes);
    return;
  }
  res.writeHead(response.status, out);
  res.flushHeaders();
  await pipe(response.body, res, unreadMs);
}

/** Writes each chunk, honouring backpressure; a client that leaves, or stops reading, cancels the stream. */
async function pipe(body: ReadableStream<Uint8Array>, res: ServerResponse, unreadMs: number): Promise<void> {
  const reader = body.getReader();
  const cancel = () => void reader.cancel().catch(() => {});
  if (res.destroyed) {
    cancel();
    return;
  }
  res.once("close", cancel);
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      if (res.destroyed) return;
      if (!res.write(value)) await drainedOrCut(res, unreadMs);
    }
    res.end();
  } catch {
    res.destroy();
  } finally {
    res.off("close", cancel);
  }
}
