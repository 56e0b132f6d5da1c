/**
 * `npm run bench -- loop`: one agent turn (issue 5) — 2 streamed requests + 1 tool call — over
 * HTTP to a replay server in a worker thread (node:http on 127.0.0.1) and over one WebSocket to the
 * same server (WebSocket mode, issue 12), and in-process without a socket. Reported per contender:
 * ms/run, x floor per round, overhead vs the floor, TTFT, where the time goes (A–E, measure.ts),
 * eddy's own overhead per turn, and what WebSocket mode saves per turn. Method as in
 * bench/README.md.
 */
import { isDeepStrictEqual } from "node:util";
import {
  type BenchContext,
  type Benchmark,
  describeEnvironment,
  environment,
  type Headline,
  headlineLines,
  logEnd,
  markdownTable,
  median,
  num,
  pct,
  textTable,
} from "../harness.js";
import { startReplayServer } from "../provider/replay-server.js";
import { type AloneSummary, measureAlone } from "./alone.js";
import {
  AGENTS,
  EDDY_OFF,
  EDDY_ON,
  EDDY_WS,
  FLOOR_LOOP,
  FLOOR_LOOP_EDDY_TRANSPORT,
  FLOOR_LOOP_NODE,
  FLOOR_LOOP_WS,
  type LoopContender,
  loopContenders,
  noopLog,
  SDK_LOOP,
} from "./contenders.js";
import { type Footprint, footprintTable, measureFootprint } from "./footprint.js";
import { EDDY_JSON_SCHEMA, EDDY_MOCK, EDDY_OTEL, inProcessContenders } from "./in-process.js";
import {
  iqrOf,
  type LoopSamples,
  measureBackToBack,
  measureLoop,
  medianOf,
  paired,
  type RunSample,
  roundMedians,
  runMinusServer,
} from "./measure.js";
import { ANSWER, CALL_ID, type Writes } from "./responses.js";

/** Issue 5: eddy's own overhead per turn, excluding the server's time, under this (ns). */
const TARGET_OVERHEAD_NS = 1_000_000;
/** Issue 23: a turn over HTTP at most this many times the minimal node:http loop's (validation on). */
const TARGET_RATIO_NODE = 1.3;

interface Plan {
  rounds: number;
  runsPerRound: number;
  warmupRuns: number;
}
const FULL: {
  http: Plan;
  alone: Plan;
  memory: Plan;
  backToBack: { blocks: number; runs: number; warmupRuns: number };
  footprint: { runs: number; warmup: number };
} = {
  http: { rounds: 12, runsPerRound: 100, warmupRuns: 100 },
  alone: { rounds: 12, runsPerRound: 100, warmupRuns: 200 },
  memory: { rounds: 12, runsPerRound: 100, warmupRuns: 200 },
  backToBack: { blocks: 5, runs: 200, warmupRuns: 200 },
  footprint: { runs: 20, warmup: 300 },
};
const QUICK: typeof FULL = {
  http: { rounds: 2, runsPerRound: 5, warmupRuns: 5 },
  alone: { rounds: 2, runsPerRound: 5, warmupRuns: 5 },
  memory: { rounds: 2, runsPerRound: 10, warmupRuns: 10 },
  backToBack: { blocks: 2, runs: 10, warmupRuns: 10 },
  footprint: { runs: 2, warmup: 5 },
};

interface Pass {
  writes: Writes;
  samples: LoopSamples[];
  contenders: LoopContender[];
  loadavg: string;
}

const WRITES_WHAT: Record<Writes, string> = {
  event:
    "each SSE event (over WebSocket: each event's message) its own socket write (the client parses while the server still writes, so part of a slow client's parsing hides inside the server windows B and D)",
  whole:
    "each response in one socket write (over WebSocket: all its messages, the socket corked around them; all client parsing is outside B and D)",
};

