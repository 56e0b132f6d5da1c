import { APICallError, type LanguageModelV3StreamPart } from "@ai-sdk/provider";
import { simulateReadableStream } from "ai";
import { MockLanguageModelV3 } from "ai/test";
import { describe, expect, it } from "vitest";
import type { ProviderFrame } from "../../frames/frame.js";
import type { CreateResponseBody } from "../../protocol/types.js";
import type { AssembledCall } from "../assembler/index.js";
import type { ProviderOutcome, ProviderRequest } from "../provider.js";
import { type AiSdkProviderOptions, createAiSdkProvider } from "./provider.js";

const BODY = { model: "m", input: "hi" } as CreateResponseBody;
const FAST: Partial<AiSdkProviderOptions> = { random: () => 0, sleep: async () => {} };
const usage = (input: number, output: number) => ({
  inputTokens: { total: input, noCache: input, cacheRead: 0, cacheWrite: undefined },
  outputTokens: { total: output, text: output, reasoning: undefined },
});
const finish = (
  unified: "stop" | "tool-calls" | "length" | "content-filter",
  raw = unified,
): LanguageModelV3StreamPart => ({
  type: "finish",
  finishReason: { unified, raw },
  usage: usage(5, 3),
});
const textParts = (text: string): LanguageModelV3StreamPart[] => [
  { type: "stream-start", warnings: [] },
  { type: "response-metadata", id: "msg_1", modelId: "m-1", timestamp: new Date(0) },
  { type: "text-start", id: "0" },
  { type: "text-delta", id: "0", delta: text.slice(0, 3) },
  { type: "text-delta", id: "0", delta: text.slice(3) },
  { type: "text-end", id: "0" },
  finish("stop"),
];
const stream = (parts: LanguageModelV3StreamPart[]) => ({
  stream: simulateReadableStream({ chunks: parts }),
});

async function send(
  model: MockLanguageModelV3,
  options: Partial<AiSdkProviderOptions> = {},
  request: Partial<ProviderRequest> = {},
): Promise<{ frames: ProviderFrame[]; outcome: ProviderOutcome; calls: AssembledCall[] }> {
  const provider = createAiSdkProvider({ model, ...FAST, ...options });
  const calls: AssembledCall[] = [];
  const s = provider.stream({ body: BODY, turn: 0, ...request }, { onCall: (c) => calls.push(c) });
  const frames: ProviderFrame[] = [];
  for await (const f of s) frames.push(f);
  return { frames, outcome: await s.result, calls };
}

