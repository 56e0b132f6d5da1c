/**
 * The inputs of the scaling benchmark. Each case makes its input at a size (untimed, and checked
 * once: a run that does not produce what the input implies throws), then returns the timed work
 * for that size. bench/scaling/index.ts runs every case at N and 10N.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openBatchDir } from "../../src/batch/batch-dir.js";
import { runBatch } from "../../src/batch/pool.js";
import { createThreadStore } from "../../src/context/threads.js";
import { prepareThreadRun } from "../../src/context/threads-run.js";
import { ToolHistoryManager } from "../../src/history/tool-history.js";
import { runAgent } from "../../src/loop/run.js";
import { createMockHandler, type Scenario } from "../../src/mock/index.js";
import { createChatCompletionsProvider } from "../../src/provider/chat-completions/provider.js";
import { createOpenResponsesProvider } from "../../src/provider/open-responses.js";
import type { Provider } from "../../src/provider/provider.js";
import { createTapeHeader } from "../../src/replay/header.js";
import { createTapeRecorder } from "../../src/replay/recorder.js";
import { replayTape } from "../../src/replay/replay.js";
import { readTape } from "../../src/replay/tape.js";
import { createBuiltinTools } from "../../src/tools/builtin/index.js";
import { createToolRegistry } from "../../src/tools/registry.js";
import { collectViewInput, loadViewAssets, renderViewPage } from "../../src/view/index.js";
import { generateStream } from "../sse/stream.js";
import {
  type Body,
  bodyOfBytes,
  bodyTransport,
  chatArgumentFragments,
  chatCalls,
  responsesItems,
} from "./streams.js";

/** One input, run at any size. */
export interface ScalingCase {
  /** What grows, e.g. "Chat Completions: tool calls per response". */
  input: string;
  /** The unit of N ("calls", "frames", …). */
  unit: string;
  /** N (the case also runs at 10N). */
  n: number;
  /** N with `--quick`. */
  quickN: number;
  /** What is timed, for the report. */
  what: string;
  /** Makes the input of size `n` (untimed), checks one run of it, and returns the timed work. */
  prepare(n: number, dir: string): Promise<() => Promise<void>>;
}

function check(ok: boolean, what: string): void {
  if (!ok) throw new Error(`scaling benchmark: ${what}`);
}

function registry() {
  const { tools, disabled } = createBuiltinTools();
  return createToolRegistry(tools, { disabled });
}

/** Reads a provider stream to its end; returns the number of calls assembled. */
async function assemble(provider: Provider): Promise<number> {
  let calls = 0;
  const stream = provider.stream(
    { body: { model: "m", input: "go", stream: true }, turn: 0 },
    { onCall: () => calls++ },
  );
  for await (const _frame of stream) {
    // every frame is produced; nothing else is done with it
  }
  const outcome = await stream.result;
  check(outcome.ok, `the stream failed: ${outcome.ok ? "" : outcome.error.message}`);
  return calls;
}

function chatProvider(body: Body): Provider {
  return createChatCompletionsProvider({
    baseURL: "http://scaling.invalid/v1",
    transport: bodyTransport(body),
  });
}

function responsesProvider(body: Body): Provider {
  return createOpenResponsesProvider({
    baseURL: "http://scaling.invalid/v1",
    transport: bodyTransport(body),
  });
}

const chatCallsCase: ScalingCase = {
  input: "Chat Completions: tool calls per response",
  unit: "calls",
  n: 1_000,
  quickN: 200,
  what: "createChatCompletionsProvider over an in-memory body (16 KiB chunks): a response with N tool calls, one fragment each (index, id, name, whole arguments); stream read to its end, every call handed to onCall",
  async prepare(n) {
    const body = chatCalls(n);
    const run = async () => {
      check((await assemble(chatProvider(body))) === n, `expected ${n} calls`);
    };
    await run();
    return run;
  },
};

const chatFragmentsCase: ScalingCase = {
  input: "Chat Completions: argument fragments per call",
  unit: "fragments",
  n: 5_000,
  quickN: 2_000,
  what: "the same provider: one call whose arguments come in N fragments",
  async prepare(n) {
    const body = chatArgumentFragments(n);
    const run = async () => {
      check((await assemble(chatProvider(body))) === 1, "expected 1 call");
    };
    await run();
    return run;
  },
};

