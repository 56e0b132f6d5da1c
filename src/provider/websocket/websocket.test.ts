/**
 * The Open Responses provider in WebSocket mode against the mock server's WebSocket mode (a real
 * `ws` server on 127.0.0.1): connection reuse, the frames of a turn compared with SSE's, error
 * mapping, drops and reconnects, lost `store: false` responses, timeouts, cancellation, limits.
 */
import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import type { ProviderFrame } from "../../frames/frame.js";
import { createMockServer, type MockServer, type Scenario } from "../../mock/index.js";
import type { CreateResponseBody } from "../../protocol/types.js";
import { createOpenResponsesProvider, type OpenResponsesProviderOptions } from "../open-responses.js";
import type { Provider, ProviderOutcome, ProviderRequest, ProviderStreamOptions } from "../provider.js";

let mock: MockServer | undefined;
let provider: Provider | undefined;
afterEach(async () => {
  await provider?.close?.();
  await mock?.close();
  provider = undefined;
  mock = undefined;
});

const BODY = { model: "m", input: "hi", stream: true } as CreateResponseBody;
const FAST: Partial<OpenResponsesProviderOptions> = {
  retry: { initialBackoffMs: 1, maxBackoffMs: 2 },
  random: () => 0,
  timeouts: { connectMs: 5_000, firstByteMs: 5_000, idleMs: 5_000, drainMs: 500 },
};

async function start(
  scenario: Scenario | undefined,
  options: Partial<OpenResponsesProviderOptions> = {},
  mockOptions: { apiKey?: string } = {},
): Promise<{ mock: MockServer; provider: Provider }> {
  mock = await createMockServer({
    ...(scenario === undefined ? {} : { scenario }),
    clock: () => 0,
    ...mockOptions,
  });
  provider = createOpenResponsesProvider({
    baseURL: mock.url,
    streamTransport: "websocket",
    ...FAST,
    ...options,
  });
  return { mock, provider };
}

async function send(
  p: Provider,
  request: Partial<ProviderRequest> = {},
  options: ProviderStreamOptions = {},
  onFrame?: (f: ProviderFrame) => void,
): Promise<{ frames: ProviderFrame[]; outcome: ProviderOutcome }> {
  const stream = p.stream({ body: BODY, turn: 0, ...request }, options);
  const frames: ProviderFrame[] = [];
  for await (const f of stream) {
    frames.push(f);
    onFrame?.(f);
  }
  return { frames, outcome: await stream.result };
}

const text = (frames: ProviderFrame[]) =>
  frames.map((f) => (f.type === "output_text_delta" ? f.delta : "")).join("");
const types = (frames: ProviderFrame[]) => frames.map((f) => f.type);
const hello = (t = "Hello there, friend."): Scenario["turns"][number] => ({
  items: [{ type: "message", text: t }],
});

