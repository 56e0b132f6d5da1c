/**
 * `eddy serve` end to end: the built CLI in front of a real mock server, over real HTTP on
 * 127.0.0.1 — the token, a run's SSE events and their resumption, validation, cancel, a deferred
 * approval decided over HTTP, SIGTERM mid-run and a restart that finds the run again.
 */
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { Frame } from "../src/frames/frame.js";
import { createMockServer } from "../src/mock/index.js";
import type { Scenario } from "../src/mock/scenario.js";
import { createServeClient } from "../src/serve/client.js";
import { cleanEnv, runCli } from "./support/cli.js";
import { startCli, until } from "./support/cli-process.js";

const TOKEN = "serve-test-token-1234";
const AUTH = { authorization: `Bearer ${TOKEN}` };
const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function mock(scenario: Scenario) {
  const server = await createMockServer({ scenario });
  cleanups.push(() => server.close());
  return server;
}

async function serve(mockUrl: string, dataDir: string, extra: string[] = []) {
  const cwd = mkdtempSync(join(tmpdir(), "eddy-serve-ws-"));
  const proc = startCli(
    ["serve", "--base-url", mockUrl, "--model", "m", "--token", TOKEN, "--data-dir", dataDir, ...extra],
    { cwd },
  );
  cleanups.push(async () => {
    if (proc.child.exitCode === null) proc.child.kill("SIGKILL");
    await proc.exited;
  });
  await until(
    () => /listening on (http:\S+)/.test(proc.stderr) || proc.child.exitCode !== null,
    "eddy serve to listen",
    60_000,
  );
  const url = /listening on (http:\S+)/.exec(proc.stderr)?.[1];
  if (url === undefined) throw new Error(`eddy serve did not start: ${proc.stderr}`);
  return { proc, url, cwd };
}

interface SseEvent {
  id: number;
  event: string;
  data: { type: string; seq: number; reason?: string };
}

function parse(text: string): SseEvent[] {
  return text
    .split("\n\n")
    .filter((b) => b.includes("\ndata: ") || b.startsWith("id:") || b.startsWith("event:"))
    .map((block) => {
      const f = (n: string) =>
        block
          .split("\n")
          .find((l) => l.startsWith(`${n}: `))
          ?.slice(n.length + 2) ?? "";
      return { id: Number(f("id")), event: f("event"), data: JSON.parse(f("data")) };
    });
}

async function events(url: string, id: string, after?: number): Promise<SseEvent[]> {
  const headers: Record<string, string> = {
    ...AUTH,
    ...(after === undefined ? {} : { "last-event-id": String(after) }),
  };
  const res = await fetch(`${url}/v1/runs/${id}/events`, { headers });
  expect(res.headers.get("content-type")).toContain("text/event-stream");
  return parse(await res.text());
}

/** Reads events until `count` arrived, then drops the connection (a client killed mid-stream). */
async function firstEvents(url: string, id: string, count: number): Promise<SseEvent[]> {
  const controller = new AbortController();
  const res = await fetch(`${url}/v1/runs/${id}/events`, { headers: AUTH, signal: controller.signal });
  const reader = (res.body as ReadableStream<Uint8Array>).getReader();
  const decoder = new TextDecoder();
  let text = "";
  while (parse(text).length < count) {
    const { value, done } = await reader.read();
    if (done) break;
    text += decoder.decode(value, { stream: true });
  }
  controller.abort();
  return parse(text).slice(0, count);
}

async function post(url: string, path: string, body: unknown, headers: Record<string, string> = AUTH) {
  const res = await fetch(`${url}${path}`, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: JSON.stringify(body),
  });
  return {
    status: res.status,
    body: (await res.json()) as Record<string, unknown> & { id: string; status: string },
  };
}

async function runView(url: string, id: string) {
  return (await (await fetch(`${url}/v1/runs/${id}`, { headers: AUTH })).json()) as {
    status: string;
    output_text: string;
  };
}

