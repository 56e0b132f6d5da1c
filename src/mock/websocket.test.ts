/**
 * WebSocket mode over a real socket: the mock's listener against the `ws` client (and the official
 * openai SDK's WebSocket client), on 127.0.0.1.
 */
import OpenAI from "openai";
import { ResponsesWS } from "openai/resources/responses/ws";
import { afterEach, describe, expect, it } from "vitest";
import WebSocket from "ws";
import { validateStreamingEvent } from "../protocol/validate.js";
import { createMockServer, type MockServer, type MockServerOptions } from "./listener.js";

type Json = Record<string, unknown>;

let server: MockServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

async function start(options: MockServerOptions = {}) {
  server = await createMockServer(options);
  return server;
}

const wsUrl = (s: MockServer, path = "/responses") => `${s.url.replace(/^http/, "ws")}${path}`;

/** A `ws` client that collects messages; `turn` sends a response.create and waits for its terminal event or error. */
async function connect(s: MockServer, headers: Record<string, string> = {}) {
  const socket = new WebSocket(wsUrl(s), { headers });
  const messages: Array<Json | string> = [];
  let pings = 0;
  let waiter: (() => void) | undefined;
  socket.on("message", (data) => {
    const text = String(data);
    try {
      messages.push(JSON.parse(text) as Json);
    } catch {
      messages.push(text);
    }
    waiter?.();
  });
  socket.on("ping", () => pings++);
  const closed = new Promise<number>((resolve) => socket.on("close", (code) => resolve(code)));
  await new Promise<void>((resolve, reject) => {
    socket.once("open", () => resolve());
    socket.once("error", reject);
  });
  const ended = (m: Json | string) =>
    typeof m === "object" &&
    (m.type === "error" || /^response\.(completed|failed|incomplete)$/.test(String(m.type)));
  return {
    socket,
    messages,
    closed,
    get pings() {
      return pings;
    },
    /** Sends one response.create; resolves with its messages once one ends the turn (or the socket closes). */
    async turn(body: Json): Promise<Array<Json | string>> {
      const from = messages.length;
      socket.send(JSON.stringify({ type: "response.create", model: "m", ...body }));
      await Promise.race([
        closed,
        new Promise<void>((resolve) => {
          waiter = () => {
            if (messages.slice(from).some(ended)) resolve();
          };
        }),
      ]);
      waiter = undefined;
      return messages.slice(from);
    },
  };
}

const last = (messages: Array<Json | string>) => messages.at(-1) as Json;
const responseOf = (messages: Array<Json | string>) => last(messages).response as Json;

const READ_FILE = {
  type: "function",
  name: "read_file",
  description: "Read a file",
  parameters: { type: "object", properties: { path: { type: "string" } }, required: ["path"] },
  strict: false,
};

