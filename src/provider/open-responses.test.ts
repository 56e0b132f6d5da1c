import { afterEach, describe, expect, it } from "vitest";
import { toSse } from "../../test/support/captures.js";
import { type RawReply, type RawServer, startRawServer } from "../../test/support/raw-server.js";
import type { ProviderFrame } from "../frames/frame.js";
import type { JsonObject } from "../protocol/types.js";
import {
  createOpenResponsesProvider,
  type OpenResponsesProviderOptions,
  resolveResponsesUrl,
} from "./open-responses.js";
import type { ProviderOutcome, ProviderStreamOptions } from "./provider.js";

let server: RawServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const BODY = { model: "m", input: "hi", stream: true } as const;

function sse(events: JsonObject[], options: { done?: boolean } = {}): string {
  return toSse(
    events.map((e) => JSON.stringify(e)),
    options,
  );
}

const created: JsonObject = {
  type: "response.created",
  sequence_number: 0,
  response: { id: "resp_1", status: "in_progress", output: [] },
};
function textEvents(text: string[]): JsonObject[] {
  return [
    {
      type: "response.output_item.added",
      sequence_number: 1,
      output_index: 0,
      item: { type: "message", id: "m1", role: "assistant", status: "in_progress", content: [] },
    },
    ...text.map((delta, i) => ({
      type: "response.output_text.delta",
      sequence_number: 2 + i,
      item_id: "m1",
      output_index: 0,
      content_index: 0,
      delta,
    })),
  ];
}
const completed: JsonObject = {
  type: "response.completed",
  sequence_number: 99,
  response: {
    id: "resp_1",
    status: "completed",
    output: [],
    usage: { input_tokens: 1, output_tokens: 2, total_tokens: 3 },
  },
};
const okStream = (text = ["Hel", "lo"]) => sse([created, ...textEvents(text), completed]);

interface Run {
  frames: ProviderFrame[];
  outcome: ProviderOutcome;
  delays: number[];
}

async function run(
  replies: RawReply[],
  options: Partial<OpenResponsesProviderOptions> = {},
  streamOptions: ProviderStreamOptions = {},
): Promise<Run> {
  server = await startRawServer(replies);
  const delays: number[] = [];
  const provider = createOpenResponsesProvider({
    baseURL: server.url,
    random: () => 0,
    sleep: async (ms) => {
      delays.push(ms);
    },
    ...options,
  });
  const stream = provider.stream({ body: BODY, turn: 0 }, streamOptions);
  const frames: ProviderFrame[] = [];
  for await (const f of stream) frames.push(f);
  return { frames, outcome: await stream.result, delays };
}

const types = (frames: ProviderFrame[]) =>
  frames.map((f) => (f.type === "provider_event" ? `event:${f.status}` : f.type));