export const loopBenchmark: Benchmark = {
  name: "loop",
  title: "One agent turn: 2 streamed requests + 1 tool call",
  async run(ctx) {
    const started = Date.now();
    const envStart = environment();
    const plan = ctx.quick ? QUICK : FULL;
    ctx.log(`## ${this.title}\n${describeEnvironment(envStart)}`);
    const http = await measureOverHttp(ctx, plan.http);
    ctx.log(
      `\neach in a process of its own: warm-up and ${plan.alone.rounds} rounds × ${plan.alone.runsPerRound} runs …`,
    );
    const alone = await measureAlone([EDDY_ON, SDK_LOOP, AGENTS], plan.alone);
    ctx.log(aloneLines(alone).join("\n"));
    ctx.log(`\neach turn's footprint (V8 coverage counts, ${plan.footprint.runs} turns) …`);
    const footprint = await measureFootprint(plan.footprint);
    ctx.log(footprintTable(footprint).join("\n"));
    const memory = await measureInProcess(ctx, plan);
    const webSocket = webSocketSavings(http.passes);
    const goals = targets(http.passes, memory.samples);
    const verdict = [...goals.lines, ...aloneLines(alone)];
    ctx.log(`\n${webSocket.lines.join("\n")}`);
    const { envEnd, seconds } = logEnd(ctx, started, verdict);
    return [
      `## ${this.title}`,
      "",
      describeEnvironment(envStart),
      "",
      ...httpSection(plan.http, http.passes, verdict, webSocket.lines),
      ...footprintSection(plan.footprint, footprint),
      ...inProcessSection(plan, memory),
      "### Correctness before timing (3 runs each)",
      "",
      'ok = exact final text and streamed deltas, noop run once with {"n":1}, exactly 2 requests: #1 without and #2 with the `function_call_output` for the call, chained on response #1\'s id when previous_response_id is used; over WebSocket, at most one connection opened for the 3 runs. req B = the request body (over WebSocket: the `response.create` message; HTTP request headers not counted).',
      "",
      markdownTable(CORRECTNESS_HEADER, http.correctness, [1, 5]),
      "",
      markdownTable(CORRECTNESS_HEADER, memory.check.rows, [1, 5]),
      "",
      `Total wall time ${seconds.toFixed(1)} s; loadavg at end ${envEnd.loadavg}.`,
      "",
      headlineLines([...headlines(goals, webSocket, alone), footprintHeadline(footprint)], envStart),
    ].join("\n");
  },
};

/** The passes over HTTP and WebSocket to the replay server, one per write mode, each checked first. */
async function measureOverHttp(
  ctx: BenchContext,
  plan: Plan,
): Promise<{ passes: Pass[]; correctness: string[][] }> {
  const passes: Pass[] = [];
  let correctness: string[][] = [];
  const server = await startReplayServer(new URL("./responses.ts", import.meta.url), "event");
  try {
    const contenders = loopContenders(server.origin);
    for (const writes of ["event", "whole"] as const) {
      await server.reinit(writes);
      const check = await checkHttp(contenders, server);
      if (passes.length === 0) {
        correctness = check.rows;
        ctx.log(`\n### Correctness (3 runs each)\n${textTable(CORRECTNESS_HEADER, check.rows)}`);
      }
      if (check.failed.length > 0) throw new Error(`loop contenders failed: ${check.failed.join("; ")}`);
      ctx.log(`\nwrites ${writes}: warm-up and ${plan.rounds} rounds × ${plan.runsPerRound} runs …`);
      const samples = await measureLoop(contenders, { ...plan, seed: 5, server });
      passes.push({ writes, samples, contenders, loadavg: environment().loadavg });
      ctx.log(`\n${textTable(RESULT_HEADER, resultRows(samples))}`);
      ctx.log(`\n${textTable(SEGMENT_HEADER, segmentRows(samples))}`);
    }
  } finally {
    await server.close();
  }
  return { passes, correctness };
}

interface InProcess {
  contenders: LoopContender[];
  check: { rows: string[][]; failed: string[] };
  samples: LoopSamples[];
  backToBack: Map<string, number[]>;
  side: LoopSamples[];
}

/** The in-process cells (no socket): the core rows, the same back to back, and the side rows. */
async function measureInProcess(ctx: BenchContext, plan: typeof FULL): Promise<InProcess> {
  ctx.log(
    `\nin-process (no socket): warm-up and ${plan.memory.rounds} rounds × ${plan.memory.runsPerRound} runs …`,
  );
  const memory = inProcessContenders();
  const check = await checkInProcess(memory.contenders, memory.log);
  ctx.log(textTable(CORRECTNESS_HEADER, check.rows));
  if (check.failed.length > 0) throw new Error(`in-process contenders failed: ${check.failed.join("; ")}`);
  // The side rows apart: one compiles an ajv validator per run, the other runs the mock too, and
  // their garbage would land on the core rows' runs.
  const pick = (names: readonly string[]) => memory.contenders.filter((c) => names.includes(c.name));
  const samples = await measureLoop(pick([FLOOR_LOOP, EDDY_ON, EDDY_OFF]), { ...plan.memory, seed: 9 });
  ctx.log(`\n${textTable(memoryHeader("floor"), memoryRows(samples, FLOOR_LOOP))}`);
  const backToBack = await measureBackToBack(pick([FLOOR_LOOP, EDDY_ON, EDDY_OFF]), plan.backToBack);
  ctx.log(`\n${textTable(BACK_TO_BACK_HEADER, backToBackRows(backToBack))}`);
  const side = await measureLoop(pick([EDDY_ON, EDDY_JSON_SCHEMA, EDDY_MOCK, EDDY_OTEL]), {
    ...plan.memory,
    seed: 10,
  });
  ctx.log(`\n${textTable(memoryHeader("eddy (on)"), memoryRows(side, EDDY_ON))}`);
  return { contenders: memory.contenders, check, samples, backToBack, side };
}

