/**
 * HTTP transports: how bytes get to and from a provider. Two implementations of one small
 * interface: `nodeHttpTransport` (node:http/https with keep-alive agents; the default, measured
 * faster than fetch on a request–response round trip — see bench/RESULTS.md) and `fetchTransport`
 * (any WHATWG `fetch`, injectable: tests, proxies, other runtimes).
 */
import * as http from "node:http";
import type * as https from "node:https";
import { createRequire } from "node:module";
import { iterateBytes } from "../sse/decoder.js";

/** One POST a transport sends. */
export interface TransportRequest {
  url: string;
  headers: Record<string, string>;
  body: string;
  /** Aborting it aborts the request, also while its body is read. */
  signal: AbortSignal;
  /**
   * Given by eddy's HTTP attempts: hands them the function that aborts this request, which they
   * call whenever `signal` aborts — so a transport may take it instead of listening on `signal`
   * (an `abort` listener is an EventTarget listener per request, ~50 µs of a request over HTTP;
   * bench/README.md, "The turn"; the attempt then never makes the signal either). A transport that
   * takes it must not read `signal`'s events; one that ignores it honours `signal` as before.
   * @defaultValue none
   */
  registerAbort?: (abort: (reason: unknown) => void) => void;
}

/** A transport's answer: status, headers and the body as bytes. */
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

/**
 * A transport over node:http / node:https with keep-alive connection reuse. Cheaper per request
 * than `fetch` (bench/RESULTS.md, provider section): the target URL is parsed once per distinct URL,
 * abort is wired by hand, and the body is read from 'data' events through a small queue rather
 * than the Readable async iterator.
 */
export function nodeHttpTransport(options: NodeHttpTransportOptions = {}): Transport {
  const httpAgent = options.httpAgent ?? new http.Agent({ keepAlive: true });
  // node:https (and TLS with it) loads with the first https:// request: a run on a local server,
  // the demo model among them, never needs it.
  let secure: { https: typeof https; agent: https.Agent } | undefined;
  const tls = () => {
    if (secure === undefined) {
      const loaded = createRequire(import.meta.url)("node:https") as typeof https;
      secure = { https: loaded, agent: options.httpsAgent ?? new loaded.Agent({ keepAlive: true }) };
    }
    return secure;
  };
  const targets = new Map<string, Target>();
  return (request) => {
    // With `registerAbort` the request never reads `signal` (reading it makes it, in an attempt).
    if (request.registerAbort === undefined && request.signal.aborted)
      return Promise.reject(request.signal.reason);
    const target = targetOf(targets, request.url);
    const body = Buffer.from(request.body, "utf8");
    const requestOptions: http.RequestOptions = {
      method: "POST",
      hostname: target.hostname,
      path: target.path,
      headers: { ...request.headers, "content-length": String(body.length) },
      agent: target.https ? tls().agent : httpAgent,
    };
    if (target.port !== "") requestOptions.port = target.port;
    return post(target.https ? tls().https : http, requestOptions, body, request);
  };
}

interface Target {
  https: boolean;
  hostname: string;
  port: string;
  path: string;
}

/** The parts of `url` a request needs, parsed once per distinct URL (up to 64 kept). */
function targetOf(targets: Map<string, Target>, url: string): Target {
  let target = targets.get(url);
  if (target === undefined) {
    const parsed = new URL(url);
    target = {
      https: parsed.protocol === "https:",
      hostname: parsed.hostname.replace(/^\[|\]$/g, ""),
      port: parsed.port,
      path: `${parsed.pathname}${parsed.search}`,
    };
    if (targets.size < 64) targets.set(url, target);
  }
  return target;
}

/**
 * One POST: resolves with the response once its head arrived. A request written into a kept-alive
 * socket the server had closed while idle (as Node's and most servers do after ~5 s) fails before
 * any response byte; it is sent again at once on another socket, without a retry's backoff
 * (docs/pitfalls.md #68).
 */
