/**
 * `npm run bench -- sse`: bytes → events/frames per event, and time to first frame, for eddy's
 * frame decoder (validation off and on, frames stamped) against a floor measured in the same run,
 * eventsource-parser and the openai SDK's stream. bench/README.md; method in ../harness.ts.
 */
import { fixedChunks, randomChunks } from "../../test/support/chunking.js";
import {
  type BenchContext,
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
  pct,
  relativeIqr,
  runRounds,
  type Samples,
  textTable,
  timeOnce,
} from "../harness.js";
import { EDDY_OFF, EDDY_ON, FLOOR, type SseContender, sseContenders } from "./contenders.js";
import { type GeneratedStream, generateStream } from "./stream.js";
import { formatTtft, measureTtft } from "./ttft.js";
import { PROBES, verify } from "./verify.js";

const CHUNKINGS = [
  { label: "16k", chunking: fixedChunks(16 * 1024) },
  { label: "rand512", chunking: randomChunks(1, 512) },
  { label: "7b", chunking: fixedChunks(7) },
];

/** Timed rounds per cell size (the 100k cells take seconds per round, so fewer). */
const ROUNDS: Record<number, number> = { 1000: 15, 10000: 7, 100000: 5 };
/** A contender whose warm-up run in a cell takes longer than this is not timed there. */
const MAX_RUN_MS = 4_000;
const TTFT_RUNS = 300;

/** Targets of issue 2 (medians, 10k deltas, 16 KiB chunks; TTFT vs the floor's). */
const TARGETS = { validateOff: 1.5, validateOn: 3, ttft: 1.5 };

interface Cell {
  deltas: number;
  chunks: string;
  events: number;
  bytes: number;
  rounds: number;
  samples: Samples[];
  skipped: { name: string; ms: number; estimated?: true }[];
}