/** The RESULTS.md lines of the passes over sockets: work, method, contenders, targets, results. */
function httpSection(plan: Plan, passes: readonly Pass[], verdict: string[], webSocket: string[]): string[] {
  const first = passes[0] as Pass;
  return [
    'Work: response #1 = 9 events + `[DONE]`: a function_call `noop({"n":1})` in 3 argument deltas; response #2 = 48 events + `[DONE]`: 40 `output_text.delta` of 4 characters, a 160-character answer. Server: node:http on 127.0.0.1 in a worker thread (bench/provider/replay-server.ts); it picks the response by request content (a `function_call_output` in `input` → #2) and its snapshots echo the request\'s model, instructions, tools and previous_response_id. WebSocket mode: a `ws` WebSocketServer on the same listener answers each `response.create` message with the same events, one JSON message each (no `[DONE]`), picked the same way.',
    "",
    `Method: warm-up ${plan.warmupRuns} runs per contender, then ${plan.rounds} rounds × ${plan.runsPerRound} runs per contender; inside a round the contenders alternate run by run in a fresh shuffled order each time; no forced GC inside a round. ms/run = median of all runs; IQR = (p75−p25)/median; x floor = median over rounds of median(contender)/median(floor-loop) in the same round [min–max]; overhead = median over rounds of median(contender) − median(floor-loop) in the same round [min–max]. Two passes: writes \`event\` (${WRITES_WHAT.event}) and writes \`whole\` (${WRITES_WHAT.whole}).`,
    "",
    markdownTable(
      ["contender", "version", "what it does"],
      first.contenders.map((c) => [c.name, c.version, c.what.replaceAll("|", "\\|")]),
      [1, 2],
    ),
    "",
    "### Targets (issues 5 and 23)",
    "",
    "eddy's own overhead per turn (one turn = one full run: both requests and the tool call) = the time eddy spends outside the server's request windows minus what the minimal client over the same transport spends there: median over rounds of [median run−(B+D) of eddy − median run−(B+D) of floor-loop node:http] in the same round, for both write modes; and in-process (no socket, no server), median over rounds of [median run of eddy − median run of floor-loop]. The target is met when all three are under 1 ms. The turn (issue 23): median over rounds of median run of eddy (validate on) ÷ median run of floor-loop node:http in the same round, per write mode; met at 1.3× or less.",
    "",
    ...verdict.map((v) => `- ${v}`),
    "",
    "The same turn with each contender in a node process of its own (bench/loop/alone.ts): the process runs only floor-loop node:http and that contender, alternating run by run in shuffled order against a replay server of its own (writes `event`), with the same warm-up and rounds; x floor = median over rounds of median(contender) ÷ median(floor) in the same round [min..max]. In the rotation above each contender runs with eight others' code in the CPU's caches and the JIT's shared state; a program that uses eddy runs eddy's code and its own.",
    "",
    "### WebSocket mode (issue 12)",
    "",
    "Both transports keep their connection across runs (eddy's node:http transport a keep-alive socket, WebSocket mode one connection from its pool), so what WebSocket mode saves is the per-request cost of HTTP — a request's headers written and parsed, a response's headers, chunked encoding and SSE framing — against one message each way, not a TCP handshake. What it saves per turn against eddy over HTTP: median over rounds of [median run of eddy (validate on) over HTTP − median run of eddy websocket (validate on)] in the same round [min..max], and the ratio the same way; the floors likewise (floor-loop node:http − floor-loop websocket); eddy's own overhead over WebSocket = median over rounds of [median run−(B+D) of eddy websocket − that of floor-loop websocket].",
    "",
    ...webSocket.map((v) => `- ${v}`),
    "",
    ...passes.flatMap((p) => passSection(p)),
  ];
}

/** The RESULTS.md lines of one pass over sockets. */
function passSection(p: Pass): string[] {
  return [
    `### Over HTTP and WebSocket, writes \`${p.writes}\`: results (${p.samples[0]?.rounds.length ?? 0} rounds × ${p.samples[0]?.rounds[0]?.length ?? 0} runs per contender; loadavg after the pass ${p.loadavg})`,
    "",
    "TTFT = run start → the answer's first text delta reaching the consumer; last-hop = the server wrote that delta → the consumer got it. server = B + D (worker time for both requests); share = median of server/run.",
    "",
    markdownTable(RESULT_HEADER, resultRows(p.samples)),
    "",
    `Where the time goes, median µs per run (A = run start → request #1 at the server; B = server #1; C = response #1 written → request #2 at the server: parse #1, run the tool, build #2; D = server #2; E = response #2 written → run resolved). run−server = run − (B + D), per run; − floor node:http = median over rounds of the difference of run−server medians to floor-loop node:http in the same round.`,
    "",
    markdownTable(SEGMENT_HEADER, segmentRows(p.samples)),
    "",
    "Per-round medians, ms per run (a drift across rounds is machine noise):",
    "",
    markdownTable(...perRoundTable(p.samples)),
    "",
  ];
}

