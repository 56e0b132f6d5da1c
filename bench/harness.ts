/**
 * The shared benchmark harness: interleaved shuffled rounds, medians, per-round ratios to a
 * baseline measured in the same round, IQR, tables and the environment line.
 *
 * Method (as in bench/README.md): every contender runs once per round, in a
 * fresh shuffled order, so drift (thermal, other load, GC) hits all of them alike; the ratio to the
 * baseline is taken per round and its median reported, which is steadier than a ratio of medians.
 * No forced GC between runs unless a bench asks (`gcBeforeEachRun`); a full GC (node --expose-gc)
 * between cells. Wall and CPU time are both recorded per run.
 */
import { existsSync, readFileSync } from "node:fs";
import { cpus, loadavg } from "node:os";
import { seededRandom } from "../test/support/chunking.js";

/** One thing to time: runs the whole workload once per call. */
export interface Contender {
  name: string;
  run: () => void | Promise<void>;
}

export interface RoundsOptions {
  /** Untimed rounds first (JIT warm-up for this exact input). @defaultValue 1 */
  warmup?: number;
  /** Timed rounds; each contender runs once per round. */
  rounds: number;
  /** Name of the contender every ratio is taken against. */
  baseline: string;
  /** Seed of the shuffling. @defaultValue 1 */
  seed?: number;
  /**
   * A full GC (node --expose-gc) before every run, untimed, so no run pays for the garbage of the
   * one before it (bench/scaling: a 10N run leaves ten times the garbage of an N run). @defaultValue false
   */
  gcBeforeEachRun?: boolean;
}

/** Timings of one contender in one cell. */
export interface Samples {
  name: string;
  /** Wall time per run, in ns, one per round. */
  times: number[];
  /** time / baseline's time in the same round. */
  ratios: number[];
  /** CPU time (user + system, every thread of this process) per run, in ns, one per round. */
  cpuTimes: number[];
  /** cpu time / baseline's cpu time in the same round. */
  cpuRatios: number[];
}

/** Runs `contenders` in shuffled interleaved rounds and returns their samples, in input order. */
export async function runRounds(
  contenders: readonly Contender[],
  options: RoundsOptions,
): Promise<Samples[]> {
  const rnd = seededRandom(options.seed ?? 1);
  const samples: Samples[] = contenders.map((c) => ({
    name: c.name,
    times: [],
    ratios: [],
    cpuTimes: [],
    cpuRatios: [],
  }));
  const baseIndex = contenders.findIndex((c) => c.name === options.baseline);
  if (baseIndex === -1) throw new Error(`baseline ${options.baseline} is not among the contenders`);
  const warmup = options.warmup ?? 1;
  for (let round = 0; round < warmup + options.rounds; round++) {
    const times = new Array<number>(contenders.length);
    const cpu = new Array<number>(contenders.length);
    for (const i of shuffle(
      contenders.map((_, i) => i),
      rnd,
    )) {
      if (options.gcBeforeEachRun === true) collectGarbage();
      const before = process.cpuUsage();
      times[i] = await timeOnce(contenders[i] as Contender);
      const used = process.cpuUsage(before);
      cpu[i] = (used.user + used.system) * 1000;
    }
    if (round < warmup) continue;
    const base = times[baseIndex] as number;
    const baseCpu = cpu[baseIndex] as number;
    times.forEach((t, i) => {
      samples[i]?.times.push(t);
      samples[i]?.ratios.push(t / base);
      samples[i]?.cpuTimes.push(cpu[i] as number);
      samples[i]?.cpuRatios.push((cpu[i] as number) / baseCpu);
    });
  }
  return samples;
}

/** Wall time of one run, in ns. */
export async function timeOnce(contender: Contender): Promise<number> {
  const start = process.hrtime.bigint();
  const result = contender.run();
  if (result !== undefined) await result;
  return Number(process.hrtime.bigint() - start);
}

/** Fisher–Yates with the given PRNG; returns a new array. */
export function shuffle<T>(items: readonly T[], rnd: () => number): T[] {
  const out = [...items];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(rnd() * (i + 1));
    [out[i], out[j]] = [out[j] as T, out[i] as T];
  }
  return out;
}

/** Linear-interpolated quantile of unsorted numbers (q in [0, 1]). */
export function quantile(values: readonly number[], q: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const pos = (sorted.length - 1) * q;
  const lo = Math.floor(pos);
  const hi = Math.ceil(pos);
  const a = sorted[lo] as number;
  const b = sorted[hi] as number;
  return a + (b - a) * (pos - lo);
}

export const median = (values: readonly number[]): number => quantile(values, 0.5);

/** Interquartile range relative to the median. */
export const relativeIqr = (values: readonly number[]): number =>
  (quantile(values, 0.75) - quantile(values, 0.25)) / median(values);

/** A full GC when node runs with --expose-gc (npm run bench does); a no-op otherwise. */
export function collectGarbage(): void {
  (globalThis as { gc?: () => void }).gc?.();
}

/** Formats a number with thousands separators and `digits` decimals. */
export function num(value: number, digits = 0): string {
  if (!Number.isFinite(value)) return "-";
  return value.toLocaleString("en-US", { minimumFractionDigits: digits, maximumFractionDigits: digits });
}

export const pct = (value: number): string => (Number.isFinite(value) ? `${Math.round(value * 100)}%` : "-");

/** The lowest and highest of some values, formatted ("1.2–3.4", or one number when they agree). */
export function numRange(values: readonly number[], digits = 0): string {
  const [lo, hi] = [num(Math.min(...values), digits), num(Math.max(...values), digits)];
  return lo === hi ? lo : `${lo}–${hi}`;
}