describe("createAiSdkProvider", () => {
  it("a response past maxResponseBytes is not read further: response_too_large, not retried (found by a probe: 64 MiB of arguments went through)", async () => {
    const parts: LanguageModelV3StreamPart[] = [
      { type: "stream-start", warnings: [] },
      { type: "text-start", id: "0" },
      ...Array.from(
        { length: 50 },
        (): LanguageModelV3StreamPart => ({ type: "text-delta", id: "0", delta: "x".repeat(100) }),
      ),
      { type: "text-end", id: "0" },
      finish("stop"),
    ];
    const model = new MockLanguageModelV3({ doStream: async () => stream(parts) });
    const { frames, outcome } = await send(model, { maxResponseBytes: 2_000 });
    expect(outcome.ok).toBe(false);
    expect(!outcome.ok && outcome.error.code).toBe("response_too_large");
    expect(frames.filter((f) => f.type === "request_started")).toHaveLength(1);
    const whole = await send(new MockLanguageModelV3({ doStream: async () => stream(parts) }));
    expect(whole.outcome.ok).toBe(true);
  });

  it("a part JSON cannot hold (a raw chunk nested 20,000 levels, a cycle) is an invalid_json provider_event and the answer completes (found by a probe: the run ended as an internal error)", async () => {
    let deep: unknown = [];
    for (let i = 0; i < 20_000; i++) deep = [deep];
    const cycle: Record<string, unknown> = { a: 1 };
    cycle.self = cycle;
    const parts = textParts("Hello there");
    parts.splice(3, 0, { type: "raw", rawValue: deep }, { type: "raw", rawValue: cycle });
    const model = new MockLanguageModelV3({ doStream: async () => stream(parts) });
    const { frames, outcome } = await send(model);
    if (!outcome.ok) throw outcome.error;
    expect(outcome.response.outputText).toBe("Hello there");
    const bad = frames.filter((f) => f.type === "provider_event" && f.status === "invalid_json");
    expect(bad).toHaveLength(2);
    expect(bad.map((f) => f.type === "provider_event" && f.raw)).toEqual([
      'eddy: an AI SDK stream part of type "raw" cannot be written as JSON: it nests deeper than the stack',
      expect.stringMatching(
        /^eddy: an AI SDK stream part of type "raw" cannot be written as JSON: .*circular/i,
      ),
    ]);
  });

  it("keeps every stream part verbatim (as JSON) in a provider_event, with text deltas derived after theirs", async () => {
    const model = new MockLanguageModelV3({ doStream: stream(textParts("Hello there")) });
    const { frames, outcome } = await send(model);
    expect(frames.map((f) => f.type)).toEqual([
      "request_started",
      ...Array(4).fill("provider_event"),
      "output_text_delta",
      "provider_event",
      "output_text_delta",
      "provider_event",
      // Derived right after the event they come from (docs/architecture.md, the frame contract).
      "item_done",
      "provider_event",
      "response_ended",
    ]);
    const events = frames.filter((f) => f.type === "provider_event");
    expect(events.map((f) => f.data)).toEqual(JSON.parse(JSON.stringify(textParts("Hello there"))));
    expect(events[1]?.data).toMatchObject({ timestamp: "1970-01-01T00:00:00.000Z" });
    expect(events.every((f) => f.errors === undefined)).toBe(true);
    expect(frames.filter((f) => f.type === "output_text_delta").map((f) => f.delta)).toEqual([
      "Hel",
      "lo there",
    ]);
    if (!outcome.ok) throw outcome.error;
    expect(outcome.response).toMatchObject({
      id: "msg_1",
      model: "m-1",
      status: "completed",
      outputText: "Hello there",
      usage: { input_tokens: 5, output_tokens: 3, total_tokens: 8 },
    });
  });

  it("records the call options as request_started.wire_body and sends exactly them (raw chunks asked for)", async () => {
    const model = new MockLanguageModelV3({ doStream: stream(textParts("ok")) });
    const body: CreateResponseBody = {
      model: "m",
      instructions: "Be brief.",
      input: "hi",
      max_output_tokens: 100,
      temperature: 0.5,
      tools: [{ type: "function", name: "f", parameters: { type: "object", properties: {} } as never }],
      tool_choice: "auto",
      parallel_tool_calls: false,
      max_tool_calls: 3,
      store: false,
    };
    const { frames } = await send(
      model,
      { providerOptions: { anthropic: { sendReasoning: false } } },
      { body },
    );
    const started = frames[0];
    if (started?.type !== "request_started") throw new Error("no request_started");
    expect(started.body).toEqual(body);
    expect(started.wire_body).toEqual({
      prompt: [
        { role: "system", content: "Be brief." },
        { role: "user", content: [{ type: "text", text: "hi" }] },
      ],
      tools: [{ type: "function", name: "f", inputSchema: { type: "object", properties: {} } }],
      toolChoice: { type: "auto" },
      maxOutputTokens: 100,
      temperature: 0.5,
      providerOptions: { anthropic: { sendReasoning: false } },
      includeRawChunks: true,
    });
    const { abortSignal, ...sent } = model.doStreamCalls[0] ?? {};
    expect(abortSignal).toBeInstanceOf(AbortSignal);
    expect(sent).toEqual(started.wire_body);
  });

  it("assembles a streamed tool call into a function_call item, handed to onCall when its tool-call part arrives", async () => {
    const parts: LanguageModelV3StreamPart[] = [
      { type: "stream-start", warnings: [] },
      { type: "tool-input-start", id: "call_1", toolName: "get_weather" },
      { type: "tool-input-delta", id: "call_1", delta: '{"city":' },
      { type: "tool-input-delta", id: "call_1", delta: '"Paris"}' },
      { type: "tool-input-end", id: "call_1" },
      { type: "tool-call", toolCallId: "call_1", toolName: "get_weather", input: '{"city":"Paris"}' },
      { type: "tool-call", toolCallId: "call_2", toolName: "get_time", input: "{}" },
      finish("tool-calls"),
    ];
    const { calls, outcome } = await send(new MockLanguageModelV3({ doStream: stream(parts) }));
    expect(calls.map((c) => [c.callId, c.name, c.arguments])).toEqual([
      ["call_1", "get_weather", '{"city":"Paris"}'],
      ["call_2", "get_time", "{}"],
    ]);
    expect(outcome.ok && outcome.response.items.map((i) => i.type)).toEqual([
      "function_call",
      "function_call",
    ]);
  });

  it.each([
    ["length", "incomplete", null],
    ["content-filter", "failed", "content_filter"],
  ] as const)("maps finish reason %s to a %s response", async (reason, status, code) => {
    const parts = textParts("partial").slice(0, -1).concat(finish(reason));
    const { outcome } = await send(new MockLanguageModelV3({ doStream: stream(parts) }));
    expect(outcome.response.status).toBe(status);
    if (code !== null) expect(!outcome.ok && outcome.error.providerCode).toBe(code);
    else expect(outcome.ok).toBe(true);
  });

  it("an error part fails the response with what it says; a stream without finish is truncated", async () => {
    const failed = await send(
      new MockLanguageModelV3({
        doStream: stream([
          { type: "stream-start", warnings: [] },
          {
            type: "error",
            error: { type: "error", error: { type: "overloaded_error", message: "Overloaded" } },
          },
        ]),
      }),
      { retry: { maxRetries: 0 } },
    );
    expect(!failed.outcome.ok && [failed.outcome.error.kind, failed.outcome.error.message]).toEqual([
      "stream_failed",
      "the provider failed the response (overloaded_error): Overloaded",
    ]);
    const cut = await send(new MockLanguageModelV3({ doStream: stream(textParts("Hello").slice(0, 4)) }), {
      retry: { maxRetries: 0 },
    });
    expect(!cut.outcome.ok && cut.outcome.error.code).toBe("stream_truncated");
  });

  it("retries an APICallError the status says may be retried, with the provider's Retry-After, then succeeds", async () => {
    const overloaded = new APICallError({
      message: "Overloaded",
      url: "http://127.0.0.1/v1/messages",
      requestBodyValues: {},
      statusCode: 529,
      responseHeaders: { "retry-after-ms": "7", "request-id": "req_9" },
      responseBody: '{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}',
    });
    let calls = 0;
    const model = new MockLanguageModelV3({
      doStream: async () => {
        calls++;
        if (calls === 1) throw overloaded;
        return stream(textParts("fine"));
      },
    });
    const { frames, outcome } = await send(model);
    expect(
      frames.filter((f) => f.type !== "provider_event" && f.type !== "output_text_delta").map((f) => f.type),
    ).toEqual([
      "request_started",
      "request_failed",
      "retry",
      "request_started",
      "item_done",
      "response_ended",
    ]);
    expect(frames[1]).toMatchObject({
      status: 529,
      request_id: "req_9",
      code: "overloaded_error",
      retryable: true,
    });
    expect(frames[2]).toMatchObject({ delay_ms: 7 });
    expect(outcome.ok && outcome.response.outputText).toBe("fine");
  });

  it("does not retry a 400, and refuses what it cannot express before calling the model", async () => {
    const bad = new APICallError({
      message: "Bad",
      url: "http://127.0.0.1/v1/messages",
      requestBodyValues: {},
      statusCode: 400,
      responseBody:
        '{"type":"error","error":{"type":"invalid_request_error","message":"max_tokens: too big"}}',
    });
    const model = new MockLanguageModelV3({
      doStream: async () => {
        throw bad;
      },
    });
    const refused = await send(model);
    expect(!refused.outcome.ok && [refused.outcome.error.status, refused.outcome.error.runEndReason]).toEqual(
      [400, "invalid_request"],
    );
    expect(model.doStreamCalls).toHaveLength(1); // not retried
    const chained = await send(model, {}, { body: { ...BODY, previous_response_id: "resp_1" } });
    expect(!chained.outcome.ok && chained.outcome.error.isPreviousResponseNotFound).toBe(true);
    expect(model.doStreamCalls).toHaveLength(1); // never sent
  });

  it("cuts a stalled stream at the idle timeout (a retryable timeout)", async () => {
    const stalled = new ReadableStream<LanguageModelV3StreamPart>({
      start(controller) {
        controller.enqueue({ type: "stream-start", warnings: [] });
      },
    });
    const { outcome } = await send(new MockLanguageModelV3({ doStream: { stream: stalled } }), {
      timeouts: { idleMs: 30, firstByteMs: 30 },
      retry: { maxRetries: 0 },
    });
    expect(!outcome.ok && [outcome.error.kind, outcome.error.code]).toEqual(["timeout", "idle_timeout"]);
  });

  it("picks the model by the request's model name through a function, and is stateless by its capabilities", async () => {
    const models: string[] = [];
    const provider = createAiSdkProvider({
      model: (id) => {
        models.push(id);
        return new MockLanguageModelV3({ modelId: id, doStream: stream(textParts("ok")) });
      },
      capabilities: { previousResponseId: true, nativeToolHistory: false },
    });
    const s = provider.stream({ body: { ...BODY, model: "claude-x" }, turn: 0 });
    for await (const _ of s);
    expect((await s.result).ok).toBe(true);
    expect(models).toEqual(["claude-x"]);
    expect(provider.capabilities).toMatchObject({
      previousResponseId: false,
      nativeToolHistory: false,
      keepItemIds: false,
    });
    expect(provider.wire).toEqual({ api: "ai-sdk", aiSdk: { includeRawChunks: true } });
  });

  it("refuses a model of another specification version when it is created", () => {
    const v2 = { ...new MockLanguageModelV3(), specificationVersion: "v2" } as unknown as MockLanguageModelV3;
    expect(() => createAiSdkProvider({ model: v2 })).toThrow(/specification v3 .* this model's is "v2"/);
  });
});
