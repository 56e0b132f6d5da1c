import { execFileSync } from "node:child_process";
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import { describe, expect, it } from "vitest";
import { createScriptedProvider, type Script } from "../../test/support/scripted.js";
import { createThreadStore } from "../context/threads.js";
import type { ToolHooks } from "../loop/hooks.js";
import { createPolicy, type Policy } from "../loop/policy.js";
import type { PartialRunSpec } from "../loop/run-spec.js";
import { replayTape } from "../replay/replay.js";
import { readTape } from "../replay/tape.js";
import { createToolRegistry } from "../tools/registry.js";
import { approvalNoteTool } from "../tools/test-support/note-tool.js";
import { hasControlChars } from "../util/control-chars.js";
import { FACE_ROUTES, ROUTES } from "./api.js";
import { createServeHandler, type ServeHandlerOptions } from "./handler.js";
import { createRunService, type RunService, type ServeRuntime } from "./runs.js";
import { jsonRequest } from "./test-support/request.js";

const text = (t: string) => ({ items: [{ type: "message", text: t }] }) as Script;

interface Setup {
  scripts?: Script[];
  policy?: Policy;
  handler?: ServeHandlerOptions;
  dataDir?: string;
  notes?: string[];
  maxConcurrentRuns?: number;
  hooks?: ToolHooks;
  instructionFiles?: ServeRuntime["instructionFiles"];
  onSkippedTape?: ServeRuntime["onSkippedTape"];
  runTimeoutMs?: number;
  spec?: PartialRunSpec;
}

function setup(o: Setup = {}) {
  const dataDir = o.dataDir ?? mkdtempSync(join(tmpdir(), "eddy-serve-"));
  const notes = o.notes ?? [];
  const provider = createScriptedProvider(o.scripts ?? [text("hello")]);
  const service = createRunService({
    provider,
    spec: { model: "m", ...o.spec },
    policy: o.policy ?? createPolicy(),
    tools: () => createToolRegistry([approvalNoteTool(notes)]),
    workspace: dataDir,
    dataDir,
    secrets: ["sk-very-secret"],
    ...(o.maxConcurrentRuns === undefined ? {} : { maxConcurrentRuns: o.maxConcurrentRuns }),
    ...(o.hooks === undefined ? {} : { hooks: o.hooks }),
    ...(o.instructionFiles === undefined ? {} : { instructionFiles: o.instructionFiles }),
    ...(o.onSkippedTape === undefined ? {} : { onSkippedTape: o.onSkippedTape }),
    ...(o.runTimeoutMs === undefined ? {} : { runTimeoutMs: o.runTimeoutMs }),
  });
  const handler = createServeHandler(service, o.handler);
  const call = (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) =>
    handler(jsonRequest(method, path, body, headers));
  return { service, handler, call, dataDir, notes, provider };
}

interface SseEvent {
  id: string;
  event: string;
  data: { type: string; seq: number; [k: string]: unknown };
}

async function sse(response: Response): Promise<SseEvent[]> {
  const textBody = await response.text();
  return textBody
    .split("\n\n")
    .filter((block) => block.startsWith("id:") || block.startsWith("event:"))
    .map((block) => {
      const field = (name: string) =>
        block
          .split("\n")
          .find((l) => l.startsWith(`${name}: `))
          ?.slice(name.length + 2) ?? "";
      return { id: field("id"), event: field("event"), data: JSON.parse(field("data")) };
    });
}

async function finished(service: RunService, id: string) {
  await service.get(id)?.done;
  return service.get(id);
}