export const sseBenchmark: Benchmark = {
  name: "sse",
  title: "SSE bytes → frames",
  async run(ctx) {
    const started = Date.now();
    const envStart = environment();
    const contenders = sseContenders();
    const sizes = ctx.quick ? [1_000, 10_000] : [1_000, 10_000, 100_000];
    const streams = new Map(sizes.map((n) => [n, generateStream(n)]));
    const small = streams.get(1_000) as GeneratedStream;

    ctx.log(`## ${this.title}\n${describeEnvironment(envStart)}`);
    const correctness = await checkCorrectness(contenders, small);
    ctx.log(`\n### Correctness (1k stream)\n${textTable(correctness.header, correctness.rows)}`);
    if (correctness.failed.length > 0)
      throw new Error(`contenders failed verification: ${correctness.failed}`);

    ctx.log("\nJIT warm-up …");
    await warmUp(contenders, small, ctx.quick ? 0.3 : 1.5);

    const cells: Cell[] = [];
    for (const [deltas, stream] of streams) {
      for (const { label, chunking } of CHUNKINGS) {
        const chunks = chunking.split(stream.bytes);
        const previous = cells.findLast((c) => c.chunks === label);
        const here = contenders.filter((c) => c.maxDeltas === undefined || deltas <= c.maxDeltas);
        const cell = await measureCell(here, chunks, {
          deltas,
          label,
          stream,
          rounds: ctx.quick ? 3 : (ROUNDS[deltas] ?? 7),
          estimate: (name) => estimateMs(previous, name, stream.events.length),
        });
        cells.push(cell);
        ctx.log(`\n${textTable(THROUGHPUT_HEADER, throughputRows(cell))}`);
      }
    }

    ctx.log("\nTime to first frame …");
    const ttftStream = generateStream(52);
    const ttft = [];
    for (const { label, chunking } of CHUNKINGS) {
      ttft.push({
        label,
        results: await measureTtft(contenders, chunking.split(ttftStream.bytes), TTFT_RUNS),
      });
    }
    const ttftTable = ttftRows(contenders, ttft);
    ctx.log(textTable(ttftTable.header, ttftTable.rows));

    const verdict = targets(cells, ttft);
    const { envEnd, seconds } = logEnd(ctx, started, verdict);

    return [
      `## ${this.title}`,
      "",
      describeEnvironment(envStart),
      "",
      `Method: per cell one warm-up round, then ${sizes.map((n) => `${ROUNDS[n]} rounds at ${label(n)}`).join(", ")}; every contender runs once per round in a fresh shuffled order; ns/event = median over rounds ÷ events; x floor = median over rounds of t(contender)/t(floor) in the same round; IQR = (p75−p25)/median. No forced GC between runs (a full GC between cells). A contender is not timed in a cell where one run takes, or is estimated from the same chunking's smaller cell to take, over ${MAX_RUN_MS / 1000} s. Bytes are in memory; nothing touches the network.`,
      "",
      markdownTable(
        ["contender", "version", "what it does"],
        contenders.map((c) => [c.name, c.version, c.what.replaceAll("|", "\\|")]),
        [2],
      ),
      "",
      `Streams: ${[...streams].map(([n, s]) => describeStream(n, s)).join("; ")}. TTFT stream: ${describeStream(52, ttftStream)}.`,
      "",
      "### Targets (issue 2)",
      "",
      ...verdict.map((v) => `- ${v}`),
      "",
      "Reading the TTFT rows: single-shot µs timings on this shared 2-vCPU VM move with the machine's state (the floor's 16 KiB TTFT was 27 µs in one run and 41–47 µs in another, quieter one); compare ratios within a run. The first frame of a stream is `response.created`, and with validation on it is delivered only after its full ResponseResource (~35 fields) is validated: warm that costs ~3 µs, cold (as it is once per turn) 12–25 µs, about 0.75× a cold JSON.parse of the same event. At 16 KiB eddy wins part of that back by dispatching the first message before decoding the rest of the chunk (the floor decodes the whole chunk first); at small chunks the floor's time to first event is little more than that one parse, so validation on stays near 2× it. Validation off meets 1.5× at every chunking.",
      "",
      "### Summary: ns/event (x floor)",
      "",
      markdownTable(summaryHeader(cells), summaryRows(contenders, cells)),
      "",
      "### Time to first frame, µs: median (p10–p90)",
      "",
      `${TTFT_RUNS} runs per contender and chunking, interleaved; from calling the decoder with the bytes in memory (per-stream setup included) to the first event or frame reaching the consumer.`,
      "",
      markdownTable(ttftTable.header, ttftTable.rows),
      "",
      "### Throughput, every cell",
      "",
      markdownTable(
        THROUGHPUT_HEADER,
        cells.flatMap((c) => throughputRows(c)),
      ),
      "",
      "### Correctness before timing (1k stream)",
      "",
      "ok = same events as the generator (eddy: one provider_event per event with its data, an output_text_delta after each text delta, `[DONE]` as a done frame, contiguous stamps, no validation error); FAIL = mismatch (the floor is LF-only and comment-blind by design).",
      "",
      markdownTable(correctness.header, correctness.rows),
      "",
      ...PROBES.map((p) => `- probe ${p.name}: ${p.what}`),
      "",
      `Total wall time ${seconds.toFixed(1)} s; loadavg at end ${envEnd.loadavg}.`,
      "",
      headlineLines(headlines(cells, ttft, ttftStream), envStart),
    ].join("\n");
  },
};

/**
 * README's rows: eddy and the peers against the floor in the 16 KiB cell the targets use (10k deltas;
 * the largest 16 KiB cell run when that one was not), and the time to first frame at 16 KiB — the
 * same medians of per-round ratios (throughput) and ratios of medians (TTFT) as the tables and the
 * targets.
 */
