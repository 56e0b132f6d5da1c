import { readFileSync } from "node:fs";
import * as api from "@opentelemetry/api";
import {
  AlwaysOffSampler,
  InMemorySpanExporter,
  type ReadableSpan,
  SimpleSpanProcessor,
  TracerProvider,
} from "@opentelemetry/sdk-trace";
import { describe, expect, it } from "vitest";
import type { Frame } from "../frames/frame.js";
import { finishReason, inputMessages } from "./genai.js";
import { capText } from "./limits.js";
import { createOtelObserver, createOtelObserverFromApi, type OtelObserverOptions } from "./otel-observer.js";

const T0 = 1_800_000_000_000;

/** Frames of one run from payloads (envelope added; `at` = ms after T0). */
function frames(runId: string, payloads: Array<Record<string, unknown>>): Frame[] {
  return payloads.map(
    ({ at, ...p }, seq) =>
      ({ run_id: runId, seq, ts: T0 + ((at as number) ?? seq), ...p }) as unknown as Frame,
  );
}

function trace(input: Frame[], options: OtelObserverOptions = {}, sampler?: AlwaysOffSampler) {
  const exporter = new InMemorySpanExporter();
  const provider = new TracerProvider({
    spanProcessors: [new SimpleSpanProcessor({ exporter })],
    ...(sampler ? { sampler } : {}),
  });
  const observe = createOtelObserverFromApi(api, { tracer: provider.getTracer("test"), ...options });
  for (const f of input) observe(f);
  return exporter.getFinishedSpans();
}

const named = (spans: ReadableSpan[], name: string) => {
  const span = spans.find((s) => s.name === name);
  if (span === undefined) throw new Error(`no span ${name} in ${spans.map((s) => s.name).join(", ")}`);
  return span;
};

const started = { type: "run_started", model: "m", mode: "chained", input: "secret plan", tools: ["shell"] };
const request = (turn: number, attempt = 1) => ({
  type: "request_started",
  turn,
  attempt,
  body: { model: "m", input: "secret plan", temperature: 0.2, max_output_tokens: 100 },
});

