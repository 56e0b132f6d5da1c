import { describe, expect, it } from "vitest";
import { post, type ReadSse, readSse, streamProblems } from "../../test/support/mock-sse.js";
import type { ResponseResource } from "../protocol/types.js";
import { validateErrorPayload } from "../protocol/validate.js";
import { hasControlChars } from "../util/control-chars.js";
import type { ResponseModel } from "./create-response.js";
import { createEventWriter } from "./events.js";
import { createMockHandler, type MockHandler, type MockOptions } from "./handler.js";
import { formatRequestLog, type MockRequestLog } from "./recording.js";
import type { ScenarioTurn } from "./scenario.js";

type Json = Record<string, unknown>;

/** A peer that keeps what the session sends: the in-process stand-in for a socket. */
function recordingPeer() {
  return {
    messages: [] as string[],
    pings: 0,
    dropped: false,
    send(text: string) {
      this.messages.push(text);
    },
    ping() {
      this.pings++;
    },
    drop() {
      this.dropped = true;
    },
  };
}

/** Opens a session on `handler` (the upgrade admitted in process) and sends messages on it. */
function connect(handler: MockHandler, headers: Record<string, string> = {}) {
  const admission = handler.websocket(new Request("http://127.0.0.1/v1/responses", { headers }));
  if ("refused" in admission) throw new Error(`refused: ${admission.refused.status}`);
  const peer = recordingPeer();
  const session = admission.open(peer);
  return {
    peer,
    session,
    /** Sends one message (an object is sent as JSON) and returns the messages it got, parsed where they parse. */
    async send(message: Json | string | undefined): Promise<Array<Json | string>> {
      const from = peer.messages.length;
      session.receive(typeof message === "object" ? JSON.stringify(message) : message);
      await session.settled();
      return peer.messages.slice(from).map(parse);
    },
    create(body: Json) {
      return this.send({ type: "response.create", model: "m", ...body });
    },
  };
}

function parse(text: string): Json | string {
  try {
    return JSON.parse(text) as Json;
  } catch {
    return text;
  }
}

const scripted = (turns: ScenarioTurn[], options: MockOptions = {}) =>
  createMockHandler({ ...options, scenario: { turns }, clock: () => 1_700_000_000_000 });
const objects = (messages: Array<Json | string>) => messages.filter((m): m is Json => typeof m !== "string");
const types = (messages: Array<Json | string>) => objects(messages).map((m) => m.type);
const terminal = (messages: Array<Json | string>) => objects(messages).at(-1)?.response as Json;

/** The messages as an SSE read, so the stream checks of the SSE tests apply (a WebSocket has no `[DONE]`). */
function asRead(messages: Array<Json | string>): ReadSse {
  const events = messages;
  return {
    messages: events.map((e) => ({
      data: typeof e === "string" ? e : JSON.stringify(e),
      raw: "",
      ...(typeof e === "string" ? {} : { event: String(e.type) }),
    })),
    events,
    comments: [],
    chunks: [],
    done: true,
    text: "",
  };
}

/** A WebSocketErrorEvent: type, integer status, error with string code and message (schemas/openresponses/openapi.json). */
function expectSocketError(message: Json | string | undefined, status: number, code: string): Json {
  expect(typeof message).toBe("object");
  const event = message as Json;
  expect(event).toMatchObject({ type: "error", status, error: { code } });
  const error = event.error as Json;
  expect(typeof error.message).toBe("string");
  expect(validateErrorPayload(error)).toBeUndefined();
  return error;
}

