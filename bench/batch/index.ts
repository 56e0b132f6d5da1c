/**
 * `npm run bench -- batch`: 1,000 tasks (2 requests + 1 tool call each) against `eddy mock` in its
 * own process — `runBatch` in one process at concurrency 1, 8, 32 and 128 (tapes and results
 * written as `eddy batch` does), the same through `eddy batch --queue` with 2 and 4 `eddy worker`
 * processes on one redis-server, and `@openai/agents` `run()` in a plain promise pool at the same
 * concurrencies. Reported: runs/s, CPU per run (the agents' process(es); the server's apart), peak
 * RSS.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { cpus, tmpdir } from "node:os";
import { join } from "node:path";
import { HAVE_REDIS, startRedis } from "../../test/support/redis.js";
import {
  type Benchmark,
  describeEnvironment,
  environment,
  type Headline,
  headlineLines,
  logEnd,
  markdownTable,
  num,
  numRange,
  textTable,
} from "../harness.js";
import {
  agentsPool,
  benchTasks,
  type CellResult,
  eddyBatch,
  inProcessCell,
  MODEL,
  processCpuMs,
  processPeakRssMb,
  startEddy,
  waitFor,
} from "./cells.js";

const CONCURRENCY = [1, 8, 32, 128] as const;
const WORKERS = [2, 4] as const;
/** Runs at once per `eddy worker` process. */
const PER_WORKER = 32;

const EDDY = "eddy runBatch";
const AGENTS = "@openai/agents run()";
const QUEUED = "eddy batch --queue + eddy worker";

interface Row {
  contender: string;
  setup: string;
  cell: CellResult;
  /** `eddy worker` processes (the queue rows). */
  workers?: number;
}

const HEADER = [
  "contender",
  "setup",
  "runs ok",
  "wall s",
  "runs/s",
  "CPU ms/run",
  "server CPU ms/run",
  "peak RSS MB",
];

const HEADER_WITH_CEILING = [...HEADER, "ceiling runs/s"];

/** Runs/s this machine's cores allow at the cell's CPU cost per run (client + server). */
function ceiling(cell: CellResult): number {
  return (cpus().length * 1000) / ((cell.cpuMs + cell.serverCpuMs) / cell.runs);
}

function toCells(r: Row): string[] {
  const { cell } = r;
  return [
    r.contender,
    r.setup,
    `${cell.completed}/${cell.runs}`,
    num(cell.wallMs / 1000, 1),
    num(cell.runs / (cell.wallMs / 1000), 0),
    num(cell.cpuMs / cell.runs, 2),
    num(cell.serverCpuMs / cell.runs, 2),
    num(cell.peakRssMb, 0),
  ];
}

export const batchBenchmark: Benchmark = {
  name: "batch",
  title: "Batch: 1,000 runs (2 requests + 1 tool call each) against eddy mock",
  async run(ctx) {
    const started = Date.now();
    const envStart = environment();
    const n = ctx.quick ? 100 : 1000;
    ctx.log(`## ${this.title}\n${describeEnvironment(envStart)}`);
    const root = mkdtempSync(join(tmpdir(), "eddy-bench-batch-"));
    const workspace = join(root, "workspace");
    mkdirSync(workspace);
    writeFileSync(
      join(workspace, "package.json"),
      `${JSON.stringify({ name: "bench-demo", version: "1.0.0" })}\n`,
    );
    const mock = startEddy(["mock"], root);
    const rows: Row[] = [];
    try {
      await waitFor(() => /http:\/\/\S+/.test(mock.out()), "eddy mock to listen");
      const url = (/http:\/\/\S+/.exec(mock.out()) as RegExpExecArray)[0];
      const pid = mock.child.pid as number;
      const tasks = benchTasks(n);
      const agents = agentsPool(url, workspace);
      for (const c of CONCURRENCY) {
        const dir = join(root, `local-${c}`);
        const eddy = await inProcessCell(pid, () => eddyBatch(url, workspace, dir, tasks, c));
        rows.push({ contender: EDDY, setup: `1 process, concurrency ${c}`, cell: eddy });
        ctx.log(textTable(HEADER, [toCells(rows.at(-1) as Row)]));
        const peer = await inProcessCell(pid, () => agents(tasks, c));
        rows.push({ contender: AGENTS, setup: `promise pool, concurrency ${c}`, cell: peer });
        ctx.log(textTable(HEADER, [toCells(rows.at(-1) as Row)]));
      }
      if (HAVE_REDIS)
        for (const w of WORKERS) {
          rows.push(await queuedCell(url, pid, root, workspace, n, w));
          ctx.log(textTable(HEADER, [toCells(rows.at(-1) as Row)]));
        }
      else ctx.log("redis-server is not installed: the worker rows are skipped");
    } finally {
      mock.child.kill("SIGINT");
      await mock.exited;
      rmSync(root, { recursive: true, force: true });
    }
    const verdict = rows
      .filter((r) => r.cell.completed !== r.cell.runs)
      .map((r) => `FAILED RUNS: ${r.contender} ${r.setup}`);
    const { envEnd, seconds } = logEnd(ctx, started, verdict);
    return report(this.title, envStart, rows, n, { envEnd: envEnd.loadavg, seconds });
  },
};

