import OpenAI from "openai";
import { afterEach, describe, expect, it } from "vitest";
import { readSse, streamProblems } from "../../test/support/mock-sse.js";
import {
  closedWithin,
  dripUntilClosed,
  rawClient,
  unsupportedMethodAnswers,
} from "../../test/support/slow-peer.js";
import { MOCK_DEFAULTS } from "./defaults.js";
import { createMockServer, type MockServer, type MockServerOptions } from "./listener.js";
import type { MockRequestLog } from "./recording.js";

const TOOLS = [
  {
    type: "function" as const,
    name: "read_file",
    description: "Read a file",
    parameters: { type: "object", properties: { path: { type: "string" } }, required: ["path"] },
    strict: false,
  },
];

let server: MockServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

async function start(options: MockServerOptions = {}) {
  server = await createMockServer(options);
  return { server, client: new OpenAI({ baseURL: server.url, apiKey: "test", maxRetries: 2 }) };
}

function postStream(url: string, body: Record<string, unknown>) {
  return fetch(`${url}/responses`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ stream: true, ...body }),
  });
}

describe("listener", () => {
  it("listens on 127.0.0.1 and gives the /v1 base URL", async () => {
    const { server } = await start();
    expect(server.url).toBe(`http://127.0.0.1:${server.port}/v1`);
    expect(server.port).toBeGreaterThan(0);
  });

  it("answers 404/405 as JSON over HTTP", async () => {
    const { server } = await start();
    const notFound = await fetch(`${server.url}/models`);
    expect(notFound.status).toBe(404);
    expect(await notFound.json()).toMatchObject({ error: { type: "invalid_request_error" } });
    const wrong = await fetch(`${server.url}/responses`, { method: "DELETE" });
    expect(wrong.status).toBe(405);
    // Methods a fetch Request cannot carry: 501, not a socket closed unanswered.
    expect(await unsupportedMethodAnswers(server.port)).toEqual(
      Array(2).fill("HTTP/1.1 501 Not Implemented"),
    );
  });

  it("records requests (credentials redacted) and logs one line per request", async () => {
    const logs: MockRequestLog[] = [];
    const { server, client } = await start({ onRequest: (l) => logs.push(l) });
    await client.responses.create({ model: "demo", input: "hello" });
    const stream = await client.responses.create({ model: "demo", input: "hello", stream: true });
    for await (const _ of stream) {
      // drain
    }
    expect(server.requests).toHaveLength(2);
    expect(server.requests[0]).toMatchObject({
      method: "POST",
      path: "/v1/responses",
      headers: { authorization: "[REDACTED]" },
      body: { model: "demo", input: "hello" },
      turn: 0,
    });
    await waitFor(() => logs.length === 2);
    expect(logs.map((l) => [l.method, l.path, l.status, l.model, l.turn, l.stream, l.outcome])).toEqual([
      ["POST", "/v1/responses", 200, "demo", 0, false, "answered"],
      ["POST", "/v1/responses", 200, "demo", 1, true, "finished"],
    ]);
    expect(logs.every((l) => l.durationMs >= 0)).toBe(true);
  });

  it("cuts off a client that trickles its request, and still answers the others", async () => {
    const { server, client } = await start({ timeouts: { headersMs: 300, requestMs: 600 } });
    const headers = rawClient(server.port);
    const body = rawClient(server.port);
    const post = "POST /v1/responses HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 500\r\n\r\n{";
    await Promise.all([
      dripUntilClosed(headers, "POST /v1/responses HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ", "a"),
      dripUntilClosed(body, post, " ", 50),
    ]);
    expect(headers.received()).toMatch(/^HTTP\/1\.1 408/);
    expect(server.requests).toHaveLength(0);
    const answer = await client.responses.create({ model: "demo", input: "hello" });
    expect(answer.status).toBe("completed");
  });
});