describe("WebSocket mode on the listener", () => {
  it("upgrades GET /v1/responses and streams a response, every message a valid event", async () => {
    const s = await start();
    const client = await connect(s);
    const messages = await client.turn({ input: "Count from 1 to 3." });
    expect(messages.length).toBeGreaterThan(5);
    for (const m of messages) expect(validateStreamingEvent(m)).toBeUndefined();
    expect(responseOf(messages)).toMatchObject({ status: "completed", id: "resp_mock_0001" });
    client.socket.close();
    expect(await client.closed).toBe(1005);
  });

  it("also upgrades /responses (no /v1 prefix)", async () => {
    const s = await start();
    const socket = new WebSocket(wsUrl(s, "").replace(/\/v1$/, "/responses"));
    await new Promise((resolve, reject) => {
      socket.once("open", resolve);
      socket.once("error", reject);
    });
    socket.close();
  });

  it("refuses the upgrade itself without the API key (401, JSON body) and on another path (404)", async () => {
    const s = await start({ apiKey: "k" });
    const refused = (url: string, headers: Record<string, string>) =>
      new Promise<{ status: number; body: string }>((resolve, reject) => {
        const socket = new WebSocket(url, { headers });
        socket.once("open", () => reject(new Error("upgraded")));
        socket.once("error", () => {});
        socket.once("unexpected-response", (_req, res) => {
          let body = "";
          res.on("data", (chunk: Buffer) => {
            body += String(chunk);
          });
          res.on("end", () => resolve({ status: res.statusCode ?? 0, body }));
        });
      });
    const noKey = await refused(wsUrl(s), {});
    expect(noKey.status).toBe(401);
    expect(JSON.parse(noKey.body)).toMatchObject({ error: { code: "invalid_api_key" } });
    expect((await refused(wsUrl(s), { authorization: "Bearer wrong" })).status).toBe(401);
    expect((await refused(wsUrl(s, "/models"), { authorization: "Bearer k" })).status).toBe(404);
    expect(s.stats.websocket.connections).toBe(0);
    const ok = await connect(s, { authorization: "Bearer k" });
    expect(responseOf(await ok.turn({ input: "hi" })).status).toBe("completed");
  });

  it("a plain GET /v1/responses (no upgrade) is still 405", async () => {
    const s = await start();
    expect((await fetch(`${s.url}/responses`)).status).toBe(405);
  });

  it("runs a whole tool loop on ONE connection, chained with store:false; the stats and the records show it", async () => {
    const s = await start();
    const client = await connect(s, { authorization: "Bearer test" });
    const first = responseOf(
      await client.turn({ store: false, input: "What is in package.json?", tools: [READ_FILE] }),
    );
    const call = (first.output as Json[])[0] as Json;
    expect(call).toMatchObject({
      type: "function_call",
      name: "read_file",
      arguments: '{"path":"package.json"}',
    });
    const output = JSON.stringify({
      tool: "read_file",
      ok: true,
      exit_code: 0,
      stdout: '{"name":"demo-app"}\n',
      stderr: "",
    });
    const second = responseOf(
      await client.turn({
        store: false,
        previous_response_id: first.id,
        input: [{ type: "function_call_output", call_id: call.call_id, output }],
        tools: [READ_FILE],
      }),
    );
    expect(second).toMatchObject({ status: "completed", previous_response_id: first.id });
    expect(JSON.stringify(second.output)).toContain("demo-app");
    expect(s.stats).toEqual({ connections: 1, websocket: { connections: 1, open: 1, messages: 2 } });
    expect(s.requests.map((r) => [r.method, r.transport, r.connection, r.headers.authorization])).toEqual([
      ["WS", "websocket", 1, "[REDACTED]"],
      ["WS", "websocket", 1, "[REDACTED]"],
    ]);
    client.socket.close();
    await client.closed;
    await waitFor(() => s.stats.websocket.open === 0);
  });

  it("after a reconnect a store:false chain is gone (previous_response_not_found); a new chain works", async () => {
    const s = await start();
    const a = await connect(s);
    const first = responseOf(await a.turn({ store: false, input: "Remember: copper." }));
    a.socket.close();
    await a.closed;
    const b = await connect(s);
    const [miss] = await b.turn({ store: false, previous_response_id: first.id, input: "continue" });
    expect(miss).toMatchObject({
      type: "error",
      status: 404,
      error: { code: "previous_response_not_found" },
    });
    expect(responseOf(await b.turn({ store: false, input: "start again" })).status).toBe("completed");
    expect(s.stats.websocket.connections).toBe(2);
  });

  it("dropAfterEvents destroys the socket mid-stream: N messages, no terminal event, close 1006", async () => {
    const s = await start({
      scenario: {
        turns: [{ items: [{ type: "message", text: "cut short" }], faults: { dropAfterEvents: 3 } }],
      },
    });
    const client = await connect(s);
    const messages = await client.turn({ input: "x" });
    expect(await client.closed).toBe(1006);
    expect(messages.map((m) => (m as Json).type)).toEqual([
      "response.created",
      "response.in_progress",
      "response.output_item.added",
    ]);
  });

  it("stallAfterEvents: the first events arrive, then a silence, then the rest; keepAliveEvery pings", async () => {
    const s = await start({
      scenario: {
        turns: [
          {
            items: [{ type: "message", text: "after the pause" }],
            faults: { stallAfterEvents: { afterEvents: 2, ms: 400 }, keepAliveEvery: 1 },
          },
        ],
      },
    });
    const client = await connect(s);
    const started = performance.now();
    const done = client.turn({ input: "x" });
    await waitFor(() => client.messages.length >= 2);
    const firstTwo = performance.now() - started;
    const messages = await done;
    expect(performance.now() - started - firstTwo).toBeGreaterThanOrEqual(250); // the stall is 400 ms; the poll above may see the first two late
    expect(responseOf(messages).status).toBe("completed");
    await waitFor(() => client.pings >= messages.length);
  });

  it("errorEvent and httpError arrive as error messages; the connection carries on", async () => {
    const s = await start({
      scenario: {
        turns: [
          { items: [{ type: "message", text: "x" }], faults: { errorEvent: { afterEvents: 2 } } },
          { faults: { httpError: { status: 503 } } },
          { items: [{ type: "message", text: "fine" }] },
        ],
      },
    });
    const client = await connect(s);
    expect(last(await client.turn({ input: "a" }))).toMatchObject({
      type: "error",
      status: 500,
      sequence_number: 2,
    });
    expect(last(await client.turn({ input: "b" }))).toMatchObject({
      type: "error",
      status: 503,
      error: { code: "service_unavailable" },
    });
    expect(responseOf(await client.turn({ input: "c" })).status).toBe("completed");
  });

  it("a client that stops reading is dropped once its socket stayed full for unreadMs (found by a probe: it held its connection and response forever)", async () => {
    const logs: string[] = [];
    const s = await start({
      scenario: { turns: [{ items: [{ type: "message", text: "word ".repeat(300_000) }] }] },
      timeouts: { unreadMs: 300 },
      onRequest: (l) => logs.push(l.outcome),
    });
    const client = await connect(s);
    client.socket.pause(); // it never reads what the server sends
    client.socket.send(JSON.stringify({ type: "response.create", model: "m", input: "hi" }));
    // A hang guard, not a verdict on speed.
    await waitFor(() => s.stats.websocket.open === 0 && logs.length > 0, 30_000);
    expect(logs).not.toContain("finished");
    client.socket.terminate();
  });

  it("close() ends open WebSockets (a stalled turn too) and resolves", async () => {
    const s = await start({
      scenario: { turns: [{ items: [], faults: { stallAfterEvents: { afterEvents: 1, ms: 60_000 } } }] },
    });
    const client = await connect(s);
    void client.turn({ input: "x" });
    await waitFor(() => client.messages.length === 1);
    await s.close();
    expect(await client.closed).toBe(1006);
    server = undefined;
  });
});