describe("WebSocket mode, in process: responses", () => {
  it("answers response.create with the events an SSE stream carries, one JSON message each, no [DONE]", async () => {
    const turn: ScenarioTurn = {
      items: [
        { type: "reasoning", summary: ["Think."] },
        { type: "message", text: "Grüße — 東京 🚀" },
        { type: "function_call", name: "read_file", arguments: { path: "a.txt" } },
      ],
    };
    const ws = connect(scripted([turn]));
    const messages = await ws.create({ input: "hi" });
    expect(messages).not.toContain("[DONE]");
    expect(streamProblems(asRead(messages))).toEqual([]);
    const sse = await readSse((await post(scripted([turn]), { model: "m", input: "hi", stream: true })).body);
    expect(messages).toEqual(sse.events);
    expect(terminal(messages)).toMatchObject({ status: "completed", store: true, background: false });
  });

  it("answers several response.create messages one after another on one connection (the demo model too)", async () => {
    const handler = createMockHandler();
    const ws = connect(handler);
    const first = await ws.create({ input: "Reply with exactly: first" });
    const second = await ws.create({ input: "Reply with exactly: second" });
    expect(terminal(first)).toMatchObject({ id: "resp_mock_0001", status: "completed" });
    expect(terminal(second)).toMatchObject({ id: "resp_mock_0002", status: "completed" });
    expect(handler.stats.websocket).toEqual({ connections: 1, open: 1, messages: 2 });
  });

  it("a response.create sent on receiving the terminal event is answered while the server still finishes the last turn", async () => {
    let finish = () => {};
    const finishing = new Promise<void>((resolve) => {
      finish = resolve;
    });
    // A model that goes on after its terminal event (as an agent behind eddy serve closes its run).
    const model: ResponseModel = async (request) => {
      const writer = createEventWriter(request);
      return (async function* () {
        const opened = writer.open();
        yield* opened;
        const created = (opened[0] as { response: ResponseResource }).response;
        yield writer.end({ ...created, status: "completed", completed_at: request.now() });
        await finishing;
      })();
    };
    const ws = connect(createMockHandler({ model }));
    const send = ws.peer.send.bind(ws.peer);
    let continued = false;
    ws.peer.send = (text: string) => {
      send(text);
      const event = JSON.parse(text) as Json;
      if (event.type === "response.completed" && !continued) {
        continued = true; // the client's next message, at once
        ws.session.receive(
          JSON.stringify({
            type: "response.create",
            model: "m",
            input: "two",
            previous_response_id: terminal([event]).id,
          }),
        );
        setTimeout(finish, 50);
      }
    };
    ws.session.receive(JSON.stringify({ type: "response.create", model: "m", input: "one", store: false }));
    await waitFor(() => continued);
    await ws.session.settled();
    const messages = ws.peer.messages.map(parse);
    expect(objects(messages).filter((m) => m.type === "error")).toEqual([]);
    expect(types(messages).filter((t) => t === "response.completed")).toHaveLength(2);
  });

  it("refuses a second response.create while one runs (409 response_in_progress); the running one completes", async () => {
    const ws = connect(
      scripted([
        {
          items: [{ type: "message", text: "slow" }],
          faults: { stallAfterEvents: { afterEvents: 2, ms: 400 } },
        },
      ]),
    );
    ws.session.receive(JSON.stringify({ type: "response.create", model: "m", input: "one" }));
    await waitFor(() => ws.peer.messages.length === 2);
    ws.session.receive(JSON.stringify({ type: "response.create", model: "m", input: "two" }));
    await ws.session.settled();
    const messages = ws.peer.messages.map(parse);
    const busy = objects(messages).filter((m) => m.type === "error");
    expect(busy).toHaveLength(1);
    expectSocketError(busy[0], 409, "response_in_progress");
    expect(objects(messages).indexOf(busy[0] as Json)).toBe(2); // between the first two events and the rest
    expect(types(messages).at(-1)).toBe("response.completed");
  });

  it.each([
    ["stream", { stream: true }, "stream"],
    ["stream_options", { stream_options: { include_obfuscation: false } }, "stream_options"],
    ["background", { background: false }, "background"],
  ])("refuses an HTTP-only field: %s", async (_label, extra, param) => {
    const ws = connect(createMockHandler());
    const [message] = await ws.create({ input: "hi", ...extra });
    expect(expectSocketError(message, 400, "unsupported_parameter")).toMatchObject({ param });
  });

  it.each([
    ["not JSON", "{oops", "invalid_json", null],
    ["a JSON array", "[1]", "invalid_json", null],
    ["no type", { model: "m", input: "hi" }, "invalid_value", "type"],
    ["another event type", { type: "response.cancel" }, "invalid_value", "type"],
    ["a binary message", undefined, "invalid_message", null],
    ["no model", { type: "response.create", input: "hi" }, "missing_required_parameter", "model"],
    [
      "an invalid body",
      { type: "response.create", model: "m", temperature: "hot" },
      "invalid_value",
      "temperature",
    ],
  ])(
    "refuses %s with a 400 error message, and the connection stays usable",
    async (_label, message, code, param) => {
      const ws = connect(createMockHandler());
      const [error] = await ws.send(message as Json | string | undefined);
      expect(expectSocketError(error, 400, code)).toMatchObject({ param });
      expect(types(await ws.create({ input: "hi" })).at(-1)).toBe("response.completed");
    },
  );

  it("records each message (transport websocket, the connection's redacted headers) and logs it", async () => {
    const logs: MockRequestLog[] = [];
    const handler = createMockHandler({ onRequest: (l) => logs.push(l) });
    const ws = connect(handler, { authorization: "Bearer secret", "user-agent": "t" });
    await ws.create({ input: "hi" });
    await ws.send("{oops");
    expect(handler.requests).toEqual([
      {
        method: "WS",
        transport: "websocket",
        connection: 1,
        path: "/v1/responses",
        headers: { authorization: "[REDACTED]", "user-agent": "t" },
        body: { type: "response.create", model: "m", input: "hi" },
        turn: 0,
      },
      expect.objectContaining({ method: "WS", body: "{oops", connection: 1 }),
    ]);
    expect(logs.map((l) => [l.method, l.status, l.transport, l.connection, l.turn, l.outcome])).toEqual([
      ["GET", 101, "websocket", 1, undefined, "answered"],
      ["WS", 200, "websocket", 1, 0, "finished"],
      ["WS", 400, "websocket", 1, undefined, "answered"],
    ]);
    expect(logs.map((l) => formatRequestLog({ ...l, durationMs: 3 }))).toEqual([
      "GET /v1/responses 101 ws#1 3ms",
      "WS /v1/responses 200 ws#1 model=m turn=0 resp_mock_0001 stream 3ms",
      "WS /v1/responses 400 ws#1 stream 3ms",
    ]);
  });

  it("counts connections: opened, open now, messages", async () => {
    const handler = createMockHandler();
    const a = connect(handler);
    const b = connect(handler);
    await a.create({ input: "hi" });
    b.session.end();
    expect(handler.stats.websocket).toEqual({ connections: 2, open: 1, messages: 1 });
  });
});