describe("WebSocket mode: one connection, many requests", () => {
  it("chains requests on one connection, each a response.create message without stream", async () => {
    const { mock, provider } = await start({ turns: [hello("one"), hello("two")] });
    const first = await send(provider);
    expect(first.outcome.ok).toBe(true);
    const id = first.outcome.response.id as string;
    const second = await send(provider, {
      body: {
        ...BODY,
        previous_response_id: id,
        input: "again",
        stream_options: { include_obfuscation: false },
      },
      turn: 1,
    });
    expect(text(second.frames)).toBe("two");
    expect(mock.stats).toMatchObject({ connections: 1, websocket: { connections: 1, messages: 2 } });
    const sent = mock.requests.map((r) => r.body as Record<string, unknown>);
    expect(mock.requests.map((r) => r.transport)).toEqual(["websocket", "websocket"]);
    expect(sent[0]).toEqual({ type: "response.create", model: "m", input: "hi" });
    expect(sent[1]).toEqual({
      type: "response.create",
      model: "m",
      input: "again",
      previous_response_id: id,
    });
  });

  it("marks each attempt transport websocket and sends no response_headers", async () => {
    const { provider } = await start({ turns: [hello()] });
    const { frames } = await send(provider);
    expect(frames[0]).toMatchObject({
      type: "request_started",
      attempt: 1,
      transport: "websocket",
      body: BODY,
    });
    expect(types(frames)).not.toContain("response_headers");
    for (const f of frames) if (f.type === "provider_event") expect(f.event_name).toBeUndefined();
  });

  it("gives the frames of an SSE turn, minus event names and response_headers", async () => {
    const scenario: Scenario = {
      turns: [
        {
          items: [
            { type: "reasoning", summary: ["Think."] },
            { type: "message", text: "Hello there, friend." },
            { type: "function_call", name: "a", arguments: { x: 1 }, call_id: "call_a" },
          ],
          ignoreToolChoice: true,
        },
      ],
    };
    const ws = await send((await start(scenario)).provider);
    await provider?.close?.();
    await mock?.close();
    mock = await createMockServer({ scenario, clock: () => 0 });
    provider = createOpenResponsesProvider({ baseURL: mock.url, ...FAST });
    const sse = await send(provider);
    const normalize = (frames: ProviderFrame[]) =>
      frames
        .filter((f) => f.type !== "response_headers")
        .map((f) => {
          const {
            event_name: _e,
            transport: _t,
            ...rest
          } = f as ProviderFrame & {
            event_name?: string;
            transport?: string;
          };
          return rest;
        })
        // SSE's [DONE] has no WebSocket counterpart.
        .filter((f) => !(f.type === "provider_event" && f.status === "done"));
    expect(normalize(ws.frames)).toEqual(normalize(sse.frames));
    expect(ws.frames.some((f) => f.type === "provider_event" && f.errors !== undefined)).toBe(false);
    expect(ws.outcome.response).toEqual(sse.outcome.response);
  });

  it("gives overlapping requests a connection each", async () => {
    const { mock, provider } = await start({ turns: [hello("a"), hello("b")] });
    const [a, b] = await Promise.all([send(provider), send(provider)]);
    expect([text(a.frames), text(b.frames)].sort()).toEqual(["a", "b"]);
    expect(mock.stats.websocket.connections).toBe(2);
    // Both are idle now: the next request reuses one of them.
    await send(provider, { body: { ...BODY, input: "more" } });
    expect(mock.stats.websocket.connections).toBe(2);
  });

  it("closes idle connections after idleCloseMs, and connects again when needed", async () => {
    const { mock, provider } = await start(
      { turns: [hello("a"), hello("b")] },
      { webSocket: { idleCloseMs: 50 } },
    );
    await send(provider);
    expect(mock.stats.websocket.open).toBe(1);
    await waitFor(() => mock.stats.websocket.open === 0);
    const again = await send(provider);
    expect(text(again.frames)).toBe("b");
    expect(mock.stats.websocket.connections).toBe(2);
  });

  it("close() closes the connections; the provider still works after it", async () => {
    const { mock, provider } = await start({ turns: [hello("a"), hello("b")] });
    await send(provider);
    await provider.close?.();
    await waitFor(() => mock.stats.websocket.open === 0);
    expect(text((await send(provider)).frames)).toBe("b");
  });

  it("an idle connection does not keep the process alive", async () => {
    const { mock } = await start({ turns: [hello("bye")] });
    const script = fileURLToPath(new URL("../../../test/support/websocket-idle-exit.ts", import.meta.url));
    const started = Date.now();
    const child = spawn(process.execPath, ["--import", "tsx", script, mock.url], {
      stdio: ["ignore", "pipe", "pipe"],
    });
    let out = "";
    child.stdout.on("data", (d: Buffer) => {
      out += d.toString();
    });
    const code = await new Promise<number | null>((resolve) => child.on("exit", resolve));
    expect(out.trim()).toBe("bye");
    expect(code).toBe(0);
    // The connection's idle close is minutes away: the process ended without waiting for it.
    expect(Date.now() - started).toBeLessThan(20_000);
    expect(mock.stats.websocket.connections).toBe(1);
  });
});

