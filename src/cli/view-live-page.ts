/**
 * The local server of `eddy view --live`: the page on 127.0.0.1 under a random path, `/KEY/` (the
 * page) and `/KEY/events` (its stream of the run's view). Anyone on the machine can connect to it,
 * path or not, and each connection is a file descriptor taken before a byte is read: it holds at
 * most `maxConnections` at once (one more is closed as it comes, unanswered; the next is served once
 * one goes), and a client gets the request bounds of eddy's other servers (`serverOptions`,
 * src/util/http-server.ts: 15 s for the headers, 60 s for the request, then a 408) — node's own
 * defaults let a slow client hold its connection for up to a minute and a half
 * (docs/pitfalls.md #107).
 *
 * A page's event stream (`PageStream`) holds at most the latest view unsent: a redraw is written
 * only once the client has taken the last one (`'drain'`), the ones between are dropped, and a
 * client that leaves a view unread for `unreadMs` has its stream closed (the page's `EventSource`
 * connects again and gets the view then). Writing every redraw to every stream let a tab that stopped
 * reading (a frozen background tab) make eddy hold every view since, many MB each
 * (docs/pitfalls.md #110).
 */

import { randomBytes } from "node:crypto";
import { once } from "node:events";
import { createServer, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { LISTEN_TIMEOUTS, type ListenTimeouts, refuseConnect, serverOptions } from "../util/http-server.js";
import { renderViewPage } from "../view/page.js";
import type { RunPayload } from "../view/view-data.js";

/**
 * Connections the page server holds at once, by default: a browser opens a handful per page (the
 * page, its stream, keep-alive), so this leaves room for many tabs and no room to run the process
 * out of file descriptors (`eddy serve` allows 64 from one address, src/serve/listener.ts).
 */
export const VIEW_LIVE_MAX_CONNECTIONS = 64;

/** What the page server shows: the view now, and a stream of the next ones. */
export interface LivePageSource {
  current(): RunPayload | undefined;
  /** Writes the latest view to `res` now, then each new one, until it closes. */
  watch(res: ServerResponse): void;
}

/** Options of `serveLivePage`. */
export interface LivePageOptions {
  /** @defaultValue VIEW_LIVE_MAX_CONNECTIONS (64) */
  maxConnections?: number;
  /** @defaultValue `LISTEN_TIMEOUTS` (src/util/http-server.ts) */
  timeouts?: Partial<ListenTimeouts>;
}

/**
 * A page's event stream that never queues more than the latest view and the `ended` event (see the
 * module comment): `view` replaces a view not yet written, `end` is written after it.
 */
export class PageStream {
  /** The socket is full: writes wait for `'drain'`. */
  private waiting = false;
  private pendingView: string | undefined;
  private pendingEnd: string | undefined;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly res: ServerResponse,
    private readonly unreadMs: number = LISTEN_TIMEOUTS.unreadMs,
  ) {
    res.on("drain", () => {
      this.waiting = false;
      clearTimeout(this.timer);
      this.flush();
    });
    res.once("close", () => clearTimeout(this.timer));
  }

  /** Sends `text` (an SSE message of a view) once the client has taken what came before. */
  view(text: string): void {
    this.pendingView = text;
    this.flush();
  }

  /** Sends `text` (the `ended` event) after the latest view. */
  end(text: string): void {
    this.pendingEnd = text;
    this.flush();
  }

  /** Bytes written to the stream and not yet taken by the socket. */
  get unsentBytes(): number {
    return this.res.writableLength;
  }

  private flush(): void {
    if (this.waiting || this.res.destroyed) return;
    let full = false;
    for (const text of [this.pendingView, this.pendingEnd])
      if (text !== undefined) full = !this.res.write(text);
    this.pendingView = undefined;
    this.pendingEnd = undefined;
    if (!full) return;
    this.waiting = true;
    this.timer = setTimeout(() => this.res.destroy(), this.unreadMs);
  }
}

/** A served page. */
export interface LivePage {
  /** `http://127.0.0.1:PORT/KEY/` */
  url: string;
  port: number;
  /** Stops listening and closes every connection (the page streams too). */
  close(): Promise<void>;
}

/** Serves `source` as `label`'s live page (see the module comment). */
export async function serveLivePage(
  source: LivePageSource,
  label: string,
  options: LivePageOptions = {},
): Promise<LivePage> {
  const key = randomBytes(16).toString("hex");
  const server = createServer(serverOptions(options.timeouts), (req, res) => {
    const path = (req.url ?? "").split("?")[0];
    if (req.method === "GET" && path === `/${key}/`) {
      const payload = source.current();
      const html = renderViewPage({
        title: label,
        runs: [{ entry: { label, source: label }, ...(payload === undefined ? {} : { payload }) }],
        live: { events: "events" },
      });
      res.writeHead(200, { "content-type": "text/html; charset=utf-8", "cache-control": "no-store" });
      res.end(html);
    } else if (req.method === "GET" && path === `/${key}/events`) {
      res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-store" });
      source.watch(res);
    } else {
      res.writeHead(404, { "content-type": "text/plain" }).end("not found\n");
    }
  });
  refuseConnect(server);
  // Past it, node closes a new connection as it comes.
  server.maxConnections = options.maxConnections ?? VIEW_LIVE_MAX_CONNECTIONS;
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/${key}/`,
    port,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