describe("WebSocket mode, in process: admission", () => {
  it("refuses an upgrade without the API key (401) or on another path (404), with a JSON error", async () => {
    const handler = createMockHandler({ apiKey: "k" });
    const none = handler.websocket(new Request("http://127.0.0.1/v1/responses"));
    if (!("refused" in none)) throw new Error("admitted");
    expect(none.refused.status).toBe(401);
    expect(await none.refused.json()).toMatchObject({ error: { code: "invalid_api_key" } });
    const other = handler.websocket(
      new Request("http://127.0.0.1/v1/chat", { headers: { authorization: "Bearer k" } }),
    );
    if (!("refused" in other)) throw new Error("admitted");
    expect(other.refused.status).toBe(404);
    const ok = handler.websocket(
      new Request("http://127.0.0.1/responses", { headers: { authorization: "Bearer k" } }),
    );
    expect("open" in ok).toBe(true);
  });
});

describe("WebSocket mode, in process: store:false and the connection-local cache", () => {
  it("continues a store:false response on the same connection only; another connection gets previous_response_not_found", async () => {
    const handler = createMockHandler();
    const ws = connect(handler);
    const first = terminal(
      await ws.create({ store: false, input: "What is in package.json?", tools: [READ_FILE] }),
    );
    const call = (first.output as Json[])[0] as Json;
    expect(call).toMatchObject({ type: "function_call", name: "read_file" });
    const output = { type: "function_call_output", call_id: call.call_id, output: PACKAGE_JSON };
    const next = await ws.create({
      store: false,
      previous_response_id: first.id,
      input: [output],
      tools: [READ_FILE],
    });
    expect(terminal(next)).toMatchObject({ status: "completed", previous_response_id: first.id });
    expect(JSON.stringify(terminal(next).output)).toContain("demo-app");
    // Not in the server's store: HTTP and a second connection cannot see it.
    const http = await post(handler, { model: "m", previous_response_id: first.id, input: "hi" });
    expect(http.status).toBe(404);
    const [missing] = await connect(handler).create({
      store: false,
      previous_response_id: first.id,
      input: "hi",
    });
    expectSocketError(missing, 404, "previous_response_not_found");
  });

  it("a store:true response is in the server's store: any connection (and HTTP) can continue it", async () => {
    const handler = createMockHandler();
    const first = terminal(await connect(handler).create({ input: "hi" }));
    const other = await connect(handler).create({ previous_response_id: first.id, input: "again" });
    expect(terminal(other)).toMatchObject({ status: "completed", previous_response_id: first.id });
    const http = await post(handler, { model: "m", previous_response_id: first.id, input: "again" });
    expect(http.status).toBe(200);
  });

  it("an unknown previous_response_id is previous_response_not_found (404), and no turn is used up", async () => {
    const ws = connect(scripted([{ items: [{ type: "message", text: "turn 0" }] }]));
    const [error] = await ws.create({ store: false, previous_response_id: "resp_nope", input: "x" });
    expect(expectSocketError(error, 404, "previous_response_not_found")).toMatchObject({
      param: "previous_response_id",
    });
    expect(JSON.stringify(terminal(await ws.create({ input: "x" })).output)).toContain("turn 0");
  });

  it("an error message quoting the client's id writes its C1 and direction characters as escapes (found by a probe: they were raw)", async () => {
    const ws = connect(scripted([{ items: [{ type: "message", text: "turn 0" }] }]));
    const [error] = await ws.create({ previous_response_id: "resp_\u009b2J\u202e", input: "x" });
    expectSocketError(error, 404, "previous_response_not_found");
    expect(hasControlChars(ws.peer.messages.at(-1) ?? "")).toBe(false);
  });

  it("a failed continuation evicts the id it named: retrying it is previous_response_not_found", async () => {
    const ws = connect(createMockHandler());
    const first = terminal(await ws.create({ store: false, input: "Remember: ember." }));
    const orphan = { type: "function_call_output", call_id: "call_missing", output: "x" };
    const [failed] = await ws.create({ store: false, previous_response_id: first.id, input: [orphan] });
    expectSocketError(failed, 400, "function_call_not_found");
    const [retry] = await ws.create({ store: false, previous_response_id: first.id, input: "stale?" });
    expectSocketError(retry, 404, "previous_response_not_found");
  });

  it("a continuation whose response fails (response.failed) evicts the id too", async () => {
    const ws = connect(
      scripted([
        { items: [{ type: "message", text: "ok" }] },
        { items: [], status: "failed", error: { code: "server_error", message: "boom" } },
        { items: [{ type: "message", text: "never" }] },
      ]),
    );
    const first = terminal(await ws.create({ store: false, input: "a" }));
    expect(types(await ws.create({ store: false, previous_response_id: first.id, input: "b" })).at(-1)).toBe(
      "response.failed",
    );
    const [retry] = await ws.create({ store: false, previous_response_id: first.id, input: "c" });
    expectSocketError(retry, 404, "previous_response_not_found");
  });

  it("the cache goes with the connection: after end() nothing is answered", async () => {
    const ws = connect(createMockHandler());
    await ws.create({ store: false, input: "a" });
    ws.session.end();
    expect(await ws.create({ input: "b" })).toEqual([]);
  });
});

