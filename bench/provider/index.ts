/**
 * `npm run bench -- provider`: HTTP on 127.0.0.1, bytes → assembled response (issue 4). A replay
 * server in a worker thread serves a generated Open Responses stream in ~16 KiB and in random
 * 1–512 B writes; each contender POSTs, reads every event and returns the assembled text and call
 * arguments. Reported: ns/event and the ratio to floor-http per round, the server's share, and the
 * fixed cost per request on a tiny stream. Method in ../harness.ts.
 */
import { fixedChunks, randomChunks, seededRandom } from "../../test/support/chunking.js";
import {
  type Benchmark,
  collectGarbage,
  describeEnvironment,
  environment,
  type Headline,
  headlineLines,
  logEnd,
  markdownTable,
  median,
  num,
  numRange,
  pct,
  quantile,
  relativeIqr,
  runRounds,
  type Samples,
  shuffle,
  textTable,
} from "../harness.js";
import { type GeneratedStream, generateStream } from "../sse/stream.js";
import {
  EDDY_FETCH,
  EDDY_OFF,
  EDDY_ON,
  FLOOR_HTTP,
  FLOOR_NODE,
  OPENAI_CREATE,
  OPENAI_STREAM,
  type ProviderContender,
  providerContenders,
} from "./contenders.js";
import { fetchPoster, nodeHttpPoster, type Poster } from "./floor.js";
import { type ReplayServer, startReplayServer } from "./replay-server.js";
import { endsOf, type ServedStream } from "./responder.js";
import { verify } from "./verify.js";

const CHUNKINGS = [
  { label: "16k", chunking: fixedChunks(16 * 1024), writes: "16 KiB" },
  { label: "rand512", chunking: randomChunks(1, 512), writes: "random 1–512 B" },
];
const ROUNDS: Record<number, number> = { 1000: 21, 10000: 9 };
/** Deltas of the tiny stream the per-request cost is measured on. */
const TINY_DELTAS = 3;
const TINY_RUNS = 400;
/** Issue 4: eddy at least this many times faster per event than openai's responses.stream. */
const TARGET_SPEEDUP = 3;

interface Cell {
  deltas: number;
  chunks: string;
  events: number;
  bytes: number;
  samples: Samples[];
  /** Median over the cell's requests of the server's first-to-last body write, ns. */
  serverNs: number;
  /** Body writes per response, and the chunks each client API handed over (one request each). */
  writes: number;
  delivered: { fetch: number; nodeHttp: number };
}

const keyOf = (deltas: number, chunks: string) => `${deltas}-${chunks}`;
const label = (deltas: number) => (deltas >= 1000 ? `${deltas / 1000}k` : String(deltas));

