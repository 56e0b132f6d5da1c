import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { eventObjects, post, readSse, streamProblems } from "../../test/support/mock-sse.js";
import { validateStreamingEvent } from "../protocol/validate.js";
import type { MockFaults } from "./faults.js";
import { createMockHandler } from "./handler.js";
import { createMockServer, type MockServer } from "./listener.js";
import type { ScenarioTurn } from "./scenario.js";

/** A turn whose text has 2-, 3- and 4-byte UTF-8 characters. */
const ITEMS: ScenarioTurn["items"] = [
  { type: "message", text: "Grüße aus Köln — 東京 ✓ 🚀 fin." },
  { type: "function_call", name: "read_file", arguments: { path: "ünï.txt" } },
];
const BODY = { model: "m", input: "x", stream: true };

async function run(faults: MockFaults, items = ITEMS) {
  const handler = createMockHandler({
    scenario: { turns: [{ items, faults }] },
    clock: () => 1_700_000_000_000,
  });
  const response = await post(handler, BODY);
  return { response, read: await readSse(response.body) };
}

const clean = () => run({});

describe("faults, in process", () => {
  it("httpError: status, Retry-After headers and a JSON error body; the next turn answers normally", async () => {
    const handler = createMockHandler({
      scenario: {
        turns: [
          { faults: { httpError: { status: 429, headers: { "retry-after": "1", "retry-after-ms": "20" } } } },
          { faults: { httpError: { status: 502, body: "<html>Bad gateway</html>" } } },
          {
            faults: {
              httpError: {
                status: 400,
                body: { error: { message: "custom", type: "x", code: "y", param: null } },
              },
            },
          },
          { items: [{ type: "message", text: "ok" }] },
        ],
      },
    });
    const limited = await post(handler, BODY);
    expect(limited.status).toBe(429);
    expect(limited.headers.get("retry-after")).toBe("1");
    expect(limited.headers.get("retry-after-ms")).toBe("20");
    expect(limited.headers.get("x-request-id")).toBe("req_mock_0001");
    expect(await limited.json()).toEqual({
      error: {
        type: "too_many_requests",
        code: "rate_limit_exceeded",
        message: "The mock server answered HTTP 429 (httpError fault).",
        param: null,
      },
    });
    const gateway = await post(handler, BODY);
    expect(gateway.status).toBe(502);
    expect(gateway.headers.get("content-type")).toBe("text/html");
    expect(await gateway.text()).toBe("<html>Bad gateway</html>");
    const custom = await post(handler, BODY);
    expect(await custom.json()).toEqual({ error: { message: "custom", type: "x", code: "y", param: null } });
    const ok = await post(handler, BODY);
    expect(streamProblems(await readSse(ok.body))).toEqual([]);
  });

  it("errorEvent: N events, then `error` and `response.failed` (both valid), then [DONE]", async () => {
    const { read } = await run({ errorEvent: { afterEvents: 5, code: "overloaded", message: "try later" } });
    const events = eventObjects(read);
    expect(events.map((e) => e.sequence_number)).toEqual([0, 1, 2, 3, 4, 5, 6]);
    expect(events[5]).toEqual({
      type: "error",
      sequence_number: 5,
      error: { type: "server_error", code: "overloaded", message: "try later", param: null },
    });
    expect(events[6]?.type).toBe("response.failed");
    expect(events[6]?.response).toMatchObject({ status: "failed" });
    expect((events[6]?.response as { error?: unknown } | undefined)?.error).toEqual({
      code: "overloaded",
      message: "try later",
    });
    for (const e of events) expect(validateStreamingEvent(e)).toBeUndefined();
    expect(read.done).toBe(true);
  });

  it("errorEvent: the failed response holds the items already done", async () => {
    const total = eventObjects((await clean()).read).length;
    const { read } = await run({ errorEvent: { afterEvents: total - 1 } });
    const failed = eventObjects(read).at(-1) as { type: string; response: { output: unknown[] } };
    expect(failed.type).toBe("response.failed");
    expect(failed.response.output).toHaveLength(2);
  });

  it("errorEvent on a non-streaming request: HTTP 500 with the error payload", async () => {
    const handler = createMockHandler({
      scenario: { turns: [{ items: ITEMS, faults: { errorEvent: { afterEvents: 0 } } }] },
    });
    const response = await post(handler, { model: "m", input: "x" });
    expect(response.status).toBe(500);
    expect(await response.json()).toMatchObject({ error: { type: "server_error", code: "server_error" } });
  });

  it("dropAfterEvents: N events, then the body fails; no terminal event, no [DONE]", async () => {
    const { read } = await run({ dropAfterEvents: 4 });
    expect(eventObjects(read)).toHaveLength(4);
    expect(read.error).toBeInstanceOf(Error);
    expect(String(read.error)).toMatch(/connection dropped after 4 events/);
    expect(read.done).toBe(false);
  });

  it("dropAfterEvents on a non-streaming request: no answer at all (the handler rejects)", async () => {
    const handler = createMockHandler({
      scenario: { turns: [{ items: ITEMS, faults: { dropAfterEvents: 0 } }] },
    });
    await expect(post(handler, { model: "m", input: "x" })).rejects.toThrow(/connection dropped/);
  });

  it("keepAliveEvery: `: keep-alive` comments between events, events unchanged", async () => {
    const { read } = await run({ keepAliveEvery: 3 });
    const base = (await clean()).read;
    expect(read.comments.length).toBe(Math.floor(eventObjects(base).length / 3));
    expect(read.comments.every((c) => c === "keep-alive")).toBe(true);
    expect(read.text).toContain(": keep-alive\n\n");
    expect(read.events).toEqual(base.events);
    expect(streamProblems(read)).toEqual([]);
  });

  it("invalidJsonAfterEvents: one data line that is not JSON, the rest intact", async () => {
    const { read } = await run({ invalidJsonAfterEvents: 3 });
    const base = (await clean()).read;
    expect(read.events[3]).toBe('{"type":"response.output_text.delta","sequence_number":');
    expect(() => JSON.parse(read.messages[3]?.data ?? "")).toThrow();
    expect(read.events.filter((_, i) => i !== 3)).toEqual(base.events);
  });

  it.each([
    ["\r\n", /\r\n/, /[^\r]\n/],
    ["\r", /\r/, /\n/],
  ] as const)(
    "lineEnding %j: every line ends that way, events unchanged",
    async (lineEnding, present, absent) => {
      const { read } = await run({ lineEnding });
      expect(read.text).toMatch(present);
      expect(read.text).not.toMatch(absent);
      expect(read.events).toEqual((await clean()).read.events);
      expect(read.done).toBe(true);
    },
  );

  it("omitDone: the terminal event is last and no [DONE] follows", async () => {
    const { read } = await run({ omitDone: true });
    expect(read.done).toBe(false);
    expect(read.text).not.toContain("[DONE]");
    expect(eventObjects(read).at(-1)?.type).toBe("response.completed");
  });

  it("omitEventLines: data lines only", async () => {
    const { read } = await run({ omitEventLines: true });
    expect(read.text).not.toContain("event:");
    expect(read.messages.every((m) => m.event === undefined)).toBe(true);
    expect(read.events).toEqual((await clean()).read.events);
  });

  it("chunkBytes: N-byte chunks that split events and UTF-8 sequences; the decoded events are the same", async () => {
    const { read } = await run({ chunkBytes: 5 });
    expect(read.chunks.slice(0, -1).every((c) => c.length === 5)).toBe(true);
    const decoder = new TextDecoder("utf-8", { fatal: true });
    const splitsUtf8 = read.chunks.some((c) => {
      try {
        decoder.decode(c);
        return false;
      } catch {
        return true;
      }
    });
    expect(splitsUtf8).toBe(true);
    expect(read.events).toEqual((await clean()).read.events);
    expect(streamProblems(read)).toEqual([]);
  });

  it("faults combine: CRLF + 3-byte chunks + keep-alives + no event lines", async () => {
    const { read } = await run({
      lineEnding: "\r\n",
      chunkBytes: 3,
      keepAliveEvery: 2,
      omitEventLines: true,
    });
    expect(read.events).toEqual((await clean()).read.events);
    expect(read.comments.length).toBeGreaterThan(0);
  });
});

