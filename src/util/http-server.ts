/**
 * What eddy's HTTP servers share (`eddy mock`, src/mock/listener.ts; `eddy serve`,
 * src/serve/listener.ts; `eddy view --live`, src/cli/view-live-page.ts): the bounds of a request
 * and the answer to a CONNECT. A module of its own, so a server that needs only these (the viewer's
 * page) does not load the mock's handler.
 */
import type { IncomingMessage, Server, ServerOptions } from "node:http";
import type { Duplex } from "node:stream";

/**
 * How long a client may take to send a request to eddy's servers (`eddy mock`, `eddy serve`): a
 * client that sends its headers or body slowly holds a connection only this long, then gets a 408
 * and a closed connection. A response may take as long as it takes (an event stream is not a
 * request), but only while the client reads it: one that leaves the server's writes unread for
 * `unreadMs` has its connection closed.
 */
export interface ListenTimeouts {
  /** Until the request's headers are in. */
  headersMs: number;
  /** Until the whole request (headers and body) is in; at least `headersMs`. */
  requestMs: number;
  /**
   * Longest wait for a client to take more of an answer (an HTTP body or a WebSocket message) once
   * its socket is full: past it the connection is closed and the answer's stream cancelled. A
   * client that stopped reading held its connection forever, and `eddy serve` kept every frame
   * of the run it was answering in memory (docs/pitfalls.md #86).
   */
  unreadMs: number;
}

/** The default `ListenTimeouts`: 15 s for the headers, 60 s for the request, 60 s unread. */
export const LISTEN_TIMEOUTS: Readonly<ListenTimeouts> = {
  headersMs: 15_000,
  requestMs: 60_000,
  unreadMs: 60_000,
};

/**
 * The node:http options of eddy's servers: no Nagle delay, idle keep-alive connections closed after
 * 5 s, and the request bounds of `timeouts`, checked every second (Node's default: every 30 s,
 * which let a slow client stay up to 30 s past its bound).
 */
export function serverOptions(timeouts: Partial<ListenTimeouts> = {}): ServerOptions {
  const headersTimeout = timeouts.headersMs ?? LISTEN_TIMEOUTS.headersMs;
  return {
    noDelay: true,
    keepAliveTimeout: 5_000,
    headersTimeout,
    requestTimeout: Math.max(headersTimeout, timeouts.requestMs ?? LISTEN_TIMEOUTS.requestMs),
    connectionsCheckingInterval: Math.min(1_000, headersTimeout),
  };
}

/** A CONNECT request (node emits it apart from requests and closes the socket unanswered): 501. */
export function refuseConnect(server: Server): void {
  server.on("connect", (_req: IncomingMessage, socket: Duplex) => {
    socket.end("HTTP/1.1 501 Not Implemented\r\nconnection: close\r\ncontent-length: 0\r\n\r\n");
  });
}
