/**
 * CPU time per agent turn, eddy against the floor-loop, in one process (bench/README.md, "The
 * turn"). Both run over the in-process transport of in-process.ts (pre-generated reply chunks, each
 * behind an await), so only the loop's own CPU counts. Rounds interleave the contenders (order
 * alternating), each round times a batch of runs with `process.cpuUsage()` (user + system) and
 * reports CPU per run; the figures are medians over rounds. Wall time is not used: on a loaded
 * machine it measures the scheduler.
 *
 *   npm run bench:loop-cpu -- [--runs 200] [--rounds 9] [--warmup 300] [--base DIR] [--json]
 *
 * `--base DIR` adds eddy as built by another checkout (a git worktree of an older commit, with its
 * own node_modules or a link to one) to the same rounds: the two copies of eddy load side by side
 * in this process, so before/after is compared at the same load, interleaved (bench/README.md,
 * "The turn"). The script only imports `inProcessContenders` and the contender names, so it also
 * runs unchanged when copied into an older checkout. Both copies should time the same kind of
 * code: this checkout's contenders load eddy's build (bench/built.ts, rebuilt when stale), so copy
 * bench/built.ts and bench/loop/{contenders,in-process}.ts into the other checkout too (before
 * 2026-11-28 its contenders ran the sources through tsx, ~9% slower).
 */
import { resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { EDDY_ON, FLOOR_LOOP } from "./contenders.js";
import { inProcessContenders } from "./in-process.js";

const EDDY_BASE = "eddy (validate on) at --base";

function option(name: string): string | undefined {
  const i = process.argv.indexOf(`--${name}`);
  return i < 0 ? undefined : process.argv[i + 1];
}

function flag(name: string, fallback: number): number {
  const i = process.argv.indexOf(`--${name}`);
  const value = i < 0 ? Number.NaN : Number(process.argv[i + 1]);
  return Number.isFinite(value) && value > 0 ? value : fallback;
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? (sorted[mid] ?? 0) : ((sorted[mid - 1] ?? 0) + (sorted[mid] ?? 0)) / 2;
}

interface Timed {
  name: string;
  prepare?: () => void;
  run: (onDelta: (delta: string) => void) => Promise<string>;
}

const ignore = (): void => {};

/**
 * CPU microseconds per run over `runs` runs. No forced GC before a batch: a full GC shrinks the
 * young generation, and the next batch would pay for regrowing it (twice the CPU per run for eddy,
 * which allocates more per run than the floor; bench/README.md, "The turn").
 */
async function cpuPerRun(contender: Timed, runs: number): Promise<number> {
  let total = 0;
  for (let i = 0; i < runs; i++) {
    contender.prepare?.();
    const start = process.cpuUsage();
    await contender.run(ignore);
    const used = process.cpuUsage(start);
    total += used.user + used.system;
  }
  return total / runs;
}

async function main(): Promise<void> {
  const runs = flag("runs", 200);
  const rounds = flag("rounds", 9);
  const warmup = flag("warmup", 300);
  const { contenders } = inProcessContenders();
  const pick = (name: string): Timed => {
    const found = contenders.find((c) => c.name === name);
    if (found === undefined) throw new Error(`loop-cpu: no contender named ${name}`);
    return found;
  };
  const timed = [pick(FLOOR_LOOP), pick(EDDY_ON)];
  const base = option("base");
  if (base !== undefined) {
    const url = pathToFileURL(resolve(base, "bench/loop/in-process.ts")).href;
    const other = (await import(url)) as { inProcessContenders: typeof inProcessContenders };
    const found = other.inProcessContenders().contenders.find((c) => c.name === EDDY_ON);
    if (found === undefined) throw new Error(`loop-cpu: ${base} has no contender named ${EDDY_ON}`);
    timed.push({ ...found, name: EDDY_BASE });
  }
  for (const c of timed) await cpuPerRun(c, warmup);
  const per = new Map<string, number[]>(timed.map((c) => [c.name, []]));
  const ratios: number[] = [];
  const baseRatios: number[] = [];
  for (let round = 0; round < rounds; round++) {
    const order = round % 2 === 0 ? timed : [...timed].reverse();
    const got = new Map<string, number>();
    for (const c of order) got.set(c.name, await cpuPerRun(c, runs));
    for (const [name, us] of got) per.get(name)?.push(us);
    const floor = got.get(FLOOR_LOOP) ?? 1;
    ratios.push((got.get(EDDY_ON) ?? 0) / floor);
    if (base !== undefined) baseRatios.push((got.get(EDDY_BASE) ?? 0) / floor);
  }
  const summary = {
    runs,
    rounds,
    floorUs: median(per.get(FLOOR_LOOP) ?? []),
    eddyUs: median(per.get(EDDY_ON) ?? []),
    ratio: median(ratios),
    ...(base === undefined
      ? {}
      : { base, baseUs: median(per.get(EDDY_BASE) ?? []), baseRatio: median(baseRatios) }),
  };
  if (process.argv.includes("--json")) {
    process.stdout.write(`${JSON.stringify(summary)}\n`);
    return;
  }
  const fmt = (us: number) => `${(us / 1000).toFixed(3)} ms`;
  process.stdout.write(
    `CPU per run (user+sys, median of ${rounds} rounds × ${runs} runs, interleaved)\n` +
      `  ${FLOOR_LOOP}: ${fmt(summary.floorUs)}\n` +
      `  ${EDDY_ON}: ${fmt(summary.eddyUs)}\n` +
      `  ratio to the floor (median of per-round ratios): ${summary.ratio.toFixed(2)}\n` +
      (summary.baseUs === undefined
        ? ""
        : `  ${EDDY_BASE} (${base}): ${fmt(summary.baseUs)}, ratio ${summary.baseRatio?.toFixed(2)}\n`),
  );
}

await main();
