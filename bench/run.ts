/**
 * `npm run bench [-- NAME… [--quick]]`: runs every benchmark, or the named ones, prints their
 * tables, replaces their sections in bench/RESULTS.md (other sections are kept), and rebuilds
 * README's benchmark table from the headline rows of every section (bench/readme-table.ts).
 * `npm run bench -- --readme` only rebuilds the table. `--quick` writes nothing and prints the
 * headline rows it would have written.
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
import { type Benchmark, parseHeadlines } from "./harness.js";
import { loopBenchmark } from "./loop/index.js";
import { providerBenchmark } from "./provider/index.js";
import { headlineTable, sectionMarkers, withTable } from "./readme-table.js";
import { scalingBenchmark } from "./scaling/index.js";
import { shutdownBenchmark } from "./shutdown/index.js";
import { sseBenchmark } from "./sse/index.js";
import { startupBenchmark } from "./startup/index.js";
import { suiteBenchmark } from "./suite/index.js";
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
  suiteBenchmark,
];

const RESULTS = join(dirname(fileURLToPath(import.meta.url)), "RESULTS.md");
const README = join(dirname(fileURLToPath(import.meta.url)), "..", "README.md");
const HEADER =
  "# Benchmark results\n\nWritten by `npm run bench` (bench/run.ts); each section is replaced when its benchmark runs. Numbers are from the machine named in the section.\n";

async function main(argv: readonly string[]): Promise<number> {
  const quick = argv.includes("--quick");
  if (argv.includes("--readme")) {
    writeReadmeTable();
    return 0;
  }
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
    else
      for (const row of parseHeadlines(section))
        process.stdout.write(
          `headline (quick, not written): ${row.what} | ${row.eddy} | ${row.peers} | ${row.measured}\n`,
        );
  }
  if (!quick) {
    writeReadmeTable();
    process.stdout.write(`\nwrote ${RESULTS} and README.md's benchmark table\n`);
  }
  return 0;
}

/** README's benchmark table from the headline rows of RESULTS.md, in the benchmarks' order. */
function writeReadmeTable(): void {
  const results = existsSync(RESULTS) ? readFileSync(RESULTS, "utf8") : HEADER;
  const table = headlineTable(
    results,
    BENCHMARKS.map((b) => b.name),
  );
  writeFileSync(README, withTable(readFileSync(README, "utf8"), table));
}

/** Replaces (or appends) the section between `<!-- bench:NAME -->` markers. */
function writeSection(name: string, body: string): void {
  const { start, end } = sectionMarkers(name);
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
