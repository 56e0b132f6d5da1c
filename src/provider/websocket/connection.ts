/**
 * One WebSocket connection to `/responses` in WebSocket mode (`x-openresponses-websocket` in
 * schemas/openresponses/openapi.json), over the `ws` package: the opening handshake with the
 * provider's headers (a refused upgrade keeps its HTTP status and body, so it maps to the same
 * `ProviderError` an HTTP answer would), the server's messages queued for the turn that holds the
 * connection, and the close.
 *
 * The socket is referenced only while a turn runs on it: an idle connection never keeps the
 * process alive, as node:http's keep-alive agent does with its idle sockets.
 */
import type { Socket } from "node:net";
import type WebSocket from "ws";
import { importPackage } from "../../util/import-package.js";

/** A refused opening handshake: the server answered the upgrade with an ordinary HTTP response. */
export class HandshakeRefused extends Error {
  constructor(
    readonly status: number,
    readonly headers: { get(name: string): string | null },
    readonly body: string,
  ) {
    super(`the server refused the WebSocket upgrade with HTTP ${status}`);
  }
}

/** How a connection ended: the close code and reason, and the socket error before it, if any. */
export interface ConnectionEnd {
  code: number;
  reason: string;
  error: Error | undefined;
}

/** What opening a connection takes. */
export interface ConnectOptions {
  /** `ws://…/responses` or `wss://…/responses`. */
  url: string;
  headers: Record<string, string>;
  /** Largest message accepted, in bytes: a bigger one closes the connection with 1009. */
  maxPayload: number;
  /** How much of a refused handshake's body is read. */
  maxErrorBodyBytes: number;
  /** This connection's number in its pool (1, 2, …). */
  number: number;
  /** Aborting it abandons the handshake (rejecting with the signal's reason). */
  signal: AbortSignal;
}

/** Messages waiting beyond this many pause the socket until the turn takes them (backpressure). */
const HIGH_WATER = 64;
/** Response ids a connection remembers for routing follow-ups back to it. */
const REMEMBERED_RESPONSES = 256;

/**
 * Opens a connection. Rejects with a `HandshakeRefused` (non-101 answer), the socket error
 * (connection refused, TLS, …), or the signal's reason. `ws` is loaded by the first connection,
 * so runs over SSE never load it.
 */
export async function connectWebSocket(options: ConnectOptions): Promise<WebSocketConnection> {
  const { default: WebSocket } = await importPackage<typeof import("ws")>("ws");
  return new Promise((resolve, reject) => {
    const { signal } = options;
    if (signal.aborted) {
      reject(signal.reason);
      return;
    }
    const ws = new WebSocket(options.url, {
      headers: options.headers,
      // Compression costs CPU on every event and fragments memory (the ws docs say so); the
      // events are small and latency is the point of WebSocket mode.
      perMessageDeflate: false,
      maxPayload: options.maxPayload,
      followRedirects: false,
    });
    let socket: Socket | undefined;
    let settled = false;
    const fail = (reason: unknown) => {
      if (settled) return;
      settled = true;
      signal.removeEventListener("abort", onAbort);
      ws.terminate();
      reject(reason);
    };
    const onAbort = () => fail(signal.reason);
    signal.addEventListener("abort", onAbort, { once: true });
    ws.on("upgrade", (res) => {
      socket = res.socket as Socket;
    });
    ws.on("unexpected-response", (_req, res) => {
      readBody(res, options.maxErrorBodyBytes).then(
        (body) => {
          const headers = {
            get: (name: string) => {
              const v = res.headers[name.toLowerCase()];
              return v === undefined ? null : Array.isArray(v) ? v.join(", ") : v;
            },
          };
          fail(new HandshakeRefused(res.statusCode ?? 0, headers, body));
        },
        (err: unknown) => fail(err),
      );
    });
    ws.on("error", (err) => fail(err));
    ws.on("close", (code) => fail(new Error(`the connection closed during the handshake (code ${code})`)));
    ws.once("open", () => {
      if (settled) return;
      settled = true;
      signal.removeEventListener("abort", onAbort);
      ws.removeAllListeners("close");
      ws.removeAllListeners("error");
      resolve(new WebSocketConnection(ws, socket, options.number));
    });
  });
}

/** An open connection (see the module comment). One turn at a time holds it (`leased`). */
export class WebSocketConnection {
  /** Set once the connection has closed, for whatever reason. */
  ended: ConnectionEnd | undefined;
  /** A turn holds the connection: messages are kept for it (otherwise they belong to no turn and are dropped). */
  leased = false;
  /** Called once when the connection has closed. */
  onEnd: ((connection: WebSocketConnection) => void) | undefined;
  /** Ids of the responses created on this connection, each with whether it was stored (`store`). */
  readonly responses = new Map<string, boolean>();
  private readonly inbox: string[] = [];
  private wake: (() => void) | undefined;
  private lastError: Error | undefined;
  private idleTimer: ReturnType<typeof setTimeout> | undefined;
  /** The server sent a message while the connection idled (a late answer): it is not leased again. */
  unsolicited = false;