/**
 * The stalls the timing tests below look for. A stall is checked by its lower bound (nothing comes
 * before it ends) and by what came before it (headers, the first events) arriving at least half a
 * stall earlier than what came after: a busy machine may delay any delivery, but not by seconds,
 * so the verdict does not depend on how loaded the machine is.
 */
const STALL_MS = 2_000;

describe("faults, over a socket", () => {
  let server: MockServer;
  const turns: ScenarioTurn[] = [
    { items: ITEMS, faults: { stallBeforeHeadersMs: 400 } },
    { items: ITEMS, faults: { stallBeforeBodyMs: STALL_MS } },
    { items: ITEMS, faults: { stallAfterEvents: { afterEvents: 3, ms: STALL_MS } } },
    { items: ITEMS, faults: { dropAfterEvents: 3 } },
    { items: ITEMS, faults: { dropAfterEvents: 0 } },
    { items: ITEMS, faults: { chunkBytes: 7 } },
  ];
  beforeAll(async () => {
    server = await createMockServer({ scenario: { turns } });
  });
  afterAll(() => server.close());

  const send = (body: Record<string, unknown> = BODY) =>
    fetch(`${server.url}/responses`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(body),
    });

  /** Reads a body, timing each chunk from `start`. */
  async function timed(response: Response, start: number) {
    const reader = (response.body as ReadableStream<Uint8Array>).getReader();
    const chunks: Array<{ at: number; text: string }> = [];
    let error: unknown;
    const text = new TextDecoder();
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        chunks.push({ at: performance.now() - start, text: text.decode(value, { stream: true }) });
      }
    } catch (e) {
      error = e;
    }
    return { chunks, error, all: chunks.map((c) => c.text).join("") };
  }

  // The turns are used in order, so these run sequentially.
  it("stallBeforeHeadersMs: nothing arrives (not even the status) until the stall ends", async () => {
    const start = performance.now();
    const response = await send();
    expect(performance.now() - start).toBeGreaterThanOrEqual(380);
    expect(response.status).toBe(200);
    await response.text();
  });

  it("stallBeforeBodyMs: the headers arrive at once, the first body byte after the stall", async () => {
    const start = performance.now();
    const response = await send();
    const headersAt = performance.now() - start;
    const { chunks } = await timed(response, start);
    const firstAt = chunks[0]?.at ?? 0;
    expect(firstAt).toBeGreaterThanOrEqual(STALL_MS - 20);
    expect(firstAt - headersAt).toBeGreaterThanOrEqual(STALL_MS / 2);
  });

  it("stallAfterEvents: the first events arrive, then a silence, then the rest", async () => {
    const start = performance.now();
    const { chunks, all } = await timed(await send(), start);
    // The silence: the longest gap between two chunks, ending at chunk `gapAt`.
    const gaps = chunks.map((c, i) => (i === 0 ? 0 : c.at - (chunks[i - 1]?.at ?? 0)));
    const silence = Math.max(...gaps);
    const gapAt = gaps.indexOf(silence);
    expect(silence).toBeGreaterThanOrEqual(STALL_MS / 2);
    const before = chunks
      .slice(0, gapAt)
      .map((c) => c.text)
      .join("");
    expect(before).toContain('"sequence_number":2');
    expect(before).not.toContain('"sequence_number":3');
    expect(chunks.at(-1)?.at).toBeGreaterThanOrEqual(STALL_MS - 20);
    expect(all).toContain("data: [DONE]");
  });

  it("dropAfterEvents: the client reads N events, then the connection is reset", async () => {
    const { error, all } = await timed(await send(), performance.now());
    expect(error).toBeInstanceOf(Error);
    expect(all.match(/^data: /gm)).toHaveLength(3);
    expect(all).not.toContain("response.completed");
  });

  it("dropAfterEvents: 0 — headers, then the connection closes with no body", async () => {
    const response = await send();
    expect(response.status).toBe(200);
    const { error, all } = await timed(response, performance.now());
    expect(error).toBeInstanceOf(Error);
    expect(all).toBe("");
  });

  it("chunkBytes: the client receives many small chunks that decode to the same events", async () => {
    const { chunks, all } = await timed(await send(), performance.now());
    expect(chunks.length).toBeGreaterThan(20);
    const read = await readSse(new Response(all).body);
    expect(streamProblems(read)).toEqual([]);
    expect(all).toContain("Grüße aus Köln");
  });
});
