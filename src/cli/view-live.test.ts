/**
 * `eddy view --live`'s run state against real page streams on 127.0.0.1: a client that stops
 * reading (a frozen background tab) holds at most the latest view in eddy's memory and is cut after
 * `unreadMs`; a client that reads gets the latest view (docs/pitfalls.md #110).
 */
import type { ServerResponse } from "node:http";
import { afterEach, describe, expect, it } from "vitest";
import { closedWithin, HANG_GUARD_MS, rawClient } from "../../test/support/slow-peer.js";
import { LiveState, type LiveStateOptions } from "./view-live.js";
import { type LivePage, serveLivePage } from "./view-live-page.js";

const pages: LivePage[] = [];
afterEach(async () => {
  await Promise.all(pages.splice(0).map((p) => p.close()));
});

/** Frame `seq` of a run: its start, its first request, then text deltas of `deltaChars` each. */
function frame(seq: number, deltaChars: number): Record<string, unknown> {
  const base = { run_id: "run_t", seq, ts: 1_800_000_000_000 + seq };
  if (seq === 0) return { ...base, type: "run_started", model: "m", mode: "chained", input: "go", tools: [] };
  if (seq === 1) return { ...base, type: "request_started", turn: 1, attempt: 1, body: { model: "m" } };
  const delta = `${seq}:${"x".repeat(deltaChars)} `;
  return {
    ...base,
    type: "output_text_delta",
    turn: 1,
    item_id: "m1",
    output_index: 0,
    content_index: 0,
    delta,
  };
}

/** A LiveState served as a page, and the server's side of each page stream. */
async function start(options: LiveStateOptions) {
  const state = new LiveState("test", options);
  const streams: ServerResponse[] = [];
  const page = await serveLivePage(
    {
      current: () => state.current(),
      watch: (res) => {
        streams.push(res);
        state.watch(res);
      },
    },
    "run_t (live)",
  );
  pages.push(page);
  return { state, streams, page, events: `${new URL(page.url).pathname}events` };
}

/** Resolves once `check` holds; rejects after the hang guard. */
async function until(check: () => boolean, what: string): Promise<void> {
  const end = Date.now() + HANG_GUARD_MS;
  while (!check()) {
    if (Date.now() > end) throw new Error(`${what}: never happened`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

/** Reads an event stream with fetch, keeping its text. */
function reader(url: string) {
  let text = "";
  const done = (async () => {
    const res = await fetch(url);
    const decoder = new TextDecoder();
    for await (const chunk of res.body as AsyncIterable<Uint8Array>)
      text += decoder.decode(chunk, { stream: true });
  })().catch(() => {});
  return { text: () => text, done };
}

/**
 * Two clients of a page's event stream: one that stops reading once its stream is open (a raw
 * socket, paused), then one that reads (`streams[0]` and `streams[1]` on the server's side).
 */
async function pausedAndReading(page: LivePage, streams: ServerResponse[], events: string) {
  const paused = rawClient(page.port);
  paused.socket.write(`GET ${events} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n`);
  await until(() => streams.length === 1, "the paused client's stream");
  paused.socket.pause();
  const reading = reader(`${page.url}events`);
  await until(() => streams.length === 2, "the reading client's stream");
  return { paused, reading };
}

describe("eddy view --live: page streams and a client that stops reading", () => {
  it("a paused client holds at most the latest view unsent; a reading one gets the latest view; once it reads again, so does the paused one", async () => {
    const { state, streams, page, events } = await start({ redrawMs: 0 });
    const { paused, reading } = await pausedAndReading(page, streams, events);
    let sent = 0;
    let mostUnsent = 0;
    let largestView = 0;
    for (let seq = 0; seq < 80; seq++) {
      const before = state.current();
      state.add(frame(seq, 16 * 1024));
      await until(() => state.current() !== before, `redraw ${seq}`);
      const size = Buffer.byteLength(JSON.stringify(state.current()));
      sent += size;
      largestView = Math.max(largestView, size);
      mostUnsent = Math.max(mostUnsent, streams[0]?.writableLength ?? 0);
    }
    // Every redraw written to the paused stream would be ~30 MB; at most the latest is held.
    expect(sent).toBeGreaterThan(20 * 1024 * 1024);
    expect(mostUnsent).toBeLessThanOrEqual(largestView + 64 * 1024);
    state.end();
    const last = `data: ${JSON.stringify(state.current())}\n\nevent: ended`;
    await until(() => reading.text().endsWith(`${last}\ndata: {}\n\n`), "the reading client's latest view");
    // The paused client reads again: it is sent the latest view and the end.
    let raw = "";
    paused.socket.on("data", (chunk: Buffer) => {
      raw += chunk.toString("latin1");
    });
    paused.socket.resume();
    await until(() => raw.includes("event: ended"), "the paused client's end");
    paused.socket.destroy();
  });

  it("a client that leaves a view unread for unreadMs has its stream closed; the others go on", async () => {
    const { state, streams, page, events } = await start({ redrawMs: 0, unreadMs: 200 });
    const { paused, reading } = await pausedAndReading(page, streams, events);
    const closed = new Promise<void>((resolve) => streams[0]?.once("close", () => resolve()));
    for (let seq = 0; seq < 40 && streams[0]?.destroyed === false; seq++) {
      const before = state.current();
      state.add(frame(seq, 64 * 1024));
      await until(() => state.current() !== before, `redraw ${seq}`);
    }
    await closedWithin(closed, "the paused client's stream");
    state.end();
    await until(() => reading.text().includes("event: ended"), "the reading client's end");
    expect(streams[1]?.destroyed).toBe(false);
    paused.socket.destroy();
  });
});
