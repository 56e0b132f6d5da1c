import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { post, readSse } from "../../../test/support/mock-sse.js";
import { createMockHandler, type MockHandler } from "../handler.js";
import type { MockRequestLog } from "../recording.js";
import type { Scenario } from "../scenario.js";

const PATH = { path: "/v1/chat/completions" };
const TOOLS = [
  {
    type: "function",
    function: {
      name: "read_file",
      description: "Read a file",
      parameters: { type: "object", properties: { path: { type: "string" } } },
    },
  },
];
type Chunk = {
  id?: string;
  object?: string;
  choices?: Array<{ index: number; delta: Record<string, unknown>; finish_reason: string | null }>;
  usage?: Record<string, unknown> | null;
  error?: Record<string, unknown>;
};

async function stream(h: MockHandler, body: Record<string, unknown>) {
  const res = await post(h, { model: "m", stream: true, ...body }, PATH);
  const read = await readSse(res.body);
  return { res, read, chunks: read.events as Chunk[] };
}

async function complete(h: MockHandler, body: Record<string, unknown>) {
  const res = await post(h, { model: "m", ...body }, PATH);
  return {
    res,
    json: (await res.json()) as Record<string, unknown> & { choices: Array<Record<string, unknown>> },
  };
}

/** The assembled message of a stream, as a client would rebuild it. */
function assemble(chunks: Chunk[]) {
  let content = "";
  let refusal = "";
  let reasoning = "";
  const calls: Array<{ id: string; name: string; arguments: string }> = [];
  let finish: string | null = null;
  for (const c of chunks) {
    for (const choice of c.choices ?? []) {
      const d = choice.delta;
      if (typeof d.content === "string") content += d.content;
      if (typeof d.refusal === "string") refusal += d.refusal;
      if (typeof d.reasoning_content === "string") reasoning += d.reasoning_content;
      for (const t of (d.tool_calls ?? []) as Array<{
        index: number;
        id?: string;
        function: { name?: string; arguments?: string };
      }>) {
        const call = calls[t.index] ?? { id: "", name: "", arguments: "" };
        calls[t.index] = call;
        if (t.id !== undefined) call.id = t.id;
        if (t.function.name !== undefined) call.name = t.function.name;
        call.arguments += t.function.arguments ?? "";
      }
      if (choice.finish_reason !== null) finish = choice.finish_reason;
    }
  }
  return { content, refusal, reasoning, calls, finish };
}

const scenario = (turns: Scenario["turns"], extra: Partial<Scenario> = {}) =>
  createMockHandler({ scenario: { turns, ...extra } });

