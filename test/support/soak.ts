/**
 * The fault soak: many agent runs against the mock server with a random fault on each turn (HTTP
 * errors with and without Retry-After, dropped connections, stalls, in-stream errors, invalid JSON,
 * tiny chunks, keep-alives, CR/CRLF line endings) over Open Responses (SSE and WebSocket mode) and
 * Chat Completions, and
 * tools that are slow, throw, return huge outputs or hang. Every run is checked for the invariants
 * that must hold whatever happened: `seq` contiguous from 0 and `run_ended` last (and once); no
 * call executed twice, none from a response that did not complete; every executed call answered
 * exactly once in the next request; no retry after visible output; the tape replays; the run ends
 * without a hang (no 20 s without a frame); the API key in no frame or tape. `test/soak.test.ts` runs a few dozen;
 * `npm run soak` (scripts/soak.ts) runs 1,000 or more and prints the counts.
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Frame } from "../../src/frames/frame.js";

import { runAgent } from "../../src/loop/run.js";
import { createMockServer, type MockFaults, type Scenario, type ScenarioTurn } from "../../src/mock/index.js";
import { createChatCompletionsProvider } from "../../src/provider/chat-completions/provider.js";
import { createOpenResponsesProvider } from "../../src/provider/open-responses.js";
import type { Provider } from "../../src/provider/provider.js";
import { createTapeHeader } from "../../src/replay/header.js";
import { createTapeRecorder } from "../../src/replay/recorder.js";
import { replayTape } from "../../src/replay/replay.js";
import { parseTape } from "../../src/replay/tape.js";
import { createToolRegistry } from "../../src/tools/registry.js";
import type { ToolDefinition } from "../../src/tools/tool.js";
import { seededRandom } from "./chunking.js";

const KEY = "sk-soak-0123456789SECRET";
/** Per-tool timeout: a hanging tool is cut here. */
const TOOL_TIMEOUT_MS = 300;
/** Idle timeout of the stream: a stall longer than this fails the attempt. */
const IDLE_MS = 250;
/**
 * A run that emits no frame for this long is a hang: every wait in it is bounded far below (the
 * stream's idle and first-byte timeouts, the tools' timeout), so only a hang goes this long without
 * progress. Judged by the silence, not by the run's whole duration: on a loaded machine a run
 * of 2-byte chunks and 300 KB tool outputs legitimately takes over 20 s (seed 7 at load 15).
 */
const SILENCE_LIMIT_MS = 20_000;

const pick = <T>(rnd: () => number, xs: readonly T[]): T => xs[Math.floor(rnd() * xs.length)] as T;

/** The fault kinds, each a function of the generator. */
const FAULTS: Record<string, (rnd: () => number) => MockFaults> = {
  none: () => ({}),
  http429_retry_after: () => ({ httpError: { status: 429, headers: { "retry-after-ms": "5" } } }),
  http500: () => ({ httpError: { status: 500 } }),
  http503_retry_after: () => ({ httpError: { status: 503, headers: { "retry-after": "0" } } }),
  http400: () => ({ httpError: { status: 400 } }),
  drop: (rnd) => ({ dropAfterEvents: Math.floor(rnd() * 6) }),
  stall: (rnd) => ({ stallAfterEvents: { afterEvents: Math.floor(rnd() * 4), ms: rnd() < 0.5 ? 30 : 600 } }),
  error_event: (rnd) => ({ errorEvent: { afterEvents: Math.floor(rnd() * 4) } }),
  invalid_json: (rnd) => ({ invalidJsonAfterEvents: Math.floor(rnd() * 4) }),
  tiny_chunks: (rnd) => ({ chunkBytes: 1 + Math.floor(rnd() * 7) }),
  keep_alive: () => ({ keepAliveEvery: 1 }),
  crlf: () => ({ lineEnding: "\r\n" }),
  cr_no_done: () => ({ lineEnding: "\r", omitDone: true }),
};

const TOOL_KINDS = ["slow", "throws", "huge", "hangs", "fine"] as const;

function soakTools(): ToolDefinition[] {
  const noArgs = { type: "object", properties: {}, additionalProperties: false } as const;
  const tool = (name: string, execute: ToolDefinition["execute"]): ToolDefinition => ({
    name,
    description: `${name} tool`,
    parameters: noArgs,
    execute,
  });
  return [
    tool("slow", async () => {
      await new Promise((r) => setTimeout(r, 40));
      return "slow done";
    }),
    tool("throws", () => {
      throw new Error("the tool broke");
    }),
    tool("huge", () => "x".repeat(300_000)),
    tool(
      "hangs",
      (_args, context) =>
        new Promise((_, reject) =>
          context.signal.addEventListener("abort", () => reject(new Error("aborted"))),
        ),
    ),
    tool("fine", () => "ok"),
  ];
}

/** Open Responses over SSE, Open Responses in WebSocket mode, Chat Completions. */
export type Api = "responses" | "websocket" | "chat";

/** One planned run: its scenario and the fault kinds of its turns. */
export interface SoakPlan {
  seed: number;
  api: Api;
  stateless: boolean;
  /** `after_response` runs no call of a response that did not complete; `eager` runs each call once its item is done. */
  toolExecution: "eager" | "after_response";
  scenario: Scenario;
  faults: string[];
}