describe("OpenResponsesProvider: the happy path", () => {
  it("streams request_started, response_headers and one provider_event per SSE message", async () => {
    const { frames, outcome } = await run([{ body: [okStream()], headers: { "x-request-id": "req_42" } }]);
    expect(frames[0]).toMatchObject({ type: "request_started", turn: 0, attempt: 1, body: BODY });
    expect(frames[1]).toMatchObject({ type: "response_headers", status: 200, request_id: "req_42" });
    expect(types(frames).filter((t) => t === "output_text_delta")).toHaveLength(2);
    expect(frames.at(-1)).toMatchObject({ type: "provider_event", status: "done" });
    expect(outcome.ok).toBe(true);
    expect(outcome.response).toMatchObject({ id: "resp_1", status: "completed", outputText: "Hello" });
    expect(outcome.response.usage?.total_tokens).toBe(3);
  });

  it("sends the body as JSON with the bearer key, and never puts the key in frames", async () => {
    const { frames } = await run([{ body: [okStream()] }], {
      apiKey: "sk-secret-123",
      headers: { "x-team": "a" },
    });
    const req = server?.requests[0];
    expect(req?.headers.authorization).toBe("Bearer sk-secret-123");
    expect(req?.headers["x-team"]).toBe("a");
    expect(JSON.parse(req?.body ?? "")).toEqual(BODY);
    expect(JSON.stringify(frames)).not.toContain("sk-secret-123");
  });

  it("works over an injected fetch as well", async () => {
    const { frames, outcome } = await run([{ body: [okStream()] }], { fetch: globalThis.fetch });
    expect(outcome.ok).toBe(true);
    expect(types(frames)[0]).toBe("request_started");
  });

  it("accepts a terminal event then EOF without [DONE]", async () => {
    const { outcome } = await run([
      { body: [sse([created, ...textEvents(["a"]), completed], { done: false })] },
    ]);
    expect(outcome.ok).toBe(true);
  });

  it("ignores anything after [DONE]", async () => {
    const { frames, outcome } = await run([{ body: [`${okStream()}data: {"type":"late"}\n\n`] }]);
    expect(outcome.ok).toBe(true);
    expect(frames.at(-1)).toMatchObject({ type: "provider_event", status: "done" });
  });

  it("closes a stream the server keeps open after the terminal event (drain)", async () => {
    const { outcome } = await run([{ body: [sse([created, completed], { done: false })], hang: true }], {
      timeouts: { drainMs: 50 },
    });
    expect(outcome.ok).toBe(true);
  });

  it("a connection that breaks after the terminal event, before [DONE], lost nothing: the response stands", async () => {
    const { frames, outcome } = await run([
      { body: [sse([created, ...textEvents(["a"]), completed], { done: false }), { drop: true }] },
    ]);
    expect(outcome.ok).toBe(true);
    expect(outcome.response.outputText).toBe("a");
    expect(frames.some((f) => f.type === "request_failed")).toBe(false);
    // Before the terminal event the same break is a broken stream.
    const cut = await run(
      [{ body: [sse([created, ...textEvents(["a"])], { done: false }), { drop: true }] }],
      {
        retry: { maxRetries: 0 },
      },
    );
    expect(cut.outcome.ok).toBe(false);
  });

  it("handles a JSON body returned for a streaming request", async () => {
    const resource = {
      id: "resp_j",
      object: "response",
      status: "completed",
      output: [
        {
          type: "message",
          id: "m",
          role: "assistant",
          status: "completed",
          content: [{ type: "output_text", text: "json!", annotations: [] }],
        },
      ],
      usage: null,
    };
    const { frames, outcome } = await run([
      { headers: { "content-type": "application/json" }, body: [JSON.stringify(resource)] },
    ]);
    expect(outcome.ok).toBe(true);
    expect(outcome.response.outputText).toBe("json!");
    expect(frames.filter((f) => f.type === "provider_event")).toHaveLength(1);
  });
});

