/**
 * `npm run bench -- shutdown`: how long the end of a run takes, measured on the built CLI as a
 * user's shell runs it (bin/eddy.js, a child process). Four runs are interrupted with SIGINT
 * while busy — a plain run, a run with `--otel` whose collector accepts connections and never
 * answers, a run whose MCP server ignores SIGTERM and keeps a child, a Chat Completions response
 * with 100k tool calls — and the time from the
 * signal to the process's exit is taken; the bar is the CLI contract's 2 s (docs/architecture.md,
 * "The CLI contract"). Two runs complete, without telemetry and with the silent collector: the time
 * from the `run_ended` frame to the exit is what telemetry holds it (bar: about 1 s). Each row is
 * also given as a ratio to a baseline row measured in the same run (the plain run; the completed
 * run without telemetry).
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createMockServer, type MockServer } from "../../src/mock/index.js";
import type { Scenario } from "../../src/mock/scenario.js";
import { cleanEnv } from "../../test/support/cli.js";
import { startCli, until } from "../../test/support/cli-process.js";
import { MCP_TEST_SERVER, newMarker, processesWith } from "../../test/support/mcp.js";
import { startSilentCollector } from "../../test/support/otlp-receiver.js";
import {
  type Benchmark,
  describeEnvironment,
  environment,
  type Headline,
  headlineLines,
  logEnd,
  markdownTable,
  median,
  num,
  quantile,
  textTable,
} from "../harness.js";

interface Cell {
  name: string;
  /** Runs of this row at most (a slow one). @defaultValue the benchmark's rounds */
  rounds?: number;
  /** What is measured, from when. */
  from: string;
  barMs: number;
  /** The row (measured earlier in the same run) this one is compared with, if any. */
  baseline?: string;
  /** One measurement: ms, and whether the run ended as expected (exit code, nothing left). */
  once: () => Promise<{ ms: number; ok: boolean }>;
}

interface Row {
  cell: Cell;
  times: number[];
  ok: number;
}

/** An answer that stalls after a few events, and a slow MCP call, for runs interrupted while busy. */
const STALLING: Scenario = {
  turns: [
    {
      items: [{ type: "message", text: "a slow answer that takes its time" }],
      faults: { stallAfterEvents: { afterEvents: 5, ms: 60_000 } },
      repeat: true,
    },
  ],
};
const SLOW_MCP: Scenario = {
  turns: [
    {
      items: [
        { type: "function_call", name: "stubborn__slow", arguments: { ms: 60_000 }, call_id: "call_s" },
      ],
      repeat: true,
    },
  ],
};

/** A Chat Completions response with this many tool calls, each one fragment (the mock ignores parallel_tool_calls: false). */
function manyCalls(n: number): Scenario {
  const items = Array.from({ length: n }, (_, i) => ({
    type: "function_call" as const,
    name: "read_file",
    arguments: { path: `f${i}.txt` },
    call_id: `call_${i}`,
  }));
  return { turns: [{ items, ignoreToolChoice: true, repeat: true }] };
}
const MANY_CALLS = 100_000;

/** What a row measures: from the signal, or from the end of a completed run, to the exit. */
const SIGINT_EXIT = "SIGINT → exit";
const ENDED_EXIT = "run_ended → exit";

/** Starts `eddy ARGS`, sends SIGINT once `when` shows on stdout, returns ms from the signal to the exit. */
async function interrupted(
  args: string[],
  when: string,
  env: Record<string, string>,
  cwd: string,
): Promise<{ ms: number; code: number | null }> {
  const cli = startCli(args, { cwd, env });
  await until(() => cli.stdout.includes(when), when, 60_000);
  const signalled = performance.now();
  cli.child.kill("SIGINT");
  const { code } = await cli.exited;
  return { ms: performance.now() - signalled, code };
}