/** The RESULTS.md lines of the in-process cells. */
function inProcessSection(plan: typeof FULL, memory: InProcess): string[] {
  return [
    "### In-process (no socket)",
    "",
    `The provider's transport returns pre-generated replies (one chunk per SSE event, each behind an await); the floor-loop reads the same chunks. ${plan.memory.rounds} rounds × ${plan.memory.runsPerRound} runs per contender after ${plan.memory.warmupRuns} warm-up runs, alternating as above. − floor = median over rounds of the difference of medians in the same round. Absolute times on this VM move by up to ~1.5× from one process to the next (JIT and memory layout); compare rows of one table.`,
    "",
    markdownTable(
      ["contender", "what it does"],
      memory.contenders.map((c) => [c.name, c.what.replaceAll("|", "\\|")]),
      [1],
    ),
    "",
    markdownTable(memoryHeader("floor"), memoryRows(memory.samples, FLOOR_LOOP)),
    "",
    `The same three back to back instead of alternating: each alone for ${plan.backToBack.runs} runs in a row after ${plan.backToBack.warmupRuns} warm-up runs, in ${plan.backToBack.blocks} blocks (floor, eddy on, eddy off, floor, …); µs/run = median over blocks of each block's median; − floor = median over blocks of the difference. Not the method of the tables above, and not used for the target: it shows how much of eddy's time depends on what ran just before it (caches, JIT state).`,
    "",
    markdownTable(BACK_TO_BACK_HEADER, backToBackRows(memory.backToBack)),
    "",
    "Side rows, measured in a cell of their own against eddy (validate on) (the JSON Schema row compiles an ajv validator on every run, and the mock row runs the mock server's code too; their garbage would otherwise land on the rows above). The OTel row is the cost of the OpenTelemetry observer when the program registered no tracer provider:",
    "",
    markdownTable(memoryHeader("eddy (on)"), memoryRows(memory.side, EDDY_ON)),
    "",
  ];
}

const CORRECTNESS_HEADER = [
  "contender",
  "result",
  "req #1 B",
  "req #2 B",
  "#2 items",
  "request #2 carries the history as",
];

type Json = Record<string, unknown>;

interface CheckedRun {
  problem?: string;
  bodies: string[];
  firstResponseId: string;
}

/** Runs a contender 3 times, checking every run; `run` returns the bodies it sent. */
async function checkContender(
  contender: LoopContender,
  run: () => Promise<{ text: string; streamed: string; bodies: string[]; firstResponseId: string }>,
): Promise<{ row: string[]; problem?: string }> {
  let last: CheckedRun | undefined;
  for (let i = 0; i < 3; i++) {
    noopLog.calls = [];
    noopLog.recording = true;
    let checked: CheckedRun;
    try {
      const { text, streamed, bodies, firstResponseId } = await run();
      checked = { bodies, firstResponseId };
      const problem = checkRun(text, streamed, bodies, firstResponseId);
      if (problem !== undefined) checked.problem = problem;
    } catch (err) {
      checked = {
        problem: `threw ${err instanceof Error ? err.message : String(err)}`,
        bodies: [],
        firstResponseId: "",
      };
    }
    noopLog.recording = false;
    last = checked;
    if (checked.problem !== undefined) break;
  }
  const { problem, bodies, firstResponseId } = last as CheckedRun;
  const second = bodies[1] === undefined ? undefined : (JSON.parse(bodies[1]) as Json);
  const items = Array.isArray(second?.input) ? (second.input as Json[]) : [];
  const carries =
    second === undefined
      ? "-"
      : second.previous_response_id === firstResponseId
        ? "previous_response_id + function_call_output"
        : `full history (${items.map((i) => i.type ?? i.role).join(", ")})`;
  const row = [
    contender.name,
    problem === undefined ? "ok" : `FAIL: ${problem}`,
    String(Buffer.byteLength(bodies[0] ?? "")),
    String(Buffer.byteLength(bodies[1] ?? "")),
    String(items.length),
    carries,
  ];
  return problem === undefined ? { row } : { row, problem };
}

function checkRun(
  text: string,
  streamed: string,
  bodies: string[],
  firstResponseId: string,
): string | undefined {
  if (text !== ANSWER) return `final text differs (${JSON.stringify(text.slice(0, 40))}…)`;
  if (streamed !== ANSWER) return "the streamed deltas do not add up to the answer";
  const calls = noopLog.calls;
  if (calls.length !== 1 || !isDeepStrictEqual(calls[0], { n: 1 }))
    return `noop ran ${calls.length} times (${JSON.stringify(calls)}), want once with {"n":1}`;
  if (bodies.length !== 2) return `${bodies.length} requests, want 2`;
  const [first, second] = bodies.map((b) => JSON.parse(b) as Json) as [Json, Json];
  const outputs = (body: Json) =>
    Array.isArray(body.input)
      ? (body.input as Json[]).filter((i) => i.type === "function_call_output" && i.call_id === CALL_ID)
      : [];
  if (outputs(first).length !== 0) return "request #1 carries a function_call_output";
  if (outputs(second).length !== 1)
    return `request #2 carries ${outputs(second).length} outputs for ${CALL_ID}`;
  const previous = second.previous_response_id;
  if (previous !== undefined && previous !== null && previous !== firstResponseId)
    return `request #2 chains on ${String(previous)}, want ${firstResponseId}`;
  return undefined;
}