describe("WebSocket mode, in process: faults and scenarios", () => {
  it("httpError: one error message with the status, the fault's body and headers; the next turn answers", async () => {
    const ws = connect(
      scripted([
        { faults: { httpError: { status: 429, headers: { "retry-after": "1" } } } },
        {
          faults: {
            httpError: {
              status: 400,
              body: { error: { message: "custom", type: "x", code: "y", param: null } },
            },
          },
        },
        { faults: { httpError: { status: 502, body: "<html>Bad gateway</html>" } } },
        { items: [{ type: "message", text: "ok" }] },
      ]),
    );
    const [limited] = await ws.create({ input: "a" });
    expect(expectSocketError(limited, 429, "rate_limit_exceeded")).toMatchObject({
      type: "too_many_requests",
      headers: { "retry-after": "1" },
    });
    const [custom] = await ws.create({ input: "b" });
    expect(expectSocketError(custom, 400, "y")).toMatchObject({ message: "custom", type: "x" });
    const [gateway] = await ws.create({ input: "c" });
    expect(String((expectSocketError(gateway, 502, "server_error") as Json).message)).toContain(
      "Bad gateway",
    );
    expect(types(await ws.create({ input: "d" })).at(-1)).toBe("response.completed");
  });

  it("errorEvent: N events, then one error message (status 500, the next sequence_number) that ends the turn", async () => {
    const ws = connect(
      scripted([
        {
          items: [{ type: "message", text: "partial answer" }],
          faults: { errorEvent: { afterEvents: 3, code: "overloaded" } },
        },
      ]),
    );
    const messages = await ws.create({ input: "a" });
    expect(messages).toHaveLength(4);
    const error = expectSocketError(messages[3], 500, "overloaded");
    expect(error).toMatchObject({ type: "server_error", param: null });
    expect((messages[3] as Json).sequence_number).toBe(3);
    expect(types(messages)).not.toContain("response.failed");
  });

  it("dropAfterEvents: N events, then the peer is dropped; no terminal event; logged as dropped", async () => {
    const logs: MockRequestLog[] = [];
    const ws = connect(
      scripted([{ items: [{ type: "message", text: "cut" }], faults: { dropAfterEvents: 2 } }], {
        onRequest: (l) => logs.push(l),
      }),
    );
    const messages = await ws.create({ input: "a" });
    expect(types(messages)).toEqual(["response.created", "response.in_progress"]);
    expect(ws.peer.dropped).toBe(true);
    expect(logs.at(-1)).toMatchObject({
      method: "WS",
      status: 0,
      outcome: "dropped",
      faults: ["dropAfterEvents"],
    });
  });

  it("stalls: stallBeforeHeadersMs and stallBeforeBodyMs delay the first event, stallAfterEvents the rest", async () => {
    for (const faults of [{ stallBeforeHeadersMs: 400 }, { stallBeforeBodyMs: 400 }]) {
      const ws = connect(scripted([{ items: [{ type: "message", text: "x" }], faults }]));
      const started = performance.now();
      ws.session.receive(JSON.stringify({ type: "response.create", model: "m", input: "a" }));
      await new Promise((resolve) => setTimeout(resolve, 40));
      expect(ws.peer.messages).toEqual([]);
      await ws.session.settled();
      expect(performance.now() - started).toBeGreaterThanOrEqual(380);
      expect(types(ws.peer.messages.map(parse)).at(-1)).toBe("response.completed");
    }
    const ws = connect(
      scripted([
        {
          items: [{ type: "message", text: "x" }],
          faults: { stallAfterEvents: { afterEvents: 2, ms: 400 } },
        },
      ]),
    );
    ws.session.receive(JSON.stringify({ type: "response.create", model: "m", input: "a" }));
    await waitFor(() => ws.peer.messages.length >= 2);
    await new Promise((resolve) => setTimeout(resolve, 40));
    expect(ws.peer.messages).toHaveLength(2);
    await ws.session.settled();
    expect(types(ws.peer.messages.map(parse)).at(-1)).toBe("response.completed");
  });

  it("a stall ends at once when the connection closes; the turn is logged cancelled", async () => {
    const logs: MockRequestLog[] = [];
    const ws = connect(
      scripted(
        [
          {
            items: [{ type: "message", text: "x" }],
            faults: { stallAfterEvents: { afterEvents: 1, ms: 60_000 } },
          },
        ],
        {
          onRequest: (l) => logs.push(l),
        },
      ),
    );
    ws.session.receive(JSON.stringify({ type: "response.create", model: "m", input: "a" }));
    await waitFor(() => ws.peer.messages.length === 1);
    ws.session.end();
    await ws.session.settled();
    expect(logs.at(-1)).toMatchObject({ outcome: "cancelled", status: 0 });
    expect(ws.peer.messages).toHaveLength(1);
  });

  it("invalidJsonAfterEvents sends one text message that is not JSON; keepAliveEvery sends pings", async () => {
    const ws = connect(
      scripted([
        { items: [{ type: "message", text: "x" }], faults: { invalidJsonAfterEvents: 2, keepAliveEvery: 2 } },
      ]),
    );
    const messages = await ws.create({ input: "a" });
    expect(typeof messages[2]).toBe("string");
    expect(types(messages).at(-1)).toBe("response.completed");
    expect(ws.peer.pings).toBe(Math.floor(objects(messages).length / 2));
  });

  it("scenario expectations apply (a mismatch is a 400 scenario_mismatch error), and rawEvents are replayed verbatim", async () => {
    const raw = ['{"type":"response.created","sequence_number":0,"response":{"id":"resp_raw"}}', "not json"];
    const ws = connect(scripted([{ expect: { inputContains: "needle" }, items: [] }, { rawEvents: raw }]));
    const [mismatch] = await ws.create({ input: "hay" });
    expectSocketError(mismatch, 400, "scenario_mismatch");
    expect(await ws.send({ type: "response.create", model: "m", input: "x" })).toEqual([
      JSON.parse(raw[0] as string),
      "not json",
    ]);
  });
});