/** A random plan: 1–3 tool turns then an answer, each turn with a fault 60% of the time. */
export function plan(seed: number): SoakPlan {
  const rnd = seededRandom(seed);
  const r = rnd();
  const api: Api = r < 0.5 ? "responses" : r < 0.75 ? "websocket" : "chat";
  const turns: ScenarioTurn[] = [];
  const faults: string[] = [];
  const toolTurns = 1 + Math.floor(rnd() * 3);
  for (let i = 0; i <= toolTurns; i++) {
    const kind = rnd() < 0.4 ? "none" : pick(rnd, Object.keys(FAULTS));
    faults.push(kind);
    const items: ScenarioTurn["items"] =
      i < toolTurns
        ? Array.from({ length: 1 + Math.floor(rnd() * 2) }, () => ({
            type: "function_call" as const,
            name: pick(rnd, TOOL_KINDS),
            arguments: {},
          }))
        : [{ type: "message" as const, text: "All done, thanks." }];
    turns.push({ items, faults: (FAULTS[kind] as (r: () => number) => MockFaults)(rnd) });
  }
  // Retries and failures use turns up: the last answer repeats for whatever comes after.
  (turns.at(-1) as ScenarioTurn).repeat = true;
  const stateless = api === "chat" || rnd() < 0.3;
  const toolExecution = rnd() < 0.5 ? "eager" : "after_response";
  return { seed, api, stateless, toolExecution, scenario: { turns }, faults };
}

/** The outcome of one run: its end reason and the invariants it broke (none, normally). */
export interface SoakRun {
  seed: number;
  reason: string;
  violations: string[];
  ms: number;
  /** Executed calls by tool and outcome, e.g. `hangs:failed`. */
  calls: string[];
}

function provider(api: Api, url: string): Provider {
  const options = {
    baseURL: url,
    apiKey: KEY,
    retry: { maxRetries: 2, initialBackoffMs: 5, maxBackoffMs: 20 },
    timeouts: { idleMs: IDLE_MS, firstByteMs: 2_000, connectMs: 2_000 },
  };
  if (api === "chat") return createChatCompletionsProvider({ ...options, name: "soak-chat" });
  if (api === "websocket")
    return createOpenResponsesProvider({ ...options, name: "soak-ws", streamTransport: "websocket" });
  return createOpenResponsesProvider({ ...options, name: "soak" });
}