describe("OpenResponsesProvider: SSE transport quirks (docs/pitfalls.md S1–S7)", () => {
  it("1: comment keep-alives are ignored and count as activity", async () => {
    const body = [
      ": OPENROUTER PROCESSING\n\n",
      ":\n\n",
      { pauseMs: 60 },
      ": ping\n\n",
      { pauseMs: 60 },
      okStream(),
    ];
    const { frames, outcome } = await run([{ body }], { timeouts: { idleMs: 100, firstByteMs: 100 } });
    expect(outcome.ok).toBe(true);
    expect(
      frames.filter((f) => f.type === "provider_event" && f.status !== "event" && f.status !== "done"),
    ).toEqual([]);
  });

  it("2: empty data and pings produce an empty provider_event and no error", async () => {
    const body = [`data:\n\ndata:   \n\nevent: ping\ndata:\n\n${okStream()}`];
    const { frames, outcome } = await run([{ body }]);
    expect(outcome.ok).toBe(true);
    expect(frames.filter((f) => f.type === "provider_event" && f.status === "empty")).toHaveLength(3);
  });

  it.each([
    ["CRLF", "\r\n"],
    ["CR", "\r"],
  ])("3: %s line endings give the same events", async (_label, nl) => {
    const body = okStream().replace(/\n/g, nl);
    const { frames, outcome } = await run([{ body: [...body].map((c) => c) }]);
    expect(outcome.ok).toBe(true);
    expect(outcome.response.outputText).toBe("Hello");
    expect(types(frames).filter((t) => t === "event:event")).toHaveLength(5);
  });

  it("4: UTF-8 split across network chunks stays intact", async () => {
    const bytes = new TextEncoder().encode(okStream(["北京", " 🌍", " ok"]));
    const pieces = Array.from(bytes, (b) => new Uint8Array([b]));
    const { outcome } = await run([{ body: pieces }]);
    expect(outcome.response.outputText).toBe("北京 🌍 ok");
  });

  it("5: dispatches on data.type; a wrong or missing event: name is only recorded", async () => {
    const body = [`data: ${JSON.stringify(created)}\n\nevent: wrong\ndata: ${JSON.stringify(completed)}\n\n`];
    const { frames, outcome } = await run([{ body }]);
    expect(outcome.ok).toBe(true);
    const last = frames.filter((f) => f.type === "provider_event").at(-1);
    expect(last).toMatchObject({ event_name: "wrong" });
    expect(
      last?.type === "provider_event" && last.errors?.some((e) => e.includes("differs from data.type")),
    ).toBe(true);
  });

  it("6: unknown events and item types pass through without a crash", async () => {
    const events: JsonObject[] = [
      created,
      { type: "keepalive", sequence_number: 7 },
      { type: "response.foo.delta", sequence_number: 8, delta: "x" },
      {
        type: "response.output_item.added",
        sequence_number: 9,
        output_index: 0,
        item: { type: "x_call", id: "x", status: "in_progress" },
      },
      {
        type: "response.output_item.done",
        sequence_number: 10,
        output_index: 0,
        item: { type: "x_call", id: "x", status: "completed" },
      },
      completed,
    ];
    const { outcome, frames } = await run([{ body: [sse(events)] }]);
    expect(outcome.ok).toBe(true);
    expect(outcome.response.calls).toEqual([]);
    expect(frames.filter((f) => f.type === "provider_event")).toHaveLength(events.length + 1);
  });

  it("7c: [DONE] without a terminal event is a truncated stream", async () => {
    const { outcome } = await run([{ body: [sse([created, ...textEvents(["a"])])] }], {
      retry: { maxRetries: 0 },
    });
    expect(outcome.ok).toBe(false);
    if (!outcome.ok) {
      expect(outcome.error.code).toBe("stream_truncated");
      expect(outcome.error.message).toContain("[DONE] without a terminal");
    }
  });
});