async function checkHttp(
  contenders: readonly LoopContender[],
  server: Awaited<ReturnType<typeof startReplayServer>>,
) {
  const rows: string[][] = [];
  const failed: string[] = [];
  for (const c of contenders) {
    const connections = await server.webSocketConnections();
    const checked = await checkContender(c, async () => {
      await server.recordBodies(true);
      const before = server.served();
      let streamed = "";
      const text = await c.run((d) => {
        streamed += d;
      });
      server.waitServed(before + 2);
      const bodies = await server.bodies();
      await server.recordBodies(false);
      return { text, streamed, bodies, firstResponseId: `resp_bench_${before + 1}` };
    });
    const { row } = checked;
    let { problem } = checked;
    // Over WebSocket, a run's requests (and the runs after it) share one connection.
    const opened = (await server.webSocketConnections()) - connections;
    if (problem === undefined && opened > 1) {
      problem = `${opened} WebSocket connections in 3 runs, want at most 1`;
      row[1] = `FAIL: ${problem}`;
    }
    rows.push(row);
    if (problem !== undefined) failed.push(`${c.name}: ${problem}`);
  }
  return { rows, failed };
}

async function checkInProcess(
  contenders: readonly LoopContender[],
  log: ReturnType<typeof inProcessContenders>["log"],
) {
  const rows: string[][] = [];
  const failed: string[] = [];
  for (const c of contenders) {
    const { row, problem } = await checkContender(c, async () => {
      c.prepare?.();
      log.record(true);
      let streamed = "";
      const text = await c.run((d) => {
        streamed += d;
      });
      const bodies = log.bodies;
      log.record(false);
      return { text, streamed, bodies, firstResponseId: "resp_bench_1" };
    });
    rows.push([`${c.name} (in-process)`, ...row.slice(1)]);
    if (problem !== undefined) failed.push(`${c.name}: ${problem}`);
  }
  return { rows, failed };
}

function samplesOf(all: readonly LoopSamples[], name: string): LoopSamples {
  const s = all.find((x) => x.name === name);
  if (s === undefined) throw new Error(`no samples of ${name}`);
  return s;
}

const run = (r: RunSample) => r.run;
const ttft = (r: RunSample) => r.ttft;
const ms = (ns: number) => num(ns / 1e6, 3);
const us = (ns: number) => num(ns / 1e3);
const range = (p: { median: number; min: number; max: number }, f: (x: number) => string) =>
  `${f(p.median)} [${f(p.min)}..${f(p.max)}]`;

const RESULT_HEADER = [
  "contender",
  "runs",
  "ms/run",
  "IQR",
  "x floor [min-max]",
  "overhead µs [min-max]",
  "TTFT ms",
  "last-hop µs",
  "server µs",
  "share",
];

function resultRows(all: readonly LoopSamples[]): string[][] {
  const floor = samplesOf(all, FLOOR_LOOP);
  return all.map((s) => {
    const runs = s.rounds.flat();
    return [
      s.name,
      String(runs.length),
      ms(medianOf(s, "run")),
      pct(iqrOf(s, run)),
      range(
        paired(s, floor, run, (a, b) => a / b),
        (x) => num(x, 2),
      ),
      range(
        paired(s, floor, run, (a, b) => a - b),
        us,
      ),
      ms(medianOf(s, "ttft")),
      us(medianOf(s, "lastHop")),
      us(median(runs.map((r) => r.b + r.d))),
      pct(median(runs.map((r) => (r.b + r.d) / r.run))),
    ];
  });
}

const SEGMENT_HEADER = ["contender", "A", "B", "C", "D", "E", "run−server", "− floor node:http", "x floor"];

function segmentRows(all: readonly LoopSamples[]): string[][] {
  const floor = samplesOf(all, FLOOR_LOOP);
  const floorNode = samplesOf(all, FLOOR_LOOP_NODE);
  return all.map((s) => [
    s.name,
    us(medianOf(s, "a")),
    us(medianOf(s, "b")),
    us(medianOf(s, "c")),
    us(medianOf(s, "d")),
    us(medianOf(s, "e")),
    us(median(s.rounds.flat().map(runMinusServer))),
    range(
      paired(s, floorNode, runMinusServer, (a, b) => a - b),
      us,
    ),
    num(paired(s, floor, runMinusServer, (a, b) => a / b).median, 2),
  ]);
}