describe("eddy mock's connections are bounded", () => {
  it("past maxConnections a new connection is closed as it comes, while the requests in flight complete; then the next is served", async () => {
    const { server } = await start({ maxConnections: 2 });
    // Two requests in flight, held by their clients (half the body sent), not by a timer.
    const body = JSON.stringify({ model: "m", input: "hi", stream: true });
    const half = Math.floor(body.length / 2);
    const held = [rawClient(server.port), rawClient(server.port)];
    for (const client of held)
      client.socket.write(
        `POST /v1/responses HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body.slice(0, half)}`,
      );
    await waitFor(() => server.stats.connections === 2, 30_000);
    const extra = rawClient(server.port);
    extra.socket.write("GET /v1/models HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n");
    await closedWithin(extra.closed, "the connection past the bound");
    expect(extra.received()).toBe("");
    expect(server.stats.connections).toBe(2);
    // The requests in flight are untouched: each is answered whole once its client sends the rest.
    for (const client of held) client.socket.write(body.slice(half));
    for (const client of held) await closedWithin(client.closed, "a held request's answer");
    for (const client of held) {
      expect(client.received()).toMatch(/^HTTP\/1\.1 200/);
      expect(client.received()).toContain("event: response.completed");
    }
    expect(server.requests).toHaveLength(2);
    // The slots are free again.
    const answer = await fetch(`${server.url}/responses`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ model: "m", input: "hi" }),
    });
    expect(answer.status).toBe(200);
  });

  it("slow-header peers holding every connection are cut off (408), and then a request is served", async () => {
    const { server, client } = await start({
      maxConnections: 2,
      timeouts: { headersMs: 300, requestMs: 600 },
    });
    const slow = [rawClient(server.port), rawClient(server.port)];
    await Promise.all(
      slow.map((peer) =>
        dripUntilClosed(peer, "POST /v1/responses HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ", "a"),
      ),
    );
    for (const peer of slow) expect(peer.received()).toMatch(/^HTTP\/1\.1 408/);
    const answer = await client.responses.create({ model: "demo", input: "hello" });
    expect(answer.status).toBe("completed");
  });

  it("defaults to a bound, and refuses a bound that is not a whole number of at least 1", async () => {
    expect(MOCK_DEFAULTS.maxConnections).toBe(1024);
    for (const value of [0, -1, 1.5, Number.NaN, Number.POSITIVE_INFINITY, "10", null, 2 ** 60]) {
      await expect(createMockServer({ maxConnections: value as number })).rejects.toMatchObject({
        code: "invalid_config",
        message: expect.stringMatching(
          /^mock server: maxConnections must be a whole number of at least 1, not /,
        ),
      });
    }
    const control = await createMockServer({ maxConnections: "1\u001b[2J" as unknown as number }).catch(
      (err: Error) => err.message,
    );
    expect(control).toContain('not "1\\u001b[2J"');
  });
});

describe("a client that stops reading", () => {
  it("has its connection closed once its socket stayed full for unreadMs: the stream ends cancelled (found by a probe: it was held forever)", async () => {
    const logs: MockRequestLog[] = [];
    const text = "word ".repeat(300_000);
    const { server } = await start({
      scenario: { turns: [{ items: [{ type: "message", text }] }] },
      timeouts: { unreadMs: 300 },
      onRequest: (l) => logs.push(l),
    });
    const client = rawClient(server.port);
    client.socket.pause(); // it never reads what the server writes
    const body = JSON.stringify({ model: "m", input: "hi", stream: true });
    client.socket.write(
      `POST /v1/responses HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body}`,
    );
    await waitFor(() => logs.length === 1, 30_000);
    expect(logs[0]?.outcome).toBe("cancelled");
    client.socket.destroy();
  });
});

