import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { type OtlpReceiver, type ReceivedSpan, startOtlpReceiver } from "../../test/support/otlp-receiver.js";
import { recordMockRun } from "../../test/support/record.js";
import type { Scenario } from "../mock/index.js";
import type { JsonObject } from "../protocol/types.js";
import { otelRequested, otlpHeaders, startOtelExport, tracesEndpoint } from "./otel.js";

const SECRET = "sk-test-otel-secret-4242";

/** A 429 first (retried), then a read_file call, then the answer. */
const scenario: Scenario = {
  turns: [
    { faults: { httpError: { status: 429, headers: { "retry-after-ms": "10" } } } },
    {
      items: [
        { type: "reasoning", summary: ["Read the notes first."] },
        { type: "function_call", name: "read_file", arguments: { path: "notes.txt" }, call_id: "call_1" },
      ],
      usage: { input_tokens: 120, output_tokens: 12 },
    },
    {
      items: [{ type: "message", text: "The notes say: remember the milk." }],
      usage: { input_tokens: 160, output_tokens: 9 },
    },
  ],
};

let receiver: OtlpReceiver | undefined;
afterEach(async () => {
  await receiver?.close();
  receiver = undefined;
});

async function tracedRun(env: Record<string, string> = {}, captureContent?: boolean) {
  receiver = await startOtlpReceiver();
  const workspace = mkdtempSync(join(tmpdir(), "eddy-otel-"));
  writeFileSync(join(workspace, "notes.txt"), "remember the milk\n");
  const otel = await startOtelExport({
    env: { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, ...env },
    providerName: "mock",
    ...(captureContent !== undefined ? { captureContent } : {}),
  });
  const run = await recordMockRun({
    scenario,
    prompt: "What do my notes say?",
    workspace,
    apiKey: SECRET,
    instructions: "Answer briefly.",
    onFrame: otel.observer,
  });
  await otel.shutdown();
  return { run, spans: receiver.spans, bodies: receiver.bodies };
}

const one = (spans: ReceivedSpan[], name: string) => {
  const found = spans.filter((s) => s.name === name);
  expect(found, `spans named ${name}: ${spans.map((s) => s.name).join(", ")}`).toHaveLength(1);
  return found[0] as ReceivedSpan;
};