function headlines(
  cells: readonly Cell[],
  ttft: { label: string; results: { name: string; samples: number[] }[] }[],
  ttftStream: GeneratedStream,
): Headline[] {
  const cell =
    cells.find((c) => c.deltas === 10_000 && c.chunks === "16k") ??
    cells.filter((c) => c.chunks === "16k").sort((a, b) => b.deltas - a.deltas)[0];
  const x = (ratio: number) => (Number.isFinite(ratio) ? `${num(ratio, 2)}×` : "not timed");
  const size =
    cell === undefined ? "" : `${label(cell.deltas)} deltas (${num(cell.events)} events), 16 KiB chunks`;
  const first = ttft.find((t) => t.label === "16k");
  const ttftX = (name: string) => {
    const floor = median(first?.results.find((r) => r.name === FLOOR)?.samples ?? []);
    return x(median(first?.results.find((r) => r.name === name)?.samples ?? []) / floor);
  };
  return [
    {
      what: `SSE bytes → frames, ${size}, validation off`,
      eddy: `${x(ratioOf(cell, EDDY_OFF))} the floor (goal ≤ ${TARGETS.validateOff}×)`,
      peers: `eventsource-parser ${x(ratioOf(cell, "eventsource-parser"))}, \`openai\` Stream ${x(ratioOf(cell, "openai Stream"))}`,
    },
    {
      what: "… with every event and embedded response validated against the schema",
      eddy: `${x(ratioOf(cell, EDDY_ON))} the floor (goal ≤ ${TARGETS.validateOn}×)`,
      peers: "—",
    },
    {
      what: `time to first frame, ${ttftStream.events.length}-event stream, 16 KiB chunks (validation off / on)`,
      eddy: `${ttftX(EDDY_OFF)} / ${ttftX(EDDY_ON)} the floor (goal ≤ ${TARGETS.ttft}×)`,
      peers: `\`openai\` Stream ${ttftX("openai Stream")}`,
    },
  ];
}

function label(deltas: number): string {
  return deltas >= 1000 ? `${deltas / 1000}k` : String(deltas);
}

function describeStream(deltas: number, s: GeneratedStream): string {
  const mb = s.bytes.length / 1e6;
  return `${label(deltas)}: ${s.events.length} events (${s.textDeltas} text + ${s.argumentDeltas} argument deltas), ${mb.toFixed(2)} MB, ${Math.round(s.bytes.length / (s.events.length + 1))} B/event`;
}

async function checkCorrectness(contenders: readonly SseContender[], stream: GeneratedStream) {
  const lf = new TextDecoder().decode(stream.bytes);
  const variants = [
    ...CHUNKINGS.map((c) => ({ name: c.label, bytes: stream.bytes, chunking: c.chunking, done: true })),
    { name: "1-byte", bytes: stream.bytes, chunking: fixedChunks(1), done: true },
    ...PROBES.map((p) => ({
      name: p.name,
      bytes: new TextEncoder().encode(p.body(lf)),
      chunking: fixedChunks(7),
      done: p.done ?? true,
    })),
  ];
  const rows: string[][] = [];
  const failed: string[] = [];
  for (const c of contenders) {
    const row = [c.name];
    for (const v of variants) {
      const problem = await verify(c, stream, v.bytes, v.chunking, v.done);
      row.push(problem === undefined ? "ok" : `FAIL: ${problem}`);
      // Only the plain chunkings must pass: the probes document what each contender does.
      if (problem !== undefined && !PROBES.some((p) => p.name === v.name))
        failed.push(`${c.name} [${v.name}]`);
    }
    rows.push(row);
  }
  return { header: ["contender", ...variants.map((v) => v.name)], rows, failed };
}

/** Runs every contender on the small stream at every chunking until `seconds` have passed. */
async function warmUp(contenders: readonly SseContender[], stream: GeneratedStream, seconds: number) {
  const sink = () => {};
  const deadline = Date.now() + seconds * 1000;
  const sets = CHUNKINGS.map((c) => c.chunking.split(stream.bytes));
  while (Date.now() < deadline) {
    for (const chunks of sets) for (const c of contenders) await c.decode(chunks, sink);
  }
}

async function measureCell(
  contenders: readonly SseContender[],
  chunks: readonly Uint8Array[],
  cell: {
    deltas: number;
    label: string;
    stream: GeneratedStream;
    rounds: number;
    /** Expected ms per run, from the same chunking's smaller cell (undefined: unknown). */
    estimate: (name: string) => number | undefined;
  },
): Promise<Cell> {
  collectGarbage();
  let count = 0;
  const sink = () => {
    count++;
  };
  const runnable = contenders.map((c) => ({ name: c.name, run: () => c.decode(chunks, sink) }));
  // A first untimed run each: the warm-up round, and a cost estimate to leave out the slowest.
  const skipped: Cell["skipped"] = [];
  const timed = [];
  for (const r of runnable) {
    const expected = cell.estimate(r.name);
    if (expected !== undefined && expected > MAX_RUN_MS && r.name !== FLOOR) {
      skipped.push({ name: r.name, ms: expected, estimated: true });
      continue;
    }
    const ms = (await timeOnce(r)) / 1e6;
    if (ms > MAX_RUN_MS && r.name !== FLOOR) skipped.push({ name: r.name, ms });
    else timed.push(r);
  }
  const samples = await runRounds(timed, {
    rounds: cell.rounds,
    baseline: FLOOR,
    warmup: 0,
    seed: cell.deltas,
  });
  if (count === 0) throw new Error("nothing was delivered");
  return {
    deltas: cell.deltas,
    chunks: cell.label,
    events: cell.stream.events.length,
    bytes: cell.stream.bytes.length,
    rounds: cell.rounds,
    samples,
    skipped,
  };
}

