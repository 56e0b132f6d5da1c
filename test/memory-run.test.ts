/**
 * Tool history, context and overflow in whole runs: the run's one `ToolHistoryManager` renders
 * every request that carries the history (threshold folds, summaries, the text-embed strategy), a
 * run starts from a compiled context, and a context overflow is compacted — by the server's
 * `POST /responses/compact` or locally — and the turn sent again. Every run is recorded and
 * replayed: the replay must match without asking a summarization model or the server again.
 */
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { createThreadStore } from "../src/context/threads.js";
import type { Frame } from "../src/frames/frame.js";
import type { RunDeps } from "../src/loop/options.js";
import { createPolicy } from "../src/loop/policy.js";
import { runAgent } from "../src/loop/run.js";
import type { RunSpecInput } from "../src/loop/run-spec.js";
import { runAgentOnThread } from "../src/loop/thread-run.js";
import { createMockServer, type MockServer, type Scenario } from "../src/mock/index.js";
import type { JsonObject } from "../src/protocol/types.js";
import { createOpenResponsesProvider } from "../src/provider/open-responses.js";
import { createTapeHeader } from "../src/replay/header.js";
import { replayTape } from "../src/replay/replay.js";
import { createBuiltinTools } from "../src/tools/builtin/index.js";
import { createToolRegistry, type ToolRegistry } from "../src/tools/registry.js";
import { assertFrameInvariants, ended, ofType } from "./support/frames.js";
import { createScriptedProvider, type Script } from "./support/scripted.js";

let server: MockServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

function workspace(files: Record<string, string> = {}): string {
  const dir = mkdtempSync(join(tmpdir(), "eddy-memory-"));
  for (const [name, text] of Object.entries({ "a.txt": "alpha\n", "b.txt": "beta\n", ...files }))
    writeFileSync(join(dir, name), text);
  return dir;
}

function registry(): ToolRegistry {
  const { tools, disabled } = createBuiltinTools();
  return createToolRegistry(tools, { disabled });
}

/** A spec's fields (snake_case) with the run's live dependencies beside them. */
type TestRun = Omit<Partial<RunSpecInput>, "tools"> &
  Pick<RunDeps, "provider" | "workspace"> & { tools: ToolRegistry };

/** Runs, then replays the tape the run would have written; the replay must match. */
async function recordAndReplay(options: TestRun) {
  const { provider, tools, workspace, ...spec } = options;
  const run_id = `run_memory_${Math.random().toString(36).slice(2)}`;
  const handle = runAgent(
    { model: "m", input: "go", ...spec, run_id },
    { provider, tools, ...(workspace === undefined ? {} : { workspace }) },
  );
  const header = createTapeHeader(handle.spec, { provider });
  const frames: Frame[] = [];
  for await (const f of handle) frames.push(f);
  const result = await handle.result;
  assertFrameInvariants(frames);
  const replay = await replayTape(
    { header: JSON.parse(JSON.stringify(header)), frames: JSON.parse(JSON.stringify(frames)) },
    { registry: tools, workspace: workspace ?? process.cwd() },
  );
  expect(replay.verdict, JSON.stringify(replay.verdict).slice(0, 3000)).toEqual({
    match: true,
    frames: frames.length,
  });
  return { frames, result, header };
}

async function onMock(scenario: Scenario, options: Omit<Partial<RunSpecInput>, "tools"> = {}) {
  server = await createMockServer({ scenario });
  const provider = createOpenResponsesProvider({
    baseURL: server.url,
    name: "mock",
    retry: { maxRetries: 0 },
  });
  const run = await recordAndReplay({
    provider,
    model: "m",
    input: "Read a.txt and b.txt",
    tools: registry(),
    workspace: workspace(),
    ...options,
  });
  const bodies = server.requests.map((r) => r.body as JsonObject);
  return { ...run, bodies };
}

const read = (path: string) => ({
  items: [{ type: "function_call" as const, name: "read_file", arguments: { path } }],
});
const say = (text: string) => ({ items: [{ type: "message" as const, text }] });
const inputOf = (body: JsonObject | undefined) => (body?.input ?? []) as JsonObject[];
const textOf = (body: JsonObject | undefined) => JSON.stringify(body?.input ?? "");

