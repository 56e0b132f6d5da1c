import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { createScriptedProvider, type Script } from "../../test/support/scripted.js";
import { EddyError } from "../errors.js";
import { createPolicy } from "../loop/policy.js";
import { createToolRegistry } from "../tools/registry.js";
import { defineTool } from "../tools/tool.js";
import { createServeClient, type RunEvent } from "./client.js";
import { createServeHandler } from "./handler.js";
import { listen, type ServeListener } from "./listener.js";
import { createRunService } from "./runs.js";

const servers: ServeListener[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) await s.close();
});

function service(scripts: Script[], approve: "auto" | "defer" = "auto") {
  const dir = mkdtempSync(join(tmpdir(), "eddy-client-"));
  const note = defineTool({
    name: "note",
    description: "Notes",
    parameters: { type: "object", properties: {} },
    needsApproval: true,
    execute: () => "noted",
  });
  return createRunService({
    provider: createScriptedProvider(scripts),
    spec: { model: "m" },
    policy: createPolicy({ approve }),
    tools: () => createToolRegistry([note]),
    workspace: dir,
    dataDir: dir,
  });
}

async function collect(events: AsyncIterable<RunEvent>): Promise<RunEvent[]> {
  const out: RunEvent[] = [];
  for await (const e of events) out.push(e);
  return out;
}

describe("eddy/client over real HTTP", () => {
  it("starts a run, follows its events, reads it back; a wrong token is a serve_error", async () => {
    const runs = service([{ items: [{ type: "message", text: "hi there" }] }]);
    const server = await listen(createServeHandler(runs, { token: "tok-12345" }), { authenticated: true });
    servers.push(server);
    const client = createServeClient({ baseUrl: `${server.url}/v1`, token: "tok-12345" });
    const { id } = await client.start({ input: "hello" });
    const events = await collect(client.events(id));
    expect(events.map((e) => e.id)).toEqual(events.map((_, i) => i));
    expect(events.at(-1)?.frame).toMatchObject({ type: "run_ended", reason: "completed" });
    expect((await client.get(id)).output_text).toBe("hi there");
    expect((await client.list()).map((r) => r.id)).toEqual([id]);
    const wrong = createServeClient({ baseUrl: server.url, token: "nope" });
    const err = await wrong.list().catch((e: unknown) => e);
    expect(EddyError.isInstance(err) && err.code === "serve_error" && err.details.status === 401).toBe(true);
  });

  it("decides a deferred approval; the iterator goes on after the decision", async () => {
    const runs = service(
      [
        { items: [{ type: "function_call", name: "note", arguments: "{}", call_id: "c1" }] },
        { items: [{ type: "message", text: "ok" }] },
      ],
      "defer",
    );
    const server = await listen(createServeHandler(runs), { authenticated: false });
    servers.push(server);
    const client = createServeClient({ baseUrl: server.url });
    const { id } = await client.start({ input: "note it" });
    const first = await collect(client.events(id));
    const ended = first.at(-1)?.frame;
    expect(ended).toMatchObject({ type: "run_ended", reason: "awaiting_approval", pending_calls: ["c1"] });
    expect(await client.decide(id, "c1", "allow")).toMatchObject({ pending_calls: [] });
    const rest = await collect(client.events(id, { after: first.at(-1)?.id as number }));
    expect(rest[0]?.id).toBe((first.at(-1)?.id as number) + 1);
    expect(rest.at(-1)?.frame).toMatchObject({ type: "run_ended", reason: "completed" });
  });
});