const THROUGHPUT_HEADER = ["deltas", "chunks", "contender", "ns/event", "MB/s", "x floor", "IQR", "rounds"];

function throughputRows(cell: Cell): string[][] {
  const rows = cell.samples.map((s) => {
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
  for (const s of cell.skipped) {
    rows.push([
      label(cell.deltas),
      cell.chunks,
      s.name,
      `not timed: one run took ${(s.ms / 1000).toFixed(1)} s`,
    ]);
  }
  return rows;
}

function estimateMs(previous: Cell | undefined, name: string, events: number): number | undefined {
  const s = previous?.samples.find((x) => x.name === name);
  return s === undefined || previous === undefined
    ? undefined
    : ((median(s.times) / previous.events) * events) / 1e6;
}

function ratioOf(cell: Cell | undefined, name: string): number {
  const s = cell?.samples.find((x) => x.name === name);
  return s === undefined ? Number.NaN : median(s.ratios);
}

function summaryHeader(cells: readonly Cell[]): string[] {
  return ["contender", ...cells.map((c) => `${label(c.deltas)} ${c.chunks}`)];
}

function summaryRows(contenders: readonly SseContender[], cells: readonly Cell[]): string[][] {
  return contenders.map((c) => [
    c.name,
    ...cells.map((cell) => {
      const s = cell.samples.find((x) => x.name === c.name);
      if (s === undefined) return "-";
      return `${num(median(s.times) / cell.events)} (${num(median(s.ratios), 2)})`;
    }),
  ]);
}

function ttftRows(
  contenders: readonly SseContender[],
  ttft: { label: string; results: { name: string; samples: number[] }[] }[],
) {
  const header = ["contender", ...ttft.flatMap((t) => [`${t.label} µs`, "x floor"])];
  const rows = contenders.map((c) => [
    c.name,
    ...ttft.flatMap((t) => {
      const mine = t.results.find((r) => r.name === c.name)?.samples ?? [];
      const floor = t.results.find((r) => r.name === FLOOR)?.samples ?? [];
      return [formatTtft(mine), num(median(mine) / median(floor), 2)];
    }),
  ]);
  return { header, rows };
}

function targets(
  cells: readonly Cell[],
  ttft: { label: string; results: { name: string; samples: number[] }[] }[],
) {
  const cell = cells.find((c) => c.deltas === 10_000 && c.chunks === "16k");
  const off = ratioOf(cell, EDDY_OFF);
  const on = ratioOf(cell, EDDY_ON);
  const verdict = (ok: boolean) => (ok ? "met" : "MISSED");
  const lines = [
    `decode→frames, validation off, 10k/16k: ${num(off, 2)}× floor (target ≤ ${TARGETS.validateOff}×): ${verdict(off <= TARGETS.validateOff)}`,
    `decode→frames, validation on, 10k/16k: ${num(on, 2)}× floor (target ≤ ${TARGETS.validateOn}×): ${verdict(on <= TARGETS.validateOn)}`,
  ];
  for (const t of ttft) {
    const floor = median(t.results.find((r) => r.name === FLOOR)?.samples ?? []);
    for (const name of [EDDY_OFF, EDDY_ON]) {
      const ratio = median(t.results.find((r) => r.name === name)?.samples ?? []) / floor;
      lines.push(
        `time to first frame, ${name}, ${t.label}: ${num(ratio, 2)}× floor (target ≤ ${TARGETS.ttft}×): ${verdict(ratio <= TARGETS.ttft)}`,
      );
    }
  }
  return lines;
}

export type { BenchContext };
