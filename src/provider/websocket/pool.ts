/**
 * The WebSocket connections of one provider. A run's turns go one after another, so a run keeps
 * using one connection: a turn takes an idle connection — the one that made the response it
 * continues (`previous_response_id`) when that one is free, else any — or opens a new one. Runs
 * that overlap (a batch) get one connection each, since a connection carries one response at a
 * time. An idle connection closes itself after `idleCloseMs`; `close()` closes them all (the
 * provider can still be used afterwards: the next turn connects again).
 *
 * A `store: false` response lives only in its connection's memory (WebSocket mode in
 * schemas/openresponses/openapi.json; src/mock/websocket-session.ts plays it so): once that
 * connection has closed, continuing it is impossible. The pool remembers those responses, so a
 * turn that names one fails at once as `previous_response_not_found` and the loop resends the
 * history (docs/decisions.md #5) instead of asking a server that cannot know it.
 */
import { connectWebSocket, type WebSocketConnection } from "./connection.js";

/** What every connection of a pool shares. */
export interface WebSocketPoolOptions {
  /** `ws://…/responses` or `wss://…/responses`. */
  url: string;
  headers: Record<string, string>;
  /** Largest message accepted, in bytes. */
  maxPayload: number;
  /** How much of a refused handshake's body is read. */
  maxErrorBodyBytes: number;
  /** An idle connection closes after this long. */
  idleCloseMs: number;
}

/** `store: false` responses of closed connections remembered (the most recent ones). */
const LOST_RESPONSES = 1024;

/** The connections of one provider (see the module comment). */
export class WebSocketPool {
  private readonly idle: WebSocketConnection[] = [];
  private readonly open = new Set<WebSocketConnection>();
  /** `store: false` response id → the number of the closed connection it lived on. */
  private readonly lost = new Map<string, number>();
  private opened = 0;

  constructor(private readonly options: WebSocketPoolOptions) {}

  /** Connections opened so far, and open now. */
  get stats(): { opened: number; open: number } {
    return { opened: this.opened, open: this.open.size };
  }

  /** The number of the closed connection a `store: false` response lived on; undefined when it is not lost. */
  lostWith(responseId: string): number | undefined {
    return this.lost.get(responseId);
  }

  /**
   * A connection for one turn, leased to it: an idle one (preferring the one that made
   * `previousResponseId`) or a new one. Rejects as `connectWebSocket` does.
   */
  async acquire(previousResponseId: string | undefined, signal: AbortSignal): Promise<WebSocketConnection> {
    // One the server wrote to while it idled is out of step with its requests: closed, not reused.
    for (const spoiled of this.idle.filter((c) => c.unsolicited)) {
      this.idle.splice(this.idle.indexOf(spoiled), 1);
      spoiled.terminate();
    }
    let at =
      previousResponseId === undefined ? -1 : this.idle.findIndex((c) => c.responses.has(previousResponseId));
    if (at === -1) at = this.idle.length - 1;
    const reused = at === -1 ? undefined : this.idle.splice(at, 1)[0];
    if (reused !== undefined) {
      reused.lease();
      return reused;
    }
    const connection = await connectWebSocket({
      url: this.options.url,
      headers: this.options.headers,
      maxPayload: this.options.maxPayload,
      maxErrorBodyBytes: this.options.maxErrorBodyBytes,
      number: ++this.opened,
      signal,
    });
    this.open.add(connection);
    connection.onEnd = (c) => this.ended(c);
    connection.lease();
    return connection;
  }

  /** The turn is over: `reusable` puts the connection back, otherwise it is destroyed. */
  release(connection: WebSocketConnection, reusable: boolean): void {
    if (connection.ended !== undefined) return;
    if (!reusable) {
      connection.terminate();
      return;
    }
    connection.idle(this.options.idleCloseMs);
    this.idle.push(connection);
  }

  /** Closes every connection (a turn still running on one fails as a broken connection). */
  async close(): Promise<void> {
    const all = [...this.open];
    for (const c of all) {
      if (c.leased) c.terminate();
      else c.close();
    }
    // A server that never answers the close frame must not hold this up: destroy after a moment.
    const timer = setTimeout(() => {
      for (const c of all) c.terminate();
    }, 1_000);
    await Promise.all(all.map((c) => c.closed()));
    clearTimeout(timer);
  }

  private ended(connection: WebSocketConnection): void {
    this.open.delete(connection);
    const at = this.idle.indexOf(connection);
    if (at !== -1) this.idle.splice(at, 1);
    for (const [id, stored] of connection.responses) {
      if (stored) continue;
      this.lost.set(id, connection.number);
      if (this.lost.size > LOST_RESPONSES) this.lost.delete(this.lost.keys().next().value as string);
    }
  }
}