describe("WebSocket mode: failures", () => {
  it("maps an error message with a status like that HTTP answer, Retry-After from error.headers", async () => {
    const { mock, provider } = await start({
      turns: [{ faults: { httpError: { status: 429, headers: { "retry-after-ms": "7" } } } }, hello("ok")],
    });
    const { frames, outcome } = await send(provider);
    const failed = frames.find((f) => f.type === "request_failed");
    expect(failed).toMatchObject({ kind: "http", status: 429, code: "rate_limit_exceeded", retryable: true });
    expect(frames.find((f) => f.type === "retry")).toMatchObject({ attempt: 2, delay_ms: 7 });
    expect(outcome.ok && outcome.response.outputText).toBe("ok");
    // The refusal left the connection usable.
    expect(mock.stats.websocket.connections).toBe(1);
    const error = frames.find(
      (f) => f.type === "provider_event" && (f.data as { type?: string }).type === "error",
    );
    expect(error).toMatchObject({ status: "event" });
    expect((error as { errors?: unknown }).errors).toBeUndefined();
  });

  it("does not retry a 400, and ends the request invalid_request", async () => {
    const { provider } = await start({ turns: [{ faults: { httpError: { status: 400 } } }, hello()] });
    const { frames, outcome } = await send(provider);
    expect(frames.some((f) => f.type === "retry")).toBe(false);
    expect(!outcome.ok && outcome.error.runEndReason).toBe("invalid_request");
  });

  it("fails a response mid-stream as an SSE error event does, and does not reuse that connection", async () => {
    const { mock, provider } = await start({
      turns: [
        { ...hello(), faults: { errorEvent: { afterEvents: 2, code: "server_error" } } },
        hello("again"),
      ],
    });
    const { frames, outcome } = await send(provider);
    expect(frames.find((f) => f.type === "request_failed")).toMatchObject({
      kind: "stream_failed",
      code: "server_error",
      retryable: true,
    });
    expect(outcome.ok && text(frames)).toBe("again");
    expect(mock.stats.websocket.connections).toBe(2);
  });

  it("retries a dropped connection on a new one (store true: the chain goes on)", async () => {
    const { mock, provider } = await start({
      turns: [hello("one"), { ...hello(), faults: { dropAfterEvents: 2 } }, hello("two")],
    });
    const first = await send(provider);
    const id = first.outcome.response.id as string;
    const { frames, outcome } = await send(provider, {
      body: { ...BODY, previous_response_id: id },
      turn: 1,
    });
    const failed = frames.find((f) => f.type === "request_failed");
    expect(failed).toMatchObject({ kind: "connection", code: "provider_connection", retryable: true });
    expect((failed as { message: string }).message).toMatch(
      /closed before the response ended: close code 1006/,
    );
    expect(outcome.ok && text(frames)).toBe("two");
    expect(mock.stats.websocket.connections).toBe(2);
    expect(
      (mock.requests.at(-1)?.body as { previous_response_id?: string } | undefined)?.previous_response_id,
    ).toBe(id);
  });

  it("fails a store:false continuation whose connection closed as previous_response_not_found, without sending it", async () => {
    const { mock, provider } = await start({ turns: [hello("one"), hello("two")] });
    const first = await send(provider, { body: { ...BODY, store: false } });
    const id = first.outcome.response.id as string;
    await provider.close?.();
    const messages = mock.stats.websocket.messages;
    const { frames, outcome } = await send(provider, {
      body: { ...BODY, store: false, previous_response_id: id },
      turn: 1,
    });
    expect(types(frames)).toEqual(["request_started", "request_failed"]);
    expect(frames[1]).toMatchObject({ code: "previous_response_not_found", retryable: false });
    expect(!outcome.ok && outcome.error.isPreviousResponseNotFound).toBe(true);
    expect(mock.stats.websocket.messages).toBe(messages);
  });

  it("continues a store:false response on the connection that made it", async () => {
    const { mock, provider } = await start({ turns: [hello("one"), hello("two")] });
    const first = await send(provider, { body: { ...BODY, store: false } });
    const id = first.outcome.response.id as string;
    const { outcome } = await send(provider, {
      body: { ...BODY, store: false, previous_response_id: id },
      turn: 1,
    });
    expect(outcome.ok && outcome.response.outputText).toBe("two");
    expect(mock.stats.websocket.connections).toBe(1);
  });

  it("maps a refused handshake like the HTTP answer (401, not retried)", async () => {
    const { provider } = await start(
      { turns: [hello()] },
      { retry: { maxRetries: 2 } },
      { apiKey: "sk-right-key" },
    );
    const { frames, outcome } = await send(provider);
    expect(frames.find((f) => f.type === "request_failed")).toMatchObject({
      kind: "http",
      status: 401,
      retryable: false,
    });
    expect(!outcome.ok && outcome.error.message).toMatch(/check the API key/);
  });

  it("sends the key in the handshake and never shows it", async () => {
    const key = "sk-right-key-123";
    const { mock, provider } = await start({ turns: [hello("in")] }, { apiKey: key }, { apiKey: key });
    const { frames, outcome } = await send(provider);
    expect(outcome.ok).toBe(true);
    expect(JSON.stringify(frames)).not.toContain(key);
    expect(JSON.stringify(mock.requests)).not.toContain(key);
  });

  it("a connection refused is a retryable connection error", async () => {
    const { mock } = await start({ turns: [hello()] });
    const url = mock.url;
    await mock.close();
    const dead = createOpenResponsesProvider({
      baseURL: url,
      streamTransport: "websocket",
      ...FAST,
      retry: { maxRetries: 1 },
    });
    const { frames, outcome } = await send(dead);
    expect(frames.filter((f) => f.type === "request_failed")).toHaveLength(2);
    expect(!outcome.ok && outcome.error).toMatchObject({ kind: "connection", retryable: true });
    expect(!outcome.ok && outcome.error.message).toMatch(/cannot open a WebSocket to ws:\/\/127\.0\.0\.1/);
  });

  it("times out waiting for the first message, and for the next one", async () => {
    const { provider } = await start(
      {
        turns: [
          { ...hello(), faults: { stallBeforeBodyMs: 5_000 } },
          { ...hello(), faults: { stallAfterEvents: { afterEvents: 2, ms: 5_000 } } },
        ],
      },
      { retry: { maxRetries: 0 }, timeouts: { connectMs: 5_000, firstByteMs: 100, idleMs: 100 } },
    );
    const first = await send(provider);
    expect(!first.outcome.ok && first.outcome.error.code).toBe("first_byte_timeout");
    const second = await send(provider);
    expect(!second.outcome.ok && second.outcome.error.code).toBe("idle_timeout");
  });

  it("pauses the idle timeout while the caller is busy", async () => {
    const { provider } = await start(
      { turns: [{ ...hello("late but fine"), faults: { stallAfterEvents: { afterEvents: 2, ms: 300 } } }] },
      { retry: { maxRetries: 0 }, timeouts: { connectMs: 5_000, firstByteMs: 5_000, idleMs: 50 } },
    );
    const { outcome } = await send(provider, {}, { isBusy: () => true });
    expect(outcome.ok && outcome.response.outputText).toBe("late but fine");
  });

  it("cancels mid-stream: the result settles cancelled and the connection is dropped", async () => {
    const { mock, provider } = await start({
      turns: [{ ...hello(), faults: { stallAfterEvents: { afterEvents: 3, ms: 10_000 } } }],
    });
    const controller = new AbortController();
    const { frames, outcome } = await send(provider, {}, { signal: controller.signal }, (f) => {
      if (f.type === "provider_event") controller.abort();
    });
    expect(!outcome.ok && outcome.error.kind).toBe("cancelled");
    expect(frames.at(-1)).toMatchObject({ type: "request_failed", kind: "cancelled" });
    await waitFor(() => mock.stats.websocket.open === 0);
  });

  it("refuses a background request before sending anything", async () => {
    const { mock, provider } = await start({ turns: [hello()] });
    const { outcome } = await send(provider, { body: { ...BODY, background: true } as CreateResponseBody });
    expect(!outcome.ok && outcome.error).toMatchObject({ kind: "unsupported", retryable: false });
    expect(mock.stats.websocket.connections).toBe(0);
  });

  it("a response past maxResponseBytes is not read further: a clear error, not retried", async () => {
    const { provider } = await start({ turns: [hello("x".repeat(30_000))] }, { maxResponseBytes: 10_000 });
    const { frames, outcome } = await send(provider);
    expect(frames.filter((f) => f.type === "retry")).toHaveLength(0);
    expect(!outcome.ok && outcome.error).toMatchObject({ code: "response_too_large", retryable: false });
  });

  it("a message over maxMessageSize closes the connection (1009) and fails the request, not retried", async () => {
    const { provider } = await start({ turns: [hello("x".repeat(4_000))] }, { maxMessageSize: 1_000 });
    const { frames, outcome } = await send(provider);
    expect(frames.filter((f) => f.type === "retry")).toHaveLength(0);
    expect(!outcome.ok && outcome.error).toMatchObject({ kind: "decode", retryable: false });
  });
});

async function waitFor(condition: () => boolean, ms = 5_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error("condition not met in time");
    await new Promise((r) => setTimeout(r, 10));
  }
}