describe("the OpenTelemetry observer", () => {
  it("marks failures: a failed request, a failing tool, a run that did not complete", () => {
    const spans = trace(
      frames("run_1", [
        started,
        request(0),
        {
          type: "request_failed",
          turn: 0,
          attempt: 1,
          code: "server_error",
          message: "boom",
          kind: "stream_failed",
          retryable: true,
        },
        { type: "turn_ended", turn: 0, response_id: null, status: "failed", usage: null },
        {
          type: "tool_call",
          turn: 0,
          call_id: "c1",
          item_id: "fc",
          name: "shell",
          arguments: '{"command":"rm -rf /"}',
          output_index: 0,
        },
        { type: "tool_started", turn: 0, call_id: "c1", name: "shell" },
        {
          type: "tool_ended",
          turn: 0,
          call_id: "c1",
          name: "shell",
          ok: false,
          output: JSON.stringify({
            tool: "shell",
            ok: false,
            exit_code: 1,
            stdout: "",
            stderr: "",
            error: { code: "tool_failed", message: "denied" },
          }),
          duration_ms: 1,
        },
        {
          type: "run_ended",
          reason: "failed",
          output_text: "",
          response_id: null,
          usage: { input_tokens: 0, output_tokens: 0 },
          turns: 1,
          tool_calls: 1,
          error: { code: "server_error", message: "boom" },
        },
      ]),
    );
    const chat = named(spans, "chat m");
    expect(chat.status).toEqual({ code: api.SpanStatusCode.ERROR, message: "boom" });
    expect(chat.attributes).toMatchObject({
      "error.type": "server_error",
      "gen_ai.response.finish_reasons": ["error"],
      "gen_ai.request.temperature": 0.2,
      "gen_ai.request.max_tokens": 100,
    });
    const tool = named(spans, "execute_tool shell");
    expect(tool.status).toEqual({ code: api.SpanStatusCode.ERROR, message: "denied" });
    expect(tool.attributes["error.type"]).toBe("tool_failed");
    expect(tool.attributes["gen_ai.tool.call.arguments"]).toBeUndefined();
    const run = named(spans, "invoke_agent");
    expect(run.status).toEqual({ code: api.SpanStatusCode.ERROR, message: "failed: boom" });
    expect(run.attributes["error.type"]).toBe("server_error");
    expect(run.startTime).toEqual([Math.floor(T0 / 1000), 0]);
    expect(JSON.stringify(spans.map((s) => [s.attributes, s.events]))).not.toContain("secret plan");
  });

  it("ends spans left open by a cancel with the run, and turns other frames into run events", () => {
    const spans = trace(
      frames("run_2", [
        started,
        request(0),
        {
          type: "mode_changed",
          turn: 0,
          from: "chained",
          to: "stateless",
          reason: "previous_response_not_found",
        },
        {
          type: "approval_requested",
          turn: 0,
          call_id: "c1",
          name: "shell",
          command: "rm -rf / --secret-arg",
        },
        {
          type: "tool_call",
          turn: 0,
          call_id: "c1",
          item_id: "fc",
          name: "shell",
          arguments: "{}",
          output_index: 0,
        },
        { type: "tool_started", turn: 0, call_id: "c1", name: "shell" },
        { type: "cancel_requested", turn: 0, reason: "SIGINT" },
        {
          type: "run_ended",
          reason: "cancelled",
          output_text: "",
          response_id: null,
          usage: { input_tokens: 0, output_tokens: 0 },
          turns: 1,
          tool_calls: 1,
          error: { code: "cancelled", message: "SIGINT" },
        },
      ]),
    );
    expect(spans.map((s) => s.name).sort()).toEqual(["chat m", "execute_tool shell", "invoke_agent"]);
    expect(named(spans, "execute_tool shell").status.code).toBe(api.SpanStatusCode.ERROR);
    expect(named(spans, "chat m").attributes["error.type"]).toBe("run_ended");
    const events = named(spans, "invoke_agent").events;
    expect(events.map((e) => e.name)).toEqual(["mode_changed", "approval_requested", "cancel_requested"]);
    expect(events[0]?.attributes).toEqual({
      "eddy.turn": 0,
      "eddy.from": "chained",
      "eddy.to": "stateless",
      "eddy.reason": "previous_response_not_found",
    });
    // A free-text field of a frame is content: not recorded without captureContent.
    expect(events[1]?.attributes).toEqual({ "eddy.turn": 0, "eddy.call_id": "c1", "eddy.name": "shell" });
  });

  it("keeps interleaved runs apart (one observer for a whole batch)", () => {
    const a = frames("run_a", [started, request(0)]);
    const b = frames("run_b", [started, request(0)]);
    const end = (runId: string, seq: number) =>
      ({
        run_id: runId,
        seq,
        ts: T0 + 10,
        type: "run_ended",
        reason: "completed",
        output_text: "",
        response_id: null,
        usage: { input_tokens: 1, output_tokens: 1 },
        turns: 1,
        tool_calls: 0,
      }) as unknown as Frame;
    const spans = trace([a[0], b[0], a[1], b[1], end("run_b", 2), end("run_a", 2)] as Frame[]);
    const runs = spans.filter((s) => s.name === "invoke_agent");
    expect(runs.map((s) => s.attributes["eddy.run.id"]).sort()).toEqual(["run_a", "run_b"]);
    for (const run of runs) {
      const chat = spans.find(
        (s) => s.name === "chat m" && s.spanContext().traceId === run.spanContext().traceId,
      );
      expect(chat?.parentSpanContext?.spanId).toBe(run.spanContext().spanId);
    }
  });

  it("records nothing when the run is not sampled, and does nothing without a tracer provider", async () => {
    const input = frames("run_3", [
      started,
      request(0),
      { type: "turn_ended", turn: 0, response_id: "r", status: "completed", usage: null },
    ]);
    expect(trace(input, {}, new AlwaysOffSampler())).toEqual([]);
    const observe = await createOtelObserver(); // the global provider: none registered, a no-op tracer
    for (const f of input) observe(f);
  });

  it("is importable as eddy/telemetry, and loads @opentelemetry/api only when asked", async () => {
    const specifier = "eddy/telemetry"; // the package's own export map, resolved to dist/
    const mod = (await import(specifier)) as Record<string, unknown>;
    expect(typeof mod.createOtelObserver).toBe("function");
    const compiled = readFileSync(new URL("../../dist/telemetry/otel-observer.js", import.meta.url), "utf8");
    expect(compiled).not.toMatch(/^import .*@opentelemetry/m);
    expect(compiled).toContain('importPackage("@opentelemetry/api")'); // lazily (src/util/import-package.ts)
  });
});