describe("OpenResponsesProvider: retries (docs/pitfalls.md S37–S39)", () => {
  it("429 with Retry-After (seconds) waits then succeeds", async () => {
    const { frames, outcome, delays } = await run([
      {
        status: 429,
        headers: { "content-type": "application/json", "retry-after": "3" },
        body: ['{"error":{"type":"rate_limit_error","code":"rate_limit_exceeded","message":"slow down"}}'],
      },
      { body: [okStream()] },
    ]);
    expect(outcome.ok).toBe(true);
    expect(delays).toEqual([3000]);
    expect(types(frames).slice(0, 5)).toEqual([
      "request_started",
      "response_headers",
      "request_failed",
      "retry",
      "request_started",
    ]);
    expect(frames[2]).toMatchObject({
      type: "request_failed",
      attempt: 1,
      status: 429,
      code: "rate_limit_exceeded",
      retryable: true,
    });
    expect(frames[3]).toMatchObject({
      type: "retry",
      turn: 0,
      attempt: 2,
      delay_ms: 3000,
      reason: "rate_limit_exceeded",
    });
    expect(frames[4]).toMatchObject({ type: "request_started", attempt: 2 });
  });

  it("honours Retry-After as an HTTP date and retry-after-ms", async () => {
    const now = Date.parse("2026-11-22T10:00:00Z");
    const a = await run(
      [
        { status: 503, headers: { "retry-after": "Sun, 22 Nov 2026 10:00:05 GMT" }, body: ["busy"] },
        { body: [okStream()] },
      ],
      { now: () => now },
    );
    expect(a.delays).toEqual([5000]);
    await server?.close();
    const b = await run([
      { status: 503, headers: { "retry-after-ms": "250", "retry-after": "9" }, body: ["busy"] },
      { body: [okStream()] },
    ]);
    expect(b.delays).toEqual([250]);
  });

  it("caps a provider-requested wait at 60 s", async () => {
    const { delays } = await run([
      { status: 429, headers: { "retry-after": "3600" }, body: [""] },
      { body: [okStream()] },
    ]);
    expect(delays).toEqual([60_000]);
  });

  it("does not retry a 429 insufficient_quota", async () => {
    const { outcome, frames } = await run([
      {
        status: 429,
        headers: { "content-type": "application/json" },
        body: [
          '{"error":{"type":"insufficient_quota","code":"insufficient_quota","message":"You exceeded your quota"}}',
        ],
      },
    ]);
    expect(types(frames)).toEqual(["request_started", "response_headers", "request_failed"]);
    expect(!outcome.ok && outcome.error.runEndReason).toBe("provider_error");
    expect(!outcome.ok && outcome.error.frameCode).toBe("insufficient_quota");
  });

  it("5xx twice then success, with exponential backoff", async () => {
    const { outcome, delays, frames } = await run([
      { status: 500, body: ["oops"] },
      { status: 502, body: [""] },
      { body: [okStream()] },
    ]);
    expect(outcome.ok).toBe(true);
    expect(delays).toEqual([500, 1000]);
    expect(
      frames
        .filter((f) => f.type === "request_started")
        .map((f) => f.type === "request_started" && f.attempt),
    ).toEqual([1, 2, 3]);
  });

  it("gives up after the retries run out and keeps the last error", async () => {
    const { outcome, frames } = await run([{ status: 503, body: ["down"] }]);
    expect(frames.filter((f) => f.type === "retry")).toHaveLength(2);
    expect(outcome.ok).toBe(false);
    if (!outcome.ok) {
      expect(outcome.error.status).toBe(503);
      expect(outcome.error.frameCode).toBe("http_503");
      expect(outcome.error.runEndReason).toBe("provider_error");
    }
  });

  it("applies jitter to backoff", async () => {
    const { delays } = await run([{ status: 500, body: [""] }, { body: [okStream()] }], {
      random: () => 0.999,
    });
    expect(delays[0]).toBeGreaterThanOrEqual(375);
    expect(delays[0]).toBeLessThan(500);
  });

  it.each([400, 401, 403, 404, 422])("never retries HTTP %i", async (status) => {
    const { outcome, frames } = await run([
      {
        status,
        headers: { "content-type": "application/json" },
        body: ['{"error":{"type":"invalid_request_error","code":"bad","message":"no","param":"input"}}'],
      },
    ]);
    expect(frames.filter((f) => f.type === "retry")).toEqual([]);
    expect(server?.requests).toHaveLength(1);
    expect(outcome.ok).toBe(false);
    if (!outcome.ok) {
      expect(outcome.error.runEndReason).toBe(
        status === 401 || status === 403 ? "provider_error" : "invalid_request",
      );
      expect(outcome.error.param).toBe("input");
    }
  });

  it("says clearly when the base URL gives 404 on /responses", async () => {
    const { outcome } = await run([{ status: 404, body: ["<html>Not Found</html>"] }]);
    expect(!outcome.ok && outcome.error.message).toMatch(/was not found: check --base-url/);
  });

  it("honours x-should-retry", async () => {
    const { frames } = await run([
      { status: 400, headers: { "x-should-retry": "true" }, body: [""] },
      { body: [okStream()] },
    ]);
    expect(frames.filter((f) => f.type === "retry")).toHaveLength(1);
  });

  it("redacts an echoed API key from error messages", async () => {
    const { outcome, frames } = await run(
      [
        {
          status: 401,
          headers: { "content-type": "application/json" },
          body: ['{"error":{"message":"Incorrect API key provided: sk-live-abcdef"}}'],
        },
      ],
      { apiKey: "sk-live-abcdef" },
    );
    expect(!outcome.ok && outcome.error.message).toContain("***");
    expect(JSON.stringify(frames)).not.toContain("sk-live-abcdef");
  });

  it("retries a connection error", async () => {
    const { outcome, frames } = await run([{ body: [{ drop: true }] }, { body: [okStream()] }]);
    expect(outcome.ok).toBe(true);
    expect(frames.filter((f) => f.type === "retry")).toHaveLength(1);
  });

  it("fails clearly when nothing listens", async () => {
    const provider = createOpenResponsesProvider({
      baseURL: "http://127.0.0.1:9/v1",
      retry: { maxRetries: 1 },
      sleep: async () => {},
    });
    const stream = provider.stream({ body: BODY, turn: 0 });
    const frames: ProviderFrame[] = [];
    for await (const f of stream) frames.push(f);
    const outcome = await stream.result;
    expect(types(frames)).toEqual([
      "request_started",
      "request_failed",
      "retry",
      "request_started",
      "request_failed",
    ]);
    expect(!outcome.ok && outcome.error.message).toMatch(
      /cannot reach http:\/\/127\.0\.0\.1:9\/v1\/responses: .*ECONNREFUSED/,
    );
  });
});

