/**
 * HTTP transports: how bytes get to and from a provider. Two implementations of one small
 * interface: `nodeHttpTransport` (node:http/https with keep-alive agents; the default, measured
 * faster than fetch on a request–response round trip — see bench/RESULTS.md) and `fetchTransport`
 * (any WHATWG `fetch`, injectable: tests, proxies, other runtimes).
 */
import * as http from "node:http";
import * as https from "node:https";
import { iterateBytes } from "../sse/decoder.js";

export interface TransportRequest {
  url: string;
  headers: Record<string, string>;
  body: string;
  signal: AbortSignal;
}

export interface TransportResponse {
  status: number;
  headers: { get(name: string): string | null };
  /** The body bytes. Throws if the connection breaks or the request's signal aborts. */
  body: AsyncIterable<Uint8Array>;
  /** Releases the connection without reading the rest of the body. */
  cancel(): void;
}

/** Sends one POST. Rejects when no response headers can be obtained (connection error, abort). */
export type Transport = (request: TransportRequest) => Promise<TransportResponse>;

/** A transport over a WHATWG `fetch` (the global one by default). */
export function fetchTransport(fetchImpl: typeof fetch = globalThis.fetch): Transport {
  return async (request) => {
    const res = await fetchImpl(request.url, {
      method: "POST",
      headers: request.headers,
      body: request.body,
      signal: request.signal,
    });
    const body = res.body;
    return {
      status: res.status,
      headers: res.headers,
      body: body === null ? emptyBody() : iterateBytes(body),
      cancel: () => {
        body?.cancel().catch(() => {});
      },
    };
  };
}

async function* emptyBody(): AsyncGenerator<Uint8Array> {}

export interface NodeHttpTransportOptions {
  /** Agents to use (keep-alive by default). */
  httpAgent?: http.Agent;
  httpsAgent?: https.Agent;
}

/** A transport over node:http / node:https with keep-alive connection reuse. */
export function nodeHttpTransport(options: NodeHttpTransportOptions = {}): Transport {
  const httpAgent = options.httpAgent ?? new http.Agent({ keepAlive: true });
  const httpsAgent = options.httpsAgent ?? new https.Agent({ keepAlive: true });
  return (request) =>
    new Promise<TransportResponse>((resolve, reject) => {
      const url = new URL(request.url);
      const isHttps = url.protocol === "https:";
      const body = Buffer.from(request.body, "utf8");
      const req = (isHttps ? https : http).request(
        url,
        {
          method: "POST",
          headers: { ...request.headers, "content-length": String(body.length) },
          agent: isHttps ? httpsAgent : httpAgent,
          signal: request.signal,
        },
        (res) => {
          resolve({
            status: res.statusCode ?? 0,
            headers: {
              get(name) {
                const v = res.headers[name.toLowerCase()];
                if (v === undefined) return null;
                return Array.isArray(v) ? v.join(", ") : v;
              },
            },
            body: res,
            cancel: () => {
              res.destroy();
            },
          });
        },
      );
      req.on("error", reject);
      req.end(body);
    });
}
