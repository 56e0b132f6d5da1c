/**
 * `npm run bench [-- NAME… [--quick]]`: runs every benchmark, or the named ones, prints their
 * tables, and replaces their sections in bench/RESULTS.md (other sections are kept).
 *
 * To add a benchmark: write `bench/<name>/index.ts` exporting a `Benchmark` (see harness.ts) and
 * list it in BENCHMARKS below.
 */
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { batchBenchmark } from "./batch/index.js";
import { chatBenchmark } from "./chat/index.js";
import { grepBenchmark } from "./grep/index.js";
import type { Benchmark } from "./harness.js";
import { loopBenchmark } from "./loop/index.js";
import { providerBenchmark } from "./provider/index.js";
import { scalingBenchmark } from "./scaling/index.js";
import { shutdownBenchmark } from "./shutdown/index.js";
import { sseBenchmark } from "./sse/index.js";
import { startupBenchmark } from "./startup/index.js";
import { tokenizerBenchmark } from "./tokenizer/index.js";

const BENCHMARKS: readonly Benchmark[] = [
  sseBenchmark,
  providerBenchmark,
  loopBenchmark,
  chatBenchmark,
  grepBenchmark,
  tokenizerBenchmark,
  batchBenchmark,
  scalingBenchmark,
  shutdownBenchmark,
  startupBenchmark,
];

const RESULTS = join(dirname(fileURLToPath(import.meta.url)), "RESULTS.md");
const HEADER =
  "# Benchmark results\n\nWritten by `npm run bench` (bench/run.ts); each section is replaced when its benchmark runs. Numbers are from the machine named in the section.\n";

async function main(argv: readonly string[]): Promise<number> {
  const quick = argv.includes("--quick");
  const names = argv.filter((a) => !a.startsWith("--"));
  const unknown = names.filter((n) => !BENCHMARKS.some((b) => b.name === n));
  if (unknown.length > 0) {
    process.stderr.write(
      `unknown benchmark ${unknown.map((n) => `"${n}"`).join(", ")}; available: ${BENCHMARKS.map((b) => b.name).join(", ")}\n`,
    );
    return 2;
  }
  if ((globalThis as { gc?: unknown }).gc === undefined) {
    process.stderr.write(
      "note: run with node --expose-gc (npm run bench does) for a full GC between cells\n",
    );
  }
  const selected = names.length === 0 ? BENCHMARKS : BENCHMARKS.filter((b) => names.includes(b.name));
  for (const benchmark of selected) {
    const section = await benchmark.run({ log: (line) => process.stdout.write(`${line}\n`), quick });
    if (!quick) writeSection(benchmark.name, section);
  }
  if (!quick) process.stdout.write(`\nwrote ${RESULTS}\n`);
  return 0;
}

/** Replaces (or appends) the section between `<!-- bench:NAME -->` markers. */
function writeSection(name: string, body: string): void {
  const start = `<!-- bench:${name}:start -->`;
  const end = `<!-- bench:${name}:end -->`;
  const block = `${start}\n${body.trim()}\n${end}`;
  const current = existsSync(RESULTS) ? readFileSync(RESULTS, "utf8") : HEADER;
  const from = current.indexOf(start);
  const to = current.indexOf(end);
  const next =
    from !== -1 && to > from
      ? `${current.slice(0, from)}${block}${current.slice(to + end.length)}`
      : `${current.trimEnd()}\n\n${block}\n`;
  writeFileSync(RESULTS, next);
}

process.exitCode = await main(process.argv.slice(2));