describe("OTLP/HTTP export of a run (a local receiver)", () => {
  it("delivers invoke_agent, chat and execute_tool spans with the GenAI attributes", async () => {
    const { run, spans, bodies } = await tracedRun();
    expect(run.result.reason).toBe("completed");

    const agent = one(spans, "invoke_agent");
    const chats = spans.filter((s) => s.name === "chat eddy-demo");
    const tool = one(spans, "execute_tool read_file");
    expect(chats).toHaveLength(2);
    expect(spans).toHaveLength(4);
    for (const s of [...chats, tool]) {
      expect(s.traceId).toBe(agent.traceId);
      expect(s.parentSpanId).toBe(agent.spanId);
    }
    expect(agent.parentSpanId).toBeUndefined();
    expect(agent.resource["service.name"]).toBe("eddy");

    expect(agent.attributes).toMatchObject({
      "gen_ai.operation.name": "invoke_agent",
      "gen_ai.provider.name": "mock",
      "gen_ai.system": "mock",
      "gen_ai.request.model": "eddy-demo",
      "gen_ai.usage.input_tokens": 280,
      "gen_ai.usage.output_tokens": 21,
      "eddy.run.reason": "completed",
      "eddy.turns": 2,
      "eddy.tool_calls": 1,
    });

    const [first, second] = chats as [ReceivedSpan, ReceivedSpan];
    expect(first.kind).toBe(3); // SpanKind.CLIENT (OTLP numbering)
    expect(first.attributes).toMatchObject({
      "gen_ai.operation.name": "chat",
      "gen_ai.provider.name": "mock",
      "gen_ai.request.model": "eddy-demo",
      "gen_ai.response.model": "eddy-demo",
      "gen_ai.response.id": "resp_mock_0001",
      "gen_ai.usage.input_tokens": 120,
      "gen_ai.usage.output_tokens": 12,
      "gen_ai.response.finish_reasons": ["tool_calls"],
      "eddy.retries": 1,
    });
    expect(typeof first.attributes["gen_ai.response.time_to_first_chunk"]).toBe("number");
    // The 429 is one logical request with a retry inside (the conventions' rule for retries).
    expect(first.events.map((e) => e.name)).toEqual(
      expect.arrayContaining(["request_failed", "retry", "attempt", "first_token"]),
    );
    expect(
      first.events.find((e) => e.name === "request_failed")?.attributes["http.response.status_code"],
    ).toBe(429);
    expect(second.attributes).toMatchObject({
      "gen_ai.response.id": "resp_mock_0002",
      "gen_ai.response.finish_reasons": ["stop"],
      "gen_ai.usage.input_tokens": 160,
    });

    expect(tool.attributes).toMatchObject({
      "gen_ai.operation.name": "execute_tool",
      "gen_ai.tool.name": "read_file",
      "gen_ai.tool.call.id": "call_1",
      "gen_ai.tool.type": "function",
    });
    expect(tool.startMs).toBeGreaterThanOrEqual(agent.startMs);
    expect(tool.endMs).toBeLessThanOrEqual(agent.endMs);

    // Without captureContent no prompt, answer, arguments or output leave the process; never the key.
    const all = bodies.join("\n");
    for (const absent of [
      "What do my notes say",
      "remember the milk",
      "Answer briefly",
      "notes.txt",
      SECRET,
    ]) {
      expect(all).not.toContain(absent);
    }
    for (const s of spans) {
      expect(
        Object.keys(s.attributes).filter((k) => /messages|instructions|arguments|result/.test(k)),
      ).toEqual([]);
    }
  });

  it("records prompts, answers, arguments and outputs only with captureContent", async () => {
    const { spans, bodies } = await tracedRun({ OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT: "true" });
    const agent = one(spans, "invoke_agent");
    const tool = one(spans, "execute_tool read_file");
    expect(JSON.parse(String(agent.attributes["gen_ai.input.messages"]))).toEqual([
      { role: "user", parts: [{ type: "text", content: "What do my notes say?" }] },
    ]);
    expect(String(agent.attributes["gen_ai.system_instructions"])).toContain("Answer briefly.");
    expect(String(agent.attributes["gen_ai.output.messages"])).toContain("remember the milk");
    expect(JSON.parse(String(tool.attributes["gen_ai.tool.call.arguments"]))).toEqual({ path: "notes.txt" });
    expect(String(tool.attributes["gen_ai.tool.call.result"])).toContain("remember the milk");
    const answerChat = spans.filter((s) => s.name === "chat eddy-demo")[1] as ReceivedSpan;
    const output = JSON.parse(String(answerChat.attributes["gen_ai.output.messages"]));
    expect(output).toEqual([
      {
        role: "assistant",
        parts: [{ type: "text", content: "The notes say: remember the milk." }],
        finish_reason: "stop",
      },
    ]);
    expect(bodies.join("\n")).not.toContain(SECRET);
  });
});

/** A response's resource as an event carries it. */
const resource = (id: string, status: string, output: JsonObject[]): JsonObject => ({
  id,
  object: "response",
  created_at: 1,
  status,
  model: "eddy-demo",
  output,
  usage: null,
  error: null,
  incomplete_details: null,
});

/** A response that calls read_file with `args`, streamed in one delta (the mock's own stream cuts it in 8-character fragments). */
function callEvents(args: string): JsonObject[] {
  const item = {
    type: "function_call",
    id: "fc_1",
    call_id: "call_1",
    name: "read_file",
    status: "completed",
  };
  return [
    { type: "response.created", sequence_number: 0, response: resource("resp_big_1", "in_progress", []) },
    {
      type: "response.output_item.added",
      sequence_number: 1,
      output_index: 0,
      item: { ...item, arguments: "", status: "in_progress" },
    },
    {
      type: "response.function_call_arguments.delta",
      sequence_number: 2,
      item_id: "fc_1",
      output_index: 0,
      delta: args,
    },
    {
      type: "response.output_item.done",
      sequence_number: 3,
      output_index: 0,
      item: { ...item, arguments: args },
    },
    {
      type: "response.completed",
      sequence_number: 4,
      response: resource("resp_big_1", "completed", [{ ...item, arguments: args }]),
    },
  ];
}

/** A response answering `text` in one delta. */
function answerEvents(text: string): JsonObject[] {
  const part = { type: "output_text", text, annotations: [] };
  const message = { type: "message", id: "msg_1", role: "assistant", status: "completed", content: [part] };
  const at = { item_id: "msg_1", output_index: 0, content_index: 0 };
  return [
    { type: "response.created", sequence_number: 0, response: resource("resp_big_2", "in_progress", []) },
    {
      type: "response.output_item.added",
      sequence_number: 1,
      output_index: 0,
      item: { ...message, status: "in_progress", content: [] },
    },
    { type: "response.output_text.delta", sequence_number: 2, ...at, delta: text, logprobs: [] },
    { type: "response.output_text.done", sequence_number: 3, ...at, text, logprobs: [] },
    { type: "response.output_item.done", sequence_number: 4, output_index: 0, item: message },
    {
      type: "response.completed",
      sequence_number: 5,
      response: resource("resp_big_2", "completed", [message]),
    },
  ];
}