function perRoundTable(all: readonly LoopSamples[]): [string[], string[][]] {
  const header = ["round", ...all.map((s) => s.name)];
  const perContender = all.map((s) => roundMedians(s, run));
  const rounds = perContender[0]?.length ?? 0;
  const rows = Array.from({ length: rounds }, (_, r) => [
    String(r + 1),
    ...perContender.map((m) => ms(m[r] as number)),
  ]);
  return [header, rows];
}

const memoryHeader = (base: string) => [
  "contender",
  "runs",
  "µs/run",
  "IQR",
  `x ${base} [min-max]`,
  `− ${base} µs [min-max]`,
  "TTFT µs",
];

function memoryRows(all: readonly LoopSamples[], baseline: string): string[][] {
  const floor = samplesOf(all, baseline);
  return all.map((s) => [
    s.name,
    String(s.rounds.flat().length),
    us(medianOf(s, "run")),
    pct(iqrOf(s, run)),
    range(
      paired(s, floor, run, (a, b) => a / b),
      (x) => num(x, 2),
    ),
    range(
      paired(s, floor, run, (a, b) => a - b),
      us,
    ),
    us(medianOf(s, "ttft")),
  ]);
}

const BACK_TO_BACK_HEADER = ["contender (back to back)", "µs/run", "− floor µs"];

function backToBackRows(times: Map<string, number[]>): string[][] {
  const floor = times.get(FLOOR_LOOP) ?? [];
  return [...times].map(([name, t]) => [
    name,
    us(median(t)),
    us(median(t.map((x, i) => x - (floor[i] as number)))),
  ]);
}

/** What WebSocket mode saves eddy (validate on) per turn in one write mode (medians over rounds). */
interface WebSocketSaving {
  writes: Writes;
  /** eddy websocket ÷ eddy over HTTP. */
  ratio: number;
  /** eddy over HTTP − eddy websocket, ns per turn. */
  saved: number;
}

/**
 * What WebSocket mode saves per turn, per write mode, in the same rounds: eddy over HTTP − eddy over
 * one WebSocket (and the ratio), the floors likewise, and eddy's own overhead on each transport;
 * as verdict lines, and eddy's savings for the headline.
 */
function webSocketSavings(passes: readonly Pass[]): { lines: string[]; savings: WebSocketSaving[] } {
  const savings: WebSocketSaving[] = [];
  const lines = passes.map((p) => {
    const of = (name: string) => samplesOf(p.samples, name);
    const saved = paired(of(EDDY_ON), of(EDDY_WS), run, (a, b) => a - b);
    const ratio = paired(of(EDDY_WS), of(EDDY_ON), run, (a, b) => a / b);
    const floorSaved = paired(of(FLOOR_LOOP_NODE), of(FLOOR_LOOP_WS), run, (a, b) => a - b);
    const ttftSaved = paired(of(EDDY_ON), of(EDDY_WS), ttft, (a, b) => a - b);
    const own = (eddy: string, floor: string) =>
      us(paired(of(eddy), of(floor), runMinusServer, (a, b) => a - b).median);
    savings.push({ writes: p.writes, ratio: ratio.median, saved: saved.median });
    return `writes ${p.writes}: WebSocket mode saves eddy (validate on) ${range(saved, us)} µs per turn (${us(saved.median / 2)} µs per request) against eddy over HTTP; eddy websocket takes ${range(ratio, (x) => num(x, 2))}× eddy over HTTP's time; TTFT ${range(ttftSaved, us)} µs sooner. The floor saves ${range(floorSaved, us)} µs per turn going from node:http to one WebSocket. eddy's own overhead per turn: ${own(EDDY_WS, FLOOR_LOOP_WS)} µs over floor-loop websocket (WebSocket), ${own(EDDY_ON, FLOOR_LOOP_NODE)} µs over floor-loop node:http (HTTP)`;
  });
  return { lines, savings };
}

/** The verdicts of the targets, and the values behind them that the headline rows give. */
interface Targets {
  lines: string[];
  /** eddy (validate on)'s own overhead per turn, ns, per HTTP write mode (run−server) and in-process. */
  overhead: { http: { writes: Writes; value: number }[]; inProcess: number };
  /** eddy (validate on)'s time ÷ floor-loop node:http's, per write mode (median over rounds). */
  turn: { writes: Writes; ratio: number }[];
  /** The peers' time ÷ eddy (validate on)'s, per write mode (median over rounds). */
  peers: { writes: Writes; agents: number; sdk: number }[];
}