describe("eddy serve handler: runs", () => {
  it("POST /v1/runs starts a run: 201 {id, status}; its events stream run_started … run_ended with id = seq", async () => {
    const { call, service } = setup();
    const res = await call("POST", "/v1/runs", { input: "hi" });
    expect(res.status).toBe(201);
    const { id, status } = (await res.json()) as { id: string; status: string };
    expect(status).toBe("running");
    expect(id).toMatch(/^run_/);
    const events = await sse(await call("GET", `/v1/runs/${id}/events`));
    expect(events[0]?.event).toBe("run_started");
    expect(events.at(-1)?.event).toBe("run_ended");
    for (const e of events) expect(Number(e.id)).toBe(e.data.seq);
    await finished(service, id);
    const view = (await (await call("GET", `/v1/runs/${id}`)).json()) as Record<string, unknown>;
    expect(view).toMatchObject({ id, status: "completed", output_text: "hello", model: "m" });
    const list = (await (await call("GET", "/v1/runs")).json()) as { data: { id: string }[] };
    expect(list.data.map((r) => r.id)).toContain(id);
  });

  it("Last-Event-ID k resumes with exactly the frames after k; several watchers see the same frames", async () => {
    const { call, service } = setup();
    const { id } = (await (await call("POST", "/v1/runs", { input: "hi" })).json()) as { id: string };
    const [a, b] = await Promise.all([
      sse(await call("GET", `/v1/runs/${id}/events`)),
      sse(await call("GET", `/v1/runs/${id}/events`)),
    ]);
    expect(b).toEqual(a);
    await finished(service, id);
    const k = 3;
    const rest = await sse(
      await call("GET", `/v1/runs/${id}/events`, undefined, { "last-event-id": String(k) }),
    );
    expect(rest.map((e) => e.id)).toEqual(a.slice(k + 1).map((e) => e.id));
    expect(rest[0]?.data.seq).toBe(k + 1);
  });

  it("a request may lower the server's budgets (max_turns, max_tool_calls, …); asking above them is 400 naming the field and the limit", async () => {
    const { call, service, dataDir } = setup({
      scripts: [text("a"), text("b"), text("c")],
      spec: { max_turns: 50, request: { max_output_tokens: 4096 } },
    });
    // The run's whole spec is in its tape's header (the server keeps only its model and thread).
    const start = async (body: object) => {
      const res = await call("POST", "/v1/runs", { input: "hi", ...body });
      expect(res.status).toBe(201);
      const { id } = (await res.json()) as { id: string };
      await finished(service, id);
      const header = readFileSync(join(dataDir, "runs", `${id}.tape`), "utf8").split("\n", 1)[0] ?? "";
      type Budgets = {
        max_turns?: number;
        max_tool_calls?: number;
        tool_timeout_ms?: number;
        request?: { max_output_tokens?: number };
      };
      return (JSON.parse(header) as { spec?: Budgets }).spec;
    };
    const refused = async (body: object) => {
      const res = await call("POST", "/v1/runs", { input: "hi", ...body });
      expect(res.status).toBe(400);
      return ((await res.json()) as { error: { code: string; message: string; param: string | null } }).error;
    };
    // Above the server's own (--max-turns 50) or the default it left alone (32 tool calls, 2 min).
    expect(await refused({ max_turns: 100_000 })).toEqual({
      type: "invalid_request_error",
      code: "budget_above_limit",
      param: "max_turns",
      message:
        "max_turns 100000 is above this server's limit of 50 (ask for at most 50, or leave max_turns out to run with 50)",
    });
    const several = await refused({ max_tool_calls: 1_000_000, tool_timeout_ms: 86_400_000 });
    expect(several.param).toBe("max_tool_calls");
    expect(several.message).toMatch(
      /^max_tool_calls 1000000 is above this server's limit of 32 .*; tool_timeout_ms 86400000 is above this server's limit of 120000/,
    );
    expect((await refused({ request: { max_output_tokens: 100_000 } })).param).toBe(
      "request.max_output_tokens",
    );
    expect((await refused({ max_turns: 51 })).param).toBe("max_turns");
    // A message on a thread starts a run too.
    const message = await call("POST", "/v1/threads/t1/messages", { input: "hi", tool_concurrency: 8 });
    expect(message.status).toBe(400);
    expect(((await message.json()) as { error: { code: string } }).error.code).toBe("budget_above_limit");
    expect(service.list()).toEqual([]); // nothing ran
    // At the limit, below it, or left out: honoured.
    const modest = await start({ max_turns: 2, max_tool_calls: 3, request: { max_output_tokens: 100 } });
    expect([modest?.max_turns, modest?.max_tool_calls, modest?.request?.max_output_tokens]).toEqual([
      2, 3, 100,
    ]);
    const exact = await start({ max_turns: 50, max_tool_calls: 32 });
    expect([exact?.max_turns, exact?.max_tool_calls]).toEqual([50, 32]);
    const given = await start({});
    expect([given?.max_turns, given?.max_tool_calls, given?.request?.max_output_tokens]).toEqual([
      50, 32, 4096,
    ]);
  });

  it("a hostile budget is 400 naming the field, its message one line without control characters", async () => {
    const { call, service } = setup({ spec: { max_turns: 50 } });
    const hostile: [string, unknown][] = [
      ["max_turns", "100"],
      ["max_turns", "5\u001b[2J\r\nX-Evil: 1"],
      ["max_turns", -1],
      ["max_turns", 0],
      ["max_turns", 2.5],
      ["max_turns", 1e300],
      ["max_turns", null],
      ["max_turns", [5]],
      ["max_turns", { n: 5 }],
      ["max_turns", true],
      ["max_tool_calls", Number.MAX_SAFE_INTEGER + 2],
      ["tool_concurrency", 1e9],
    ];
    for (const [field, value] of hostile) {
      const res = await call("POST", "/v1/runs", { input: "hi", [field]: value });
      expect(res.status, `${field}: ${JSON.stringify(value)}`).toBe(400);
      const { error } = (await res.json()) as { error: { message: string; param: string | null } };
      expect(error.param).toBe(field);
      expect(error.message).toContain(field);
      expect(hasControlChars(error.message)).toBe(false);
    }
    // A number JSON cannot hold (1e400 parses as Infinity) and one in a string with control characters.
    for (const raw of [
      '{"input":"hi","max_turns":1e400}',
      '{"input":"hi","request":{"max_output_tokens":"9\\u0007"}}',
    ]) {
      const res = await call("POST", "/v1/runs", raw);
      expect(res.status).toBe(400);
      const { error } = (await res.json()) as { error: { message: string; param: string | null } };
      expect(error.param).toMatch(/^(max_turns|request\.max_output_tokens)$/);
      expect(hasControlChars(error.message)).toBe(false);
    }
    expect(service.list()).toEqual([]);
  });

  it("a run whose provider trickles (never idle long enough to time out) is cancelled at the server's run deadline, naming it", async () => {
    // Forty messages, an event every 100 ms (the provider's idle timeout is 5 s): half a minute of
    // a stream that never stalls; the deadline, 300 ms, ends it.
    const items = Array.from({ length: 40 }, (_, i) => ({ type: "message" as const, text: `part ${i}` }));
    const pauses = Object.fromEntries(Array.from({ length: 400 }, (_, i) => [i + 1, 100]));
    const trickle: Script = { items, pauses };
    const { call, service } = setup({
      scripts: [trickle, text("next")],
      runTimeoutMs: 300,
      maxConcurrentRuns: 1,
    });
    const { id } = (await (await call("POST", "/v1/runs", { input: "hi" })).json()) as { id: string };
    const ended = await finished(service, id);
    expect(ended?.status).toBe("cancelled");
    const events = await sse(await call("GET", `/v1/runs/${id}/events`));
    const asked = events.find((e) => e.event === "cancel_requested");
    expect(String(asked?.data.reason)).toMatch(
      /longer than this server allows \(300 ms, eddy serve --run-timeout\)/,
    );
    const next = await call("POST", "/v1/runs", { input: "again" });
    expect(next.status).toBe(201);
    const { id: second } = (await next.json()) as { id: string };
    expect((await finished(service, second))?.status).toBe("completed");
  });

  it("an invalid spec is 400 naming the field; run_id is the server's", async () => {
    const { call } = setup();
    const res = await call("POST", "/v1/runs", { input: "hi", max_turns: "many" });
    expect(res.status).toBe(400);
    const body = (await res.json()) as { error: { message: string; param: string | null } };
    expect(body.error.message).toContain("max_turns");
    expect(body.error.param).toBe("max_turns");
    const own = await call("POST", "/v1/runs", { input: "hi", run_id: "run_mine" });
    expect(own.status).toBe(400);
    expect(((await own.json()) as { error: { param: string } }).error.param).toBe("run_id");
  });

  it("a request beyond the server's policy is 403 with the reason", async () => {
    const { call } = setup();
    const res = await call("POST", "/v1/runs", { input: "hi", tools: ["shell"] });
    expect(res.status).toBe(403);
    expect(((await res.json()) as { error: { message: string } }).error.message).toMatch(
      /shell needs --allow-shell/,
    );
  });

  it("a request's hosted tools must be ones the server declares, field for field (403 otherwise)", async () => {
    const docs = { type: "mcp", server_label: "docs", server_url: "https://docs.example/mcp" };
    const { call } = setup({ policy: createPolicy({ hostedTools: [docs] }) });
    for (const tool of [
      { type: "code_interpreter", container: { type: "auto" } },
      { ...docs, require_approval: "never" },
    ]) {
      const res = await call("POST", "/v1/runs", { input: "hi", hosted_tools: [tool] });
      expect(res.status).toBe(403);
      const message = ((await res.json()) as { error: { message: string } }).error.message;
      expect(message).toMatch(/hosted tool .* is not one this invocation declares/);
    }
    const res = await call("POST", "/v1/runs", { input: "hi", hosted_tools: [docs] });
    expect(res.status).toBe(201);
  });

  it("cancel ends a running run cancelled, and its tape is recorded", async () => {
    const { call, service } = setup({
      scripts: [{ items: [{ type: "message", text: "slow" }], pauses: { 2: 600_000 } }],
    });
    const { id } = (await (await call("POST", "/v1/runs", { input: "hi" })).json()) as { id: string };
    const res = await call("POST", `/v1/runs/${id}/cancel`);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ id, status: "cancelled" });
    expect((await finished(service, id))?.status).toBe("cancelled");
    expect((await call("POST", `/v1/runs/${id}/cancel`)).status).toBe(409);
  });

  it("a deferred approval is decided over HTTP and the run completes", async () => {
    const scripts: Script[] = [
      {
        items: [{ type: "function_call", name: "write_note", arguments: '{"text":"hello"}', call_id: "w1" }],
      },
      text("done"),
    ];
    const { call, service, notes } = setup({ scripts, policy: createPolicy({ approve: "defer" }) });
    const { id } = (await (await call("POST", "/v1/runs", { input: "hi" })).json()) as { id: string };
    const first = await sse(await call("GET", `/v1/runs/${id}/events`));
    expect(first.at(-1)?.data).toMatchObject({
      type: "run_ended",
      reason: "awaiting_approval",
      pending_calls: ["w1"],
    });
    const unknown = await call("POST", `/v1/runs/${id}/decisions`, {
      call_id: "nope\u009b2J\u202e",
      decision: "allow",
    });
    expect(unknown.status).toBe(400);
    // The client's call id comes back inert (found by a probe: its C1 CSI and direction override were raw).
    const answer = await unknown.text();
    expect(hasControlChars(answer)).toBe(false);
    expect(JSON.parse(answer).error.message).toContain(
      'no call "nope\\u009b2J\\u202e" awaiting approval (pending: "w1")',
    );
    expect(
      (await call("POST", `/v1/runs/${id}/decisions`, { call_id: "w1", decision: "maybe" })).status,
    ).toBe(400);
    const decided = await call("POST", `/v1/runs/${id}/decisions`, { call_id: "w1", decision: "allow" });
    expect(decided.status).toBe(202);
    expect(await decided.json()).toMatchObject({ status: "running", pending_calls: [] });
    const last = first.at(-1)?.id as string;
    const rest = await sse(await call("GET", `/v1/runs/${id}/events`, undefined, { "last-event-id": last }));
    expect(rest.at(-1)?.data).toMatchObject({ type: "run_ended", reason: "completed" });
    expect(rest.map((e) => Number(e.id))).toEqual(rest.map((_, i) => Number(last) + 1 + i));
    expect(notes).toEqual(["hello"]);
    expect((await finished(service, id))?.status).toBe("completed");
  });

  it("the server's hooks decide every run's calls; a request cannot bring its own", async () => {
    const scripts: Script[] = [
      {
        items: [{ type: "function_call", name: "write_note", arguments: '{"text":"hello"}', call_id: "w1" }],
      },
      text("done"),
    ];
    const hooks: ToolHooks = { beforeToolCall: () => ({ action: "deny", reason: "notes are off" }) };
    const { call, service, notes } = setup({ scripts, policy: createPolicy({ approve: "auto" }), hooks });
    expect((await call("POST", "/v1/runs", { input: "hi", hooks: {} })).status).toBe(400);
    const { id } = (await (await call("POST", "/v1/runs", { input: "hi" })).json()) as { id: string };
    const events = await sse(await call("GET", `/v1/runs/${id}/events`));
    expect(events.find((e) => e.event === "hook_decided")?.data).toMatchObject({
      call_id: "w1",
      decision: "deny",
      reason: "notes are off",
    });
    expect(notes).toEqual([]);
    expect((await finished(service, id))?.status).toBe("completed");
  });

  it("the server's AGENTS.md goes before a run's instructions, read for each run; a request cannot name files", async () => {
    let text0 = "Answer in haiku.";
    const read: string[] = [];
    const instructionFiles = (workspace: string) => {
      read.push(workspace);
      return [{ path: "AGENTS.md", text: text0 }];
    };
    const { call, service, provider, dataDir } = setup({
      scripts: [text("a"), text("b")],
      instructionFiles,
    });
    // The run's whole spec is in its tape's header (the server keeps only its model and thread).
    const start = async (body: unknown) => {
      const { id } = (await (await call("POST", "/v1/runs", body)).json()) as { id: string };
      await finished(service, id);
      const header = readFileSync(join(dataDir, "runs", `${id}.tape`), "utf8").split("\n", 1)[0] ?? "";
      return (JSON.parse(header) as { spec?: { instruction_files?: string[] } }).spec;
    };
    const first = await start({
      input: "hi",
      instructions: "Be kind.",
      instruction_files: ["../../etc/passwd"],
    });
    expect(provider.requests[0]?.instructions).toBe(
      "Instructions from AGENTS.md:\n\nAnswer in haiku.\n\nBe kind.",
    );
    expect(first?.instruction_files).toEqual(["AGENTS.md"]);
    text0 = "Answer in prose.";
    await start({ input: "again" });
    expect(provider.requests[1]?.instructions).toBe("Instructions from AGENTS.md:\n\nAnswer in prose.");
    expect(read).toEqual([dataDir, dataDir]);
  });

  it("too many runs at once is 429 with Retry-After", async () => {
    const { call } = setup({
      scripts: [{ items: [{ type: "message", text: "slow" }], pauses: { 2: 600_000 } }],
      maxConcurrentRuns: 1,
    });
    const { id } = (await (await call("POST", "/v1/runs", { input: "a" })).json()) as { id: string };
    const res = await call("POST", "/v1/runs", { input: "b" });
    expect(res.status).toBe(429);
    expect(res.headers.get("retry-after")).toMatch(/^\d+$/);
    await call("POST", `/v1/runs/${id}/cancel`);
  });

  it("a restarted server lists its runs from their tapes; a tape without run_ended is interrupted", async () => {
    const first = setup();
    const { id } = (await (await first.call("POST", "/v1/runs", { input: "hi" })).json()) as { id: string };
    await finished(first.service, id);
    const events = await sse(await first.call("GET", `/v1/runs/${id}/events`));
    const header = {
      type: "tape_header",
      format: 2,
      eddy_version: "0",
      run_id: "run_dead",
      spec: { model: "m", input: "x" },
      provider: { name: "p", capabilities: {}, validate: true },
      workspace: ".",
    };
    writeFileSync(join(first.dataDir, "runs", "run_dead.tape"), `${JSON.stringify(header)}\n`);
    const again = setup({ dataDir: first.dataDir });
    const view = (await (await again.call("GET", `/v1/runs/${id}`)).json()) as { status: string };
    expect(view.status).toBe("completed");
    expect(await sse(await again.call("GET", `/v1/runs/${id}/events`))).toEqual(events);
    const list = (await (await again.call("GET", "/v1/runs")).json()) as {
      data: { id: string; status: string }[];
    };
    expect(list.data.find((r) => r.id === "run_dead")?.status).toBe("interrupted");
  });

  it("the server keeps a run's model and thread, not its input, running, ended or restored (found by a probe: 320 runs of 900 KB held 485 MB)", async () => {
    const first = setup();
    const input = "x".repeat(100_000);
    const { id } = (await (await first.call("POST", "/v1/runs", { input, thread: "t1" })).json()) as {
      id: string;
    };
    expect(first.service.get(id)?.spec).toEqual({ model: "m", thread: "t1" });
    expect((await finished(first.service, id))?.spec).toEqual({ model: "m", thread: "t1" });
    const again = setup({ dataDir: first.dataDir });
    expect(again.service.get(id)?.spec).toEqual({ model: "m", thread: "t1" });
    const view = (await (await again.call("GET", `/v1/runs/${id}`)).json()) as Record<string, unknown>;
    expect(view).toMatchObject({ id, status: "completed", model: "m", thread: "t1" });
  });

  it("a restarted server lists its runs from their tapes' ends; a tape damaged in the middle fails its events only, naming no path", async () => {
    const first = setup();
    const { id } = (await (await first.call("POST", "/v1/runs", { input: "hi" })).json()) as { id: string };
    await finished(first.service, id);
    const before = (await (await first.call("GET", `/v1/runs/${id}`)).json()) as Record<string, unknown>;
    const path = join(first.dataDir, "runs", `${id}.tape`);
    const lines = readFileSync(path, "utf8").trimEnd().split("\n");
    expect(lines.length).toBeGreaterThan(4);
    lines[2] = "{ damaged";
    writeFileSync(path, `${lines.join("\n")}\n`);
    const errors: unknown[] = [];
    const again = setup({ dataDir: first.dataDir, handler: { onError: (e) => errors.push(e) } });
    // Listed as before, from the header and the last frame: the damage is not read yet.
    const after = (await (await again.call("GET", `/v1/runs/${id}`)).json()) as Record<string, unknown>;
    // (created_at: the request's time while it runs, its run_started frame's once listed from the tape)
    expect({ ...after, created_at: 0 }).toEqual({ ...before, created_at: 0 });
    expect(after.events).toBe(lines.length - 1);
    const events = await again.call("GET", `/v1/runs/${id}/events`);
    expect(events.status).toBe(500);
    const body = await events.text();
    expect(body).toMatch(/tape_unreadable/);
    expect(body).not.toContain(first.dataDir);
    expect(String(errors[0])).toMatch(/line 3/); // the operator hears where
  });

  it("a run that ended holds its frames no more: they are read back from its tape, with the same ids", async () => {
    const { call, service, dataDir } = setup();
    const { id } = (await (await call("POST", "/v1/runs", { input: "hi" })).json()) as { id: string };
    await finished(service, id);
    const live = await sse(await call("GET", `/v1/runs/${id}/events`));
    expect(live.map((e) => Number(e.id))).toEqual(live.map((_, i) => i));
    expect(
      await sse(await call("GET", `/v1/runs/${id}/events`, undefined, { "last-event-id": "2" })),
    ).toEqual(live.slice(3));
    // The tape is where they come from now: damaged before they are first asked for, the events
    // fail (held in memory, they would not).
    const second = (await (await call("POST", "/v1/runs", { input: "hi" })).json()) as { id: string };
    await finished(service, second.id);
    const path = join(dataDir, "runs", `${second.id}.tape`);
    const lines = readFileSync(path, "utf8").trimEnd().split("\n");
    writeFileSync(path, `${[lines[0], "{ damaged", ...lines.slice(2)].join("\n")}\n`);
    const view = (await (await call("GET", `/v1/runs/${second.id}`)).json()) as {
      events: number;
      status: string;
    };
    expect(view).toMatchObject({ events: lines.length - 1, status: "completed" });
    expect((await call("GET", `/v1/runs/${second.id}/events`)).status).toBe(500);
  });

  it("a run on a thread records its whole tape (its first frames come before the tape opens): read back, replayed, listed after a restart", async () => {
    const { call, service, dataDir } = setup({ scripts: [text("hello"), text("again")] });
    for (const [path, body] of [
      ["/v1/threads/t1/messages", { input: "My name is Ada." }],
      ["/v1/runs", { input: "What is my name?", thread: "t1" }],
    ] as const) {
      const { id } = (await (await call("POST", path, body)).json()) as { id: string };
      expect((await finished(service, id))?.status).toBe("completed");
      const tape = readTape(join(dataDir, "runs", `${id}.tape`));
      expect(tape.frames.map((f) => f.seq)).toEqual(tape.frames.map((_, i) => i));
      expect(tape.frames.slice(0, 2).map((f) => f.type)).toEqual(["run_started", "context_compiled"]);
      const res = await call("GET", `/v1/runs/${id}/events`);
      expect(res.status).toBe(200);
      expect((await sse(res)).map((e) => e.event)).toEqual(tape.frames.map((f) => f.type));
      const registry = createToolRegistry([approvalNoteTool([])]);
      const replayed = await replayTape(tape, { registry, workspace: dataDir });
      expect(replayed.verdict).toEqual({ match: true, frames: tape.frames.length });
    }
    const restarted = setup({ dataDir });
    expect(restarted.service.list().map((r) => r.status)).toEqual(["completed", "completed"]);
    // The thread's view names its runs, not the server's paths.
    const view = await (await call("GET", "/v1/threads/t1")).text();
    expect(JSON.parse(view).runs.map((r: { outcome?: { reason: string } }) => r.outcome?.reason)).toEqual([
      "completed",
      "completed",
    ]);
    expect(view).not.toContain(dataDir);
  });

  it("a run on a thread another process holds (an eddy chat) is 409 thread_busy, naming no path; the server holds its runs' threads too", async () => {
    const { call, service, dataDir } = setup({ scripts: [text("hello"), text("again")] });
    const hold = await createThreadStore({ workspace: dataDir }).hold("t1", "eddy chat");
    for (const [path, body] of [
      ["/v1/threads/t1/messages", { input: "hi" }],
      ["/v1/runs", { input: "hi", thread: "t1" }],
    ] as const) {
      const res = await call("POST", path, body);
      expect(res.status).toBe(409);
      const answer = await res.text();
      expect(JSON.parse(answer).error).toMatchObject({ code: "thread_busy" });
      expect(answer).not.toContain(dataDir);
    }
    await hold.release();
    const { id } = (await (await call("POST", "/v1/threads/t1/messages", { input: "hi" })).json()) as {
      id: string;
    };
    expect((await finished(service, id))?.status).toBe("completed");
    // Let go once the run ended.
    await (await createThreadStore({ workspace: dataDir }).hold("t1", "test")).release();
  });

  it("a deferred run on a thread, decided over HTTP: held again while it goes on (409 while a chat holds it, the decision not kept), and the thread's log takes its new outcome", async () => {
    const scripts: Script[] = [
      {
        items: [{ type: "function_call", name: "write_note", arguments: '{"text":"hello"}', call_id: "w1" }],
      },
      text("noted"),
    ];
    const { call, service, notes, dataDir } = setup({ scripts, policy: createPolicy({ approve: "defer" }) });
    const store = createThreadStore({ workspace: dataDir });
    const { id } = (await (await call("POST", "/v1/threads/t1/messages", { input: "note it" })).json()) as {
      id: string;
    };
    expect((await finished(service, id))?.status).toBe("awaiting_approval");
    const chat = await store.hold("t1", "eddy chat");
    const busy = await call("POST", `/v1/runs/${id}/decisions`, { call_id: "w1", decision: "allow" });
    expect(busy.status).toBe(409);
    expect(((await busy.json()) as { error: unknown }).error).toMatchObject({ code: "thread_busy" });
    expect(service.get(id)).toMatchObject({ status: "awaiting_approval", decisions: {} });
    await chat.release();
    const decided = await call("POST", `/v1/runs/${id}/decisions`, { call_id: "w1", decision: "allow" });
    expect(decided.status).toBe(202);
    expect((await finished(service, id))?.status).toBe("completed");
    expect(notes).toEqual(["hello"]);
    const log = await store.read("t1");
    expect(log.runs.map((r) => [r.run_id, r.outcome?.reason, r.outcome?.output_text])).toEqual([
      [id, "completed", "noted"],
    ]);
    // Let go once the resumed run ended.
    await (await store.hold("t1", "test")).release();
  });

  it("a restarted server names each tape it does not list, and leaves it where it is", async () => {
    const first = setup();
    const { id } = (await (await first.call("POST", "/v1/runs", { input: "hi" })).json()) as { id: string };
    await finished(first.service, id);
    const runs = join(first.dataDir, "runs");
    writeFileSync(join(runs, "run_garbage.tape"), "not a tape\n");
    writeFileSync(join(runs, "notes.tape"), "");
    mkdirSync(join(runs, "run_folder.tape"));
    execFileSync("mkfifo", [join(runs, "run_fifo.tape")]);
    symlinkSync("/dev/zero", join(runs, "run_zero.tape"));
    const skipped: [string, string][] = [];
    const again = setup({ dataDir: first.dataDir, onSkippedTape: (file, why) => skipped.push([file, why]) });
    const list = (await (await again.call("GET", "/v1/runs")).json()) as { data: { id: string }[] };
    expect(list.data.map((r) => r.id)).toEqual([id]);
    const why = new Map(skipped.map(([file, reason]) => [basename(file), reason]));
    expect([...why.keys()].sort()).toEqual(
      ["notes.tape", "run_fifo.tape", "run_folder.tape", "run_garbage.tape", "run_zero.tape"].sort(),
    );
    expect(why.get("notes.tape")).toMatch(/notes\.tape: its name is not that of a run this server makes/);
    expect(why.get("run_fifo.tape")).toMatch(/FIFO/);
    expect(why.get("run_folder.tape")).toMatch(/directory/);
    expect(why.get("run_zero.tape")).toMatch(/not a regular file|device/);
    expect(why.get("run_garbage.tape")).toMatch(/tape/);
    for (const [file, reason] of skipped) {
      expect(reason).toContain(file); // each reason names its file
      expect(reason).not.toMatch(/\n|\bat \//); // one line, no stack
    }
    expect(readFileSync(join(runs, "run_garbage.tape"), "utf8")).toBe("not a tape\n"); // untouched
  });
});

