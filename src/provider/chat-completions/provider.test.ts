import { afterEach, describe, expect, it } from "vitest";
import { type ChatServer, startChatServer } from "../../../test/support/chat-server.js";
import { type RawReply, type RawServer, startRawServer } from "../../../test/support/raw-server.js";
import type { ProviderFrame } from "../../frames/frame.js";
import type { CreateResponseBody, JsonObject } from "../../protocol/types.js";
import type { ProviderOutcome, ProviderRequest } from "../provider.js";
import { type ChatCompletionsProviderOptions, createChatCompletionsProvider } from "./provider.js";

let raw: RawServer | undefined;
let chat: ChatServer | undefined;
afterEach(async () => {
  await raw?.close();
  await chat?.close();
  raw = undefined;
  chat = undefined;
});

const BODY = { model: "m", input: "hi", stream: true } as CreateResponseBody;
const FAST: Partial<ChatCompletionsProviderOptions> = { random: () => 0, sleep: async () => {} };

const chunk = (delta: JsonObject, finish: string | null = null, extra: JsonObject = {}) =>
  JSON.stringify({
    id: "chatcmpl-1",
    object: "chat.completion.chunk",
    model: "m",
    choices: [{ index: 0, delta, finish_reason: finish }],
    ...extra,
  });
const data = (line: string) => `data: ${line}\n\n`;
const okBody = (text = "Hello") => [
  data(chunk({ role: "assistant", content: "" })),
  data(chunk({ content: text })),
  data(chunk({}, "stop")),
  data(JSON.stringify({ id: "chatcmpl-1", choices: [], usage: { prompt_tokens: 3, completion_tokens: 1 } })),
  data("[DONE]"),
];

async function send(
  baseURL: string,
  options: Partial<ChatCompletionsProviderOptions> = {},
  request: Partial<ProviderRequest> = {},
): Promise<{ frames: ProviderFrame[]; outcome: ProviderOutcome }> {
  const provider = createChatCompletionsProvider({ baseURL, ...FAST, ...options });
  const stream = provider.stream({ body: BODY, turn: 0, ...request });
  const frames: ProviderFrame[] = [];
  for await (const f of stream) frames.push(f);
  return { frames, outcome: await stream.result };
}

async function sendRaw(replies: RawReply[], options: Partial<ChatCompletionsProviderOptions> = {}) {
  raw = await startRawServer(replies);
  return send(raw.url, options);
}

const events = (frames: ProviderFrame[]) => frames.filter((f) => f.type === "provider_event");