function targets(passes: readonly Pass[], memory: readonly LoopSamples[]): Targets {
  const verdict = (ok: boolean) => (ok ? "met" : "MISSED");
  const lines: string[] = [];
  const found: Omit<Targets, "lines"> = {
    overhead: { http: [], inProcess: Number.NaN },
    turn: [],
    peers: [],
  };
  for (const eddy of [EDDY_ON, EDDY_OFF]) {
    const parts = passes.map((p) => ({
      label: `HTTP writes ${p.writes}`,
      value: paired(
        samplesOf(p.samples, eddy),
        samplesOf(p.samples, FLOOR_LOOP_NODE),
        runMinusServer,
        (a, b) => a - b,
      ).median,
    }));
    parts.push({
      label: "in-process",
      value: paired(samplesOf(memory, eddy), samplesOf(memory, FLOOR_LOOP), run, (a, b) => a - b).median,
    });
    const worst = Math.max(...parts.map((p) => p.value));
    if (eddy === EDDY_ON)
      found.overhead = {
        http: passes.map((p, i) => ({ writes: p.writes, value: parts[i]?.value as number })),
        inProcess: parts.at(-1)?.value as number,
      };
    lines.push(
      `${eddy}: own overhead per turn (per run: 2 requests + 1 tool call) ${parts.map((p) => `${us(p.value)} µs (${p.label})`).join(", ")} (target < ${us(TARGET_OVERHEAD_NS)} µs): ${verdict(worst < TARGET_OVERHEAD_NS)}; per request that is ${parts.map((p) => us(p.value / 2)).join(" / ")} µs`,
    );
  }
  for (const p of passes) {
    const ratio = paired(
      samplesOf(p.samples, EDDY_ON),
      samplesOf(p.samples, FLOOR_LOOP_NODE),
      run,
      (a, b) => a / b,
    );
    found.turn.push({ writes: p.writes, ratio: ratio.median });
    lines.push(
      `HTTP writes ${p.writes}, the turn: eddy (validate on) takes ${range(ratio, (x) => num(x, 2))}× floor-loop node:http's time (target ≤ ${TARGET_RATIO_NODE}×, issue 23): ${verdict(ratio.median <= TARGET_RATIO_NODE)}`,
    );
  }
  for (const p of passes) {
    const overNode = (name: string) =>
      paired(
        samplesOf(p.samples, name),
        samplesOf(p.samples, FLOOR_LOOP_NODE),
        runMinusServer,
        (a, b) => a - b,
      ).median;
    const transport = overNode(FLOOR_LOOP_EDDY_TRANSPORT);
    const total = overNode(EDDY_ON);
    lines.push(
      `HTTP writes ${p.writes}, where eddy (validate on)'s ${us(total)} µs over floor-loop node:http go: ${us(transport)} µs in its transport (floor-loop through nodeHttpTransport vs plain node:http), ${us(total - transport)} µs in the rest (provider stream, frames, loop, tools)`,
    );
  }
  for (const p of passes) {
    const eddy = samplesOf(p.samples, EDDY_ON);
    const vs = (name: string) => {
      const other = samplesOf(p.samples, name);
      const x = paired(other, eddy, run, (a, b) => a / b).median;
      const saved = paired(other, eddy, run, (a, b) => a - b).median;
      return { x, text: `${name} takes ${num(x, 2)}× eddy's time (${us(saved)} µs more per run)` };
    };
    const agents = vs(AGENTS);
    const sdk = vs(SDK_LOOP);
    lines.push(`HTTP writes ${p.writes}, eddy (validate on) vs peers: ${agents.text}; ${sdk.text}`);
    found.peers.push({ writes: p.writes, agents: agents.x, sdk: sdk.x });
  }
  return { lines, ...found };
}

/** The alone cells' verdict lines: each contender ÷ the floor in its own process, peers ÷ eddy. */
function aloneLines(alone: readonly AloneSummary[]): string[] {
  const eddy = alone.find((a) => a.name === EDDY_ON);
  return alone.map((a) => {
    const x = `${a.name} in a process of its own (writes event): ${range(a, (v) => num(v, 2))}× floor-loop node:http's time (${us(median(a.contender))} against ${us(median(a.floor))} µs)`;
    if (a === eddy || eddy === undefined)
      return `${x} (target ≤ ${TARGET_RATIO_NODE}×, issue 23): ${a.median <= TARGET_RATIO_NODE ? "met" : "MISSED"}`;
    return `${x}; ${num(a.median / eddy.median, 2)}× eddy's ratio`;
  });
}

/** The section's footprint table (bench/loop/footprint.ts). */
function footprintSection(
  plan: { runs: number; warmup: number },
  footprints: readonly Footprint[],
): string[] {
  return [
    "### The turn's footprint (bench/loop/footprint.ts)",
    "",
    `How much code one turn runs: the JavaScript functions that ran at least once and the calls made per turn, counted with V8's precise coverage over ${plan.runs} turns after ${plan.warmup} warm-up turns (writes event). Counts, not times: the same on a quiet and a loaded machine. Over HTTP a turn's extra time goes with the code it touches (bench/README.md, "The turn's footprint"). The floor and eddy are counted in one process, each peer in one of its own; a peer's own code counts under dependencies'.`,
    "",
    ...footprintTable(footprints),
    "",
  ];
}