describe("the run's history settings take effect", () => {
  const threeReads: Scenario = { turns: [read("a.txt"), read("b.txt"), read("a.txt"), say("done")] };

  it("truncationThreshold and recentCallsToKeep: older calls are folded into one summary", async () => {
    const { frames, bodies } = await onMock(threeReads, {
      mode: "stateless",
      history: { truncation_threshold: 60, recent_calls_to_keep: 1 },
    });
    const folds = ofType(frames, "context_compacted");
    expect(folds.length).toBeGreaterThan(0);
    expect(folds[0]).toMatchObject({ trigger: "threshold", method: "extractive_summary" });
    // The last request: one call kept verbatim, the older ones stand in the summary.
    const last = inputOf(bodies.at(-1));
    expect(last.filter((i) => i.type === "function_call")).toHaveLength(1);
    expect(textOf(bodies.at(-1))).toContain(JSON.stringify(folds.at(-1)?.summary).slice(1, 60));
    expect(ended(frames).reason).toBe("completed");
  });

  it("with the defaults nothing is folded and the requests resend the history as it is", async () => {
    const { frames, bodies } = await onMock(threeReads, { mode: "stateless" });
    expect(ofType(frames, "context_compacted")).toEqual([]);
    expect(inputOf(bodies.at(-1)).filter((i) => i.type === "function_call")).toHaveLength(3);
  });

  it("strategy text-embed: results go as text, calls are left out; the run's own items stay native", async () => {
    const { bodies, result } = await onMock(threeReads, {
      mode: "stateless",
      history: { strategy: "text-embed" },
    });
    const last = inputOf(bodies.at(-1));
    expect(last.some((i) => i.type === "function_call" || i.type === "function_call_output")).toBe(false);
    expect(textOf(bodies.at(-1))).toContain("beta");
    expect(result.items.filter((i) => i.type === "function_call")).toHaveLength(3);
  });

  it("summarizationModel: the summary is asked of that model on the run's provider; the replay reuses it", async () => {
    const scenario: Scenario = {
      turns: [
        read("a.txt"),
        read("b.txt"),
        { expect: { body: { model: "summarizer-1" } }, ...say("SUMMARY: a.txt says alpha.") },
        say("done"),
      ],
    };
    const { frames, bodies, header } = await onMock(scenario, {
      mode: "stateless",
      history: { truncation_threshold: 40, recent_calls_to_keep: 1, summarization_model: "summarizer-1" },
    });
    expect(ofType(frames, "context_compacted")[0]).toMatchObject({
      method: "model_summary",
      model: "summarizer-1",
      summary: "SUMMARY: a.txt says alpha.",
    });
    expect(bodies[2]?.model).toBe("summarizer-1");
    expect(textOf(bodies.at(-1))).toContain("SUMMARY: a.txt says alpha.");
    expect(header.spec.history).toEqual({
      recent_calls_to_keep: 1,
      truncation_threshold: 40,
      strategy: "auto",
      summarization_model: "summarizer-1",
    });
  });
});

describe("a run started from a context", () => {
  it("sends the context before the prompt, with no previous_response_id, and says so after run_started", async () => {
    const context: RunSpecInput["context"] = {
      items: [
        { type: "message", role: "user", content: [{ type: "input_text", text: "My name is Ada." }] },
        {
          type: "message",
          role: "assistant",
          content: [{ type: "output_text", text: "Noted.", annotations: [] }],
        },
      ],
      compiled: {
        bundle_id: "0".repeat(64),
        strategy: "recent_messages_v1",
        item_count: 2,
        token_estimate: 20,
        tokenizer: "estimate",
        runs: 1,
      },
    };
    const { frames, bodies } = await onMock(
      { turns: [say("Your name is Ada.")] },
      { input: "Name?", context },
    );
    expect(frames.map((f) => f.type).slice(0, 2)).toEqual(["run_started", "context_compiled"]);
    expect(frames[1]).toMatchObject(context.compiled);
    expect(bodies[0]?.previous_response_id).toBeUndefined();
    expect(inputOf(bodies[0]).map((i) => (i.content as { text: string }[])[0]?.text)).toEqual([
      "My name is Ada.",
      "Noted.",
      "Name?",
    ]);
  });
});