describe("the official openai client against the mock", () => {
  it("responses.create (non-streaming) then a follow-up over previous_response_id: a two-turn tool loop", async () => {
    const { client } = await start();
    const first = await client.responses.create({
      model: "demo",
      input: "What is in package.json?",
      tools: TOOLS,
    });
    const call = first.output[0];
    expect(call).toMatchObject({
      type: "function_call",
      name: "read_file",
      arguments: '{"path":"package.json"}',
    });
    if (call?.type !== "function_call") throw new Error("no call");
    const output = JSON.stringify({
      tool: "read_file",
      ok: true,
      exit_code: 0,
      stdout: '{"name":"eddy","version":"0.1.0"}\n',
      stderr: "",
    });
    const second = await client.responses.create({
      model: "demo",
      previous_response_id: first.id,
      input: [{ type: "function_call_output", call_id: call.call_id, output }],
      tools: TOOLS,
    });
    expect(second.previous_response_id).toBe(first.id);
    expect(second.output_text).toContain('name: "eddy", version: "0.1.0"');
  });

  it("responses.create with stream: true yields the spec's events in order", async () => {
    const { client } = await start();
    const stream = await client.responses.create({ model: "demo", input: "hello", stream: true });
    const types: string[] = [];
    let text = "";
    for await (const event of stream) {
      types.push(event.type);
      if (event.type === "response.output_text.delta") text += event.delta;
      if (event.type === "response.completed") expect(event.response.output_text ?? text).toBeDefined();
    }
    expect(types.slice(0, 4)).toEqual([
      "response.created",
      "response.in_progress",
      "response.output_item.added",
      "response.content_part.added",
    ]);
    expect(types.slice(-4)).toEqual([
      "response.output_text.done",
      "response.content_part.done",
      "response.output_item.done",
      "response.completed",
    ]);
    expect(text).toContain("offline demo model");
  });

  it("responses.stream accepts the event order: finalResponse() over a two-turn tool loop", async () => {
    const { client } = await start({
      scenario: {
        turns: [
          {
            items: [
              { type: "reasoning", summary: ["Need the manifest."], encrypted_content: "enc_1" },
              { type: "message", text: "Let me look.", phase: "commentary" },
              {
                type: "function_call",
                name: "read_file",
                arguments: { path: "package.json" },
                call_id: "call_1",
              },
            ],
          },
          {
            expect: { previousResponseId: true, functionCallOutputs: "call_1" },
            items: [{ type: "message", text: ["It is eddy ", "0.1.0 ✓."], phase: "final_answer" }],
          },
        ],
      },
    });
    const first = await client.responses
      .stream({ model: "m", input: "what is it?", tools: TOOLS, include: ["reasoning.encrypted_content"] })
      .finalResponse();
    expect(first.status).toBe("completed");
    expect(first.output.map((i) => i.type)).toEqual(["reasoning", "message", "function_call"]);
    expect(first.output[0]).toMatchObject({
      encrypted_content: "enc_1",
      summary: [{ text: "Need the manifest." }],
    });
    const second = await client.responses
      .stream({
        model: "m",
        previous_response_id: first.id,
        input: [{ type: "function_call_output", call_id: "call_1", output: "{}" }],
        tools: TOOLS,
      })
      .finalResponse();
    expect(second.output_text).toBe("It is eddy 0.1.0 ✓.");
  });

  it("retries a 429 with retry-after-ms, then succeeds (the headers are what a client expects)", async () => {
    const { client, server } = await start({
      scenario: {
        turns: [
          { faults: { httpError: { status: 429, headers: { "retry-after-ms": "10" } } } },
          { items: [{ type: "message", text: "after retry" }] },
        ],
      },
    });
    const response = await client.responses.create({ model: "m", input: "x" });
    expect(response.output_text).toBe("after retry");
    expect(server.requests).toHaveLength(2);
  });

  it("rejects a wrong API key with 401 invalid_api_key", async () => {
    server = await createMockServer({ apiKey: "right" });
    const client = new OpenAI({ baseURL: server.url, apiKey: "wrong", maxRetries: 0 });
    const error = await client.responses.create({ model: "m", input: "x" }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OpenAI.AuthenticationError);
    expect((error as InstanceType<typeof OpenAI.AuthenticationError>).code).toBe("invalid_api_key");
  });

  it("surfaces a 404 previous_response_not_found to the client", async () => {
    const { client } = await start();
    const error = await client.responses
      .create({ model: "m", input: "x", previous_response_id: "resp_gone" })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OpenAI.NotFoundError);
    expect((error as InstanceType<typeof OpenAI.NotFoundError>).code).toBe("previous_response_not_found");
  });
});