export const providerBenchmark: Benchmark = {
  name: "provider",
  title: "HTTP on 127.0.0.1: bytes → assembled response",
  async run(ctx) {
    const started = Date.now();
    const envStart = environment();
    const sizes = [1_000, 10_000];
    const streams = new Map(sizes.map((n) => [n, generateStream(n)]));
    const tiny = generateStream(TINY_DELTAS);
    const served: ServedStream[] = [{ key: "tiny", bytes: tiny.bytes, ends: [tiny.bytes.length] }];
    const writesOf = (key: string) => served.find((x) => x.key === key)?.ends.length ?? 0;
    for (const [deltas, stream] of streams) {
      for (const { label: chunks, chunking } of CHUNKINGS) {
        served.push({
          key: keyOf(deltas, chunks),
          bytes: stream.bytes,
          ends: endsOf(chunking.split(stream.bytes)),
        });
      }
    }
    const server = await startReplayServer(new URL("./responder.ts", import.meta.url), served);
    try {
      const contenders = providerContenders(server.origin);
      ctx.log(`## ${this.title}\n${describeEnvironment(envStart)}`);

      const checks = [...streams].flatMap(([deltas, stream]) =>
        CHUNKINGS.map((c) => ({ name: keyOf(deltas, c.label), stream })),
      );
      checks.push({ name: "tiny", stream: tiny });
      const correctness = await checkCorrectness(contenders, checks);
      ctx.log(`\n### Correctness\n${textTable(correctness.header, correctness.rows)}`);
      if (correctness.failed.length > 0)
        throw new Error(`contenders failed verification: ${correctness.failed.join(", ")}`);

      ctx.log("\nJIT warm-up …");
      const warmKeys = [...CHUNKINGS.map((c) => keyOf(1_000, c.label)), "tiny"];
      await warmUp(contenders, warmKeys, ctx.quick ? 0.5 : 3);

      const cells: Cell[] = [];
      for (const [deltas, stream] of streams) {
        for (const { label: chunks } of CHUNKINGS) {
          const cell = await measureCell(contenders, server, {
            deltas,
            chunks,
            stream,
            rounds: ctx.quick ? 3 : (ROUNDS[deltas] ?? 7),
            writes: writesOf(keyOf(deltas, chunks)),
          });
          cells.push(cell);
          ctx.log(`\n${textTable(THROUGHPUT_HEADER, throughputRows(cell))}\n${serverLine(cell)}`);
        }
      }

      ctx.log("\nPer-request cost (tiny stream) …");
      const perRequest = await measurePerRequest(contenders, ctx.quick ? 30 : TINY_RUNS);
      const perRequestTable = perRequestRows(contenders, perRequest);
      ctx.log(textTable(perRequestTable.header, perRequestTable.rows));

      const verdict = targets(cells, perRequest);
      const { envEnd, seconds } = logEnd(ctx, started, verdict);

      return [
        `## ${this.title}`,
        "",
        describeEnvironment(envStart),
        "",
        `Method: a replay server (node:http on 127.0.0.1, in a worker thread) answers each POST with a pre-generated stream, each chunk its own \`res.write\` (waiting for 'drain' when the socket buffer is full); the client reads whatever the kernel coalesced. Per cell one warm-up round, then ${sizes.map((n) => `${ROUNDS[n]} rounds at ${label(n)}`).join(", ")}; every contender runs once per round in a fresh shuffled order; ns/event = median over rounds ÷ events; x floor-http = median over rounds of t(contender)/t(floor-http) in the same round; IQR = (p75−p25)/median. Correctness is checked before timing. Connections are kept alive across requests (each contender keeps its own client).`,
        "",
        markdownTable(
          ["contender", "version", "transport", "what it does"],
          contenders.map((c) => [c.name, c.version, c.transport, c.what.replaceAll("|", "\\|")]),
          [2, 3],
        ),
        "",
        `Streams (bench/sse/stream.ts): ${[...streams].map(([n, s]) => describeStream(n, s)).join("; ")}; tiny (per-request cost): ${describeStream(TINY_DELTAS, tiny)}, one write.`,
        "",
        "### Targets (issue 4)",
        "",
        ...verdict.map((v) => `- ${v}`),
        "",
        "### Summary: ns/event (x floor-http); per request µs on the tiny stream",
        "",
        markdownTable(summaryHeader(cells), summaryRows(contenders, cells, perRequest)),
        "",
        "### Per-request cost (tiny stream)",
        "",
        `${TINY_RUNS} requests per contender, interleaved in shuffled order; from the call to the assembled response.`,
        "",
        markdownTable(perRequestTable.header, perRequestTable.rows, [1]),
        "",
        "### Throughput, every cell",
        "",
        markdownTable(
          THROUGHPUT_HEADER,
          cells.flatMap((c) => throughputRows(c)),
          [1, 2],
        ),
        "",
        ...cells.map((c) => `- ${serverLine(c)}`),
        "",
        "### Correctness before timing",
        "",
        "ok = the assembled text and call arguments equal the generator's, every event delivered (eddy: one provider_event per event, the `[DONE]` frame, no validation error).",
        "",
        markdownTable(
          correctness.header,
          correctness.rows,
          correctness.header.map((_, i) => i),
        ),
        "",
        `Total wall time ${seconds.toFixed(1)} s; loadavg at end ${envEnd.loadavg}.`,
        "",
        headlineLines(headlines(cells, perRequest), envStart),
      ].join("\n");
    } finally {
      await server.close();
    }
  },
};

function describeStream(deltas: number, s: GeneratedStream): string {
  return `${label(deltas)}: ${s.events.length} events (${s.textDeltas} text + ${s.argumentDeltas} argument deltas), ${(s.bytes.length / 1e6).toFixed(s.bytes.length < 1e5 ? 3 : 2)} MB`;
}

async function checkCorrectness(
  contenders: readonly ProviderContender[],
  checks: readonly { name: string; stream: GeneratedStream }[],
) {
  const rows: string[][] = [];
  const failed: string[] = [];
  for (const c of contenders) {
    const row = [c.name];
    for (const check of checks) {
      const problem = await verify(c, check.name, check.stream);
      row.push(problem ?? "ok");
      if (problem !== undefined) failed.push(`${c.name} [${check.name}]: ${problem}`);
    }
    rows.push(row);
  }
  return { header: ["contender", ...checks.map((c) => c.name)], rows, failed };
}

async function warmUp(contenders: readonly ProviderContender[], keys: readonly string[], seconds: number) {
  const deadline = Date.now() + seconds * 1000;
  while (Date.now() < deadline) {
    for (const key of keys) for (const c of contenders) await c.request(key);
  }
}

