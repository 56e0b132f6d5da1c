/**
 * An HTTP proxy in front of the mock server that can hold requests back: with the gate closed,
 * requests wait (counted in `held`) until it opens; a held request whose client went away (a
 * killed process) is dropped, never forwarded — so the mock only sees requests someone is still
 * waiting for. Crash tests use it to kill a process at a moment they choose: when every run is
 * waiting for the model.
 */
import { createServer, request as httpRequest, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

export interface GateProxy {
  /** Base URL to give clients (the target's path kept: `http://127.0.0.1:PORT/v1`). */
  url: string;
  /** Requests waiting at the closed gate. */
  readonly held: number;
  /** Requests forwarded so far. */
  readonly forwarded: number;
  /** Hold every request from now on (or from the `after`-th forwarded one on). */
  close(after?: number): void;
  /** Let the held requests (and every later one) through. */
  open(): void;
  stop(): Promise<void>;
}

/** A proxy to `target` (a base URL such as `http://127.0.0.1:1234/v1`). */
export async function startGateProxy(target: string): Promise<GateProxy> {
  const upstream = new URL(target);
  let closedFrom = Number.POSITIVE_INFINITY;
  let forwarded = 0;
  const waiting = new Set<() => void>();
  const forward = (req: IncomingMessage, res: ServerResponse, body: Buffer) => {
    forwarded++;
    const out = httpRequest(
      {
        host: upstream.hostname,
        port: upstream.port,
        method: req.method,
        path: req.url,
        headers: { ...req.headers, host: upstream.host },
      },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    out.on("error", () => res.destroy());
    res.on("close", () => out.destroy());
    out.end(body);
  };
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const body = Buffer.concat(chunks);
      if (forwarded < closedFrom) {
        forward(req, res, body);
        return;
      }
      const release = () => {
        waiting.delete(release);
        if (!res.destroyed && !req.socket.destroyed) forward(req, res, body);
      };
      waiting.add(release);
      res.on("close", () => waiting.delete(release));
    });
  });
  server.listen(0, "127.0.0.1");
  await new Promise((r) => server.once("listening", r));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}${upstream.pathname}`,
    get held() {
      return waiting.size;
    },
    get forwarded() {
      return forwarded;
    },
    close(after = forwarded) {
      closedFrom = after;
    },
    open() {
      closedFrom = Number.POSITIVE_INFINITY;
      for (const release of [...waiting]) release();
    },
    stop() {
      server.closeAllConnections();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}