describe("eddy serve handler: hostile input", () => {
  it("a token is required when set (401), and checked", async () => {
    const { call } = setup({ handler: { token: "t0ken" } });
    expect((await call("GET", "/v1/runs")).status).toBe(401);
    expect((await call("GET", "/v1/runs", undefined, { authorization: "Bearer wrong" })).status).toBe(401);
    expect((await call("GET", "/v1/runs", undefined, { authorization: "Bearer t0ken" })).status).toBe(200);
  });

  it.each([
    ["oversized body", "POST", "/v1/runs", `{"input":"${"x".repeat(2048)}"}`, 413],
    ["bad JSON", "POST", "/v1/runs", "{nope", 400],
    ["an array", "POST", "/v1/runs", "[1,2]", 400],
    ["wrong types", "POST", "/v1/runs", { input: 42, tools: "shell" }, 400],
    ["unknown field", "POST", "/v1/runs", { input: "x", allow_shell: true }, 400],
    ["path trick in an id", "GET", "/v1/runs/..%2F..%2Fetc%2Fpasswd", undefined, 404],
    ["dots as an id", "GET", "/v1/runs/../events", undefined, 404],
    ["an id that is not the server's", "GET", "/v1/runs/run_x%00y/events", undefined, 404],
    ["path trick in a thread", "GET", "/v1/threads/..%2Fsecrets", undefined, 404],
    ["a bad thread for a message", "POST", "/v1/threads/-x/messages", { input: "x" }, 400],
    ["dots as a thread", "POST", "/v1/threads/%2E%2E/messages", { input: "x" }, 404],
    ["an unknown run", "GET", "/v1/runs/run_abc/events", undefined, 404],
    ["an unknown route", "GET", "/v1/nothing", undefined, 404],
    ["a wrong method", "DELETE", "/v1/runs", undefined, 405],
    [
      "escapes and direction characters in an id",
      "GET",
      "/v1/runs/run_%1b%5b31mRED%e2%80%ae%c2%9b",
      undefined,
      404,
    ],
  ])("%s", async (_name, method, path, body, status) => {
    const { call } = setup({ handler: { maxBodyBytes: 1024 } });
    const res = await call(method as string, path as string, body);
    expect(res.status).toBe(status);
    const answer = await res.text();
    expect(answer).not.toContain("sk-very-secret");
    expect(JSON.parse(answer)).toHaveProperty("error.message");
    // What a client prints of the answer steers no terminal: the JSON holds no such character raw.
    expect(hasControlChars(answer)).toBe(false);
  });

  it("JSON nested deeper than 1,000 levels anywhere in a body is 400; no run starts, no tape is made", async () => {
    const { call, dataDir, service } = setup();
    const deep = (n: number) => `${"[".repeat(n)}${"]".repeat(n)}`;
    for (const body of [
      `{"input":[{"type":"message","role":"user","content":${deep(4000)}}]}`, // ended the server before
      `{"input":"x","request":{"metadata":${deep(20_000)}}}`,
      `{"input":"x","output_schema":{"name":"s","schema":{"x":${deep(1001)}}}}`,
    ]) {
      const res = await call("POST", "/v1/runs", body);
      expect(res.status).toBe(400);
      expect(await res.text()).toMatch(/nests deeper than 1000 levels/);
    }
    expect(service.list()).toEqual([]);
    expect(existsSync(join(dataDir, "runs")) ? readdirSync(join(dataDir, "runs")) : []).toEqual([]);
    // 1,000 levels is taken as any JSON is (and refused or run on its merits).
    expect(
      (await call("POST", "/v1/runs", `{"input":"x","request":{"metadata":{"k":${deep(900)}}}}`)).status,
    ).not.toBe(500);
  });

  it("a body of 1,000 levels makes a run whose tape reads back and replays (the tape wraps it deeper)", async () => {
    const { call, service, dataDir } = setup();
    const deep = (n: number) => `${"[".repeat(n)}${"]".repeat(n)}`;
    // body → input → item → content → part → x: 995 levels under 5.
    const part = `{"type":"input_text","text":"deep","x":${deep(995)}}`;
    const body = `{"input":[{"type":"message","role":"user","content":[${part}]}]}`;
    const res = await call("POST", "/v1/runs", body);
    expect(res.status).toBe(201);
    const { id } = (await res.json()) as { id: string };
    expect((await finished(service, id))?.status).toBe("completed");
    const events = await call("GET", `/v1/runs/${id}/events`);
    expect(events.status).toBe(200);
    expect((await sse(events)).at(-1)?.event).toBe("run_ended");
    const tape = readTape(join(dataDir, "runs", `${id}.tape`));
    const registry = createToolRegistry([approvalNoteTool([])]);
    expect((await replayTape(tape, { registry, workspace: dataDir })).verdict.match).toBe(true);
  });

  it("no CORS header unless configured", async () => {
    const plain = setup();
    expect((await plain.call("GET", "/v1/runs")).headers.get("access-control-allow-origin")).toBeNull();
    const cors = setup({ handler: { corsOrigin: "https://app.example" } });
    expect((await cors.call("GET", "/v1/runs")).headers.get("access-control-allow-origin")).toBe(
      "https://app.example",
    );
  });

  it("watchers beyond the cap get 429; a closed watcher frees its place", async () => {
    const { call, service } = setup({ handler: { maxWatchers: 2 } });
    const { id } = (await (await call("POST", "/v1/runs", { input: "hi" })).json()) as { id: string };
    await finished(service, id);
    const a = await call("GET", `/v1/runs/${id}/events`);
    const b = await call("GET", `/v1/runs/${id}/events`);
    expect((await call("GET", `/v1/runs/${id}/events`)).status).toBe(429);
    await a.body?.cancel();
    await b.text();
    expect((await call("GET", `/v1/runs/${id}/events`)).status).toBe(200);
  });

  it("a malformed Last-Event-ID is 400", async () => {
    const { call, service } = setup();
    const { id } = (await (await call("POST", "/v1/runs", { input: "hi" })).json()) as { id: string };
    await finished(service, id);
    const res = await call("GET", `/v1/runs/${id}/events`, undefined, { "last-event-id": "1; rm" });
    expect(res.status).toBe(400);
  });
});