async function measureCell(
  contenders: readonly ProviderContender[],
  server: ReplayServer,
  cell: { deltas: number; chunks: string; stream: GeneratedStream; rounds: number; writes: number },
): Promise<Cell> {
  collectGarbage();
  const key = keyOf(cell.deltas, cell.chunks);
  const delivered = {
    fetch: await countChunks(fetchPoster(`${server.origin}/v1/responses`), key),
    nodeHttp: await countChunks(nodeHttpPoster(`${server.origin}/v1/responses`), key),
  };
  const before = server.served();
  const samples = await runRounds(
    contenders.map((c) => ({ name: c.name, run: () => c.request(key).then(() => {}) })),
    { rounds: cell.rounds, baseline: FLOOR_HTTP, warmup: 1, seed: cell.deltas },
  );
  const after = server.served();
  server.waitServed(after);
  const windows: number[] = [];
  for (let i = before; i < after; i++) {
    const r = server.record(i);
    windows.push(r.lastWrite - r.firstWrite);
  }
  return {
    deltas: cell.deltas,
    chunks: cell.chunks,
    events: cell.stream.events.length,
    bytes: cell.stream.bytes.length,
    samples,
    serverNs: median(windows),
    writes: cell.writes,
    delivered,
  };
}

/** How many body chunks a client API hands over for one response. */
async function countChunks(post: Poster, key: string): Promise<number> {
  let chunks = 0;
  await post(JSON.stringify({ model: key, input: "go", stream: true }), () => {
    chunks++;
  });
  return chunks;
}

function serverLine(c: Cell): string {
  const share = c.serverNs / median(samplesOf(c, FLOOR_HTTP).times);
  const bound =
    share > 0.5 ? " (floor-http is largely server-bound here, so ratios in this cell are compressed)" : "";
  return `${label(c.deltas)} ${c.chunks}: the server takes ${num(c.serverNs / c.events)} ns/event from first to last body write, ${pct(share)} of floor-http's run${bound}; ${num(c.writes)} body writes reach the client as ${num(c.delivered.fetch)} chunks through fetch and ${num(c.delivered.nodeHttp)} through node:http ('data' events).`;
}

function samplesOf(cell: Cell, name: string): Samples {
  const s = cell.samples.find((x) => x.name === name);
  if (s === undefined) throw new Error(`no samples of ${name}`);
  return s;
}

/** Median over rounds of t(a)/t(b) in the same round. */
function pairedRatio(cell: Cell, a: string, b: string): number {
  const ta = samplesOf(cell, a).times;
  const tb = samplesOf(cell, b).times;
  return median(ta.map((t, i) => t / (tb[i] as number)));
}

const THROUGHPUT_HEADER = [
  "deltas",
  "chunks",
  "contender",
  "ns/event",
  "MB/s",
  "x floor-http",
  "IQR",
  "rounds",
];

function throughputRows(cell: Cell): string[][] {
  return cell.samples.map((s) => {
    const t = median(s.times);
    return [
      label(cell.deltas),
      cell.chunks,
      s.name,
      num(t / cell.events),
      num(cell.bytes / 1e6 / (t / 1e9), 1),
      num(median(s.ratios), 2),
      pct(relativeIqr(s.times)),
      String(s.times.length),
    ];
  });
}

/** Per contender, ns per request on the tiny stream (interleaved, shuffled). */
async function measurePerRequest(
  contenders: readonly ProviderContender[],
  runs: number,
): Promise<Map<string, number[]>> {
  collectGarbage();
  const rnd = seededRandom(11);
  const out = new Map(contenders.map((c) => [c.name, [] as number[]]));
  const warmup = Math.max(10, Math.round(runs / 10));
  for (let run = 0; run < warmup + runs; run++) {
    for (const c of shuffle(contenders, rnd)) {
      const start = process.hrtime.bigint();
      await c.request("tiny");
      const t = Number(process.hrtime.bigint() - start);
      if (run >= warmup) out.get(c.name)?.push(t);
    }
  }
  return out;
}

const us = (ns: number) => num(ns / 1000, ns < 100_000 ? 1 : 0);

function perRequestRows(contenders: readonly ProviderContender[], perRequest: Map<string, number[]>) {
  const floor = median(perRequest.get(FLOOR_HTTP) ?? []);
  const header = ["contender", "transport", "µs/request", "p10–p90", "− floor-http µs", "x floor-http"];
  const rows = contenders.map((c) => {
    const t = perRequest.get(c.name) ?? [];
    return [
      c.name,
      c.transport,
      us(median(t)),
      `${us(quantile(t, 0.1))}–${us(quantile(t, 0.9))}`,
      us(median(t) - floor),
      num(median(t) / floor, 2),
    ];
  });
  return { header, rows };
}