  constructor(
    private readonly ws: WebSocket,
    private readonly socket: Socket | undefined,
    /** This connection's number in its pool (1, 2, … in opening order). */
    readonly number: number,
  ) {
    ws.on("message", (data, isBinary) => {
      // A message while no turn runs answers nothing asked: the connection takes no other turn.
      if (!this.leased) {
        this.unsolicited = true;
        return;
      }
      this.inbox.push(messageText(data, isBinary));
      if (this.inbox.length > HIGH_WATER && !ws.isPaused) ws.pause();
      this.notify();
    });
    ws.on("error", (err) => {
      this.lastError = err;
    });
    ws.on("close", (code, reason) => {
      this.ended = { code, reason: reason.toString("utf8"), error: this.lastError };
      this.clearIdleTimer();
      this.notify();
      this.onEnd?.(this);
    });
  }

  /** Sends one text message; rejects when the socket cannot take it (closed, broken). */
  send(text: string): Promise<void> {
    return new Promise((resolve, reject) => {
      if (this.ended !== undefined || this.ws.readyState !== this.ws.OPEN) {
        reject(new Error("the connection is closed"));
        return;
      }
      this.ws.send(text, (err) => (err ? reject(err) : resolve()));
    });
  }

  /** The messages received since the last call, in order. */
  take(): string[] {
    const out = this.inbox.splice(0);
    if (this.ws.isPaused && this.ended === undefined) this.ws.resume();
    return out;
  }

  /** Resolves once a message is waiting, the connection has ended, or `signal` aborts. */
  wait(signal: AbortSignal): Promise<void> {
    if (this.inbox.length > 0 || this.ended !== undefined || signal.aborted) return Promise.resolve();
    return new Promise((resolve) => {
      const done = () => {
        signal.removeEventListener("abort", done);
        this.wake = undefined;
        resolve();
      };
      this.wake = done;
      signal.addEventListener("abort", done, { once: true });
    });
  }

  /** Remembers a response created here (the most recent ones only). */
  remember(responseId: string, stored: boolean): void {
    this.responses.delete(responseId);
    this.responses.set(responseId, stored);
    if (this.responses.size > REMEMBERED_RESPONSES) {
      const oldest = this.responses.keys().next().value as string;
      this.responses.delete(oldest);
    }
  }

  /** A turn starts on the connection: it keeps the process alive and receives messages. */
  lease(): void {
    this.clearIdleTimer();
    this.leased = true;
    this.inbox.length = 0;
    this.socket?.ref();
  }

  /** The turn is over: the connection idles, closing itself after `idleCloseMs`. */
  idle(idleCloseMs: number): void {
    this.leased = false;
    this.inbox.length = 0;
    if (this.ws.isPaused) this.ws.resume();
    this.socket?.unref();
    this.clearIdleTimer();
    this.idleTimer = setTimeout(() => this.close(), idleCloseMs);
    this.idleTimer.unref();
  }

  /** Closes with a close frame (1000); the server answers and the socket ends. */
  close(): void {
    this.clearIdleTimer();
    if (this.ended === undefined) this.ws.close(1000);
  }

  /** Destroys the socket at once (a response may still be running on it). */
  terminate(): void {
    this.clearIdleTimer();
    this.ws.terminate();
  }

  /** Resolves once the connection has closed (at once when it has). */
  closed(): Promise<void> {
    if (this.ended !== undefined) return Promise.resolve();
    return new Promise((resolve) => this.ws.once("close", () => resolve()));
  }

  private notify(): void {
    const wake = this.wake;
    this.wake = undefined;
    wake?.();
  }

  private clearIdleTimer(): void {
    if (this.idleTimer !== undefined) clearTimeout(this.idleTimer);
    this.idleTimer = undefined;
  }
}

/** A message as text (binary messages are read as UTF-8 too: the server's events are JSON). */
function messageText(data: WebSocket.RawData, isBinary: boolean): string {
  if (!isBinary && Buffer.isBuffer(data)) return data.toString("utf8");
  if (Array.isArray(data)) return Buffer.concat(data).toString("utf8");
  return Buffer.from(data as ArrayBuffer).toString("utf8");
}

/** A refused handshake's body, at most `maxBytes` of it. */
async function readBody(res: AsyncIterable<Buffer>, maxBytes: number): Promise<string> {
  const chunks: Buffer[] = [];
  let bytes = 0;
  for await (const chunk of res) {
    chunks.push(chunk);
    bytes += chunk.length;
    if (bytes > maxBytes) break;
  }
  return Buffer.concat(chunks).toString("utf8");
}