describe("POST /v1/chat/completions with the demo model", () => {
  it("runs a tool loop without streaming: a call, then an answer from the tool message", async () => {
    const h = createMockHandler();
    const user = { role: "user", content: "What is in package.json?" };
    const first = await complete(h, { messages: [user], tools: TOOLS });
    expect(first.res.status).toBe(200);
    expect(first.json).toMatchObject({ object: "chat.completion", id: "chatcmpl_mock_0001", model: "m" });
    const choice = first.json.choices[0] as {
      message: {
        content: null;
        tool_calls: Array<{ id: string; function: { name: string; arguments: string } }>;
      };
      finish_reason: string;
    };
    expect(choice.finish_reason).toBe("tool_calls");
    expect(choice.message.content).toBeNull();
    const call = choice.message.tool_calls[0];
    expect(call).toMatchObject({ id: "call_mock_0001", type: "function", function: { name: "read_file" } });
    expect(JSON.parse(call?.function.arguments ?? "")).toEqual({ path: "package.json" });
    const output = JSON.stringify({
      tool: "read_file",
      ok: true,
      exit_code: 0,
      stdout: '{"name":"eddy"}',
      stderr: "",
    });
    const second = await complete(h, {
      messages: [user, choice.message, { role: "tool", tool_call_id: call?.id, content: output }],
      tools: TOOLS,
    });
    const answer = second.json.choices[0] as { message: { content: string }; finish_reason: string };
    expect(answer.finish_reason).toBe("stop");
    expect(answer.message.content).toContain('name: "eddy"');
    expect(second.json.usage).toMatchObject({
      prompt_tokens: expect.any(Number),
      completion_tokens: expect.any(Number),
    });
  });

  it("streams OpenAI's chunk shapes: role first, call fragments, finish_reason, usage chunk, [DONE]", async () => {
    const h = createMockHandler();
    const { res, read, chunks } = await stream(h, {
      messages: [{ role: "user", content: "What is in package.json and README.md?" }],
      tools: TOOLS,
      stream_options: { include_usage: true },
    });
    expect(res.headers.get("content-type")).toMatch(/^text\/event-stream/);
    expect(read.done).toBe(true);
    expect(read.messages.at(-1)?.data).toBe("[DONE]");
    expect(read.messages.every((m) => m.event === undefined)).toBe(true);
    expect(chunks[0]?.choices?.[0]?.delta).toEqual({ role: "assistant", content: null, refusal: null });
    expect(chunks.every((c) => c.object === "chat.completion.chunk" && c.id === "chatcmpl_mock_0001")).toBe(
      true,
    );
    const firstFragments = chunks.flatMap(
      (c) => (c.choices?.[0]?.delta.tool_calls ?? []) as Array<{ id?: string }>,
    );
    // id and name on each call's first fragment only; arguments in pieces after it
    expect(firstFragments.filter((f) => f.id !== undefined)).toHaveLength(2);
    expect(firstFragments.length).toBeGreaterThan(4);
    const message = assemble(chunks);
    expect(message.calls).toEqual([
      { id: "call_mock_0001", name: "read_file", arguments: '{"path":"package.json"}' },
      { id: "call_mock_0002", name: "read_file", arguments: '{"path":"README.md"}' },
    ]);
    expect(message.finish).toBe("tool_calls");
    const last = chunks.at(-1);
    expect(last?.choices).toEqual([]);
    expect(last?.usage).toMatchObject({
      prompt_tokens: expect.any(Number),
      total_tokens: expect.any(Number),
    });
    expect(chunks.slice(0, -1).every((c) => c.usage === null)).toBe(true);
  });

  it("sends no usage without stream_options.include_usage, and no obfuscation when asked", async () => {
    const h = createMockHandler();
    const { chunks } = await stream(h, {
      messages: [{ role: "user", content: "hello" }],
      stream_options: { include_obfuscation: false },
    });
    expect(chunks.every((c) => !("usage" in c) && !("obfuscation" in c))).toBe(true);
    expect(assemble(chunks).content).toContain("offline demo model");
    const padded = await stream(h, { messages: [{ role: "user", content: "hello" }] });
    expect(padded.chunks.every((c) => "obfuscation" in c)).toBe(true);
  });

  it("honours tool_choice none, a named function and parallel_tool_calls false", async () => {
    const h = createMockHandler();
    const ask = { role: "user", content: "Read package.json and README.md" };
    const none = await complete(h, { messages: [ask], tools: TOOLS, tool_choice: "none" });
    expect((none.json.choices[0] as { finish_reason: string }).finish_reason).toBe("stop");
    const one = await complete(h, { messages: [ask], tools: TOOLS, parallel_tool_calls: false });
    expect((one.json.choices[0] as { message: { tool_calls: unknown[] } }).message.tool_calls).toHaveLength(
      1,
    );
    const forced = await complete(h, {
      messages: [{ role: "user", content: "hello" }],
      tools: TOOLS,
      tool_choice: { type: "function", function: { name: "read_file" } },
    });
    expect((forced.json.choices[0] as { finish_reason: string }).finish_reason).toBe("tool_calls");
  });

  it("calls a tool that is not one of eddy's (get_weather) with arguments from its schema, then answers from its output", async () => {
    const h = createMockHandler();
    const weather = {
      type: "function",
      function: {
        name: "get_weather",
        description: "Get the current weather for a location",
        parameters: { type: "object", properties: { location: { type: "string" } }, required: ["location"] },
      },
    };
    const ask = { role: "user", content: "What's the weather like in Paris?" };
    const { chunks } = await stream(h, { messages: [ask], tools: [weather] });
    const [call] = assemble(chunks).calls;
    expect(call).toMatchObject({ name: "get_weather" });
    expect(JSON.parse(call?.arguments ?? "")).toEqual({ location: expect.any(String) });
    const answer = await complete(h, {
      messages: [
        ask,
        {
          role: "assistant",
          content: null,
          tool_calls: [
            { id: call?.id, type: "function", function: { name: "get_weather", arguments: call?.arguments } },
          ],
        },
        { role: "tool", tool_call_id: call?.id, content: '{"temperature_c": 18, "sky": "cloudy"}' },
      ],
      tools: [weather],
    });
    const message = (answer.json.choices[0] as { message: { content: string } }).message;
    expect(message.content).toContain("According to `get_weather`");
    expect(message.content).toContain("cloudy");
  });

  it("answers response_format json_schema with JSON of that shape", async () => {
    const h = createMockHandler();
    const { json } = await complete(h, {
      messages: [{ role: "user", content: "hello" }],
      response_format: {
        type: "json_schema",
        json_schema: {
          name: "answer",
          schema: { type: "object", properties: { answer: { type: "string" } }, required: ["answer"] },
        },
      },
    });
    const content = (json.choices[0] as { message: { content: string } }).message.content;
    expect(JSON.parse(content)).toEqual({ answer: expect.any(String) });
  });

  it("streams reasoning_effort's reasoning as reasoning_content before the answer", async () => {
    const h = createMockHandler();
    const { chunks } = await stream(h, {
      messages: [{ role: "user", content: "hello" }],
      reasoning_effort: "low",
    });
    const message = assemble(chunks);
    expect(message.reasoning).toBe("Rule: no tool fits the message, so introduce myself.");
    const firstReasoning = chunks.findIndex((c) => c.choices?.[0]?.delta.reasoning_content !== undefined);
    const firstText = chunks.findIndex((c) => Boolean(c.choices?.[0]?.delta.content));
    expect(firstReasoning).toBeGreaterThan(0);
    expect(firstReasoning).toBeLessThan(firstText);
  });
});