describe("streaming for real", () => {
  it("the client reads the first event before the server has written the last", async () => {
    let finishedAt: number | undefined;
    const { server } = await start({
      scenario: { turns: [{ items: [{ type: "message", text: "word ".repeat(2000) }] }] },
      onRequest: () => {
        finishedAt = performance.now();
      },
    });
    const response = await postStream(server.url, { model: "m", input: "x" });
    const reader = (response.body as ReadableStream<Uint8Array>).getReader();
    const first = await reader.read();
    const firstAt = performance.now();
    const text = new TextDecoder().decode(first.value);
    expect(text).toContain("response.created");
    expect(text).not.toContain("response.completed");
    expect(finishedAt).toBeUndefined();
    let chunks = 1;
    while (!(await reader.read()).done) chunks++;
    await waitFor(() => finishedAt !== undefined);
    expect(finishedAt).toBeGreaterThan(firstAt);
    expect(chunks).toBeGreaterThan(10);
  });

  it("with a stall after 2 events, the first event arrives long before the terminal one is written", async () => {
    const stallMs = 2_000;
    const { server } = await start({
      scenario: {
        turns: [
          {
            items: [{ type: "message", text: "hi" }],
            faults: { stallAfterEvents: { afterEvents: 2, ms: stallMs } },
          },
        ],
      },
    });
    const start_ = performance.now();
    const response = await postStream(server.url, { model: "m", input: "x" });
    const reader = (response.body as ReadableStream<Uint8Array>).getReader();
    const first = await reader.read();
    const firstAt = performance.now();
    expect(new TextDecoder().decode(first.value)).toContain("response.created");
    let rest = "";
    for (let r = await reader.read(); !r.done; r = await reader.read())
      rest += new TextDecoder().decode(r.value);
    const endAt = performance.now();
    // Timed by lower bounds and by the gap, not by how soon the first event came: on a busy
    // machine any delivery may be late, but not by a whole second.
    expect(endAt - start_).toBeGreaterThanOrEqual(stallMs - 20);
    expect(endAt - firstAt).toBeGreaterThanOrEqual(stallMs / 2);
    expect(rest).toContain("response.completed");
  });
});

describe("backpressure and cleanup", () => {
  it("a client that stops reading stops the server; it finishes once the client reads on", async () => {
    let finished = false;
    const big = JSON.stringify({ type: "acme:blob", sequence_number: 0, blob: "x".repeat(256 * 1024) });
    const { server } = await start({
      scenario: { turns: [{ rawEvents: Array.from({ length: 200 }, () => big) }] },
      onRequest: () => {
        finished = true;
      },
    });
    const response = await postStream(server.url, { model: "m", input: "x" });
    const reader = (response.body as ReadableStream<Uint8Array>).getReader();
    let bytes = (await reader.read()).value?.length ?? 0;
    await new Promise((r) => setTimeout(r, 300));
    expect(finished).toBe(false); // 50 MB cannot all sit in socket buffers: the writer waits for 'drain'

    for (let r = await reader.read(); !r.done; r = await reader.read()) bytes += r.value.length;
    expect(bytes).toBeGreaterThan(200 * 256 * 1024);
    await waitFor(() => finished);
  });

  it("a client that goes away mid-stream ends the stream (outcome cancelled)", async () => {
    const logs: MockRequestLog[] = [];
    const { server } = await start({
      scenario: {
        turns: [
          {
            items: [{ type: "message", text: "hi" }],
            faults: { stallAfterEvents: { afterEvents: 2, ms: 10_000 } },
          },
        ],
      },
      onRequest: (l) => logs.push(l),
    });
    const abort = new AbortController();
    const response = await fetch(`${server.url}/responses`, {
      method: "POST",
      body: JSON.stringify({ model: "m", input: "x", stream: true }),
      signal: abort.signal,
    });
    await (response.body as ReadableStream<Uint8Array>).getReader().read();
    abort.abort();
    await waitFor(() => logs.length === 1);
    expect(logs[0]?.outcome).toBe("cancelled");
  });

  it("close() ends stalled streams and open connections at once", async () => {
    const { server } = await start({
      scenario: {
        turns: [
          {
            items: [{ type: "message", text: "hi" }],
            faults: { stallAfterEvents: { afterEvents: 1, ms: 10_000 } },
          },
        ],
      },
    });
    const response = await postStream(server.url, { model: "m", input: "x" });
    const reader = (response.body as ReadableStream<Uint8Array>).getReader();
    await reader.read();
    const started = performance.now();
    await server.close();
    // close() does not wait out the 10 s stall (half of it is the bound, so load cannot decide).
    expect(performance.now() - started).toBeLessThan(5_000);
    await expect(
      (async () => {
        for (let r = await reader.read(); !r.done; r = await reader.read()) {
          // drain what is left
        }
      })(),
    ).rejects.toThrow();
  });
});

describe("concurrency", () => {
  it("completes 50 parallel streaming requests, each a valid stream with its own ids", async () => {
    const { server } = await start();
    const reads = await Promise.all(
      Array.from({ length: 50 }, async (_, i) =>
        readSse((await postStream(server.url, { model: "m", input: `hello ${i}` })).body),
      ),
    );
    for (const read of reads) expect(streamProblems(read)).toEqual([]);
    const ids = reads.map((r) => (r.events.at(-1) as { response: { id: string } }).response.id);
    expect(new Set(ids).size).toBe(50);
    expect(server.requests).toHaveLength(50);
    reads.forEach((read, i) => {
      expect(read.text).toContain(`hello ${i}`);
    });
  });
});