describe("OpenResponsesProvider: termination and stalls (docs/pitfalls.md S15–S19, #34–#37)", () => {
  it("drop mid-stream after text: truncated-stream error, partial text kept, no retry", async () => {
    const { outcome, frames } = await run([
      { body: [sse([created, ...textEvents(["par", "tial"])], { done: false }), { drop: true }] },
    ]);
    expect(frames.filter((f) => f.type === "retry")).toEqual([]);
    expect(outcome.ok).toBe(false);
    if (!outcome.ok) {
      expect(["stream_truncated", "provider_connection"]).toContain(outcome.error.code);
      expect(outcome.error.runEndReason).toBe("provider_error");
      expect(outcome.response.outputText).toBe("partial");
    }
  });

  it("drop before any output is retried", async () => {
    const { outcome, frames } = await run([
      { body: [sse([created], { done: false }), { drop: true }] },
      { body: [okStream()] },
    ]);
    expect(outcome.ok).toBe(true);
    expect(frames.find((f) => f.type === "request_failed")).toMatchObject({ retryable: true });
  });

  it("a call cut off mid-arguments is never complete (docs/pitfalls.md S17)", async () => {
    const events: JsonObject[] = [
      created,
      {
        type: "response.output_item.added",
        output_index: 0,
        item: {
          type: "function_call",
          id: "fc",
          call_id: "c",
          name: "write_file",
          arguments: "",
          status: "in_progress",
        },
      },
      { type: "response.function_call_arguments.delta", item_id: "fc", output_index: 0, delta: '{"path":"a' },
    ];
    const { outcome } = await run([{ body: [sse(events, { done: false })] }], { retry: { maxRetries: 0 } });
    expect(!outcome.ok && outcome.error.code).toBe("stream_truncated");
    expect(outcome.response.calls).toEqual([]);
  });

  it("idle stall before output: timeout, then retried on a new connection (docs/pitfalls.md S18)", async () => {
    const { outcome, frames } = await run(
      [{ body: [sse([created], { done: false })], hang: true }, { body: [okStream()] }],
      {
        timeouts: { idleMs: 80 },
      },
    );
    expect(outcome.ok).toBe(true);
    expect(frames.find((f) => f.type === "request_failed")).toMatchObject({
      code: "idle_timeout",
      retryable: true,
    });
  });

  it("idle stall after text: idle_timeout error, not retried, no duplicated text", async () => {
    const { outcome, frames } = await run(
      [{ body: [sse([created, ...textEvents(["once"])], { done: false })], hang: true }],
      {
        timeouts: { idleMs: 80 },
      },
    );
    expect(frames.filter((f) => f.type === "retry")).toEqual([]);
    expect(!outcome.ok && outcome.error.code).toBe("idle_timeout");
    expect(outcome.response.outputText).toBe("once");
  });

  it("the idle timeout does not run while the loop is busy (a tool runs)", async () => {
    const body = [sse([created, ...textEvents(["a"])], { done: false }), { pauseMs: 200 }, sse([completed])];
    const { outcome } = await run([{ body }], { timeouts: { idleMs: 60 } }, { isBusy: () => true });
    expect(outcome.ok).toBe(true);
  });

  it("first-byte timeout", async () => {
    const { outcome } = await run([{ body: [{ pauseMs: 300 }, okStream()] }], {
      timeouts: { firstByteMs: 60 },
      retry: { maxRetries: 0 },
    });
    expect(!outcome.ok && outcome.error.code).toBe("first_byte_timeout");
  });

  it("connect (headers) timeout", async () => {
    const { outcome } = await run([{ headersDelayMs: 300, body: [okStream()] }], {
      timeouts: { connectMs: 60 },
      retry: { maxRetries: 0 },
    });
    expect(!outcome.ok && outcome.error.code).toBe("connect_timeout");
  });

  it("error + response.failed: a typed error with code and message (docs/pitfalls.md S15, S16, #35)", async () => {
    const events: JsonObject[] = [
      created,
      ...textEvents(["so far"]),
      {
        type: "error",
        sequence_number: 5,
        error: { type: "server_error", code: "server_error", message: "model crashed", param: null },
      },
      {
        type: "response.failed",
        sequence_number: 6,
        response: {
          id: "resp_1",
          status: "failed",
          error: { code: "server_error", message: "model crashed" },
          output: [],
        },
      },
    ];
    const { outcome, frames } = await run([{ body: [sse(events)] }]);
    expect(frames.filter((f) => f.type === "retry")).toEqual([]); // text was shown: no retry
    expect(outcome.ok).toBe(false);
    if (!outcome.ok) {
      expect(outcome.error.kind).toBe("stream_failed");
      expect(outcome.error.frameCode).toBe("server_error");
      expect(outcome.error.message).toContain("model crashed");
      expect(outcome.error.runEndReason).toBe("failed");
      expect(outcome.response.outputText).toBe("so far");
    }
  });

  it("a failure event before any output is retried", async () => {
    const failed: JsonObject = {
      type: "response.failed",
      response: { id: "r", status: "failed", error: { code: "server_error", message: "x" }, output: [] },
    };
    const { outcome } = await run([{ body: [sse([created, failed])] }, { body: [okStream()] }]);
    expect(outcome.ok).toBe(true);
  });

  it("an insufficient_quota error event is not retried", async () => {
    const err: JsonObject = {
      type: "error",
      error: { type: "insufficient_quota", code: "insufficient_quota", message: "quota", param: null },
    };
    const { outcome } = await run([{ body: [sse([created, err])] }]);
    expect(server?.requests).toHaveLength(1);
    expect(!outcome.ok && outcome.error.frameCode).toBe("insufficient_quota");
  });

  it("an incomplete response is a result, not an error (docs/pitfalls.md S19)", async () => {
    const incomplete: JsonObject = {
      type: "response.incomplete",
      response: {
        id: "resp_1",
        status: "incomplete",
        incomplete_details: { reason: "max_output_tokens" },
        output: [],
      },
    };
    const { outcome } = await run([{ body: [sse([created, incomplete])] }]);
    expect(outcome.ok).toBe(true);
    expect(outcome.response).toMatchObject({ status: "incomplete", incompleteReason: "max_output_tokens" });
  });

  it("abort mid-stream ends cleanly with a cancelled outcome", async () => {
    const controller = new AbortController();
    server = await startRawServer([
      { body: [sse([created, ...textEvents(["a"])], { done: false })], hang: true },
    ]);
    const provider = createOpenResponsesProvider({ baseURL: server.url });
    const stream = provider.stream({ body: BODY, turn: 0 }, { signal: controller.signal });
    const frames: ProviderFrame[] = [];
    for await (const f of stream) {
      frames.push(f);
      if (f.type === "output_text_delta") controller.abort();
    }
    const outcome = await stream.result;
    expect(!outcome.ok && outcome.error.code).toBe("cancelled");
    expect(!outcome.ok && outcome.error.runEndReason).toBe("cancelled");
    expect(frames.at(-1)?.type).toBe("request_failed");
  });

  it("abort during a backoff wait", async () => {
    const controller = new AbortController();
    server = await startRawServer([{ status: 500, body: [""] }]);
    const provider = createOpenResponsesProvider({ baseURL: server.url });
    const stream = provider.stream({ body: BODY, turn: 0 }, { signal: controller.signal });
    for await (const f of stream) if (f.type === "retry") controller.abort();
    expect((await stream.result).ok).toBe(false);
    expect(server.requests).toHaveLength(1);
  });

  it("breaking out of the iteration settles the result as cancelled", async () => {
    server = await startRawServer([{ body: [okStream()] }]);
    const provider = createOpenResponsesProvider({ baseURL: server.url });
    const stream = provider.stream({ body: BODY, turn: 0 });
    for await (const f of stream) if (f.type === "response_headers") break;
    const outcome = await stream.result;
    expect(!outcome.ok && outcome.error.code).toBe("cancelled");
  });

  it("does not retry when the loop says a tool already ran", async () => {
    const { frames } = await run([{ status: 500, body: [""] }], {}, { canRetry: () => false });
    expect(frames.filter((f) => f.type === "retry")).toEqual([]);
  });

  it("a response streamed past maxResponseBytes is not read further: a clear error, not retried", async () => {
    // 400 deltas of ~100 bytes each: 40 KB, each message well under maxMessageSize.
    const deltas = Array.from({ length: 400 }, () => "x".repeat(60));
    const pieces = okStream(deltas).match(/[\s\S]{1,1000}/g) ?? []; // written one piece at a time
    const { frames, outcome } = await run([{ body: pieces }], { maxResponseBytes: 10_000 });
    expect(!outcome.ok && outcome.error).toMatchObject({
      kind: "decode",
      code: "response_too_large",
      retryable: false,
      message: expect.stringMatching(
        /larger than 9\.8 KiB, the most eddy reads of one response \(maxResponseBytes\)/,
      ),
    });
    expect(frames.filter((f) => f.type === "retry")).toEqual([]);
    // Stopped at the bound, not at the end of the body (how many came before depends on how the
    // socket delivered the pieces: none when they arrived as one read).
    expect(frames.filter((f) => f.type === "output_text_delta").length).toBeLessThan(150);
    expect(outcome.response.terminal).not.toBe("completed");
    // The same response under the default bound is read whole.
    const whole = await run([{ body: [okStream(deltas)] }]);
    expect(whole.outcome.ok).toBe(true);
  });

  it("an oversized SSE message is a clear error", async () => {
    const { outcome } = await run([{ body: [`data: ${"x".repeat(5000)}\n\n`] }], { maxMessageSize: 1000 });
    expect(!outcome.ok && outcome.error.code).toBe("sse_message_too_large");
  });
});