describe("context overflow: compacted once, then the turn is sent again", () => {
  // a.txt's output is about 300 tokens, b.txt's 150: the follow-up after b.txt no longer fits 400.
  const big = { "a.txt": `${"alpha ".repeat(200)}\n`, "b.txt": `${"beta ".repeat(120)}\n` };

  it("locally: whole oldest turns are summarized, the resend fits and the run completes", async () => {
    server = await createMockServer({
      scenario: { contextWindow: 400, turns: [read("a.txt"), read("b.txt"), say("done")] },
    });
    const provider = createOpenResponsesProvider({
      baseURL: server.url,
      name: "mock",
      retry: { maxRetries: 0 },
    });
    const { frames, result } = await recordAndReplay({
      provider,
      model: "m",
      input: "Read a.txt and b.txt",
      tools: registry(),
      workspace: workspace(big),
    });
    const compacted = ofType(frames, "context_compacted");
    expect(compacted).toHaveLength(1);
    expect(compacted[0]).toMatchObject({
      trigger: "overflow",
      method: "extractive_summary",
      calls_removed: 1,
    });
    expect(compacted[0]?.tokens_after).toBeLessThan(compacted[0]?.tokens_before ?? 0);
    const failed = ofType(frames, "request_failed");
    expect(failed.map((f) => f.code)).toEqual(["context_length_exceeded"]);
    const turn2 = ofType(frames, "request_started").filter((f) => f.turn === 2);
    expect(turn2.map((f) => f.attempt)).toEqual([1, 2]);
    // The resend carries the whole compacted history and chains on nothing.
    expect(turn2[1]?.body.previous_response_id).toBeUndefined();
    expect(result.reason).toBe("completed");
    expect(result.outputText).toBe("done");
  });

  it("with the server's compaction: its output replaces the history; the replay hands it back", async () => {
    const compactedItems = [
      { type: "message", role: "user", content: [{ type: "input_text", text: "go" }] },
      { type: "compaction", id: "cmp_1", encrypted_content: "opaque-1" },
    ];
    const scripts: Script[] = [
      { items: [{ type: "function_call", name: "read_file", arguments: '{"path":"a.txt"}' }] },
      {
        http: {
          status: 400,
          body: {
            error: { type: "invalid_request_error", code: "context_length_exceeded", message: "too long" },
          },
        },
      },
      {
        http: {
          status: 200,
          body: {
            id: "resp_c",
            object: "response.compaction",
            created_at: 1,
            output: compactedItems,
            usage: {},
          },
        },
      },
      { items: [{ type: "message", text: "done" }] },
    ];
    const provider = createScriptedProvider(scripts, { capabilities: { compaction: true }, retries: 0 });
    const { frames, result } = await recordAndReplay({
      provider,
      model: "m",
      input: "go",
      tools: registry(),
      workspace: workspace(),
    });
    expect(ofType(frames, "context_compacted")[0]).toMatchObject({
      trigger: "overflow",
      method: "server_compact",
      output: compactedItems,
    });
    const compactBody = provider.requests[2] as JsonObject;
    expect(Object.keys(compactBody)).toEqual(["model", "input"]);
    expect(inputOf(compactBody).map((i) => i.type)).toEqual([
      "message",
      "function_call",
      "function_call_output",
    ]);
    expect(provider.requests[3]?.input).toEqual(compactedItems);
    expect(provider.requests[3]?.previous_response_id).toBeUndefined();
    expect(result.reason).toBe("completed");
  });

  it("when the server's compaction fails, compacts locally and records why", async () => {
    const provider = createScriptedProvider(
      [
        { items: [{ type: "function_call", name: "read_file", arguments: '{"path":"a.txt"}' }] },
        { items: [{ type: "function_call", name: "read_file", arguments: '{"path":"b.txt"}' }] },
        { http: { status: 400, body: { error: { code: "context_length_exceeded", message: "too long" } } } },
        { http: { status: 404, body: { error: { message: "no such endpoint" } } } },
        { items: [{ type: "message", text: "done" }] },
      ],
      { capabilities: { compaction: true }, retries: 0 },
    );
    const { frames, result } = await recordAndReplay({
      provider,
      model: "m",
      input: "go",
      tools: registry(),
      workspace: workspace(),
    });
    const compacted = ofType(frames, "context_compacted")[0];
    expect(compacted).toMatchObject({ method: "extractive_summary", calls_removed: 1 });
    expect(compacted?.server_error).toMatch(/HTTP 404.*no such endpoint/);
    expect(result.reason).toBe("completed");
  });

  it("a response.failed with context_length_exceeded is compacted too", async () => {
    const provider = createScriptedProvider(
      [
        { items: [{ type: "function_call", name: "read_file", arguments: '{"path":"a.txt"}' }] },
        { items: [{ type: "function_call", name: "read_file", arguments: '{"path":"b.txt"}' }] },
        { status: "failed", error: { code: "context_length_exceeded", message: "too long" } },
        { items: [{ type: "message", text: "done" }] },
      ],
      { retries: 0 },
    );
    const { frames, result } = await recordAndReplay({
      provider,
      model: "m",
      input: "go",
      tools: registry(),
      workspace: workspace(),
    });
    expect(ofType(frames, "context_compacted")).toHaveLength(1);
    expect(result.reason).toBe("completed");
  });

  it("ends with a clear error when nothing can be compacted, and tries once per turn", async () => {
    const tooLong = {
      http: { status: 400, body: { error: { code: "context_length_exceeded", message: "too long" } } },
    };
    const provider = createScriptedProvider([tooLong], { retries: 0 });
    const { frames, result } = await recordAndReplay({
      provider,
      model: "m",
      input: "go",
      tools: registry(),
      workspace: workspace(),
    });
    expect(ofType(frames, "context_compacted")).toEqual([]);
    expect(provider.requests).toHaveLength(1);
    expect(result.reason).toBe("invalid_request");
    expect(result.error?.code).toBe("context_length_exceeded");
    expect(result.error?.message).toMatch(
      /longer than the model's context window and nothing could be compacted/,
    );

    const again = createScriptedProvider(
      [
        { items: [{ type: "function_call", name: "read_file", arguments: '{"path":"a.txt"}' }] },
        { items: [{ type: "function_call", name: "read_file", arguments: '{"path":"b.txt"}' }] },
        tooLong,
      ],
      { retries: 0 },
    );
    const second = await recordAndReplay({
      provider: again,
      model: "m",
      input: "go",
      tools: registry(),
      workspace: workspace(),
    });
    expect(ofType(second.frames, "context_compacted")).toHaveLength(1);
    expect(again.requests).toHaveLength(4); // two turns, the refused one, one resend
    expect(second.result.error?.message).toMatch(/still does not fit after compacting/);
  });
});