/** Runs one planned run against a fresh mock server, records its tape, replays it, checks it. */
export async function soakRun(p: SoakPlan): Promise<SoakRun> {
  const dir = mkdtempSync(join(tmpdir(), "eddy-soak-"));
  const mock = await createMockServer({ scenario: p.scenario, apiKey: KEY });
  const started = Date.now();
  const violations: string[] = [];
  let reason = "none";
  const target = provider(p.api, mock.url);
  try {
    const registry = createToolRegistry(soakTools());
    const tape = join(dir, "run.tape");
    const handle = runAgent(
      {
        model: "m",
        input: "soak",
        tool_timeout_ms: TOOL_TIMEOUT_MS,
        tool_execution: p.toolExecution,
        ...(p.stateless ? { mode: "stateless" as const } : {}),
      },
      { provider: target, tools: registry, workspace: dir, secrets: [KEY] },
    );
    const recorder = createTapeRecorder(tape, createTapeHeader(handle.spec, { provider: target }), [KEY]);
    const frames: Frame[] = [];
    let watchdog: NodeJS.Timeout | undefined;
    let silent: (finished: false) => void = () => {};
    const hang = new Promise<false>((resolve) => {
      silent = resolve;
    });
    const progress = () => {
      clearTimeout(watchdog);
      watchdog = setTimeout(() => silent(false), SILENCE_LIMIT_MS).unref();
    };
    progress();
    const collect = (async () => {
      for await (const frame of handle) {
        progress();
        recorder.observer(frame);
        frames.push(frame);
      }
    })();
    const finished = await Promise.race([collect.then(() => true), hang]);
    clearTimeout(watchdog);
    recorder.close();
    if (!finished) {
      violations.push(`no frame for ${SILENCE_LIMIT_MS} ms (after ${frames.length} frames): the run hangs`);
      handle.cancel("soak: no run_ended in time");
      return { seed: p.seed, reason: "hang", violations, ms: Date.now() - started, calls: [] };
    }
    const last = frames.at(-1);
    reason = last?.type === "run_ended" ? last.reason : "none";
    violations.push(...frameViolations(frames, p.toolExecution));
    const text = readFileSync(tape, "utf8");
    if (text.includes(KEY) || JSON.stringify(frames).includes(KEY))
      violations.push("the API key in a frame or the tape");
    const replay = await replayTape(parseTape(text), { registry, workspace: dir });
    if (!replay.verdict.match) violations.push(`the tape does not replay (frame ${replay.verdict.index})`);
    const calls = frames.flatMap((f) =>
      f.type === "tool_ended" ? [`${f.name}:${f.ok ? "ok" : "failed"}`] : [],
    );
    return { seed: p.seed, reason, violations, ms: Date.now() - started, calls };
  } catch (err) {
    violations.push(`threw: ${(err as Error).stack ?? String(err)}`);
    return { seed: p.seed, reason, violations, ms: Date.now() - started, calls: [] };
  } finally {
    await target.close?.();
    await mock.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The invariants a run's frames must hold, whatever the faults. */
export function frameViolations(
  frames: readonly Frame[],
  toolExecution: SoakPlan["toolExecution"] = "after_response",
): string[] {
  const out: string[] = [];
  frames.forEach((f, i) => {
    if (f.seq !== i) out.push(`frame ${i} has seq ${f.seq}`);
  });
  if (frames.at(-1)?.type !== "run_ended") out.push("the last frame is not run_ended");
  if (frames.filter((f) => f.type === "run_ended").length !== 1) out.push("run_ended not exactly once");
  const started = frames.flatMap((f) => (f.type === "tool_started" ? [f.call_id] : []));
  if (new Set(started).size !== started.length) out.push("a call was executed twice");
  const statusOf = new Map(
    frames.flatMap((f) => (f.type === "turn_ended" ? [[f.turn, f.status] as const] : [])),
  );
  // In eager mode a call runs once its item is done, even if the response then fails
  // (docs/decisions.md, "Eager"): only after_response promises no call of an unfinished response.
  for (const f of toolExecution === "eager" ? [] : frames) {
    if (f.type === "tool_call" && statusOf.get(f.turn) !== "completed")
      out.push(`call ${f.call_id} executed from a turn that ended ${statusOf.get(f.turn)}`);
  }
  out.push(...answeredOnce(frames), ...noRetryAfterOutput(frames));
  return out;
}

/** Every call executed in turn t has exactly one output in every request of turn t+1. */
function answeredOnce(frames: readonly Frame[]): string[] {
  const out: string[] = [];
  for (const f of frames) {
    if (f.type !== "request_started" || f.turn === 0) continue;
    const executed = frames.flatMap((g) =>
      g.type === "tool_ended" && g.turn === f.turn - 1 ? [g.call_id] : [],
    );
    const input = Array.isArray(f.body.input) ? (f.body.input as { type?: string; call_id?: string }[]) : [];
    for (const id of executed) {
      const n = input.filter((item) => item.type === "function_call_output" && item.call_id === id).length;
      if (n !== 1) out.push(`call ${id} has ${n} outputs in turn ${f.turn} attempt ${f.attempt}`);
    }
  }
  return out;
}

/** A turn is not retried once text or a call of it was shown. */
function noRetryAfterOutput(frames: readonly Frame[]): string[] {
  const out: string[] = [];
  const shown = new Set<number>();
  for (const f of frames) {
    if (f.type === "output_text_delta" || f.type === "tool_call") shown.add(f.turn);
    if (f.type === "request_started" && f.attempt > 1 && shown.has(f.turn))
      out.push(`turn ${f.turn} retried (attempt ${f.attempt}) after visible output`);
  }
  return out;
}

/** Counts over many runs. */
export interface SoakReport {
  runs: number;
  byApi: Record<string, number>;
  byFault: Record<string, number>;
  byReason: Record<string, number>;
  byCall: Record<string, number>;
  violations: { seed: number; problems: string[] }[];
  maxMs: number;
}

/** Runs `runs` plans from seed `first` on, `concurrency` at a time. */
export async function soak(runs: number, first = 1, concurrency = 4): Promise<SoakReport> {
  const report: SoakReport = {
    runs: 0,
    byApi: {},
    byFault: {},
    byReason: {},
    byCall: {},
    violations: [],
    maxMs: 0,
  };
  const count = (m: Record<string, number>, k: string) => {
    m[k] = (m[k] ?? 0) + 1;
  };
  let next = first;
  const worker = async () => {
    while (next < first + runs) {
      const p = plan(next++);
      const r = await soakRun(p);
      report.runs++;
      count(report.byApi, p.api);
      for (const f of p.faults) count(report.byFault, f);
      count(report.byReason, r.reason);
      for (const c of r.calls) count(report.byCall, c);
      report.maxMs = Math.max(report.maxMs, r.ms);
      if (r.violations.length > 0) report.violations.push({ seed: r.seed, problems: r.violations });
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  return report;
}

/** The report as a few lines. */
export function formatReport(r: SoakReport): string {
  const line = (m: Record<string, number>) =>
    Object.entries(m)
      .sort()
      .map(([k, v]) => `${k} ${v}`)
      .join(", ");
  return [
    `soak: ${r.runs} runs, ${r.violations.length} with invariant violations, slowest ${r.maxMs} ms`,
    `  api: ${line(r.byApi)}`,
    `  faults (per turn): ${line(r.byFault)}`,
    `  run_ended.reason: ${line(r.byReason)}`,
    `  tool calls executed: ${line(r.byCall)}`,
    ...r.violations.slice(0, 10).map((v) => `  seed ${v.seed}: ${v.problems.join("; ")}`),
  ].join("\n");
}
