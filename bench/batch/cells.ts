/**
 * The cells of the batch benchmark. Every task is the demo model's "What is in package.json?"
 * against `eddy mock` in its own process: request #1 → `read_file({"path":"package.json"})` →
 * the tool reads the file → request #2 → the answer. Two requests and one tool call per run.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { Agent, OpenAIProvider, Runner, tool } from "@openai/agents";
import OpenAI from "openai";
import { z } from "zod";
import { openBatchDir } from "../../src/batch/batch-dir.js";
import { runBatch } from "../../src/batch/pool.js";
import type { BatchTask } from "../../src/batch/task.js";
import { createOpenResponsesProvider } from "../../src/provider/open-responses.js";
import { createBuiltinTools } from "../../src/tools/builtin/index.js";
import { createToolRegistry } from "../../src/tools/registry.js";
import { BIN, cleanEnv } from "../../test/support/cli.js";

export const MODEL = "eddy-demo";

/** What one cell measured. */
export interface CellResult {
  runs: number;
  completed: number;
  wallMs: number;
  /** CPU time of the process(es) running the agents (user + system), ms. */
  cpuMs: number;
  /** CPU time of the mock server during the cell, ms. */
  serverCpuMs: number;
  /** Highest resident set size of a process running the agents, MB. */
  peakRssMb: number;
}

/** The tasks: `n` runs of the same question (ids differ, so each has its own tape). */
export function benchTasks(n: number): BatchTask[] {
  return Array.from({ length: n }, (_, i) => ({
    id: `t${i}`,
    spec: { input: `What is in package.json? (${i})` },
  }));
}

/** CPU seconds (user + system) of a process, from /proc (Linux only; 0 elsewhere). */
export function processCpuMs(pid: number): number {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]?.split(" ") ?? [];
    // utime and stime are fields 14 and 15 of stat(5), in clock ticks (100 a second on Linux).
    return (Number(fields[11]) + Number(fields[12])) * 10;
  } catch {
    return 0;
  }
}

/** Peak resident set size of a process (VmHWM), MB. */
export function processPeakRssMb(pid: number): number {
  try {
    const line = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
    return line === null ? 0 : Number(line[1]) / 1024;
  } catch {
    return 0;
  }
}

/** Samples this process's RSS every 25 ms until stopped; returns the highest, MB. */
function rssSampler(): () => number {
  let peak = process.memoryUsage().rss;
  const timer = setInterval(() => {
    peak = Math.max(peak, process.memoryUsage().rss);
  }, 25);
  return () => {
    clearInterval(timer);
    return Math.max(peak, process.memoryUsage().rss) / 2 ** 20;
  };
}

/** Times `work` in this process: wall, CPU, peak RSS, and the server's CPU meanwhile. */
export async function inProcessCell(
  serverPid: number,
  work: () => Promise<{ runs: number; completed: number }>,
): Promise<CellResult> {
  (globalThis as { gc?: () => void }).gc?.();
  const serverBefore = processCpuMs(serverPid);
  const cpu = process.cpuUsage();
  const stopRss = rssSampler();
  const start = performance.now();
  const { runs, completed } = await work();
  const wallMs = performance.now() - start;
  const used = process.cpuUsage(cpu);
  return {
    runs,
    completed,
    wallMs,
    cpuMs: (used.user + used.system) / 1000,
    serverCpuMs: processCpuMs(serverPid) - serverBefore,
    peakRssMb: stopRss(),
  };
}

/** eddy: `runBatch` at `concurrency`, recording every tape and result line into `dir`. */
export async function eddyBatch(
  baseURL: string,
  workspace: string,
  dir: string,
  tasks: readonly BatchTask[],
  concurrency: number,
): Promise<{ runs: number; completed: number }> {
  const provider = createOpenResponsesProvider({ baseURL });
  const batchDir = openBatchDir(dir);
  const { tools, disabled } = createBuiltinTools();
  const registry = createToolRegistry(tools, { disabled });
  let runs = 0;
  let completed = 0;
  const results = runBatch(tasks, {
    provider,
    spec: { model: MODEL },
    workspace,
    tools: registry,
    concurrency,
    tapes: batchDir.tapes,
  });
  for await (const result of results) {
    batchDir.append(result);
    runs++;
    if (result.reason === "completed") completed++;
  }
  return { runs, completed };
}

/**
 * The Agents SDK sends messages as `{role, content}`; the Open Responses schema the mock checks
 * requires `type: "message"` on them (schemas/openresponses/openapi.json, UserMessageItemParam).
 * Adding it here is the only change to what the SDK sends.
 */
const typedMessages: typeof fetch = (url, init) => {
  if (typeof init?.body !== "string") return fetch(url, init);
  const body = JSON.parse(init.body) as { input?: unknown };
  if (Array.isArray(body.input))
    for (const item of body.input as Record<string, unknown>[])
      if (item.type === undefined && typeof item.role === "string") item.type = "message";
  return fetch(url, { ...init, body: JSON.stringify(body) });
};

/**
 * @openai/agents: `run()` per task in a plain promise pool of `concurrency`, one shared Agent. The
 * client keeps the openai SDK's default retries (2), as eddy keeps its own. The runner has its own
 * model provider bound to this client: the SDK's default provider keeps the first client it was
 * given, so after the loop bench's @openai/agents contender (`npm run bench` runs both in one
 * process) every run here went to the loop's closed server and failed.
 */
export function agentsPool(baseURL: string, workspace: string) {
  const client = new OpenAI({ baseURL, apiKey: "bench", fetch: typedMessages });
  const runner = new Runner({
    modelProvider: new OpenAIProvider({ openAIClient: client }),
    tracingDisabled: true,
  });
  const agent = new Agent({
    name: "bench",
    model: MODEL,
    tools: [
      tool({
        name: "read_file",
        description: "Reads a file of the workspace.",
        parameters: z.object({ path: z.string() }),
        execute: async ({ path }) => readFileSync(join(workspace, path), "utf8"),
      }),
    ],
  });
  return async (tasks: readonly BatchTask[], concurrency: number) => {
    let next = 0;
    let completed = 0;
    const worker = async () => {
      while (next < tasks.length) {
        const task = tasks[next++] as BatchTask;
        // A run that throws counts as not completed, as a failed eddy run does.
        const result = await runner.run(agent, task.spec.input as string).catch(() => undefined);
        if (typeof result?.finalOutput === "string" && result.finalOutput.includes("bench-demo")) completed++;
      }
    };
    await Promise.all(Array.from({ length: concurrency }, worker));
    return { runs: tasks.length, completed };
  };
}

/** A child `eddy` process, its output kept. */
export interface Child {
  child: ChildProcess;
  out: () => string;
  exited: Promise<number | null>;
}

/** Starts `eddy ARGS…` in `cwd`. */
export function startEddy(args: readonly string[], cwd: string): Child {
  const child = spawn(process.execPath, [BIN, ...args], {
    cwd,
    env: cleanEnv(),
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  const keep = (d: Buffer) => {
    // Only the start of the output matters (the URL, "serving the queue"); the rest is dropped.
    if (out.length < 4096) out += d.toString("utf8");
  };
  child.stdout?.on("data", keep);
  child.stderr?.on("data", keep);
  const exited = new Promise<number | null>((resolve) => child.on("close", (code) => resolve(code)));
  return { child, out: () => out, exited };
}

/** Resolves once `test()` holds; rejects after `ms`. */
export async function waitFor(test: () => boolean, what: string, ms = 30_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!test()) {
    if (Date.now() > deadline) throw new Error(`bench: timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}