/** A table as aligned plain text (first column left-aligned, the others right-aligned). */
export function textTable(header: readonly string[], rows: readonly (readonly string[])[]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? "").length)));
  const line = (cells: readonly string[]) =>
    cells
      .map((c, i) => (i === 0 ? c.padEnd(widths[i] ?? 0) : c.padStart(widths[i] ?? 0)))
      .join("  ")
      .trimEnd();
  return [line(header), ...rows.map(line)].join("\n");
}

/** The same table in Markdown; columns listed in `textColumns` are left-aligned like the first. */
export function markdownTable(
  header: readonly string[],
  rows: readonly (readonly string[])[],
  textColumns: readonly number[] = [],
): string {
  const align = header.map((_, i) => (i === 0 || textColumns.includes(i) ? ":--" : "--:"));
  return [header, align, ...rows].map((r) => `| ${r.join(" | ")} |`).join("\n");
}

/** Where and when a benchmark ran. */
export interface Environment {
  date: string;
  node: string;
  v8: string;
  platform: string;
  cpu: string;
  loadavg: string;
}

export function environment(): Environment {
  const list = cpus();
  return {
    date: new Date().toISOString(),
    node: process.version,
    v8: process.versions.v8,
    platform: `${process.platform}-${process.arch}`,
    cpu: `${list[0]?.model.trim() ?? "unknown"} ×${list.length}`,
    loadavg: loadavg()
      .map((l) => l.toFixed(2))
      .join(" "),
  };
}

/** Context handed to each benchmark by bench/run.ts. */
export interface BenchContext {
  /** Prints a line of progress or results to the console. */
  log: (line: string) => void;
  /** Fewer rounds and smaller cells (`npm run bench -- --quick`): for checking the bench itself. */
  quick: boolean;
}

/** A benchmark that bench/run.ts can run by name. */
export interface Benchmark {
  name: string;
  title: string;
  /** Runs, logs as it goes, and returns the Markdown section for bench/RESULTS.md. */
  run: (context: BenchContext) => Promise<string>;
}

/** Logs a benchmark's verdict lines and its wall time; returns the end environment and seconds taken. */
export function logEnd(
  ctx: BenchContext,
  started: number,
  verdict: readonly string[],
): { envEnd: Environment; seconds: number } {
  ctx.log(`\n${verdict.join("\n")}`);
  const envEnd = environment();
  const seconds = (Date.now() - started) / 1000;
  ctx.log(`\ntotal ${seconds.toFixed(1)} s; loadavg at end ${envEnd.loadavg}`);
  return { envEnd, seconds };
}

/** One line naming the machine a result comes from. */
export function describeEnvironment(env: Environment): string {
  return `date ${env.date}; node ${env.node} (V8 ${env.v8}, ${env.platform}); cpu ${env.cpu}; loadavg at start ${env.loadavg}`;
}

/**
 * One row of README's benchmark table: what was measured, eddy's result (with its goal, if any), and
 * the peers' results beside it. Rebuilt from bench/RESULTS.md by `npm run bench` (bench/readme-table.ts).
 */
export interface Headline {
  what: string;
  eddy: string;
  peers: string;
}

const HEADLINE_PREFIX = "<!-- headline ";
const HEADLINE_SUFFIX = " -->";

/**
 * A section's headline rows as HTML comments (not shown where Markdown is rendered), one per line,
 * each with the date and load average of the run it came from; bench/readme-table.ts reads them back.
 */
export function headlineLines(rows: readonly Headline[], env: Pick<Environment, "date" | "loadavg">): string {
  const measured = `${env.date.slice(0, 10)}, loadavg ${env.loadavg.split(" ")[0]}`;
  return rows
    .map((row) => {
      // `<` and `>` escaped, so no text can end the comment early.
      const json = JSON.stringify({ ...row, measured })
        .replace(/</g, "\\u003c")
        .replace(/>/g, "\\u003e");
      return `${HEADLINE_PREFIX}${json}${HEADLINE_SUFFIX}`;
    })
    .join("\n");
}

/** The headline rows in a text (bench/RESULTS.md or one section of it), in order; malformed lines are skipped. */
export function parseHeadlines(text: string): (Headline & { measured: string })[] {
  const rows: (Headline & { measured: string })[] = [];
  for (const line of text.split("\n")) {
    if (!line.startsWith(HEADLINE_PREFIX) || !line.endsWith(HEADLINE_SUFFIX)) continue;
    try {
      const value = JSON.parse(line.slice(HEADLINE_PREFIX.length, -HEADLINE_SUFFIX.length)) as Record<
        string,
        unknown
      >;
      const { what, eddy, peers, measured } = value;
      if ([what, eddy, peers, measured].every((v) => typeof v === "string"))
        rows.push({ what, eddy, peers, measured } as Headline & { measured: string });
    } catch {
      // not a headline we wrote: skipped
    }
  }
  return rows;
}

/**
 * CPU time (user + system) of this process's reaped descendants, in ms: cutime + cstime of
 * /proc/self/stat (clock ticks, 100 a second on Linux); NaN where there is no /proc.
 */
export function childrenCpuMs(): number {
  if (!existsSync("/proc/self/stat")) return Number.NaN;
  const fields = readFileSync("/proc/self/stat", "utf8").split(") ")[1]?.split(" ") ?? [];
  // cutime and cstime are fields 16 and 17 of stat(5).
  return (Number(fields[13]) + Number(fields[14])) * 10;
}