describe("eddy serve (slow: spawns the CLI)", () => {
  it.each([
    ["a space at either end", " serve-token-1234 "],
    ["a CRLF file's carriage return", "serve-token-1234\r"],
    ["a non-ASCII character", "sérve-token-1234"],
  ])(
    "refuses a token with %s in one line, exit 2 (found by a probe: it started and answered every client 401)",
    async (_what, token) => {
      const result = await runCli(["serve", "--base-url", "http://127.0.0.1:9/v1", "--model", "m"], {
        env: cleanEnv({ EDDY_SERVE_TOKEN: token }),
        timeoutMs: 60_000,
      });
      expect(result.code).toBe(2);
      expect(result.stderr).toMatch(
        /^eddy: EDDY_SERVE_TOKEN holds a space, a control or a non-ASCII character/,
      );
      expect(result.stderr.trim().split("\n")).toHaveLength(1);
      expect(result.stderr).not.toContain("serve-token-1234");
    },
  );

  it("401 without the token; a run streams run_started … run_ended with id = seq; Last-Event-ID resumes exactly; 400 names max_turns; /openapi.json", async () => {
    const server = await mock({
      turns: [{ items: [{ type: "message", text: "hello there" }], repeat: true }],
    });
    const { url } = await serve(server.url, mkdtempSync(join(tmpdir(), "eddy-serve-data-")));
    expect((await fetch(`${url}/v1/runs`)).status).toBe(401);
    expect((await post(url, "/v1/runs", { input: "hi" }, {})).status).toBe(401);
    const started = await post(url, "/v1/runs", { input: "hi" });
    expect(started.status).toBe(201);
    const all = await events(url, started.body.id);
    expect(all[0]?.event).toBe("run_started");
    expect(all.at(-1)?.data).toMatchObject({ type: "run_ended", reason: "completed" });
    for (const e of all) expect(e.id).toBe(e.data.seq);
    const k = 2;
    const rest = await events(url, started.body.id, k);
    expect(rest.map((e) => e.id)).toEqual(all.slice(k + 1).map((e) => e.id));
    expect((await runView(url, started.body.id)).output_text).toBe("hello there");
    const bad = await post(url, "/v1/runs", { input: "hi", max_turns: "many" });
    expect(bad.status).toBe(400);
    expect(JSON.stringify(bad.body)).toContain("max_turns");
    const doc = (await (await fetch(`${url}/openapi.json`, { headers: AUTH })).json()) as {
      openapi: string;
      paths: Record<string, unknown>;
    };
    expect(doc.openapi).toMatch(/^3\./);
    expect(Object.keys(doc.paths)).toContain("/v1/runs");
  }, 120_000);

  it("a deferred approval is decided over HTTP and the run completes, its events' seq never repeated", async () => {
    const server = await mock({
      turns: [
        {
          items: [
            {
              type: "function_call",
              name: "write_file",
              call_id: "w1",
              arguments: { path: "notes.txt", content: "approved\n" },
            },
          ],
        },
        { items: [{ type: "message", text: "written" }] },
      ],
    });
    const { url, cwd } = await serve(server.url, mkdtempSync(join(tmpdir(), "eddy-serve-data-")), [
      "--allow-write",
      "--approve",
      "defer",
    ]);
    const started = await post(url, "/v1/runs", { input: "write the notes" });
    const first = await events(url, started.body.id);
    expect(first.at(-1)?.data).toMatchObject({ type: "run_ended", reason: "awaiting_approval" });
    expect((await runView(url, started.body.id)).status).toBe("awaiting_approval");
    const decided = await post(url, `/v1/runs/${started.body.id}/decisions`, {
      call_id: "w1",
      decision: "allow",
    });
    expect(decided.status).toBe(202);
    const rest = await events(url, started.body.id, first.at(-1)?.id);
    expect(rest.at(-1)?.data).toMatchObject({ type: "run_ended", reason: "completed" });
    // The resumed frames go on numbering after the last one watchers saw: no seq comes twice,
    // neither streamed as the run resumes nor read whole once it ended.
    expect(rest[0]?.data.seq).toBe((first.at(-1)?.data.seq as number) + 1);
    const all = await events(url, started.body.id);
    expect(all.map((e) => e.data.seq)).toEqual(all.map((_, i) => i));
    for (const e of all) expect(e.id).toBe(e.data.seq);
    expect((await runView(url, started.body.id)).status).toBe("completed");
    expect(readFileSync(join(cwd, "notes.txt"), "utf8")).toBe("approved\n");
  }, 120_000);

  it("cancel ends a run cancelled; SIGTERM mid-run cancels and records it; a restarted server lists it and its events, nothing lost", async () => {
    const stall = {
      faults: { stallAfterEvents: { afterEvents: 2, ms: 600_000 } },
      items: [{ type: "message" as const, text: "slow" }],
    };
    const server = await mock({ turns: [{ ...stall, repeat: true }] });
    const dataDir = mkdtempSync(join(tmpdir(), "eddy-serve-data-"));
    const first = await serve(server.url, dataDir);
    const a = await post(first.url, "/v1/runs", { input: "one" });
    await firstEvents(first.url, a.body.id, 3);
    expect((await post(first.url, `/v1/runs/${a.body.id}/cancel`, {})).body).toEqual({
      id: a.body.id,
      status: "cancelled",
    });
    const aEvents = await events(first.url, a.body.id);
    expect(aEvents.at(-1)?.data).toMatchObject({ type: "run_ended", reason: "cancelled" });
    const b = await post(first.url, "/v1/runs", { input: "two" });
    // A client reads a few frames and is killed mid-stream.
    const seen = await firstEvents(first.url, b.body.id, 3);
    first.proc.child.kill("SIGTERM");
    const exit = await first.proc.exited;
    expect(exit.code).toBe(130);
    // A FIFO among the tapes (it blocked nothing before either, but was skipped without a word).
    execFileSync("mkfifo", [join(dataDir, "runs", "run_fifo.tape")]);
    const again = await serve(server.url, dataDir);
    expect(again.proc.stderr).toMatch(
      /eddy serve: a run not listed \(its file is left as it is\): tape \S*run_fifo\.tape is a FIFO/,
    );
    const list = (await (await fetch(`${again.url}/v1/runs`, { headers: AUTH })).json()) as {
      data: { id: string; status: string }[];
    };
    expect(list.data.find((r) => r.id === b.body.id)?.status).toBe("cancelled");
    expect(list.data.find((r) => r.id === a.body.id)?.status).toBe("cancelled");
    // The killed client reconnects with its last id: the rest, nothing repeated or lost.
    const last = seen.at(-1)?.id as number;
    const rest = await events(again.url, b.body.id, last);
    expect(rest[0]?.id).toBe(last + 1);
    expect(rest.map((e) => e.id)).toEqual(rest.map((_, i) => last + 1 + i));
    expect(rest.at(-1)?.data).toMatchObject({ type: "run_ended", reason: "cancelled" });
  }, 180_000);

  it("a watcher whose connection is destroyed mid-run reconnects (eddy/client, Last-Event-ID) and gets every frame exactly once", async () => {
    const server = await mock({
      turns: [
        {
          faults: { stallAfterEvents: { afterEvents: 3, ms: 1_500 } },
          items: [{ type: "message", text: "a slow answer, word by word" }],
        },
      ],
    });
    const { url } = await serve(server.url, mkdtempSync(join(tmpdir(), "eddy-serve-data-")));
    let connections = 0;
    // The first connection is destroyed (its socket closed) once three events have come through.
    const cutting: typeof fetch = async (input, init) => {
      connections++;
      if (connections > 1) return fetch(input, init);
      const controller = new AbortController();
      const res = await fetch(input, { ...init, signal: controller.signal });
      let events = 0;
      const counted = (res.body as ReadableStream<Uint8Array>).pipeThrough(
        new TransformStream<Uint8Array, Uint8Array>({
          transform(chunk, out) {
            out.enqueue(chunk);
            events += new TextDecoder().decode(chunk).split("\n\n").length - 1;
            if (events >= 3) controller.abort(new Error("the client was killed"));
          },
        }),
      );
      return new Response(counted, { status: res.status, headers: res.headers });
    };
    const client = createServeClient({ baseUrl: url, token: TOKEN, fetch: cutting });
    const { id } = await client.start({ input: "hi" });
    const got: { id: number; frame: Frame }[] = [];
    for await (const event of client.events(id, { reconnectDelayMs: 50 })) got.push(event);
    expect(connections).toBeGreaterThanOrEqual(2);
    const all = await events(url, id);
    expect(got.map((e) => e.id)).toEqual(all.map((e) => e.id));
    expect(got.map((e) => e.id)).toEqual(all.map((_, i) => i));
    expect(got.map((e) => e.frame)).toEqual(all.map((e) => e.data));
    expect(got.at(-1)?.frame).toMatchObject({ type: "run_ended", reason: "completed" });
  }, 120_000);

  it("steer reaches the model of a running run over HTTP; steering or resuming a finished run is 409", async () => {
    const server = await mock({
      turns: [
        {
          faults: { stallAfterEvents: { afterEvents: 3, ms: 10_000 } },
          items: [{ type: "function_call", name: "list_files", call_id: "l1", arguments: {} }],
        },
        { items: [{ type: "message", text: "steered" }], expect: { inputContains: ["in French please"] } },
      ],
    });
    const { url } = await serve(server.url, mkdtempSync(join(tmpdir(), "eddy-serve-data-")));
    const client = createServeClient({ baseUrl: url, token: TOKEN });
    const { id } = await client.start({ input: "list the files" });
    expect(await client.steer(id, "in French please")).toEqual({ id, status: "running" });
    const frames: Frame[] = [];
    for await (const e of client.events(id)) frames.push(e.frame);
    expect(frames.find((f) => f.type === "steered")).toMatchObject({ message: "in French please" });
    expect(frames.at(-1)).toMatchObject({ type: "run_ended", reason: "completed", output_text: "steered" });
    await expect(client.steer(id, "too late")).rejects.toThrow(/409.*not running/);
    await expect(client.resume(id)).rejects.toThrow(/409.*not interrupted/);
  }, 120_000);
});