describe("eddy/client reconnects", () => {
  it("a stream cut mid-way is resumed with Last-Event-ID: every event once, in order", async () => {
    const runs = service([{ items: [{ type: "message", text: "a fairly long answer to cut" }] }]);
    const handler = createServeHandler(runs);
    const seenIds: (string | null)[] = [];
    let cuts = 0;
    // A fetch whose first event stream breaks after its first chunk (the connection dropped).
    const flaky: typeof fetch = async (input, init) => {
      const request = new Request(input as string, init);
      if (request.url.endsWith("/events")) seenIds.push(request.headers.get("last-event-id"));
      const response = await handler(request);
      if (!request.url.endsWith("/events") || cuts++ > 0 || response.body === null) return response;
      const reader = response.body.getReader();
      let sent = false;
      const body = new ReadableStream<Uint8Array>({
        async pull(controller) {
          if (sent) {
            await reader.cancel();
            controller.error(new TypeError("terminated"));
            return;
          }
          const { value } = await reader.read();
          sent = true;
          // Half of the first chunk: some whole events, then one cut in the middle.
          controller.enqueue((value as Uint8Array).slice(0, Math.floor((value as Uint8Array).length / 2)));
        },
      });
      return new Response(body, { status: 200, headers: response.headers });
    };
    const client = createServeClient({ baseUrl: "http://127.0.0.1", fetch: flaky });
    const { id } = await client.start({ input: "go" });
    await runs.get(id)?.done;
    const events = await collect(client.events(id, { reconnectDelayMs: 1 }));
    expect(cuts).toBe(2);
    expect(seenIds[0]).toBeNull();
    expect(seenIds[1]).toMatch(/^\d+$/);
    expect(events.map((e) => e.id)).toEqual(runs.get(id)?.log.frames.map((_, i) => i));
  });
});

describe("eddy/client against a server that is not eddy serve", () => {
  it("an event that is not JSON, not a frame, or nests deeper than the stack is a serve_error naming it", async () => {
    const deep = `{"type":"run_started","x":${"[".repeat(20_000)}${"]".repeat(20_000)}}`;
    for (const [data, expected] of [
      ["{oops", /event 0 is not JSON/],
      ['{"no":"type"}', /event 0 is not a frame/],
      [deep, /event 0 nests deeper than 1032 levels of arrays and objects/],
    ] as const) {
      const hostile: typeof fetch = async () =>
        new Response(`id: 0\ndata: ${data}\n\n`, { headers: { "content-type": "text/event-stream" } });
      const client = createServeClient({ baseUrl: "http://127.0.0.1", fetch: hostile });
      const error = await collect(client.events("run_x", { maxReconnects: 0 })).catch((e: unknown) => e);
      expect(EddyError.isInstance(error) && error.code).toBe("serve_error");
      expect((error as Error).message).toMatch(expected);
    }
  });
});

describe("eddy/client calls: bounded in time and size", () => {
  it("a server that never answers: a serve_error naming the call after timeoutMs", async () => {
    const silent: typeof fetch = (_input, init) =>
      new Promise((_resolve, reject) => {
        init?.signal?.addEventListener("abort", () => reject(init.signal?.reason));
      });
    const client = createServeClient({ baseUrl: "http://127.0.0.1", fetch: silent, timeoutMs: 50 });
    const error = await client.get("run_x").catch((e: unknown) => e);
    expect(EddyError.isInstance(error) && error.code).toBe("serve_error");
    expect((error as EddyError).fault).toBe("provider");
    expect((error as Error).message).toBe("eddy serve did not answer GET /v1/runs/run_x within 50 ms");
  });

  it("an answer whose body drips forever: the same error (the read counts)", async () => {
    const drip: typeof fetch = async (_input, init) => {
      const body = new ReadableStream<Uint8Array>({
        start(controller) {
          controller.enqueue(new TextEncoder().encode("{"));
          init?.signal?.addEventListener("abort", () => controller.error(init.signal?.reason));
        },
      });
      return new Response(body, { headers: { "content-type": "application/json" } });
    };
    const client = createServeClient({ baseUrl: "http://127.0.0.1", fetch: drip, timeoutMs: 50 });
    await expect(client.list()).rejects.toThrow(/did not answer GET \/v1\/runs within 50 ms/);
  });

  it("an answer larger than maxResponseBytes, or deeper than the stack, is refused by name", async () => {
    let cancelled = false;
    const endless: typeof fetch = async () => {
      const chunk = new Uint8Array(64 * 1024).fill(32);
      const body = new ReadableStream<Uint8Array>({
        pull: (controller) => controller.enqueue(chunk),
        cancel: () => {
          cancelled = true;
        },
      });
      return new Response(body, { headers: { "content-type": "application/json" } });
    };
    const big = createServeClient({ baseUrl: "http://127.0.0.1", fetch: endless, maxResponseBytes: 1 << 20 });
    await expect(big.get("run_x")).rejects.toThrow(
      "eddy serve's answer to GET /v1/runs/run_x is larger than 1048576 bytes",
    );
    expect(cancelled).toBe(true);
    const deep = `{"status":${"[".repeat(20_000)}${"]".repeat(20_000)}}`;
    const deepFetch: typeof fetch = async () => new Response(deep);
    const nested = createServeClient({ baseUrl: "http://127.0.0.1", fetch: deepFetch });
    await expect(nested.get("run_x")).rejects.toThrow(/nests deeper than 1032 levels/);
  });
});