describe("the record and the log of a chat request", () => {
  it("carry transport http, the path, the model and the chatcmpl id", async () => {
    const logs: MockRequestLog[] = [];
    const h = createMockHandler({ onRequest: (l) => logs.push(l) });
    await stream(h, { messages: [{ role: "user", content: "hi" }] });
    await new Promise((resolve) => setTimeout(resolve, 0)); // the log line is written once the stream ended
    expect(h.requests).toEqual([
      expect.objectContaining({ method: "POST", transport: "http", path: "/v1/chat/completions", turn: 0 }),
    ]);
    expect(logs).toEqual([
      expect.objectContaining({
        transport: "http",
        path: "/v1/chat/completions",
        model: "m",
        responseId: "chatcmpl_mock_0001",
        outcome: "finished",
      }),
    ]);
  });
});

describe("scenario turns through Chat Completions", () => {
  const loop: Scenario["turns"] = [
    {
      expect: { inputContains: "package.json", tools: ["read_file"], instructionsContains: "terse" },
      items: [
        { type: "reasoning", summary: "Read it first." },
        { type: "function_call", name: "read_file", arguments: { path: "package.json" }, call_id: "call_1" },
        { type: "function_call", name: "read_file", arguments: { path: "README.md" }, call_id: "call_2" },
      ],
      usage: { input_tokens: 420, output_tokens: 9, cached_tokens: 400, reasoning_tokens: 3 },
    },
    {
      expect: { functionCallOutputs: ["call_1", "call_2"], inputContains: "file body" },
      items: [{ type: "message", text: "It is eddy.", phase: "final_answer" }],
    },
  ];
  const toolTurn = [
    { role: "system", content: "Be terse." },
    { role: "user", content: "What is in package.json?" },
    {
      role: "assistant",
      content: null,
      tool_calls: [
        {
          id: "call_1",
          type: "function",
          function: { name: "read_file", arguments: '{"path":"package.json"}' },
        },
        {
          id: "call_2",
          type: "function",
          function: { name: "read_file", arguments: '{"path":"README.md"}' },
        },
      ],
    },
    { role: "tool", tool_call_id: "call_1", content: "file body" },
    { role: "tool", tool_call_id: "call_2", content: [{ type: "text", text: "readme" }] },
  ];

  it("serves one scenario to both APIs: items map to chunks, tool messages meet expect", async () => {
    const h = scenario(loop);
    const first = await stream(h, {
      messages: toolTurn.slice(0, 2),
      tools: TOOLS,
      stream_options: { include_usage: true },
    });
    const message = assemble(first.chunks);
    expect(message.reasoning).toBe("Read it first.");
    expect(message.calls.map((c) => c.id)).toEqual(["call_1", "call_2"]);
    expect(first.chunks.at(-1)?.usage).toEqual({
      prompt_tokens: 420,
      completion_tokens: 9,
      total_tokens: 429,
      prompt_tokens_details: { cached_tokens: 400, audio_tokens: 0 },
      completion_tokens_details: {
        reasoning_tokens: 3,
        audio_tokens: 0,
        accepted_prediction_tokens: 0,
        rejected_prediction_tokens: 0,
      },
    });
    const second = await stream(h, { messages: toolTurn, tools: TOOLS });
    expect(assemble(second.chunks)).toMatchObject({ content: "It is eddy.", finish: "stop" });

    // The same file over /responses
    const r = scenario(loop);
    const one = await post(r, {
      model: "m",
      instructions: "Be terse.",
      input: "What is in package.json?",
      tools: [{ type: "function", name: "read_file", parameters: {} }],
    });
    expect(one.status).toBe(200);
  });

  it("answers an unmet expect with 400 scenario_mismatch", async () => {
    const h = scenario(loop);
    await stream(h, { messages: toolTurn.slice(0, 2), tools: TOOLS });
    const res = await post(h, { model: "m", messages: [{ role: "user", content: "no tools here" }] }, PATH);
    expect(res.status).toBe(400);
    const body = (await res.json()) as { error: { code: string; message: string } };
    expect(body.error.code).toBe("scenario_mismatch");
    expect(body.error.message).toContain("call_id 'call_1'");
  });

  it("matches expect.body against the chat body as sent", async () => {
    const h = scenario([{ expect: { body: { stream_options: { include_usage: true } } }, items: [] }]);
    const bad = await post(h, { model: "m", messages: [{ role: "user", content: "x" }] }, PATH);
    expect(((await bad.json()) as { error: { message: string } }).error.message).toContain(
      "expected body.stream_options to be an object",
    );
  });

  it("meets expect.contextContains against the resent history (an earlier call's arguments too)", async () => {
    const h = scenario([{ expect: { contextContains: "README.md" }, items: [], repeat: true }]);
    const res = await post(h, { model: "m", messages: toolTurn.slice(0, 2), tools: TOOLS }, PATH);
    expect(((await res.json()) as { error: { message: string } }).error.message).toContain(
      'expected the model to see "README.md"',
    );
    const ok = await post(h, { model: "m", messages: toolTurn, tools: TOOLS }, PATH);
    expect(ok.status).toBe(200);
  });

  it.each([
    ["incomplete", { status: "incomplete" as const }, "length"],
    [
      "content filter",
      { status: "incomplete" as const, incompleteReason: "content_filter" },
      "content_filter",
    ],
  ])("maps an %s turn to finish_reason %s", async (_label, turn, finish) => {
    const h = scenario([{ items: [{ type: "message", text: "cut off" }], ...turn, repeat: true }]);
    const { chunks } = await stream(h, { messages: [{ role: "user", content: "x" }] });
    expect(assemble(chunks)).toMatchObject({ content: "cut off", finish });
    const { json } = await complete(h, { messages: [{ role: "user", content: "x" }] });
    expect((json.choices[0] as { finish_reason: string }).finish_reason).toBe(finish);
  });

  it("streams a refusal as delta.refusal", async () => {
    const h = scenario([{ items: [{ type: "message", refusal: "I can't help with that." }] }]);
    const { chunks } = await stream(h, { messages: [{ role: "user", content: "x" }] });
    expect(assemble(chunks)).toMatchObject({ refusal: "I can't help with that.", content: "" });
  });

  it("ends a failed turn with an error chunk (streaming) or HTTP 500 (not streaming)", async () => {
    const turn = {
      items: [{ type: "message" as const, text: "partial" }],
      status: "failed" as const,
      error: { code: "server_error", message: "boom" },
      repeat: true,
    };
    const h = scenario([turn]);
    const { read, chunks } = await stream(h, { messages: [{ role: "user", content: "x" }] });
    expect(chunks.at(-1)).toEqual({
      error: { message: "boom", type: "server_error", code: "server_error", param: null },
    });
    expect(read.done).toBe(true);
    expect(assemble(chunks).content).toBe("partial");
    const { res, json } = await complete(h, { messages: [{ role: "user", content: "x" }] });
    expect(res.status).toBe(500);
    expect(json).toMatchObject({ error: { message: "boom" } });
  });
});

