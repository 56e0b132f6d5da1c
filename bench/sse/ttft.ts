/**
 * Time to first frame: from calling the contender with the chunks already in memory (so per-stream
 * setup counts) until its first event or frame reaches the sink. Runs are interleaved in shuffled
 * order, many per contender; the median and p10–p90 are reported, and the ratio of medians to the
 * floor's.
 */
import { seededRandom } from "../../test/support/chunking.js";
import { quantile, shuffle } from "../harness.js";
import type { SseContender } from "./contenders.js";

export interface TtftResult {
  name: string;
  /** ns, one per run. */
  samples: number[];
}

/** Measures `runs` first-frame times per contender on the same chunks. */
export async function measureTtft(
  contenders: readonly SseContender[],
  chunks: readonly Uint8Array[],
  runs: number,
  seed = 7,
): Promise<TtftResult[]> {
  const rnd = seededRandom(seed);
  const results = contenders.map((c) => ({ name: c.name, samples: [] as number[] }));
  const warmup = Math.max(10, Math.round(runs / 5));
  for (let run = 0; run < warmup + runs; run++) {
    for (const i of shuffle(
      contenders.map((_, i) => i),
      rnd,
    )) {
      const contender = contenders[i] as SseContender;
      let first = 0n;
      const sink = () => {
        if (first === 0n) first = process.hrtime.bigint();
      };
      const start = process.hrtime.bigint();
      const done = contender.decode(chunks, sink);
      if (done !== undefined) await done;
      if (run >= warmup) results[i]?.samples.push(Number(first - start));
    }
  }
  return results;
}

/** "median (p10–p90)" in µs. */
export function formatTtft(samples: readonly number[]): string {
  const us = (ns: number) => (ns / 1000).toFixed(ns < 10_000 ? 1 : 0);
  return `${us(quantile(samples, 0.5))} (${us(quantile(samples, 0.1))}–${us(quantile(samples, 0.9))})`;
}
