/**
 * WebSocket mode for the Open Responses provider (`streamTransport: "websocket"`): the pool of
 * connections to `ws(s)://…/responses` and what its attempts share, built from the provider's
 * HTTP settings (the same URL, credentials, timeouts, validation and size limits).
 */
import type { HttpAttemptConfig } from "../http-attempt.js";
import type { WebSocketAttemptConfig } from "./attempt.js";
import { WebSocketPool } from "./pool.js";

/** Options of WebSocket mode. */
export interface WebSocketOptions {
  /**
   * An idle connection closes after this long. A `store: false` conversation lives on its
   * connection, so a closed one makes the next turn resend the history; idle connections never
   * keep the process alive either way.
   * @defaultValue WEBSOCKET_DEFAULTS.idleCloseMs (5 minutes)
   */
  idleCloseMs?: number;
}

/** Defaults of WebSocket mode. */
export const WEBSOCKET_DEFAULTS = {
  /** An idle connection closes after this long. */
  idleCloseMs: 300_000,
} as const;

/** Headers that belong to an HTTP POST, not to the opening handshake. */
const POST_ONLY = new Set(["content-type", "accept", "content-length"]);

/** The `ws(s)://` URL of an `http(s)://` endpoint URL (path and query kept). */
export function webSocketUrl(httpUrl: string): string {
  const url = new URL(httpUrl);
  url.protocol = url.protocol === "https:" ? "wss:" : "ws:";
  return url.toString();
}

/** What the WebSocket attempts of one provider share: its pool of connections, opened on demand. */
export function webSocketAttemptConfig(
  http: HttpAttemptConfig,
  options: WebSocketOptions = {},
): WebSocketAttemptConfig {
  const url = webSocketUrl(http.url);
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(http.headers)) if (!POST_ONLY.has(name)) headers[name] = value;
  const pool = new WebSocketPool({
    url,
    headers,
    // maxMessageSize counts UTF-16 units; none takes more than 3 UTF-8 bytes.
    maxPayload: http.maxMessageSize * 3,
    maxErrorBodyBytes: http.maxErrorBodyBytes,
    idleCloseMs: options.idleCloseMs ?? WEBSOCKET_DEFAULTS.idleCloseMs,
  });
  return {
    pool,
    url,
    secrets: http.secrets,
    limits: http.limits,
    validate: http.validate,
    maxResponseBytes: http.maxResponseBytes,
    now: http.now,
  };
}