describe("faults on /chat/completions", () => {
  const text = { items: [{ type: "message" as const, text: "one two three four five six" }] };

  it("httpError answers that status and headers", async () => {
    const h = scenario([{ faults: { httpError: { status: 429, headers: { "retry-after-ms": "20" } } } }]);
    const res = await post(h, { model: "m", messages: [{ role: "user", content: "x" }] }, PATH);
    expect(res.status).toBe(429);
    expect(res.headers.get("retry-after-ms")).toBe("20");
    expect(await res.json()).toMatchObject({ error: { code: "rate_limit_exceeded" } });
  });

  it("errorEvent writes an {error} chunk after N chunks, then [DONE]; HTTP 500 without streaming", async () => {
    const h = scenario([
      {
        ...text,
        faults: { errorEvent: { afterEvents: 2, code: "overloaded", message: "busy" } },
        repeat: true,
      },
    ]);
    const { read, chunks } = await stream(h, { messages: [{ role: "user", content: "x" }] });
    expect(chunks).toHaveLength(3);
    expect(chunks[2]).toEqual({
      error: { type: "server_error", code: "overloaded", message: "busy", param: null },
    });
    expect(read.done).toBe(true);
    const { res } = await complete(h, { messages: [{ role: "user", content: "x" }] });
    expect(res.status).toBe(500);
  });

  it("dropAfterEvents resets the stream after N chunks, with no finish and no [DONE]", async () => {
    const h = scenario([{ ...text, faults: { dropAfterEvents: 3 } }]);
    const { read } = await stream(h, { messages: [{ role: "user", content: "x" }] });
    expect(read.events).toHaveLength(3);
    expect(read.done).toBe(false);
    expect(read.error).toBeDefined();
  });

  it("keepAliveEvery, CRLF line endings and byte-sized network chunks shape the stream", async () => {
    const h = scenario([{ ...text, faults: { keepAliveEvery: 2, lineEnding: "\r\n", chunkBytes: 7 } }]);
    const { read, chunks } = await stream(h, { messages: [{ role: "user", content: "x" }] });
    expect(read.comments.length).toBeGreaterThan(2);
    expect(read.text).toContain("\r\n\r\n");
    expect(read.chunks.every((c) => c.length <= 7)).toBe(true);
    expect(assemble(chunks).content).toBe("one two three four five six");
  });
});