describe("the official openai SDK against the mock's WebSocket mode and compaction", () => {
  it("ResponsesWS streams a response; responses.compact returns a compaction the next response expands", async () => {
    const s = await start({ apiKey: "k" });
    const client = new OpenAI({ baseURL: s.url, apiKey: "k", maxRetries: 0 });
    const ws = new ResponsesWS(client);
    const completed = new Promise<OpenAI.Responses.Response>((resolve, reject) => {
      ws.on("response.completed", (event) => resolve(event.response));
      ws.on("error", reject);
    });
    ws.send({ type: "response.create", model: "m", input: "hello" });
    expect((await completed).status).toBe("completed");
    ws.close();
    const compacted = await client.responses.compact({
      model: "m",
      input: [
        { type: "message", role: "user", content: "Remember the code word: slate." },
        { type: "message", role: "assistant", content: "OK." },
      ],
    });
    expect(compacted.object).toBe("response.compaction");
    expect(compacted.output.map((i) => i.type)).toEqual(["message", "compaction"]);
    const next = await client.responses.create({
      model: "m",
      input: [
        ...(compacted.output as OpenAI.Responses.ResponseInputItem[]),
        { type: "message", role: "user", content: "Continue." },
      ],
    });
    expect(next.status).toBe("completed");
  });
});

async function waitFor(test: () => boolean, ms = 5_000): Promise<void> {
  const until = Date.now() + ms;
  while (!test()) {
    if (Date.now() > until) throw new Error("timed out waiting");
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}