function cells(
  url: { stalling: string; mcp: string; done: string; many: string },
  collector: string,
  cwd: string,
  callCount: number,
): Cell[] {
  const base = ["run", "--json", "--model", "m"];
  const delta = '"type":"output_text_delta"';
  const otel = cleanEnv({ OTEL_EXPORTER_OTLP_ENDPOINT: collector });
  return [
    {
      name: "plain run",
      from: SIGINT_EXIT,
      barMs: 2000,
      once: async () => {
        const r = await interrupted([...base, "--base-url", url.stalling, "hi"], delta, cleanEnv(), cwd);
        return { ms: r.ms, ok: r.code === 130 };
      },
    },
    {
      name: "--otel, collector never answers",
      from: SIGINT_EXIT,
      baseline: "plain run",
      barMs: 2000,
      once: async () => {
        const r = await interrupted([...base, "--otel", "--base-url", url.stalling, "hi"], delta, otel, cwd);
        return { ms: r.ms, ok: r.code === 130 };
      },
    },
    {
      name: "MCP server ignores SIGTERM, has a child",
      from: SIGINT_EXIT,
      baseline: "plain run",
      barMs: 2000,
      once: async () => {
        const marker = newMarker();
        const mcp = `stubborn=${process.execPath} ${MCP_TEST_SERVER} --marker ${marker} --stubborn`;
        const args = [...base, "--base-url", url.mcp, "--mcp", mcp, "go"];
        const r = await interrupted(args, '"type":"tool_started"', cleanEnv(), cwd);
        return { ms: r.ms, ok: r.code === 130 && processesWith(marker).length === 0 };
      },
    },
    {
      name: `Chat Completions response with ${num(callCount)} tool calls`,
      from: SIGINT_EXIT,
      baseline: "plain run",
      barMs: 2000,
      rounds: 3,
      once: async () => {
        const args = [...base, "--api", "chat-completions", "--base-url", url.many, "go"];
        const r = await interrupted(args, '"type":"tool_call"', cleanEnv(), cwd);
        // The run may end by itself first (max_tool_calls: the response is cut, src/loop/turn.ts).
        return { ms: r.ms, ok: r.code === 130 || r.code === 3 };
      },
    },
    {
      name: "completed run, no telemetry",
      from: ENDED_EXIT,
      barMs: 1000,
      once: () => completed([...base, "--base-url", url.done, "hi"], cleanEnv(), cwd),
    },
    {
      name: "completed run, --otel, collector never answers",
      from: ENDED_EXIT,
      barMs: 1000,
      baseline: "completed run, no telemetry",
      once: () => completed([...base, "--otel", "--base-url", url.done, "hi"], otel, cwd),
    },
  ];
}

/** Runs `eddy ARGS` to its end; ms from its `run_ended` frame on stdout to the exit, ok = exit 0. */
async function completed(
  args: string[],
  env: Record<string, string>,
  cwd: string,
): Promise<{ ms: number; ok: boolean }> {
  const cli = startCli(args, { cwd, env });
  await until(() => cli.stdout.includes('"type":"run_ended"'), "run_ended", 60_000);
  const ended = performance.now();
  const { code } = await cli.exited;
  return { ms: performance.now() - ended, ok: code === 0 };
}

const HEADER = ["run", "measured", "median ms", "max ms", "x baseline", "bar ms", "runs ok", "within bar"];

function toCells(r: Row, rows: readonly Row[]): string[] {
  const med = median(r.times);
  const base = rows.find((b) => b.cell.name === r.cell.baseline);
  return [
    r.cell.name,
    r.cell.from,
    num(med, 0),
    num(quantile(r.times, 1), 0),
    base === undefined ? "—" : `${num(med / median(base.times), 1)} (${r.cell.baseline})`,
    num(r.cell.barMs, 0),
    `${r.ok}/${r.times.length}`,
    med <= r.cell.barMs ? "yes" : "NO",
  ];
}

