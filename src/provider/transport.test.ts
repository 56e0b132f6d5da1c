import * as http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ProviderFrame } from "../frames/frame.js";
import { createOpenResponsesProvider } from "./open-responses.js";
import { nodeHttpTransport, type Transport, type TransportRequest } from "./transport.js";
import { WatchdogFired } from "./watchdog.js";

/**
 * A server on 127.0.0.1: `/hang` never answers, `/part` sends its head and one chunk and then
 * nothing, `/ok` answers at once. `closed` resolves with each connection's closing, by path, and
 * `arrived` with each request's arrival.
 */
let server: http.Server;
let origin: string;
const closed = new Map<string, Array<() => void>>();
const arrived = new Map<string, Array<() => void>>();
/** Requests each connection carried. */
const servedBy = new WeakMap<object, number>();
/** `/stale` resets every request, also the first on a connection. */
let resetEvery = false;
/** The client port of each request served, in order. */
const ports: number[] = [];

function closedOnce(path: string): Promise<void> {
  return new Promise((resolve) => closed.set(path, [...(closed.get(path) ?? []), resolve]));
}

/**
 * Resolves once the server has a request for `path` (and listens for its closing): a test that
 * aborts a request waits for this, not for a time, or an abort on a loaded machine could come
 * before the request reached the server, whose closing would then never be seen.
 */
function arrivedOnce(path: string): Promise<void> {
  return new Promise((resolve) => arrived.set(path, [...(arrived.get(path) ?? []), resolve]));
}