describe("WebSocket mode, in process: the turn decision shared with HTTP and Chat Completions", () => {
  it("contextWindow: a continuation over the window (its store:false chain in the connection's cache counts) is a 400 context_length_exceeded error that uses up no turn", async () => {
    const handler = createMockHandler({
      scenario: {
        contextWindow: 30,
        turns: [
          { items: [{ type: "message", text: "done" }] },
          { items: [{ type: "message", text: "next" }] },
        ],
      },
    });
    const ws = connect(handler);
    const first = terminal(await ws.create({ store: false, input: "y".repeat(100) }));
    expect(first).toMatchObject({ status: "completed", store: false });
    // 100 + 4 ("done") + 20 characters = 31 tokens: only the cached chain makes it too long.
    const [refused] = await ws.create({
      store: false,
      previous_response_id: first.id,
      input: "z".repeat(20),
    });
    expect(expectSocketError(refused, 400, "context_length_exceeded")).toMatchObject({ param: "input" });
    const retried = terminal(await ws.create({ input: "z".repeat(20) }));
    expect(JSON.stringify(retried.output)).toContain("next"); // turn 1: the refusal used none up
  });

  it("a rawChunks turn (Chat Completions only) is refused with scenario_mismatch, as over HTTP", async () => {
    const ws = connect(scripted([{ rawChunks: ['{"choices":[]}'] }]));
    const [refused] = await ws.create({ input: "x" });
    expect(expectSocketError(refused, 400, "scenario_mismatch").message).toContain("replays rawChunks");
  });
});

const READ_FILE = {
  type: "function",
  name: "read_file",
  description: "Read a file",
  parameters: { type: "object", properties: { path: { type: "string" } }, required: ["path"] },
  strict: false,
};
const PACKAGE_JSON = JSON.stringify({
  tool: "read_file",
  ok: true,
  exit_code: 0,
  stdout: '{"name":"demo-app","version":"2.0.0"}\n',
  stderr: "",
});

async function waitFor(test: () => boolean, ms = 5_000): Promise<void> {
  const until = Date.now() + ms;
  while (!test()) {
    if (Date.now() > until) throw new Error("timed out waiting");
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}