/** `eddy batch --queue` with `workers` `eddy worker` processes (each `--concurrency PER_WORKER`). */
async function queuedCell(
  url: string,
  serverPid: number,
  root: string,
  workspace: string,
  n: number,
  workers: number,
): Promise<Row> {
  const redis = await startRedis();
  const cwd = join(root, `queue-${workers}`);
  mkdirSync(cwd);
  const lines = benchTasks(n).map((t) => JSON.stringify({ id: t.id, prompt: t.spec.input }));
  writeFileSync(join(cwd, "tasks.jsonl"), `${lines.join("\n")}\n`);
  const args = ["--queue", redis.url, "--base-url", url, "--model", MODEL, "--workspace", workspace];
  const pool = Array.from({ length: workers }, () =>
    startEddy(["worker", ...args, "--concurrency", String(PER_WORKER)], cwd),
  );
  try {
    await waitFor(() => pool.every((p) => p.out().includes("serving the queue")), "the workers");
    const cpuBefore = pool.map((p) => processCpuMs(p.child.pid as number));
    const serverBefore = processCpuMs(serverPid);
    const start = performance.now();
    const coordinator = startEddy(["batch", "tasks.jsonl", "--out", "out", "--queue", redis.url], cwd);
    const code = await coordinator.exited;
    const wallMs = performance.now() - start;
    const cpuMs = pool.reduce(
      (sum, p, i) => sum + processCpuMs(p.child.pid as number) - (cpuBefore[i] as number),
      0,
    );
    const results = readFileSync(join(cwd, "out", "results.jsonl"), "utf8")
      .trim()
      .split("\n");
    const completed = results.filter(
      (l) => (JSON.parse(l) as { reason: string }).reason === "completed",
    ).length;
    return {
      contender: QUEUED,
      workers,
      setup: `${workers} workers × concurrency ${PER_WORKER}, one redis-server${code === 0 ? "" : ` (exit ${code})`}`,
      cell: {
        runs: n,
        completed,
        wallMs,
        cpuMs,
        serverCpuMs: processCpuMs(serverPid) - serverBefore,
        peakRssMb: Math.max(...pool.map((p) => processPeakRssMb(p.child.pid as number))),
      },
    };
  } finally {
    for (const p of pool) p.child.kill("SIGINT");
    await Promise.all(pool.map((p) => p.exited));
    await redis.stop();
  }
}