export const shutdownBenchmark: Benchmark = {
  name: "shutdown",
  title: "Ctrl-C and the end of a run: time to exit",
  async run(ctx) {
    const started = Date.now();
    const envStart = environment();
    ctx.log(`## ${this.title}\n${describeEnvironment(envStart)}`);
    const rounds = ctx.quick ? 1 : 7;
    const cwd = mkdtempSync(join(tmpdir(), "eddy-bench-shutdown-"));
    writeFileSync(join(cwd, "package.json"), "{}\n");
    const servers: MockServer[] = [];
    const serve = async (scenario: Scenario) => {
      const s = await createMockServer({ scenario });
      servers.push(s);
      return s.url;
    };
    const collector = await startSilentCollector();
    const rows: Row[] = [];
    const callCount = ctx.quick ? 10_000 : MANY_CALLS;
    try {
      const url = {
        stalling: await serve(STALLING),
        mcp: await serve(SLOW_MCP),
        done: await serve({ turns: [{ items: [{ type: "message", text: "done" }], repeat: true }] }),
        many: await serve(manyCalls(callCount)),
      };
      for (const cell of cells(url, collector.url, cwd, callCount)) {
        const row: Row = { cell, times: [], ok: 0 };
        await cell.once(); // warm-up (the first start of the CLI compiles and caches)
        for (let i = 0; i < Math.min(rounds, cell.rounds ?? rounds); i++) {
          const { ms, ok } = await cell.once();
          row.times.push(ms);
          if (ok) row.ok++;
        }
        rows.push(row);
        ctx.log(textTable(HEADER, [toCells(row, rows)]));
      }
    } finally {
      await collector.close();
      for (const s of servers) await s.close();
      rmSync(cwd, { recursive: true, force: true });
    }
    const missed = (r: Row) => median(r.times) > r.cell.barMs || r.ok < r.times.length;
    const verdict = rows.filter(missed).map((r) => `OVER THE BAR OR FAILED: ${r.cell.name}`);
    const { envEnd, seconds } = logEnd(ctx, started, verdict);
    return [
      `## ${this.title}`,
      "",
      describeEnvironment(envStart),
      "",
      `The built CLI (bin/eddy.js) in a child process, against \`eddy mock\`'s server in this process; ${rounds} runs per row after one warm-up. SIGINT rows: the signal is sent once the run is busy (the first text delta of an answer that then stalls; for MCP, the \`tool_started\` of a 60 s call to a server started with \`--stubborn\`: it ignores SIGTERM, outlives its stdin and keeps a child), and the time to the process's exit is taken; runs ok = exit 130 (and no process of the MCP server left). The ${num(callCount)}-call row: the mock streams a Chat Completions response with that many tool calls, one fragment each (\`ignoreToolChoice\`), the signal goes at the first \`tool_call\` frame; the run may end by itself first (the response is cut after the budget + 256 calls, exit 3), which also counts as ok; 3 runs. The collector accepts connections and never answers. The completed rows: a one-turn run without telemetry and with the silent collector, from its \`run_ended\` frame on stdout to the exit (runs ok = exit 0). x baseline = this row's median over the median of the row named, measured earlier in the same run (the plain run for the SIGINT rows, the completed run without telemetry for the completed one). Bars: the CLI contract's 2 s from the signal; about 1 s that telemetry may hold a completed run (src/cli/shutdown.ts).`,
      "",
      markdownTable(
        HEADER,
        rows.map((r) => toCells(r, rows)),
        [1, 4],
      ),
      "",
      `Total wall time ${seconds.toFixed(1)} s; loadavg at end ${envEnd.loadavg}.`,
      "",
      headlineLines([headline(rows, missed, callCount)], envStart),
    ].join("\n");
  },
};

/**
 * README's row: per kind of measurement (SIGINT → exit, run_ended → exit), the row with the worst
 * median (the table's median ms) and the highest max, against the bar; met when no row misses it
 * (the verdict's test: median over the bar, or a run that did not end as expected).
 */
function headline(rows: readonly Row[], missed: (r: Row) => boolean, callCount: number): Headline {
  const seconds = (ms: number) => `${num(ms / 1000, 2)} s`;
  const part = (from: string, label: string) => {
    const group = rows.filter((r) => r.cell.from === from);
    if (group.length === 0) return `${label}: not measured`;
    const worst = group.reduce((a, b) => (median(b.times) > median(a.times) ? b : a));
    const max = Math.max(...group.map((r) => quantile(r.times, 1)));
    const bars = [...new Set(group.map((r) => `${r.cell.barMs / 1000} s`))].join(" / ");
    const failed = group.reduce((sum, r) => sum + r.times.length - r.ok, 0);
    return `${label}: worst median ${seconds(median(worst.times))} (${worst.cell.name}), max ${seconds(max)} (goal: median ≤ ${bars}): ${
      group.some(missed) ? "not met" : "met"
    }${failed > 0 ? ` (${failed} runs did not end as expected)` : ""}`;
  };
  return {
    what: `Ctrl-C → exit (plain run, silent OTel collector, MCP server ignoring SIGTERM, ${num(callCount / 1000)}k-call response); \`run_ended\` → exit (without and with the silent collector)`,
    eddy: `${part(SIGINT_EXIT, "Ctrl-C")}; ${part(ENDED_EXIT, "`run_ended`")}`,
    peers: "—",
  };
}