async function waitFor(condition: () => boolean, timeoutMs = 2_000): Promise<void> {
  const until = performance.now() + timeoutMs;
  while (!condition()) {
    if (performance.now() > until) throw new Error("condition not met in time");
    await new Promise((r) => setTimeout(r, 5));
  }
}

/** Sends `head` (request line and headers, CRLF-separated, without the blank line) and `body` as written; the whole answer. */
async function rawRequest(port: number, head: string, body: Buffer = Buffer.alloc(0)): Promise<string> {
  const { connect } = await import("node:net");
  return new Promise((resolve, reject) => {
    const socket = connect(port, "127.0.0.1", () => {
      socket.end(
        Buffer.concat([
          Buffer.from(`${head}\r\ncontent-length: ${body.length}\r\nconnection: close\r\n\r\n`),
          body,
        ]),
      );
    });
    const chunks: Buffer[] = [];
    socket.on("data", (c: Buffer) => chunks.push(c));
    socket.on("error", reject);
    socket.on("close", () => resolve(Buffer.concat(chunks).toString("utf8")));
  });
}

describe("a node request as the handler reads it (no fetch Request in between: src/mock/reply.ts)", () => {
  it("joins a repeated header, trims values, leaves the record's prototype alone with a __proto__ header, and redacts credentials, as Headers did", async () => {
    const { server } = await start({
      scenario: { turns: [{ items: [{ type: "message" as const, text: "ok" }] }] },
    });
    const head = [
      "POST /v1/responses HTTP/1.1",
      "host: 127.0.0.1",
      "content-type: application/json",
      "X-Twice: a",
      "x-twice: b",
      "x-padded:   v  \t",
      "__proto__: p",
      "Authorization: Bearer sk-secret-123",
    ].join("\r\n");
    const answer = await rawRequest(
      server.port,
      head,
      Buffer.from(JSON.stringify({ model: "m", input: "hi" })),
    );
    expect(answer).toMatch(/^HTTP\/1\.1 200 /);
    const recorded = server.requests[0]?.headers ?? {};
    expect(recorded["x-twice"]).toBe("a, b");
    expect(recorded["x-padded"]).toBe("v");
    expect(Object.getPrototypeOf(recorded)).toBe(Object.prototype);
    expect(recorded.authorization).toBe("[REDACTED]");
    expect(Object.keys(recorded)).toEqual([...Object.keys(recorded)].sort()); // in Headers' order
  });

  it("decodes the body as Request.text() does: a leading BOM dropped, bad UTF-8 bytes as U+FFFD", async () => {
    const { server } = await start({
      scenario: {
        turns: [
          { items: [{ type: "message" as const, text: "ok" }] },
          { items: [{ type: "message" as const, text: "ok" }] },
        ],
      },
    });
    const head = "POST /v1/responses HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json";
    const json = Buffer.from(JSON.stringify({ model: "m", input: "hi" }));
    const bom = await rawRequest(server.port, head, Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), json]));
    expect(bom).toMatch(/^HTTP\/1\.1 200 /);
    const bad = Buffer.concat([
      Buffer.from('{"model": "m", "input": "a'),
      Buffer.from([0xff, 0xfe]),
      Buffer.from('b"}'),
    ]);
    expect(await rawRequest(server.port, head, bad)).toMatch(/^HTTP\/1\.1 200 /);
    expect(server.requests[1]?.body).toEqual({ model: "m", input: "a\ufffd\ufffdb" });
  });

  it("answers a JSON error with its length, and a GET's body is not read", async () => {
    const { server } = await start();
    const answer = await rawRequest(
      server.port,
      "GET /v1/responses/resp_nope HTTP/1.1\r\nhost: 127.0.0.1",
      Buffer.from("ignored"),
    );
    const [headText = "", bodyText = ""] = answer.split("\r\n\r\n");
    expect(headText).toMatch(/^HTTP\/1\.1 404 /);
    expect(headText).toMatch(new RegExp(`content-length: ${Buffer.byteLength(bodyText)}`, "i"));
    expect(JSON.parse(bodyText).error.code).toBe("response_not_found");
    expect(server.requests[0]?.body).toBe("");
  });
});