describe("OpenResponsesProvider: a 200 that is not an event stream", () => {
  const notAStream = (outcome: ProviderOutcome) => (!outcome.ok ? outcome.error : undefined);

  it("an HTML page is not retried and says to check the base URL", async () => {
    const { frames, outcome } = await run([
      {
        headers: { "content-type": "text/html; charset=utf-8" },
        body: ["<html><body>Welcome to nginx</body></html>"],
      },
    ]);
    const error = notAStream(outcome);
    expect(error?.code).toBe("not_event_stream");
    expect(error?.retryable).toBe(false);
    expect(error?.message).toMatch(/got text\/html, not an event stream .*Welcome to nginx/);
    expect(error?.message).toMatch(/--base-url.*appends \/v1\/responses/);
    expect(server?.requests).toHaveLength(1);
    expect(types(frames)).toEqual(["request_started", "response_headers", "request_failed"]);
  });

  it("JSON that is not a response (a wrong path) gets the same hint", async () => {
    const { outcome } = await run([
      { headers: { "content-type": "application/json" }, body: ['{"status":"ok","version":"1.2"}'] },
    ]);
    expect(notAStream(outcome)?.message).toMatch(/not an Open Responses response.*--base-url/);
    expect(server?.requests).toHaveLength(1);
  });

  it("an empty body without a content type is not retried", async () => {
    const { outcome } = await run([{ headers: { "content-type": "" }, body: [] }]);
    expect(notAStream(outcome)?.code).toBe("not_event_stream");
    expect(notAStream(outcome)?.message).toMatch(/empty body/);
    expect(server?.requests).toHaveLength(1);
  });

  it("a body without a content type but with SSE events is read as a stream", async () => {
    const { outcome } = await run([{ headers: { "content-type": "" }, body: [okStream()] }]);
    expect(outcome.ok).toBe(true);
    expect(outcome.response.outputText).toBe("Hello");
  });

  it("an empty event stream is a truncated stream, retried", async () => {
    const { outcome } = await run([{ body: [] }, { body: [okStream()] }]);
    expect(outcome.ok).toBe(true);
    expect(server?.requests).toHaveLength(2);
  });

  it("a JSON body over the configured maxMessageSize is a clear error", async () => {
    const big = JSON.stringify({
      id: "r",
      object: "response",
      status: "completed",
      output: [],
      pad: "x".repeat(5000),
    });
    const { outcome } = await run([{ headers: { "content-type": "application/json" }, body: [big] }], {
      maxMessageSize: 1000,
    });
    expect(notAStream(outcome)?.code).toBe("sse_message_too_large");
    expect(notAStream(outcome)?.message).toMatch(/larger than 1000 characters/);
  });
});