/** A run whose every free value is huge: what a model, a tool or a provider can put in its frames. */
function hugeRun(): Frame[] {
  const mb = "x".repeat(1024 * 1024);
  const long = "n".repeat(100_000);
  const failed = JSON.stringify({ tool: long, ok: false, error: { code: long, message: mb } });
  return frames("run_huge", [
    {
      ...started,
      model: long,
      input: mb,
      instructions: mb,
      tools: Array.from({ length: 10_000 }, (_, i) => `${long.slice(0, 1000)}${i}`),
    },
    {
      type: "request_started",
      turn: 0,
      attempt: 1,
      body: { model: long, input: [{ role: "user", content: mb }] },
    },
    { type: "request_failed", turn: 0, attempt: 1, code: long, message: mb, kind: "http", retryable: true },
    { type: "retry", turn: 0, attempt: 2, delay_ms: 1, reason: `fallback:${mb}` },
    { type: "request_started", turn: 0, attempt: 2, body: { model: long, input: mb } },
    { type: "response_ended", turn: 0, response_id: long, model: long, incomplete_reason: long },
    ...Array.from({ length: 3 }, () => ({
      type: "output_text_delta",
      turn: 0,
      item_id: "m",
      output_index: 0,
      content_index: 0,
      delta: mb,
    })),
    ...Array.from({ length: 300 }, (_, i) => ({
      type: "tool_call",
      turn: 0,
      call_id: `${long}${i}`,
      item_id: "fc",
      name: long,
      arguments: mb,
      output_index: 1,
    })),
    { type: "tool_started", turn: 0, call_id: `${long}0`, name: long },
    {
      type: "tool_ended",
      turn: 0,
      call_id: `${long}0`,
      name: long,
      ok: false,
      output: failed,
      duration_ms: 1,
    },
    { type: "turn_ended", turn: 0, response_id: long, status: "failed", usage: null },
    { type: "mode_changed", turn: 0, from: long, to: mb, reason: mb },
    {
      type: "run_ended",
      reason: "failed",
      output_text: mb,
      response_id: long,
      usage: { input_tokens: 0, output_tokens: 0 },
      turns: 1,
      tool_calls: 300,
      error: { code: long, message: mb },
    },
  ]);
}

/** Every string a span holds (name, attributes, events, status) and every array, for the bounds below. */
function spanValues(spans: ReadableSpan[]) {
  const strings: Array<[string, string]> = [];
  const arrays: Array<[string, unknown[]]> = [];
  const add = (where: string, attributes: Record<string, unknown>) => {
    for (const [key, value] of Object.entries(attributes)) {
      if (typeof value === "string") strings.push([`${where} ${key}`, value]);
      if (Array.isArray(value)) {
        arrays.push([`${where} ${key}`, value]);
        for (const v of value) if (typeof v === "string") strings.push([`${where} ${key}[]`, v]);
      }
    }
  };
  for (const span of spans) {
    add(span.name.slice(0, 30), span.attributes);
    for (const event of span.events) add(`${span.name.slice(0, 30)} ${event.name}`, event.attributes ?? {});
    if (span.status.message !== undefined)
      strings.push([`${span.name.slice(0, 30)} status`, span.status.message]);
  }
  return { strings, arrays };
}

