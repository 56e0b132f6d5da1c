/**
 * Slow peers against `eddy serve`'s socket: a client that trickles its request is cut off once its
 * time is up (a 408, the connection closed), while other clients are served and a response that
 * takes longer than any request timeout is not cut. Small timeouts stand in for the defaults; each
 * wait below is a hang guard, not a verdict on speed.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import WebSocket from "ws";
import {
  closedWithin,
  dripUntilClosed,
  rawClient,
  unsupportedMethodAnswers,
} from "../../test/support/slow-peer.js";
import { LISTEN_TIMEOUTS } from "../util/http-server.js";
import { listen, SERVE_MAX_CONNECTIONS, SERVE_MAX_MESSAGE_BYTES, type ServeListener } from "./listener.js";

let server: ServeListener;

beforeAll(async () => {
  server = await listen(
    async (request) => {
      const url = new URL(request.url);
      if (url.pathname === "/slow-answer") {
        // Three pieces a request timeout apart: the response outlives every request timeout.
        const body = new ReadableStream<Uint8Array>({
          async start(controller) {
            for (const piece of ["one ", "two ", "three"]) {
              controller.enqueue(new TextEncoder().encode(piece));
              await new Promise((resolve) => setTimeout(resolve, 500));
            }
            controller.close();
          },
        });
        return new Response(body, { headers: { "content-type": "text/plain" } });
      }
      if (request.method === "POST") return new Response(`got ${(await request.text()).length} bytes`);
      return new Response("ok");
    },
    { authenticated: false, timeouts: { headersMs: 300, requestMs: 600 } },
  );
});

afterAll(async () => {
  await server.close();
});

describe("eddy serve's socket and slow peers", () => {
  it("closes a connection whose headers never end, with a 408", async () => {
    const client = rawClient(server.port);
    await dripUntilClosed(client, "GET /v1/runs HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ", "a");
    expect(client.received()).toMatch(/^HTTP\/1\.1 408/);
  });

  it("closes a connection whose body trickles in past the request timeout", async () => {
    const client = rawClient(server.port);
    const head =
      "POST /upload HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: text/plain\r\nContent-Length: 1000\r\n\r\n";
    await dripUntilClosed(client, head, "x", 50);
    expect(client.received()).not.toMatch(/got 1000 bytes/);
  });

  it("serves other clients while slow ones are held, and never cuts a long response", async () => {
    const slow = rawClient(server.port);
    slow.socket.write("GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n");
    const base = `http://127.0.0.1:${server.port}`;
    expect(await (await fetch(`${base}/`)).text()).toBe("ok");
    const posted = await fetch(`${base}/upload`, { method: "POST", body: "y".repeat(5000) });
    expect(await posted.text()).toBe("got 5000 bytes");
    // 1.5 s of answer against a 0.6 s request timeout: the request was in long before.
    expect(await (await fetch(`${base}/slow-answer`)).text()).toBe("one two three");
    await closedWithin(slow.closed, "the slow client");
  });

  it("answers TRACE and CONNECT with 501 (a fetch Request cannot carry them: the socket was closed unanswered)", async () => {
    expect(await unsupportedMethodAnswers(server.port)).toEqual(
      Array(2).fill("HTTP/1.1 501 Not Implemented"),
    );
    expect(await (await fetch(`${server.url}/still-up`)).text()).toBe("ok");
  });

  it("defaults to bounds a slow client cannot stretch", () => {
    expect(LISTEN_TIMEOUTS.headersMs).toBeLessThanOrEqual(LISTEN_TIMEOUTS.requestMs);
    expect(LISTEN_TIMEOUTS.requestMs).toBeLessThanOrEqual(60_000);
  });
});

/** Resolves once `test` holds (checked every 20 ms); a hang guard, not a verdict on speed. */
async function until(test: () => boolean | Promise<boolean>, what: string): Promise<void> {
  const deadline = Date.now() + 30_000;
  while (!(await test())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** Waits until a request to `url` is answered "ok" again (the server has seen a connection go). */
async function servedAgain(url: string, what: string): Promise<void> {
  await until(
    async () =>
      (await fetch(`${url}/`).then(
        (r) => r.text(),
        () => "",
      )) === "ok",
    what,
  );
}

describe("a client that stops reading", () => {
  it("has its connection closed once its socket stayed full for unreadMs, which cancels the stream (found by a probe: it was held forever, the run's frames kept in memory)", async () => {
    let cancelled = () => {};
    const gone = new Promise<void>((resolve) => (cancelled = resolve));
    const chunk = new Uint8Array(64 * 1024).fill(0x78);
    const endless = () =>
      new ReadableStream<Uint8Array>(
        { pull: (controller) => controller.enqueue(chunk), cancel: () => cancelled() },
        { highWaterMark: 0 },
      );
    const small = await listen(
      async () => new Response(endless(), { headers: { "content-type": "text/event-stream" } }),
      { authenticated: false, timeouts: { unreadMs: 300 } },
    );
    const client = rawClient(small.port);
    try {
      client.socket.pause(); // it never reads what the server writes
      client.socket.write("GET /events HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n");
      await closedWithin(gone, "the stream of a client that reads nothing");
    } finally {
      client.socket.destroy();
      await small.close();
    }
  });

  it("defaults to a bound (LISTEN_TIMEOUTS.unreadMs)", () => {
    expect(LISTEN_TIMEOUTS.unreadMs).toBe(60_000);
  });
});

describe("eddy serve's WebSocket messages are bounded", () => {
  it("a message past maxMessageBytes (1 MiB, as an HTTP body) closes its connection with 1009; a smaller one is taken (found by a probe: 64 MiB went through)", async () => {
    const received: number[] = [];
    const small = await listen(async () => new Response("ok"), {
      authenticated: false,
      websocket: () => ({
        open: () => ({
          receive: (text) => void received.push(text?.length ?? -1),
          end: () => {},
          settled: async () => {},
        }),
      }),
    });
    try {
      expect(SERVE_MAX_MESSAGE_BYTES).toBe(1024 * 1024);
      const socket = new WebSocket(`${small.url.replace("http", "ws")}/v1/responses`);
      const closed = new Promise<number>((resolve) => socket.once("close", (code) => resolve(code)));
      socket.on("error", () => {});
      await new Promise((resolve, reject) => socket.once("open", resolve).once("error", reject));
      socket.send("x".repeat(1000));
      socket.send("y".repeat(SERVE_MAX_MESSAGE_BYTES + 1));
      expect(await closed).toBe(1009);
      expect(received).toEqual([1000]);
    } finally {
      await small.close();
    }
  });
});

describe("eddy serve's connections are bounded", () => {
  it("one address holds at most maxConnectionsPerAddress: its next is closed as it comes, while the server still has room", async () => {
    const small = await listen(async () => new Response("ok"), {
      authenticated: false,
      maxConnections: 10,
      maxConnectionsPerAddress: 2,
    });
    try {
      // Two idle connections that send nothing (no token is ever checked on them).
      const idle = [rawClient(small.port), rawClient(small.port)];
      for (const c of idle) await new Promise<void>((resolve) => c.socket.once("connect", () => resolve()));
      const extra = rawClient(small.port);
      extra.socket.write("GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n");
      await closedWithin(extra.closed, "the connection past the address's bound");
      expect(extra.received()).toBe("");
      idle[0]?.socket.destroy();
      await servedAgain(small.url, "a connection once one of the address's went");
      for (const c of idle) c.socket.destroy();
    } finally {
      await small.close();
    }
  });

  it("past maxConnections a new connection is closed as it comes; once one goes, the next is served", async () => {
    const small = await listen(async () => new Response("ok"), { authenticated: false, maxConnections: 3 });
    try {
      // Three kept-alive connections, each answered once: the server holds them all.
      const held = [rawClient(small.port), rawClient(small.port), rawClient(small.port)];
      for (const c of held) c.socket.write("GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n");
      for (const c of held) await until(() => c.received().endsWith("ok"), "a held connection's answer");
      const extra = rawClient(small.port);
      extra.socket.write("GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n");
      await closedWithin(extra.closed, "the connection past the bound");
      expect(extra.received()).toBe("");
      held[0]?.socket.destroy();
      // Served again once the server has seen that one go.
      await servedAgain(small.url, "a connection after one went");
      for (const c of held) c.socket.destroy();
    } finally {
      await small.close();
    }
  });

  it("defaults to a bound (SERVE_MAX_CONNECTIONS)", () => {
    expect(SERVE_MAX_CONNECTIONS).toBe(512);
  });
});