function post(
  client: typeof http | typeof https,
  requestOptions: http.RequestOptions,
  body: Buffer,
  request: TransportRequest,
): Promise<TransportResponse> {
  return new Promise((resolve, reject) => {
    /** The request on the wire now: a resend replaces it. */
    let req: http.ClientRequest;
    let closed = false;
    let aborted = false;
    let responded = false;
    let resends = 0;
    let onClosed: (() => void) | undefined;
    const send = () => {
      closed = false;
      const sent = client.request(requestOptions, (res) => {
        responded = true;
        resolve(responseOf(res));
      });
      req = sent;
      sent.on("close", () => {
        if (sent !== req) return;
        closed = true;
        onClosed?.();
      });
      sent.on("error", (error: NodeJS.ErrnoException) => {
        if (sent !== req) return;
        const stale = sent.reusedSocket && !responded && isStaleSocketError(error);
        if (stale && !aborted && resends < MAX_RESENDS) {
          resends++;
          send();
        } else reject(error);
      });
      sent.end(body);
    };
    const abort = (reason: unknown) => {
      aborted = true;
      if (!closed) req.destroy(reason instanceof Error ? reason : new Error("aborted"));
    };
    send();
    if (request.registerAbort !== undefined) request.registerAbort(abort);
    else {
      const { signal } = request;
      const onAbort = () => abort(signal.reason);
      signal.addEventListener("abort", onAbort, { once: true });
      onClosed = () => signal.removeEventListener("abort", onAbort);
    }
  });
}

function responseOf(res: http.IncomingMessage): TransportResponse {
  return {
    status: res.statusCode ?? 0,
    headers: {
      get(name) {
        const v = res.headers[name.toLowerCase()];
        if (v === undefined) return null;
        return Array.isArray(v) ? v.join(", ") : v;
      },
    },
    body: chunks(res),
    cancel: () => {
      res.destroy();
    },
  };
}

/** How many times a request is sent again after a kept-alive socket turned out closed. */
const MAX_RESENDS = 4;

/** The errors of a write to a socket the server had closed: reset, broken pipe, or "socket hang up". */
function isStaleSocketError(error: NodeJS.ErrnoException): boolean {
  return error.code === "ECONNRESET" || error.code === "EPIPE";
}

/** How many bytes of a body may wait unread before the response is paused (backpressure). */
const MAX_QUEUED_BYTES = 256 * 1024;

/**
 * The body's chunks from 'data' events, paused while more than `MAX_QUEUED_BYTES` wait unread
 * (backpressure); each read takes everything that waits, as one chunk.
 */
function chunks(res: http.IncomingMessage): AsyncIterable<Uint8Array> {
  const queue: Uint8Array[] = [];
  let queued = 0;
  let done = false;
  let failure: Error | undefined;
  let wake: (() => void) | undefined;
  const notify = () => {
    const w = wake;
    wake = undefined;
    w?.();
  };
  res.on("data", (chunk: Buffer) => {
    queue.push(chunk);
    queued += chunk.length;
    if (queued > MAX_QUEUED_BYTES) res.pause();
    notify();
  });
  res.on("end", () => {
    done = true;
    notify();
  });
  res.on("error", (err) => {
    failure = err;
    notify();
  });
  res.on("close", () => {
    // A socket that closed before 'end' is a broken body, not a short one.
    if (!done && failure === undefined)
      failure = new Error("the connection closed before the response ended");
    notify();
  });
  return {
    [Symbol.asyncIterator]: () => ({
      async next(): Promise<IteratorResult<Uint8Array>> {
        for (;;) {
          if (queue.length > 0) {
            // What arrived since the last read goes out as one chunk: a server's small writes come
            // as many 'data' events from one socket read, and each chunk costs the reader a pass
            // through the decoder and the frame batch (bench/README.md, "The provider stream").
            const chunk = queue.length === 1 ? (queue[0] as Uint8Array) : Buffer.concat(queue);
            queue.length = 0;
            queued = 0;
            if (res.isPaused()) res.resume();
            return { value: chunk, done: false };
          }
          if (failure !== undefined) throw failure;
          if (done) return { value: undefined, done: true };
          await new Promise<void>((resolve) => {
            wake = resolve;
          });
        }
      },
      async return(): Promise<IteratorResult<Uint8Array>> {
        res.destroy();
        return { value: undefined, done: true };
      },
    }),
  };
}