describe("GET /openapi.json", () => {
  it("is OpenAPI 3.1 and describes every route the handler serves, the RunSpec included", async () => {
    const { call } = setup();
    const doc = (await (await call("GET", "/openapi.json")).json()) as {
      openapi: string;
      paths: Record<string, Record<string, unknown>>;
      components: { schemas: Record<string, { properties?: Record<string, unknown> }> };
    };
    expect(doc.openapi).toMatch(/^3\.1/);
    for (const route of ROUTES) expect(doc.paths[route.path]?.[route.method.toLowerCase()]).toBeDefined();
    expect(doc.paths["/v1/runs"]?.post).toBeDefined();
    expect(doc.components.schemas.RunSpec?.properties).toHaveProperty("max_turns");
    for (const route of FACE_ROUTES)
      expect(doc.paths[route.path]?.[route.method.toLowerCase()]).toBeDefined();
    // Every path of the runs API answers something other than "no such route" (the face's are
    // served by the face: test/serve-responses.e2e.test.ts checks them on a real server).
    const face = new Set(FACE_ROUTES.map((r) => r.path));
    for (const path of Object.keys(doc.paths).filter((p) => !face.has(p))) {
      const concrete = path.replace("{id}", "run_abc").replace("{name}", "t1");
      const res = await call("GET", concrete);
      expect(((await res.json()) as { error?: { code?: string } }).error?.code).not.toBe("not_found");
    }
  });
});

describe("GET /v1/threads with a log that cannot be read", () => {
  it("lists the others, and that one as unreadable without naming the server's path", async () => {
    const { call, service, dataDir } = setup();
    await service.threads.append("good", { kind: "prompt", run_id: "r1", prompt: "p", model: null });
    mkdirSync(join(dataDir, ".eddy", "threads", "folder.jsonl"));
    const response = await call("GET", "/v1/threads");
    expect(response.status).toBe(200);
    const text = await response.text();
    expect(text).not.toContain(dataDir);
    const { data } = JSON.parse(text) as { data: { name: string; runs: number; problem?: string }[] };
    expect(data.find((t) => t.name === "good")).toMatchObject({ runs: 1 });
    expect(data.find((t) => t.name === "folder")?.problem).toBe("the thread's log cannot be read");
  });
});
