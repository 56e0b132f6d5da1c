/**
 * Timing runs of the loop: after a warm-up, rounds of `runsPerRound` runs per contender, the
 * contenders alternating run by run in a fresh shuffled order each time (as in
 * bench/README.md). Each run is split with the replay server's records, which
 * share the client's clock:
 *
 * A = run start → request #1 at the server; B = server #1 (request arrived → last byte written);
 * C = response #1 written → request #2 at the server (parse #1, run the tool, build #2);
 * D = server #2; E = response #2 written → run resolved (parse #2, finish).
 */
import { seededRandom } from "../../test/support/chunking.js";
import { collectGarbage, median, quantile, shuffle } from "../harness.js";
import type { ReplayServer } from "../provider/replay-server.js";
import type { LoopContender } from "./contenders.js";

/** One run, in ns. Server-derived fields are NaN without a server. */
export interface RunSample {
  run: number;
  /** Run start → the answer's first text delta reaching the consumer. */
  ttft: number;
  a: number;
  b: number;
  c: number;
  d: number;
  e: number;
  /** The server wrote the answer's first text delta → the consumer got it. */
  lastHop: number;
}

export interface LoopSamples {
  name: string;
  /** Per round, that round's runs. */
  rounds: RunSample[][];
}

export interface MeasureOptions {
  rounds: number;
  runsPerRound: number;
  warmupRuns: number;
  seed: number;
  /** Present for contenders over HTTP: splits each run with the server's records. */
  server?: ReplayServer;
}

const REQUESTS_PER_RUN = 2;

export async function measureLoop(
  contenders: readonly LoopContender[],
  options: MeasureOptions,
): Promise<LoopSamples[]> {
  const { server } = options;
  const base = process.hrtime.bigint();
  const now = server?.now ?? (() => Number(process.hrtime.bigint() - base));
  const rnd = seededRandom(options.seed);
  const order = contenders.map((_, i) => i);

  const once = async (contender: LoopContender): Promise<RunSample> => {
    contender.prepare?.();
    const before = server?.served() ?? 0;
    let first = 0;
    const onDelta = () => {
      if (first === 0) first = now();
    };
    const start = now();
    await contender.run(onDelta);
    const end = now();
    const sample: RunSample = {
      run: end - start,
      ttft: first - start,
      a: Number.NaN,
      b: Number.NaN,
      c: Number.NaN,
      d: Number.NaN,
      e: Number.NaN,
      lastHop: Number.NaN,
    };
    if (server !== undefined) {
      if (!server.waitServed(before + REQUESTS_PER_RUN) || server.served() !== before + REQUESTS_PER_RUN) {
        throw new Error(`${contender.name}: ${server.served() - before} requests in one run, want 2`);
      }
      const r1 = server.record(before);
      const r2 = server.record(before + 1);
      sample.a = r1.arrived - start;
      sample.b = r1.lastWrite - r1.arrived;
      sample.c = r2.arrived - r1.lastWrite;
      sample.d = r2.lastWrite - r2.arrived;
      sample.e = end - r2.lastWrite;
      sample.lastHop = first - r2.firstDelta;
    }
    return sample;
  };

  for (let i = 0; i < options.warmupRuns; i++) {
    for (const k of shuffle(order, rnd)) await once(contenders[k] as LoopContender);
  }
  const out: LoopSamples[] = contenders.map((c) => ({ name: c.name, rounds: [] }));
  for (let round = 0; round < options.rounds; round++) {
    collectGarbage();
    for (const s of out) s.rounds.push([]);
    for (let i = 0; i < options.runsPerRound; i++) {
      for (const k of shuffle(order, rnd)) {
        out[k]?.rounds[round]?.push(await once(contenders[k] as LoopContender));
      }
    }
  }
  return out;
}

/** The median of one field over all runs. */
export function medianOf(s: LoopSamples, field: keyof RunSample): number {
  return median(s.rounds.flat().map((r) => r[field]));
}

/** run − (B + D): time outside the server's request windows. */
export const runMinusServer = (r: RunSample): number => r.run - (r.b + r.d);

/** Per round: median of `value` over the round's runs. */
export function roundMedians(s: LoopSamples, value: (r: RunSample) => number): number[] {
  return s.rounds.map((runs) => median(runs.map(value)));
}

/** Per round, `combine(median of a, median of b)`; returns the median over rounds, min and max. */
export function paired(
  a: LoopSamples,
  b: LoopSamples,
  value: (r: RunSample) => number,
  combine: (x: number, y: number) => number,
): { median: number; min: number; max: number } {
  const ma = roundMedians(a, value);
  const mb = roundMedians(b, value);
  const per = ma.map((x, i) => combine(x, mb[i] as number));
  return { median: median(per), min: Math.min(...per), max: Math.max(...per) };
}

/** (p75 − p25) / median over all runs. */
export function iqrOf(s: LoopSamples, value: (r: RunSample) => number): number {
  const all = s.rounds.flat().map(value);
  return (quantile(all, 0.75) - quantile(all, 0.25)) / median(all);
}

/**
 * The other way round: each contender alone for `runs` runs in a row (after its warm-up), in
 * `blocks` blocks (A B C A B C …, so drift hits all alike). Returns, per contender, the median run
 * of each block, in ns. Shows how much a contender's time depends on what ran just before it.
 */
export async function measureBackToBack(
  contenders: readonly LoopContender[],
  options: { blocks: number; runs: number; warmupRuns: number },
): Promise<Map<string, number[]>> {
  const out = new Map(contenders.map((c) => [c.name, [] as number[]]));
  for (const c of contenders) for (let i = 0; i < options.warmupRuns; i++) await c.run(() => {});
  for (let block = 0; block < options.blocks; block++) {
    for (const c of contenders) {
      collectGarbage();
      const times: number[] = [];
      for (let i = 0; i < options.runs; i++) {
        c.prepare?.();
        const start = process.hrtime.bigint();
        await c.run(() => {});
        times.push(Number(process.hrtime.bigint() - start));
      }
      out.get(c.name)?.push(median(times));
    }
  }
  return out;
}