describe("span sizes (docs/pitfalls.md #96)", () => {
  it("a run with a 1 MB argument and a 1 MB answer, content captured: every attribute within 8 KiB, the key masked", async () => {
    receiver = await startOtlpReceiver();
    const workspace = mkdtempSync(join(tmpdir(), "eddy-otel-"));
    const mb = "x".repeat(1024 * 1024);
    // The key in what the model says: frames mask it before any span sees it, and a cut cannot unmask it.
    const answer = `${SECRET} ${mb} ${SECRET}`;
    const otel = await startOtelExport({
      env: { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url },
      providerName: "mock",
      captureContent: true,
    });
    const args = JSON.stringify({ path: "notes.txt", pad: `${SECRET}${mb}` });
    const run = await recordMockRun({
      scenario: { turns: [{ rawEvents: callEvents(args) }, { rawEvents: answerEvents(answer) }] },
      prompt: `Read ${mb}`,
      workspace,
      apiKey: SECRET,
      onFrame: otel.observer,
    });
    expect(await otel.shutdown()).toBeUndefined();
    expect(run.result.reason).toBe("completed");
    const { spans, bodies } = receiver;
    expect(spans.map((s) => s.name).sort()).toEqual([
      "chat eddy-demo",
      "chat eddy-demo",
      "execute_tool read_file",
      "invoke_agent",
    ]);
    for (const span of spans) {
      const values = [
        ...Object.values(span.attributes),
        ...span.events.flatMap((e) => Object.values(e.attributes)),
        span.status.message ?? "",
      ].flat();
      for (const value of values)
        if (typeof value === "string") expect(value.length).toBeLessThanOrEqual(8192);
    }
    const tool = one(spans, "execute_tool read_file");
    // The arguments are JSON, and stay JSON when cut (docs/pitfalls.md #116).
    const cutArgs = JSON.parse(String(tool.attributes["gen_ai.tool.call.arguments"]));
    expect(cutArgs.path).toBe("notes.txt");
    expect(cutArgs.pad).toMatch(/^\*\*\*x+…\[\d+ characters left out\]$/);
    for (const span of spans)
      for (const key of ["gen_ai.input.messages", "gen_ai.output.messages"])
        if (span.attributes[key] !== undefined)
          expect(() => JSON.parse(String(span.attributes[key])), `${span.name} ${key}`).not.toThrow();
    const all = bodies.join("\n");
    expect(all).not.toContain(SECRET);
    // Four spans, each a few cut values: the export is kilobytes, not megabytes.
    expect(all.length).toBeLessThan(200_000);
  });
});