function report(
  title: string,
  env: ReturnType<typeof environment>,
  rows: readonly Row[],
  n: number,
  end: { envEnd: string; seconds: number },
): string {
  return [
    `## ${title}`,
    "",
    describeEnvironment(env),
    "",
    `Work: ${n} tasks, each the demo model's "What is in package.json? (i)": request #1 → \`read_file({"path":"package.json"})\` → the tool reads the file → request #2 → the answer. Server: \`eddy mock\` in its own process (node:http on 127.0.0.1). eddy in one process: \`runBatch\` with the built-in tools, chained (previous_response_id), every tape and result line written to disk as \`eddy batch\` does. @openai/agents: one Agent with a zod \`read_file\` tool, \`run(agent, prompt)\` (not streamed: the mock answers it with one JSON body, which costs the server less per run than eddy's SSE streams) per task in a plain promise pool, tracing off. Queue rows: \`eddy batch --queue\` (wall time includes the coordinator's start, ~0.3 s) with ${WORKERS.join(" or ")} \`eddy worker\` processes at \`--concurrency ${PER_WORKER}\` on one redis-server; every tape travels through Redis. One pass per cell, cells in the order shown.`,
    "",
    "CPU ms/run = user + system CPU of the process(es) running the agents (this process, or all workers; not the coordinator or redis-server) over the cell / runs; server CPU ms/run = the mock's; peak RSS = the highest resident set size sampled during the cell (this process, which runs both in-process contenders, so it is a ceiling; for workers, the largest worker's VmHWM). ceiling = the runs/s the machine's cores would allow if they did nothing else: cores × 1000 / (CPU + server CPU ms per run).",
    "",
    markdownTable(
      HEADER_WITH_CEILING,
      rows.map((r) => [...toCells(r), num(ceiling(r.cell), 0)]),
      [1],
    ),
    "",
    "Where it stops scaling, and why: the mock answers at once, so a run never waits on the model and the work is CPU alone — the agents' process and the mock's share this machine's cores. Once a few runs overlap (concurrency 8) the cores are busy and more runs at once add nothing; the ceiling column is that limit. The wall columns move with the machine's other load (loadavg above); the CPU columns are the steadier comparison. Worker processes add CPU per run (BullMQ's job bookkeeping, every tape line sent to a Redis stream, a connection per worker) and compete for the same cores here: they pay off when they run on more machines, or against a real provider, where a run spends seconds waiting for the model and runs/s grows with runs in flight until the rate limit (--rpm/--tpm) holds it.",
    "",
    `Total wall time ${end.seconds.toFixed(1)} s; loadavg at end ${end.envEnd}.`,
    "",
    headlineLines([headline(rows, n)], env),
  ].join("\n");
}

/** README's row: CPU ms per run in the agents' process(es) (the table's CPU ms/run), eddy and the peer. */
function headline(rows: readonly Row[], n: number): Headline {
  const of = (contender: string) => rows.filter((r) => r.contender === contender);
  const perRun = (r: Row) => num(r.cell.cpuMs / r.cell.runs, 1);
  const failed = (group: readonly Row[]) => {
    const runs = group.reduce((sum, r) => sum + r.cell.runs, 0);
    const ok = group.reduce((sum, r) => sum + r.cell.completed, 0);
    return ok === runs ? "" : ` (${num(runs - ok)} of ${num(runs)} runs failed)`;
  };
  /** The lowest–highest CPU ms per run of `group`, and its failed runs, if any. */
  const span = (group: readonly Row[]) => {
    return `${numRange(
      group.map((r) => r.cell.cpuMs / r.cell.runs),
      1,
    )} ms${failed(group)}`;
  };
  const concurrency = `concurrency ${CONCURRENCY[0]}–${CONCURRENCY.at(-1)}`;
  const queued = of(QUEUED);
  return {
    what: `batch: ${num(n)} runs (2 requests + 1 tool call each) against \`eddy mock\`, CPU per run in the agents' process`,
    eddy: `${span(of(EDDY))} (\`runBatch\`, ${concurrency}); ${
      queued.length === 0
        ? "`eddy worker`s not measured (no redis-server)"
        : `${queued.map(perRun).join(" / ")} ms per run over ${queued.map((r) => r.workers).join(" / ")} \`eddy worker\`s on Redis${failed(queued)}`
    }`,
    peers: `\`@openai/agents\` \`run()\` in a promise pool ${span(of(AGENTS))} (${concurrency})`,
  };
}