/** README's row of the footprint: functions and calls a turn, eddy against the floor and the peers. */
function footprintHeadline(footprints: readonly Footprint[]): Headline {
  const of = (name: string) => footprints.find((f) => f.name === name);
  const text = (f: Footprint | undefined) =>
    f === undefined ? "—" : `${f.functions} functions, ${num(f.callsPerTurn, 0)} calls`;
  const eddy = of(EDDY_ON);
  const own = eddy?.byPlace.eddy;
  return {
    what: "… the code one such turn runs (functions run / calls a turn, V8 coverage counts)",
    eddy: `${text(eddy)} (its own: ${own === undefined ? "—" : `${own[0]} / ${num(own[1], 0)}`}); the node:http floor loop: ${text(of(FLOOR_LOOP_NODE))}`,
    peers: `\`openai\` SDK loop ${text(of(SDK_LOOP))}, \`@openai/agents\` ${text(of(AGENTS))}`,
  };
}

/** README's row of the alone cells. */
function aloneHeadline(alone: readonly AloneSummary[]): Headline {
  const ratio = (name: string) => alone.find((a) => a.name === name)?.median ?? Number.NaN;
  const eddy = ratio(EDDY_ON);
  const peer = (label: string, name: string) =>
    `${label} ${num(ratio(name), 2)}× the floor (${num(ratio(name) / eddy, 2)}× eddy's)`;
  return {
    what: "… each in a node process of its own with the floor loop (writes event)",
    eddy: `${num(eddy, 2)}× the node:http floor loop's time; goal ≤ ${TARGET_RATIO_NODE}×: ${eddy <= TARGET_RATIO_NODE ? "met" : "not met"}`,
    peers: `${peer("`openai` SDK loop", SDK_LOOP)}, ${peer("`@openai/agents`", AGENTS)}`,
  };
}

/** One value per write mode: "2.05× (writes event), 1.95× (whole)". */
function perWrites(
  values: readonly { writes: Writes; value: number }[],
  format: (x: number) => string,
): string {
  return values.map((v, i) => `${format(v.value)} (${i === 0 ? "writes " : ""}${v.writes})`).join(", ");
}

/** "met" when every value is, else which write modes (if any) meet it. */
function goalVerdict(values: readonly { writes: Writes; met: boolean }[]): string {
  const met = values.filter((v) => v.met);
  if (met.length === values.length) return "met";
  return met.length === 0 ? "not met" : `met with writes ${met.map((v) => v.writes).join(", ")} only`;
}

/** README's rows: the turn over HTTP against the floor and the peers, WebSocket mode, eddy's own overhead. */
function headlines(
  goals: Targets,
  webSocket: { savings: WebSocketSaving[] },
  alone: readonly AloneSummary[],
): Headline[] {
  const times = (x: number) => `${num(x, 2)}×`;
  const millis = (ns: number) => `${num(ns / 1e6, 2)} ms`;
  /** One value per write mode, in the passes' order ("a / b"), followed by `modes`. */
  const slashed = (values: readonly number[], format: (x: number) => string) =>
    values.map(format).join(" / ");
  const modes = `(writes ${goals.turn.map((t) => t.writes).join(" / ")})`;
  const turn = goals.turn.map((t) => ({
    writes: t.writes,
    value: t.ratio,
    met: t.ratio <= TARGET_RATIO_NODE,
  }));
  const { http, inProcess } = goals.overhead;
  const overheadMet = [inProcess, ...http.map((o) => o.value)].every((v) => v < TARGET_OVERHEAD_NS);
  return [
    {
      what: "one agent turn (2 streamed requests + 1 tool call) over HTTP",
      eddy: `${perWrites(turn, times)} the node:http floor loop's time; goal ≤ ${TARGET_RATIO_NODE}×: ${goalVerdict(turn)}`,
      peers: `\`openai\` SDK loop ${slashed(
        goals.peers.map((p) => p.sdk),
        times,
      )}, \`@openai/agents\` ${slashed(
        goals.peers.map((p) => p.agents),
        times,
      )} eddy's time ${modes}`,
    },
    aloneHeadline(alone),
    {
      what: "… over one WebSocket (`--transport websocket`)",
      eddy: `${slashed(
        webSocket.savings.map((s) => s.ratio),
        times,
      )} eddy's time over HTTP: ${slashed(
        webSocket.savings.map((s) => s.saved),
        (ns) => num(ns / 1e6, 1),
      )} ms saved per turn ${modes}`,
      peers: "—",
    },
    {
      what: "eddy's own overhead per such turn, in-process / over HTTP",
      eddy: `${millis(inProcess)} / ${perWrites(http, millis)}; goal < ${num(TARGET_OVERHEAD_NS / 1e6)} ms: ${overheadMet ? "met" : "not met"}`,
      peers: "—",
    },
  ];
}