const runCallsCase: ScalingCase = {
  input: "Chat Completions: tool calls per response, whole run (32-call budget)",
  unit: "calls",
  n: 1_000,
  quickN: 200,
  what: "runAgent (built-in tools, --max-tool-calls 32, one turn) over the tool-call response above; every frame consumed",
  async prepare(n) {
    const body = chatCalls(n);
    const workspace = mkdtempSync(join(tmpdir(), "eddy-scaling-ws-"));
    const tools = registry();
    const run = async () => {
      const handle = runAgent(
        { model: "m", input: "go", max_turns: 1 },
        { provider: chatProvider(body), tools, workspace },
      );
      for await (const _frame of handle) {
        // consumed
      }
      check((await handle.result).reason === "max_tool_calls", "expected max_tool_calls");
    };
    await run();
    return run;
  },
};

const responsesDeltasCase: ScalingCase = {
  input: "Open Responses: deltas per item",
  unit: "deltas",
  n: 5_000,
  quickN: 500,
  what: "createOpenResponsesProvider (validation on) over bench/sse/stream.ts's generated stream: a message with 80% of the N deltas, a function call with 20%; read to its end",
  async prepare(n) {
    const generated = generateStream(n);
    const body = bodyOfBytes(generated.bytes, generated.events.length);
    const run = async () => {
      check((await assemble(responsesProvider(body))) === 1, "expected 1 call");
    };
    await run();
    return run;
  },
};

const responsesItemsCase: ScalingCase = {
  input: "Open Responses: items per response",
  unit: "items",
  n: 500,
  quickN: 100,
  what: "the same provider: N function_call items (added, one argument delta, arguments.done, output_item.done), response.completed carrying all N",
  async prepare(n) {
    const body = responsesItems(n);
    const run = async () => {
      check((await assemble(responsesProvider(body))) === n, `expected ${n} calls`);
    };
    await run();
    return run;
  },
};

/** A scenario of `turns` tool turns (read_file) and an answer, each with a text of `words` words. */
function longScenario(turns: number, words: number): Scenario {
  const text = Array.from({ length: words }, (_, i) => `word${i}`).join(" ");
  const list: Scenario["turns"] = [];
  for (let t = 0; t < turns; t++)
    list.push({
      items: [
        { type: "message", text },
        {
          type: "function_call",
          name: "read_file",
          arguments: { path: "notes.txt", max_bytes: 1000 + t },
          call_id: `call_${t}`,
        },
      ],
    });
  list.push({ items: [{ type: "message", text }] });
  return { turns: list };
}

/** Records a run of `scenario` (the mock in-process) to `path`; returns the number of frames. */
async function recordTape(path: string, scenario: Scenario, workspace: string): Promise<number> {
  const handler = createMockHandler({ scenario });
  const provider = createOpenResponsesProvider({
    baseURL: "http://mock.invalid/v1",
    name: "mock",
    fetch: (url, init) => handler(new Request(url, init)),
  });
  const handle = runAgent(
    {
      model: "eddy-demo",
      input: "Read the notes, again and again.",
      max_turns: scenario.turns.length + 1,
      max_tool_calls: scenario.turns.length + 1,
    },
    { provider, tools: registry(), workspace },
  );
  const recorder = createTapeRecorder(
    path,
    createTapeHeader(handle.spec, { provider, providerName: "mock", validate: true }),
    [],
  );
  let frames = 0;
  for await (const frame of handle) {
    recorder.observer(frame);
    frames++;
  }
  recorder.close();
  const { reason } = await handle.result;
  check(reason === "completed", `the recorded run ended ${reason}`);
  return frames;
}

/** A tape of about `n` frames: n/500 tool turns (at least 1), each with a 240-word text. */
async function tapeOf(n: number, dir: string): Promise<{ path: string; workspace: string }> {
  const workspace = join(dir, `ws-${n}`);
  mkdirSync(workspace, { recursive: true });
  writeFileSync(join(workspace, "notes.txt"), "remember the milk\n");
  const path = join(dir, `run-${n}.tape`);
  const turns = Math.max(1, Math.round(n / 500));
  await recordTape(path, longScenario(turns, 240), workspace);
  return { path, workspace };
}

const viewCase: ScalingCase = {
  input: "Frames per tape: eddy view",
  unit: "frames",
  n: 2_000,
  quickN: 1_000,
  what: "collectViewInput([tape]) + renderViewPage (read, parse, build the run view, gzip the payload, the page): a recorded mock run of N/500 tool turns, each with a 240-word answer (≈ 500 frames a turn)",
  async prepare(n, dir) {
    const { path } = await tapeOf(n, dir);
    const assets = loadViewAssets();
    const run = async () => {
      const page = renderViewPage(collectViewInput([path]), assets);
      check(page.length > 1000, "expected a page");
    };
    await run();
    return run;
  },
};