describe("OpenResponsesProvider: a redirect", () => {
  it("is not followed (the key would go along); the error names where it points and what to set", async () => {
    const { outcome } = await run([
      { status: 307, headers: { location: "https://elsewhere.example/v1/responses" }, body: [""] },
    ]);
    expect(server?.requests).toHaveLength(1);
    expect(!outcome.ok && outcome.error.message).toMatch(
      /^HTTP 307: \(empty body\) — the server redirects to https:\/\/elsewhere\.example\/v1\/responses; eddy does not follow redirects .*set --base-url/,
    );
  });
});

describe("resolveResponsesUrl", () => {
  it.each([
    ["https://api.openai.com/v1", "https://api.openai.com/v1/responses"],
    ["https://api.openai.com/v1/", "https://api.openai.com/v1/responses"],
    ["http://localhost:1234", "http://localhost:1234/v1/responses"],
    ["http://localhost:1234/", "http://localhost:1234/v1/responses"],
    ["https://openrouter.ai/api", "https://openrouter.ai/api/v1/responses"],
    [
      "https://x.openai.azure.com/openai/v1?api-version=preview",
      "https://x.openai.azure.com/openai/v1/responses?api-version=preview",
    ],
    ["http://host/custom/responses", "http://host/custom/responses"],
  ])("%s → %s", (base, expected) => {
    expect(resolveResponsesUrl(base)).toBe(expected);
  });

  it("rejects a bad URL with a clear message", () => {
    expect(() => resolveResponsesUrl("localhost:1234")).toThrow(/must use http or https|not a valid URL/);
    expect(() => resolveResponsesUrl("not a url")).toThrow(/not a valid URL/);
  });
});