beforeAll(async () => {
  server = http.createServer((req, res) => {
    const path = req.url ?? "";
    ports.push(req.socket.remotePort ?? 0);
    req.resume();
    res.on("close", () => {
      for (const resolve of closed.get(path) ?? []) resolve();
      closed.delete(path);
    });
    for (const resolve of arrived.get(path) ?? []) resolve();
    arrived.delete(path);
    const served = (servedBy.get(req.socket) ?? 0) + 1;
    servedBy.set(req.socket, served);
    if (path === "/stale" && (served > 1 || resetEvery)) {
      // As a server does that closed the kept-alive connection while the request was on its way.
      req.socket.destroy();
      return;
    }
    if (path === "/stale") {
      res.writeHead(200, { "content-type": "text/plain" });
      res.end("fresh");
    } else if (path === "/part") {
      res.writeHead(200, { "content-type": "text/event-stream" });
      res.write("data: {}\n\n");
    } else if (path === "/many") {
      // Small writes in one go: they reach the client as many 'data' events from few socket reads.
      res.writeHead(200, { "content-type": "text/event-stream" });
      for (let i = 0; i < MANY; i++) res.write(`data: {"i":${i}}\n\n`);
      res.end();
    } else if (path === "/big") {
      // More than the socket buffers hold: the server waits for 'drain', the client pauses and resumes.
      res.writeHead(200, { "content-type": "application/octet-stream" });
      let i = 0;
      const more = () => {
        while (i < BIG_WRITES) if (!res.write(bigWrite(i++))) return void res.once("drain", more);
        res.end();
      };
      more();
    } else if (path === "/ok") {
      res.writeHead(200, { "content-type": "text/plain" });
      res.end("ok");
    }
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

const MANY = 2_000;
const manyText = () => Array.from({ length: MANY }, (_, i) => `data: {"i":${i}}\n\n`).join("");
const BIG_WRITES = 2_000;
const bigWrite = (i: number) => `${String(i).padStart(8, "0")}${"x".repeat(1016)}`;

/** A request whose `signal` must not be read (the transport takes `registerAbort` instead). */
function registering(path: string): { request: TransportRequest; abort: (reason: unknown) => void } {
  let registered: ((reason: unknown) => void) | undefined;
  const request: TransportRequest = {
    url: `${origin}${path}`,
    headers: { "content-type": "application/json" },
    body: "{}",
    get signal(): AbortSignal {
      throw new Error("the transport read signal although it registered for aborts");
    },
    registerAbort: (abort) => {
      registered = abort;
    },
  };
  return {
    request,
    abort: (reason) => {
      if (registered === undefined) throw new Error("the transport registered no abort");
      registered(reason);
    },
  };
}

async function readAll(body: AsyncIterable<Uint8Array>): Promise<string> {
  let text = "";
  for await (const chunk of body) text += Buffer.from(chunk).toString("utf8");
  return text;
}

describe("nodeHttpTransport: aborting through registerAbort", () => {
  it("before the response: the request rejects with the reason and the connection closes", async () => {
    const transport = nodeHttpTransport();
    const { request, abort } = registering("/hang");
    const gone = closedOnce("/hang");
    const there = arrivedOnce("/hang");
    const pending = transport(request);
    await there;
    abort(new Error("stop now"));
    await expect(pending).rejects.toThrow("stop now");
    await gone;
  });

  it("while the body is read: the read throws and the connection closes", async () => {
    const transport = nodeHttpTransport();
    const { request, abort } = registering("/part");
    const gone = closedOnce("/part");
    const response = await transport(request);
    const iterator = response.body[Symbol.asyncIterator]();
    expect((await iterator.next()).done).toBe(false);
    abort("a reason that is not an Error");
    await expect(iterator.next()).rejects.toThrow();
    await gone;
  });

  it("after the body was read to its end: nothing happens, and the kept-alive socket serves the next request", async () => {
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    const transport = nodeHttpTransport({ httpAgent: agent });
    const first = registering("/ok");
    expect(await readAll((await transport(first.request)).body)).toBe("ok");
    await new Promise((resolve) => setTimeout(resolve, 20));
    first.abort(new Error("too late"));
    const second = registering("/ok");
    expect(await readAll((await transport(second.request)).body)).toBe("ok");
    const [a, b] = ports.slice(-2);
    expect(b).toBe(a); // the same connection: the late abort did not destroy the pooled socket
    agent.destroy();
  });

  it("without registerAbort it honours the signal, as any transport must", async () => {
    const transport = nodeHttpTransport();
    const controller = new AbortController();
    const gone = closedOnce("/hang");
    const there = arrivedOnce("/hang");
    const pending = transport({ url: `${origin}/hang`, headers: {}, body: "{}", signal: controller.signal });
    await there;
    controller.abort(new Error("cancelled by the signal"));
    await expect(pending).rejects.toThrow("cancelled by the signal");
    await gone;
    const early = new AbortController();
    early.abort(new Error("aborted before"));
    await expect(
      transport({ url: `${origin}/ok`, headers: {}, body: "{}", signal: early.signal }),
    ).rejects.toThrow("aborted before");
  });
});

describe("nodeHttpTransport: the body's chunks", () => {
  it("what arrived while the reader was busy comes as one chunk, every byte in order", async () => {
    const transport = nodeHttpTransport();
    const response = await transport({
      url: `${origin}/many`,
      headers: {},
      body: "{}",
      signal: new AbortController().signal,
    });
    const iterator = response.body[Symbol.asyncIterator]();
    const first = await iterator.next();
    await new Promise((resolve) => setTimeout(resolve, 100)); // the rest arrives meanwhile
    const chunks = [first.value as Uint8Array];
    for (let next = await iterator.next(); next.done !== true; next = await iterator.next())
      chunks.push(next.value);
    expect(Buffer.concat(chunks).toString("utf8")).toBe(manyText());
    // 2,000 writes; a reader that takes one 'data' event at a time would see about as many chunks.
    expect(chunks.length).toBeLessThan(50);
  });

  it("a slow reader of a body larger than the socket buffers gets it all, in order", async () => {
    const transport = nodeHttpTransport();
    const response = await transport({
      url: `${origin}/big`,
      headers: {},
      body: "{}",
      signal: new AbortController().signal,
    });
    const chunks: Uint8Array[] = [];
    for await (const chunk of response.body) {
      chunks.push(chunk);
      if (chunks.length % 8 === 0) await new Promise((resolve) => setImmediate(resolve));
    }
    const text = Buffer.concat(chunks).toString("utf8");
    expect(text.length).toBe(BIG_WRITES * 1024);
    for (const i of [0, 1, 999, BIG_WRITES - 1])
      expect(text.slice(i * 1024, i * 1024 + 8)).toBe(String(i).padStart(8, "0"));
    expect(text).toBe(Array.from({ length: BIG_WRITES }, (_, i) => bigWrite(i)).join(""));
  });
});

describe("nodeHttpTransport: a kept-alive socket the server closed", () => {
  const stale = () => ({
    url: `${origin}/stale`,
    headers: {},
    body: "{}",
    signal: new AbortController().signal,
  });

  it("the request is sent again at once on a new connection, with registerAbort or a signal", async () => {
    for (const make of [() => registering("/stale").request, stale]) {
      const agent = new http.Agent({ keepAlive: true });
      const transport = nodeHttpTransport({ httpAgent: agent });
      expect(await readAll((await transport(make())).body)).toBe("fresh");
      const before = ports.length;
      // The pooled socket is reset by the server: the transport opens another and gets the answer.
      expect(await readAll((await transport(make())).body)).toBe("fresh");
      const [reset, resent] = ports.slice(before);
      expect(ports.length - before).toBe(2);
      expect(resent).not.toBe(reset);
      agent.destroy();
    }
  });

  it("a reset on a fresh connection is the caller's error, sent once", async () => {
    resetEvery = true;
    try {
      const transport = nodeHttpTransport({ httpAgent: new http.Agent({ keepAlive: true }) });
      const before = ports.length;
      await expect(transport(stale())).rejects.toMatchObject({ code: "ECONNRESET" });
      expect(ports.length - before).toBe(1);
    } finally {
      resetEvery = false;
    }
  });

  it("re-sending stops after four resends when every pooled socket is reset", async () => {
    const agent = new http.Agent({ keepAlive: true });
    const transport = nodeHttpTransport({ httpAgent: agent });
    // Six pooled sockets, each having served one request.
    const bodies = await Promise.all(Array.from({ length: 6 }, () => transport(stale())));
    for (const response of bodies) expect(await readAll(response.body)).toBe("fresh");
    resetEvery = true;
    try {
      const before = ports.length;
      await expect(transport(stale())).rejects.toMatchObject({ code: "ECONNRESET" });
      expect(ports.length - before).toBe(5);
    } finally {
      resetEvery = false;
      agent.destroy();
    }
  });

  it("an abort of a request on a reused socket rejects with the abort's reason", async () => {
    const agent = new http.Agent({ keepAlive: true });
    const transport = nodeHttpTransport({ httpAgent: agent });
    expect(await readAll((await transport(stale())).body)).toBe("fresh");
    const controller = new AbortController();
    const pending = transport({ ...stale(), signal: controller.signal });
    controller.abort(new Error("stopped"));
    await expect(pending).rejects.toThrow("stopped");
    agent.destroy();
  });
});

describe("an HTTP attempt and its transport's signal", () => {
  /** A transport that reads `signal` only when asked to, and hangs until it aborts. */
  function hangingTransport(readAfterMs: number, seen: { reason?: unknown; registered: boolean }): Transport {
    return (request) =>
      new Promise((_resolve, reject) => {
        seen.registered = request.registerAbort !== undefined;
        setTimeout(() => {
          const { signal } = request;
          if (signal.aborted) {
            seen.reason = signal.reason;
            reject(signal.reason);
            return;
          }
          signal.addEventListener("abort", () => {
            seen.reason = signal.reason;
            reject(signal.reason);
          });
        }, readAfterMs);
      });
  }

  async function connectTimeout(readAfterMs: number) {
    const seen: { reason?: unknown; registered: boolean } = { registered: false };
    const provider = createOpenResponsesProvider({
      baseURL: origin,
      transport: hangingTransport(readAfterMs, seen),
      timeouts: { connectMs: 40 },
      retry: { maxRetries: 0 },
    });
    const stream = provider.stream({ turn: 1, body: { model: "m", input: "hi" } });
    const frames: ProviderFrame[] = [];
    for await (const f of stream) frames.push(f);
    return { seen, outcome: await stream.result, frames };
  }

  it("a transport that reads the signal before the timeout sees it abort with the watchdog's reason", async () => {
    const { seen, outcome } = await connectTimeout(0);
    expect(seen.registered).toBe(true);
    expect(seen.reason).toBeInstanceOf(WatchdogFired);
    expect(!outcome.ok && outcome.error.code).toBe("connect_timeout");
  });

  it("one that reads it only after the timeout gets a signal aborted already, with that reason", async () => {
    const { seen } = await connectTimeout(120);
    await new Promise((resolve) => setTimeout(resolve, 150));
    expect(seen.reason).toBeInstanceOf(WatchdogFired);
  });
});