describe("eddy/client events(): a stream that stalls or keeps failing", () => {
  it("a connection silent for idleTimeoutMs is made again after the last event; still silent, a serve_error says so", async () => {
    const seen: (string | null)[] = [];
    const stalls: typeof fetch = async (_input, init) => {
      seen.push(new Headers(init?.headers).get("last-event-id"));
      const n = seen.length;
      const body = new ReadableStream<Uint8Array>({
        start(controller) {
          // The first connection sends two events, then nothing: neither a byte nor an end.
          if (n === 1)
            controller.enqueue(
              new TextEncoder().encode('id: 0\ndata: {"type":"a"}\n\nid: 1\ndata: {"type":"b"}\n\n'),
            );
          init?.signal?.addEventListener("abort", () => controller.error(init.signal?.reason));
        },
      });
      return new Response(body, { headers: { "content-type": "text/event-stream" } });
    };
    const client = createServeClient({ baseUrl: "http://127.0.0.1", fetch: stalls });
    const got: number[] = [];
    const error = await (async () => {
      for await (const e of client.events("run_x", {
        idleTimeoutMs: 40,
        reconnectDelayMs: 1,
        maxReconnects: 2,
      }))
        got.push(e.id);
    })().catch((e: unknown) => e);
    expect(got).toEqual([0, 1]);
    expect(seen).toEqual([null, "1", "1", "1"]);
    expect(EddyError.isInstance(error) && error.code).toBe("serve_error");
    expect((error as EddyError).fault).toBe("provider");
    expect((error as Error).message).toMatch(
      /failed 3 times in a row without a new event \(it stayed silent\)/,
    );
  });

  it("keep-alive comments count as life: a quiet run is not given up on", async () => {
    const quiet: typeof fetch = async () => {
      let n = 0;
      const body = new ReadableStream<Uint8Array>({
        async pull(controller) {
          await new Promise((r) => setTimeout(r, 15));
          if (n++ < 8) controller.enqueue(new TextEncoder().encode(": keep-alive\n\n"));
          else {
            controller.enqueue(new TextEncoder().encode('id: 0\ndata: {"type":"run_ended"}\n\n'));
            controller.close();
          }
        },
      });
      return new Response(body, { headers: { "content-type": "text/event-stream" } });
    };
    const client = createServeClient({ baseUrl: "http://127.0.0.1", fetch: quiet });
    const events = await collect(client.events("run_x", { idleTimeoutMs: 60, maxReconnects: 0 }));
    expect(events.map((e) => e.frame.type)).toEqual(["run_ended"]);
  });

  it("a server that resets every connection: a serve_error naming the cause, not a raw fetch failure", async () => {
    const resets: typeof fetch = async () => {
      throw new TypeError("fetch failed", {
        cause: Object.assign(new Error("socket hang up"), { code: "ECONNRESET" }),
      });
    };
    const client = createServeClient({ baseUrl: "http://127.0.0.1", fetch: resets });
    const error = await collect(client.events("run_x", { reconnectDelayMs: 1, maxReconnects: 2 })).catch(
      (e: unknown) => e,
    );
    expect(EddyError.isInstance(error) && error.code).toBe("serve_error");
    expect((error as Error).message).toBe(
      "eddy serve: the event stream at http://127.0.0.1/v1/runs/run_x/events failed 3 times in a row without a new event (ECONNRESET); is the server up?",
    );
  });

  it("aborting during the wait before a reconnection ends it at once", async () => {
    const resets: typeof fetch = async () => {
      throw new TypeError("fetch failed");
    };
    const client = createServeClient({ baseUrl: "http://127.0.0.1", fetch: resets });
    const controller = new AbortController();
    setTimeout(() => controller.abort(new Error("stop")), 30);
    const error = await collect(
      client.events("run_x", { reconnectDelayMs: 60_000, signal: controller.signal }),
    ).catch((e: unknown) => e);
    // (The wait is a minute: before, the test timed out in it.)
    expect((error as Error).message).toBe("stop");
  });
});