describe("createChatCompletionsProvider", () => {
  it("POSTs to /chat/completions and records the exact body sent as request_started.wire_body", async () => {
    const { frames, outcome } = await sendRaw([{ body: okBody() }], { apiKey: "sk-test-key" });
    expect(raw?.requests[0]?.url).toBe("/v1/chat/completions");
    expect(raw?.requests[0]?.headers.authorization).toBe("Bearer sk-test-key");
    const started = frames[0];
    if (started?.type !== "request_started") throw new Error("no request_started");
    expect(started.body).toEqual(BODY);
    expect(JSON.stringify(started.wire_body)).toBe(raw?.requests[0]?.body);
    expect(started.wire_body).toEqual({
      model: "m",
      messages: [{ role: "user", content: "hi" }],
      stream: true,
      stream_options: { include_usage: true },
    });
    expect(outcome.ok && outcome.response.outputText).toBe("Hello");
  });

  it("a finished choice whose server then keeps the stream open completes after the drain wait, not as an idle timeout (found by a probe)", async () => {
    const body = [
      data(chunk({ role: "assistant", content: "" })),
      data(chunk({ content: "hi" })),
      data(chunk({}, "stop")),
    ];
    const { frames, outcome } = await sendRaw([{ body, hang: true }], {
      timeouts: { connectMs: 5_000, firstByteMs: 5_000, idleMs: 60_000, drainMs: 50 },
      retry: { maxRetries: 0 },
    });
    expect(frames.find((f) => f.type === "request_failed")).toBeUndefined();
    expect(outcome.ok && outcome.response.outputText).toBe("hi");
    expect(outcome.ok && outcome.response.status).toBe("completed");
  });

  it("is stateless by its capabilities, whatever the options say", () => {
    const provider = createChatCompletionsProvider({
      baseURL: "http://127.0.0.1:1/v1",
      capabilities: { previousResponseId: true, parallelToolCalls: false },
    });
    expect(provider.capabilities).toMatchObject({
      previousResponseId: false,
      encryptedReasoning: false,
      maxToolCalls: false,
      parallelToolCalls: false,
    });
    expect(provider.wire).toEqual({
      api: "chat-completions",
      chat: { instructionsRole: "system", maxTokensField: "max_tokens", streamUsage: true },
    });
  });

  it("frames every SSE message: the chunk verbatim, [DONE], pings and bad JSON as on the Responses path", async () => {
    const { frames, outcome } = await sendRaw([
      {
        body: [
          data(chunk({ role: "assistant", content: "" })),
          ": keep-alive\n\n",
          "data:\n\n",
          data("{not json"),
          data(chunk({ content: "Hi" })),
          data(JSON.stringify({ id: "x", object: "chat.completion.chunk" })),
          data(chunk({}, "stop")),
          data("[DONE]"),
        ],
      },
    ]);
    const got = events(frames).map((f) => [f.status, f.errors ?? null]);
    expect(got).toEqual([
      ["event", null],
      ["empty", null],
      ["invalid_json", [expect.stringMatching(/^data is not valid JSON/)]],
      ["event", null],
      ["event", ["a Chat Completions chunk needs a `choices` array"]],
      ["event", null],
      ["done", null],
    ]);
    expect(events(frames)[0]?.data).toEqual(JSON.parse(chunk({ role: "assistant", content: "" })));
    expect(frames.filter((f) => f.type === "output_text_delta").map((f) => f.delta)).toEqual(["Hi"]);
    expect(outcome.ok).toBe(true);
  });

  it("does not validate when validation is off", async () => {
    const { frames } = await sendRaw([{ body: [data(JSON.stringify({ id: "x" })), ...okBody()] }], {
      validate: false,
    });
    expect(events(frames).some((f) => f.errors !== undefined)).toBe(false);
  });

  it("reads a whole chat.completion from a server that ignores stream: true", async () => {
    chat = await startChatServer(
      {
        turns: [
          {
            items: [
              { type: "message", text: "Whole." },
              { type: "function_call", name: "a", call_id: "call_1" },
            ],
          },
        ],
      },
      { ignoreStream: true },
    );
    const calls: string[] = [];
    const provider = createChatCompletionsProvider({ baseURL: chat.url, ...FAST });
    const stream = provider.stream({ body: BODY, turn: 0 }, { onCall: (c) => calls.push(c.callId) });
    const frames: ProviderFrame[] = [];
    for await (const f of stream) frames.push(f);
    const outcome = await stream.result;
    expect(frames.map((f) => f.type)).toEqual([
      "request_started",
      "response_headers",
      "provider_event",
      "output_text_delta",
      "item_done",
      "item_done",
      "response_ended",
    ]);
    expect(events(frames)[0]).toMatchObject({
      status: "event",
      data: { object: "chat.completion" },
      errors: ["expected an SSE stream (text/event-stream) for a streaming request; got a JSON body"],
    });
    expect(calls).toEqual(["call_1"]);
    expect(outcome.ok && outcome.response.outputText).toBe("Whole.");
  });

  it("refuses JSON that is not a chat completion, with a base-URL hint naming the endpoint", async () => {
    const { outcome } = await sendRaw([
      {
        headers: { "content-type": "application/json" },
        body: [JSON.stringify({ object: "list", data: [] })],
      },
    ]);
    expect(outcome.ok).toBe(false);
    expect(!outcome.ok && outcome.error.message).toMatch(
      /not a Chat Completions response.*appends \/v1\/chat\/completions/,
    );
  });

  it("fails a request it cannot express before sending anything", async () => {
    raw = await startRawServer([{ body: okBody() }]);
    const { frames, outcome } = await send(
      raw.url,
      {},
      { body: { ...BODY, previous_response_id: "resp_1" } },
    );
    expect(raw.requests).toEqual([]);
    expect(frames.map((f) => f.type)).toEqual(["request_started", "request_failed"]);
    expect(frames[0]).not.toHaveProperty("wire_body");
    expect(frames[1]).toMatchObject({
      kind: "unsupported",
      code: "previous_response_not_found",
      retryable: false,
    });
    expect(!outcome.ok && outcome.error.isPreviousResponseNotFound).toBe(true);
  });

  it("a hosted tool fails the request as invalid before anything is sent", async () => {
    raw = await startRawServer([{ body: okBody() }]);
    const { frames, outcome } = await send(
      raw.url,
      {},
      { body: { ...BODY, tools: [{ type: "web_search" }] } as unknown as CreateResponseBody },
    );
    expect(raw.requests).toEqual([]);
    expect(frames[1]).toMatchObject({ kind: "unsupported", code: "unsupported_request", retryable: false });
    expect(!outcome.ok && outcome.error.runEndReason).toBe("invalid_request");
  });

  it("retries a stream that ends without finish_reason (truncated), then succeeds", async () => {
    const { frames, outcome } = await sendRaw([
      { body: [data(chunk({ role: "assistant", content: "" }))] },
      { body: okBody("Again") },
    ]);
    expect(frames.find((f) => f.type === "request_failed")).toMatchObject({
      code: "stream_truncated",
      kind: "truncated",
    });
    expect(frames.filter((f) => f.type === "request_started").map((f) => f.attempt)).toEqual([1, 2]);
    expect(outcome.ok && outcome.response.outputText).toBe("Again");
  });

  it("a finished choice whose body ends without usage or [DONE] completes", async () => {
    const { outcome } = await sendRaw([
      { body: [data(chunk({ content: "Done" })), data(chunk({}, "stop"))] },
    ]);
    expect(outcome.ok).toBe(true);
    expect(outcome.response).toMatchObject({
      terminal: "completed",
      outputText: "Done",
      usage: { estimated: true },
    });
  });

  it("an error chunk before any output is retried; after output it fails the response", async () => {
    const error = data(
      JSON.stringify({ error: { message: "overloaded", type: "server_error", code: "overloaded" } }),
    );
    const early = await sendRaw([{ body: [error] }, { body: okBody() }]);
    expect(early.frames.find((f) => f.type === "retry")).toMatchObject({ reason: "overloaded" });
    expect(early.outcome.ok).toBe(true);
    await raw?.close();
    const late = await sendRaw([{ body: [data(chunk({ content: "partial" })), error] }]);
    expect(late.frames.some((f) => f.type === "retry")).toBe(false);
    expect(!late.outcome.ok && late.outcome.error.runEndReason).toBe("failed");
    expect(late.outcome.response.outputText).toBe("partial");
  });

  it("masks the key wherever a server echoes it", async () => {
    const key = "sk-chat-secret-1234";
    const { frames } = await sendRaw(
      [
        {
          status: 401,
          headers: { "content-type": "application/json" },
          body: [JSON.stringify({ error: { message: `bad key ${key}` } })],
        },
      ],
      { apiKey: key },
    );
    expect(JSON.stringify(frames)).not.toContain(key);
    expect(frames.find((f) => f.type === "request_failed")).toMatchObject({ status: 401 });
  });

  it("a 404 says which endpoint eddy appended", async () => {
    const { outcome } = await sendRaw([
      { status: 404, headers: { "content-type": "text/plain" }, body: ["Not Found"] },
    ]);
    expect(!outcome.ok && outcome.error.message).toMatch(
      /POST http:\/\/127\.0\.0\.1:\d+\/v1\/chat\/completions was not found.*\/v1\/chat\/completions/,
    );
  });
});