describe("rawChunks: captured Chat Completions streams replayed", () => {
  const capture = readFileSync(
    new URL(
      "../../../test/fixtures/chat-captures/openai/openai-parallel-tool-calls.chunks.txt",
      import.meta.url,
    ),
    "utf8",
  )
    .split("\n")
    .filter((line) => line !== "");

  it("sends the capture's lines verbatim, then [DONE]", async () => {
    const h = scenario([{ rawChunks: capture }]);
    const { read } = await stream(h, { messages: [{ role: "user", content: "x" }] });
    expect(read.messages.map((m) => m.data)).toEqual([...capture, "[DONE]"]);
  });

  it("refuses a non-streaming request, and a Responses request, on a rawChunks turn", async () => {
    const h = scenario([{ rawChunks: capture, repeat: true }]);
    const plain = await post(h, { model: "m", messages: [{ role: "user", content: "x" }] }, PATH);
    expect(plain.status).toBe(400);
    const responses = await post(h, { model: "m", input: "x" });
    expect(((await responses.json()) as { error: { code: string; message: string } }).error).toMatchObject({
      code: "scenario_mismatch",
      message: expect.stringContaining("rawChunks"),
    });
  });

  it("refuses a chat request on a rawEvents turn", async () => {
    const h = scenario([{ rawEvents: [{ type: "response.created" }] }]);
    const res = await post(h, { model: "m", messages: [{ role: "user", content: "x" }] }, PATH);
    expect(((await res.json()) as { error: { message: string } }).error.message).toContain(
      "replays rawEvents",
    );
  });
});