describe("runAgentOnThread (the library face of eddy run --thread)", () => {
  it("holds its thread while it runs: a second run on it is thread_busy, and it lets go when it ends", async () => {
    const dir = workspace();
    const store = createThreadStore({ workspace: dir });
    const provider = createScriptedProvider([
      { items: [{ type: "message", text: "first" }] },
      { items: [{ type: "message", text: "second" }] },
    ]);
    // Not iterated yet: the run has not ended, so it holds the thread.
    const first = await runAgentOnThread(
      { model: "m", input: "one", thread: "t" },
      { provider, workspace: dir },
      { store },
    );
    await expect(
      runAgentOnThread({ model: "m", input: "two", thread: "t" }, { provider, workspace: dir }, { store }),
    ).rejects.toMatchObject({ code: "thread_busy" });
    for await (const _ of first) {
    }
    expect((await first.result).outputText).toBe("first");
    const log = await store.read("t");
    expect(log.runs.map((r) => r.prompt.prompt)).toEqual(["one"]);
    const next = await runAgentOnThread(
      { model: "m", input: "two", thread: "t" },
      { provider, workspace: dir },
      { store },
    );
    for await (const _ of next) {
    }
    expect((await next.result).outputText).toBe("second");
  });

  it("compiles the thread into the run's context, appends the outcome, and replays from the recorded context", async () => {
    server = await createMockServer({});
    const provider = createOpenResponsesProvider({ baseURL: server.url, name: "mock" });
    const dir = workspace();
    const store = createThreadStore({ workspace: dir });
    const deps = { provider, tools: registry(), workspace: dir };
    const first = await runAgentOnThread(
      { model: "eddy-demo", input: "My name is Ada.", thread: "t" },
      deps,
      { store },
    );
    for await (const _ of first) {
    }
    expect((await first.result).outputText).toBe("Noted: your name is Ada.");

    const second = await runAgentOnThread(
      { model: "eddy-demo", input: "What is my name?", thread: "t" },
      deps,
      {
        store,
      },
    );
    const header = createTapeHeader(second.spec, { provider });
    const frames: Frame[] = [];
    for await (const f of second) frames.push(f);
    expect((await second.result).outputText).toBe("Your name is Ada.");
    expect(frames[1]).toMatchObject({ type: "context_compiled", thread: "t", runs: 1, item_count: 2 });
    expect(header.spec.context?.items).toHaveLength(2);

    const log = await store.read("t");
    expect(log.runs.map((r) => [r.prompt.prompt, r.outcome?.output_text])).toEqual([
      ["My name is Ada.", "Noted: your name is Ada."],
      ["What is my name?", "Your name is Ada."],
    ]);

    // The replay starts from the recorded context: a changed thread log does not matter.
    await store.append("t", { kind: "prompt", run_id: "run_x", prompt: "My name is Bob.", model: null });
    const replay = await replayTape({ header, frames }, { registry: registry(), workspace: dir });
    expect(replay.verdict).toEqual({ match: true, frames: frames.length });
  });

  it("takes a string prompt only, and records a run that could not start", async () => {
    server = await createMockServer({});
    const provider = createOpenResponsesProvider({ baseURL: server.url, name: "mock" });
    const dir = workspace();
    const store = createThreadStore({ workspace: dir });
    await expect(
      runAgentOnThread(
        { model: "m", input: [{ type: "message", role: "user", content: "hi" }], thread: "t" },
        { provider, workspace: dir },
        { store },
      ),
    ).rejects.toThrow(/prompt as a string/);
    await expect(
      runAgentOnThread(
        { model: "m", input: "hi", thread: "t" },
        { provider, workspace: dir, tools: [], policy: createPolicy({ approve: "ask" }) },
        { store },
      ),
    ).rejects.toThrow(/needs an onApproval handler/);
    const log = await store.read("t");
    expect(log.runs.map((r) => r.outcome?.reason)).toEqual(["not_started"]);
  });
});

describe("a run on a thread keeps no secret in the thread's log", () => {
  it("the prompt, the answer and the items are masked there as in the frames; the model still gets the prompt", async () => {
    const secret = "sk-thread-SECRET-123456";
    const provider = createScriptedProvider([say(`The key is ${secret}, as you said.`)]);
    const ws = workspace();
    const store = createThreadStore({ workspace: ws });
    const handle = await runAgentOnThread(
      { model: "m", input: `my key is ${secret}`, thread: "keys" },
      { provider, tools: [], workspace: ws, secrets: [secret] },
      { store },
    );
    for await (const _ of handle);
    const result = await handle.result;
    expect(result.outputText).toBe("The key is ***, as you said.");
    expect(JSON.stringify(provider.requests[0])).toContain(`my key is ${secret}`);
    const log = readFileSync(join(ws, ".eddy", "threads", "keys.jsonl"), "utf8");
    expect(log).not.toContain(secret);
    expect(log).toContain("my key is ***");
    expect(log).toContain("The key is ***, as you said.");
    const [run] = (await store.read("keys")).runs;
    expect(run?.prompt.prompt).toBe("my key is ***");
  });
});