describe("the attribute value length limit from the environment (docs/pitfalls.md #117)", () => {
  it("OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT=1000 (a bad span variable said on stderr): every string within 1000 characters, the messages still JSON", async () => {
    receiver = await startOtlpReceiver();
    const lines: string[] = [];
    const otel = await startOtelExport({
      env: {
        OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
        OTEL_SPAN_ATTRIBUTE_VALUE_LENGTH_LIMIT: "1e3",
        OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT: "1000",
      },
      providerName: "mock",
      captureContent: true,
      stderr: { write: (text: string) => lines.push(text) },
    });
    expect(lines).toEqual([
      'eddy: OTEL_SPAN_ATTRIBUTE_VALUE_LENGTH_LIMIT="1e3" is not a whole number of characters (0 or more); using OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT\'s 1000\n',
    ]);
    await recordMockRun({
      scenario: { turns: [{ rawEvents: answerEvents(`An answer ${"a".repeat(20_000)}`) }] },
      prompt: `Read ${"p".repeat(20_000)}`,
      workspace: mkdtempSync(join(tmpdir(), "eddy-otel-")),
      onFrame: otel.observer,
    });
    expect(await otel.shutdown()).toBeUndefined();
    const jsonValues: string[] = [];
    for (const span of receiver.spans)
      for (const [key, value] of Object.entries(span.attributes)) {
        if (typeof value === "string") expect(value.length, `${span.name} ${key}`).toBeLessThanOrEqual(1000);
        if (key.endsWith(".messages")) jsonValues.push(String(value));
      }
    // invoke_agent and chat: input and output messages each, all cut (20,000 characters each).
    expect(jsonValues).toHaveLength(4);
    for (const value of jsonValues) {
      expect(value.length).toBeGreaterThan(900);
      expect(JSON.stringify(JSON.parse(value))).toMatch(/…\[\d+ characters left out\]"/);
    }
  });
});

describe("OTel configuration from the environment", () => {
  it.each([
    [{}, "http://localhost:4318/v1/traces"],
    [{ OTEL_EXPORTER_OTLP_ENDPOINT: "http://collector:4318/" }, "http://collector:4318/v1/traces"],
    [
      {
        OTEL_EXPORTER_OTLP_ENDPOINT: "http://a:4318",
        OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: "http://b:9/traces",
      },
      "http://b:9/traces",
    ],
  ])("endpoint of %j is %s", (env, url) => {
    expect(tracesEndpoint(env)).toBe(url);
  });

  it("turns on with --otel or an endpoint in the environment", () => {
    expect(otelRequested(undefined, {})).toBe(false);
    expect(otelRequested(true, {})).toBe(true);
    expect(otelRequested(undefined, { OTEL_EXPORTER_OTLP_ENDPOINT: "http://x:4318" })).toBe(true);
    expect(otelRequested(undefined, { OTEL_EXPORTER_OTLP_ENDPOINT: " " })).toBe(false);
  });

  it("parses OTLP headers, trace-specific ones first", () => {
    expect(otlpHeaders({ OTEL_EXPORTER_OTLP_HEADERS: "api-key=a%20b, x=1,bad" })).toEqual({
      "api-key": "a b",
      x: "1",
    });
    expect(
      otlpHeaders({ OTEL_EXPORTER_OTLP_HEADERS: "a=1", OTEL_EXPORTER_OTLP_TRACES_HEADERS: "b=2" }),
    ).toEqual({ b: "2" });
  });

  it("a collector that is down does not hold shutdown past its timeout", async () => {
    const otel = await startOtelExport({
      env: { OTEL_EXPORTER_OTLP_ENDPOINT: "http://127.0.0.1:9" },
      shutdownTimeoutMs: 300,
    });
    const workspace = mkdtempSync(join(tmpdir(), "eddy-otel-"));
    await recordMockRun({ prompt: "hello", workspace, onFrame: otel.observer });
    const started = performance.now();
    await otel.shutdown();
    expect(performance.now() - started).toBeLessThan(3000);
  });
});

describe("the last flush has a budget (docs/pitfalls.md #65)", () => {
  it("a collector that never answers: shutdown(deadline) resolves by the deadline with one line, not after the exporter's 5 s", async () => {
    const { startSilentCollector } = await import("../../test/support/otlp-receiver.js");
    const silent = await startSilentCollector();
    try {
      const otel = await startOtelExport({
        env: { OTEL_EXPORTER_OTLP_ENDPOINT: silent.url },
        providerName: "mock",
      });
      await recordMockRun({
        prompt: "What is in package.json?",
        workspace: mkdtempSync(join(tmpdir(), "eddy-otel-")),
        onFrame: otel.observer,
      });
      const start = performance.now();
      const line = await otel.shutdown(start + 300);
      const tookMs = performance.now() - start;
      expect(line).toMatch(
        new RegExp(
          `^eddy: the OTLP collector at ${silent.url}/v1/traces did not answer within \\d+ ms; spans of this run may be lost$`,
        ),
      );
      expect(silent.requests).toBeGreaterThan(0);
      expect(tookMs).toBeLessThan(4500); // the exporter's own timeout is 5 s
      expect(await otel.shutdown()).toBe(line); // once: a second call is the same shutdown
    } finally {
      await silent.close();
    }
  });

  it("a collector that refuses the connection: one line naming the endpoint, never its credentials", async () => {
    const otel = await startOtelExport({
      // Port 9 (discard) on loopback: nothing listens there in the test environment.
      env: { OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: "http://user:s3cret-pass@127.0.0.1:9/v1/traces" },
    });
    await recordMockRun({
      prompt: "What is in package.json?",
      workspace: mkdtempSync(join(tmpdir(), "eddy-otel-")),
      onFrame: otel.observer,
    });
    const line = await otel.shutdown(performance.now() + 3000);
    // The exporter retries a refused connection with backoff, so within the budget the line is
    // either its error or the budget running out: either way one line naming the endpoint.
    expect(line).toMatch(
      /^eddy: (could not send spans to the OTLP collector at|the OTLP collector at) http:\/\/127\.0\.0\.1:9\/v1\/traces\b/,
    );
    expect(line).not.toContain("s3cret-pass");
    expect(line?.split("\n")).toHaveLength(1);
  });
});