const replayCase: ScalingCase = {
  input: "Frames per tape: eddy replay",
  unit: "frames",
  n: 2_000,
  quickN: 1_000,
  what: "readTape + replayTape (recorded tool outputs) of the same tapes, frames compared",
  async prepare(n, dir) {
    const { path, workspace } = await tapeOf(n, dir);
    const tools = registry();
    const run = async () => {
      const { verdict } = await replayTape(readTape(path), { registry: tools, workspace });
      check(verdict.match, "the replay diverged");
    };
    await run();
    return run;
  },
};

/** A thread log of `lines` lines: prompt and outcome records of runs that read a file and answer. */
function threadLog(lines: number): string {
  const out: string[] = [];
  for (let i = 0; out.length < lines; i++) {
    const run_id = `run_${i}`;
    out.push(
      JSON.stringify({
        v: 1,
        kind: "prompt",
        run_id,
        ts: 1_700_000_000_000 + i,
        prompt: `question ${i}`,
        model: "m",
      }),
    );
    const items = [
      { type: "function_call", call_id: `call_${i}`, name: "read_file", arguments: '{"path":"notes.txt"}' },
      { type: "function_call_output", call_id: `call_${i}`, output: '{"tool":"read_file","ok":true}' },
      { type: "message", role: "assistant", content: [{ type: "output_text", text: `answer ${i}` }] },
    ];
    out.push(
      JSON.stringify({
        v: 1,
        kind: "outcome",
        run_id,
        ts: 1_700_000_000_000 + i,
        reason: "completed",
        output_text: `answer ${i}`,
        items,
        usage: null,
      }),
    );
  }
  return `${out.slice(0, lines).join("\n")}\n`;
}

const threadCase: ScalingCase = {
  input: "Lines per thread log",
  unit: "lines",
  n: 2_000,
  quickN: 200,
  what: "a run on the thread, before its first request: createThreadStore + prepareThreadRun (read and parse the log, compile the context bundle within its 32k-token budget, store it, render it, append the prompt), then `eddy threads`' list()",
  async prepare(n, dir) {
    const workspace = join(dir, `thread-${n}`);
    mkdirSync(join(workspace, ".eddy", "threads"), { recursive: true });
    const log = join(workspace, ".eddy", "threads", "t.jsonl");
    const text = threadLog(n);
    const run = async () => {
      writeFileSync(log, text); // the timed run appends a prompt: start each from the same log
      const store = createThreadStore({ workspace });
      const manager = new ToolHistoryManager({ model: "m" });
      const prepared = await prepareThreadRun({
        store,
        thread: "t",
        prompt: "next",
        runId: "run_next",
        model: "m",
        manager,
      });
      check(prepared.contextItems > 0, "expected context items");
      const [summary] = await store.list();
      check(summary?.runs === Math.ceil(n / 2) + 1, `expected ${Math.ceil(n / 2) + 1} runs`);
    };
    await run();
    return run;
  },
};

const batchCase: ScalingCase = {
  input: "Tasks per batch",
  unit: "tasks",
  n: 10,
  quickN: 10,
  what: "runBatch at concurrency 8 against createMockHandler in-process (the demo model's read_file + answer, 2 requests a task), every tape and result line written as `eddy batch` does",
  async prepare(n, dir) {
    const workspace = join(dir, `batch-ws-${n}`);
    mkdirSync(workspace, { recursive: true });
    writeFileSync(
      join(workspace, "package.json"),
      `${JSON.stringify({ name: "bench-demo", version: "1.0.0" })}\n`,
    );
    const tasks = Array.from({ length: n }, (_, i) => ({
      id: `t${i}`,
      spec: { input: `What is in package.json? (${i})` },
    }));
    const tools = registry();
    let round = 0;
    const run = async () => {
      const handler = createMockHandler({});
      const provider = createOpenResponsesProvider({
        baseURL: "http://mock.invalid/v1",
        fetch: (url, init) => handler(new Request(url, init)),
      });
      const out = join(dir, `batch-${n}-${round++}`);
      const batchDir = openBatchDir(out);
      let completed = 0;
      for await (const result of runBatch(tasks, {
        provider,
        spec: { model: "eddy-demo" },
        workspace,
        tools,
        concurrency: 8,
        tapes: batchDir.tapes,
      })) {
        batchDir.append(result);
        if (result.reason === "completed") completed++;
      }
      rmSync(out, { recursive: true, force: true });
      check(completed === n, `expected ${n} completed tasks, got ${completed}`);
    };
    await run();
    return run;
  },
};

/** Every case, in report order. */
export const CASES: readonly ScalingCase[] = [
  chatCallsCase,
  chatFragmentsCase,
  runCallsCase,
  responsesDeltasCase,
  responsesItemsCase,
  viewCase,
  replayCase,
  threadCase,
  batchCase,
];