function summaryHeader(cells: readonly Cell[]): string[] {
  return ["contender", ...cells.map((c) => `${label(c.deltas)} ${c.chunks}`), "µs/request (tiny)"];
}

function summaryRows(
  contenders: readonly ProviderContender[],
  cells: readonly Cell[],
  perRequest: Map<string, number[]>,
): string[][] {
  return contenders.map((c) => [
    c.name,
    ...cells.map((cell) => {
      const s = samplesOf(cell, c.name);
      return `${num(median(s.times) / cell.events)} (${num(median(s.ratios), 2)})`;
    }),
    us(median(perRequest.get(c.name) ?? [])),
  ]);
}

/**
 * README's rows: over every cell, how many times eddy's time `openai` `responses.stream` takes per
 * event and `responses.create` against the floor (the targets' paired ratios), and what the default
 * node:http transport saves per request against `fetch` (the per-request medians).
 */
function headlines(cells: readonly Cell[], perRequest: Map<string, number[]>): Headline[] {
  const perReq = (name: string) => median(perRequest.get(name) ?? []);
  const saved = perReq(EDDY_FETCH) - perReq(EDDY_ON);
  const speedups = cells.map((c) => pairedRatio(c, OPENAI_STREAM, EDDY_ON));
  const distinct = (values: readonly string[]) => [...new Set(values)].join(" and ");
  const sizes = distinct(cells.map((c) => label(c.deltas)));
  const writes = distinct(cells.map((c) => CHUNKINGS.find((k) => k.label === c.chunks)?.writes ?? c.chunks));
  return [
    {
      what: `HTTP on 127.0.0.1, bytes → assembled response, per event (${sizes} deltas in ${writes} writes; validation on)`,
      eddy: `${
        Math.min(...speedups) >= 1
          ? `${numRange(speedups, 1)}× faster than \`openai\` \`responses.stream\``
          : `\`openai\` \`responses.stream\` takes ${numRange(speedups, 1)}× eddy's time`
      } (goal ≥ ${TARGET_SPEEDUP}×)`,
      peers: `\`responses.create\` (raw events only) ${numRange(
        cells.map((c) => pairedRatio(c, OPENAI_CREATE, FLOOR_HTTP)),
        1,
      )}× the floor`,
    },
    {
      what: `request round trip (${TINY_DELTAS}-delta stream), default node:http transport vs \`fetch\``,
      eddy: `${us(Math.abs(saved))} µs ${saved >= 0 ? "less" : "MORE"} per request`,
      peers: "—",
    },
  ];
}

function targets(cells: readonly Cell[], perRequest: Map<string, number[]>): string[] {
  const verdict = (ok: boolean) => (ok ? "met" : "MISSED");
  const lines: string[] = [];
  for (const eddy of [EDDY_ON, EDDY_OFF]) {
    const speedups = cells.map((c) => ({ cell: c, x: pairedRatio(c, OPENAI_STREAM, eddy) }));
    const worst = Math.min(...speedups.map((s) => s.x));
    lines.push(
      `${eddy} vs ${OPENAI_STREAM}, per event (median over rounds of t(openai)/t(eddy)): ${speedups.map((s) => `${label(s.cell.deltas)} ${s.cell.chunks} ${num(s.x, 1)}×`).join(", ")} (target ≥ ${TARGET_SPEEDUP}× in every cell): ${verdict(worst >= TARGET_SPEEDUP)}`,
    );
  }
  const perReq = (name: string) => median(perRequest.get(name) ?? []);
  lines.push(
    `transport, per event (median over rounds of t(fetch)/t(node:http)): eddy ${cells.map((c) => `${label(c.deltas)} ${c.chunks} ${num(pairedRatio(c, EDDY_FETCH, EDDY_ON), 2)}×`).join(", ")}; floor ${cells.map((c) => `${label(c.deltas)} ${c.chunks} ${num(pairedRatio(c, FLOOR_HTTP, FLOOR_NODE), 2)}×`).join(", ")}`,
    `transport, per request (tiny stream, difference of medians fetch − node:http): eddy ${us(perReq(EDDY_FETCH) - perReq(EDDY_ON))} µs, floor ${us(perReq(FLOOR_HTTP) - perReq(FLOOR_NODE))} µs: node:http (the default) ${perReq(EDDY_FETCH) > perReq(EDDY_ON) ? "wins" : "does NOT win"} per request`,
  );
  return lines;
}