describe("span sizes are bounded (docs/pitfalls.md #96)", () => {
  it("a run of 1 MB answers, arguments, outputs, errors and 100,000-character names: every value within the bounds", () => {
    // No span limits in the SDK (its default is none): the observer's own bounds are all there is.
    const spans = trace(hugeRun(), { captureContent: true });
    expect(spans.map((s) => s.name.slice(0, 12)).sort()).toEqual([
      "chat nnnnnnn",
      "execute_tool",
      "invoke_agent",
    ]);
    for (const span of spans) expect(span.name.length).toBeLessThanOrEqual(256);
    for (const span of spans)
      for (const event of span.events) expect(event.name.length).toBeLessThanOrEqual(256);
    const { strings, arrays } = spanValues(spans);
    expect(strings.length).toBeGreaterThan(20);
    for (const [where, value] of strings) expect(value.length, where).toBeLessThanOrEqual(8192);
    for (const [where, value] of arrays) expect(value.length, where).toBeLessThanOrEqual(128);
    // What is kept is the start, still JSON, the cut said with a marker (docs/pitfalls.md #116).
    const run = named(spans, "invoke_agent");
    const output = JSON.parse(String(run.attributes["gen_ai.output.messages"]));
    expect(output[0].role).toBe("assistant");
    expect(output[0].parts[0].content).toMatch(/…\[\d+ characters left out\]$/);
    expect(run.attributes["eddy.tools"]).toHaveLength(128);
    expect(JSON.stringify(spans.map((s) => [s.name, s.attributes, s.events, s.status])).length).toBeLessThan(
      400_000,
    );
  });

  it("a value length of 0 records every string empty (OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT=0); an array length of 0 is refused", () => {
    const spans = trace(hugeRun(), { captureContent: true, attributeValueLengthLimit: 0 });
    const { strings } = spanValues(spans);
    expect(strings.length).toBeGreaterThan(20);
    for (const [where, value] of strings) expect(value, where).toBe("");
    expect(() => createOtelObserverFromApi(api, { attributeArrayLengthLimit: 0 })).toThrow(
      /attributeArrayLengthLimit must be a whole number of at least 1/,
    );
  });

  it("bounds set on the observer apply; Infinity keeps everything", () => {
    const small = trace(hugeRun(), {
      captureContent: true,
      attributeValueLengthLimit: 100,
      attributeArrayLengthLimit: 3,
    });
    const { strings, arrays } = spanValues(small);
    for (const [where, value] of strings) expect(value.length, where).toBeLessThanOrEqual(100);
    for (const [where, value] of arrays) expect(value.length, where).toBeLessThanOrEqual(3);
    const whole = trace(
      frames("run_w", [
        { ...started, input: "y".repeat(20_000) },
        {
          type: "run_ended",
          reason: "completed",
          output_text: "",
          response_id: null,
          usage: null,
          turns: 0,
          tool_calls: 0,
        },
      ]),
      { captureContent: true, attributeValueLengthLimit: Number.POSITIVE_INFINITY },
    );
    expect(String(named(whole, "invoke_agent").attributes["gen_ai.input.messages"]).length).toBeGreaterThan(
      20_000,
    );
  });

  it.each([[-1], [1.5], ["8192"], [Number.NaN], [null], [{}], [2 ** 60]])(
    "a bound of %s is refused naming the option",
    (value) => {
      expect(() => createOtelObserverFromApi(api, { attributeValueLengthLimit: value as number })).toThrow(
        /attributeValueLengthLimit must be a whole number of at least 0/,
      );
      expect(() => createOtelObserverFromApi(api, { attributeArrayLengthLimit: value as number })).toThrow(
        /attributeArrayLengthLimit must be a whole number of at least 1/,
      );
    },
  );

  it("a cut never splits a surrogate pair, and keeps short text as it is", () => {
    expect(capText("abc", 3)).toBe("abc");
    expect(capText("abcd", 3)).toBe("ab…");
    expect(capText("a😀b", 3)).toBe("a…");
    expect(capText("😀😀", 1)).toBe("…");
  });
});

describe("GenAI conventions", () => {
  it.each([
    ["completed", undefined, false, "stop"],
    ["completed", undefined, true, "tool_calls"],
    ["incomplete", "max_output_tokens", false, "length"],
    ["incomplete", "content_filter", false, "content_filter"],
    ["incomplete", "other", false, "other"],
    ["failed", undefined, false, "error"],
    ["error", undefined, true, "error"],
  ] as const)("finish reason of %s/%s (tools: %s) is %s", (status, reason, tools, expected) => {
    expect(finishReason(status, reason, tools)).toBe(expected);
  });

  it("converts Open Responses input to the conventions' messages", () => {
    expect(
      inputMessages([
        {
          type: "message",
          role: "user",
          content: [{ type: "input_text", text: "hi" }, { type: "input_image" }],
        },
        { role: "system", content: "be brief" },
        { type: "function_call", call_id: "c1", name: "f", arguments: "{}" },
        { type: "function_call_output", call_id: "c1", output: "ok" },
        { type: "reasoning", summary: [{ type: "summary_text", text: "think" }] },
        { type: "web_search_call" },
      ]),
    ).toEqual([
      { role: "user", parts: [{ type: "text", content: "hi" }, { type: "input_image" }] },
      { role: "system", parts: [{ type: "text", content: "be brief" }] },
      { role: "assistant", parts: [{ type: "tool_call", id: "c1", name: "f", arguments: "{}" }] },
      { role: "tool", parts: [{ type: "tool_call_response", id: "c1", response: "ok" }] },
      { role: "assistant", parts: [{ type: "reasoning", content: "think" }] },
      { role: "assistant", parts: [{ type: "web_search_call" }] },
    ]);
  });
});
