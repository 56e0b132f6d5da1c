/**
 * README's benchmark table, rebuilt from bench/RESULTS.md: each benchmark's section carries its
 * headline rows (harness.ts `headlineLines`), and the table lists them in the order the benchmarks
 * run, between `<!-- bench:table:start -->` and `<!-- bench:table:end -->` in README.md. A benchmark
 * that has not run since it got its headlines keeps its section as it was and adds no row (the table
 * says which). `npm run bench` rewrites the table after its benchmarks; `npm run bench -- --readme`
 * rewrites it from RESULTS.md alone.
 */
import { type Headline, parseHeadlines } from "./harness.js";

export const TABLE_START = "<!-- bench:table:start -->";
export const TABLE_END = "<!-- bench:table:end -->";

/** The markers around one benchmark's section of RESULTS.md (bench/run.ts writes them). */
export function sectionMarkers(name: string): { start: string; end: string } {
  return { start: `<!-- bench:${name}:start -->`, end: `<!-- bench:${name}:end -->` };
}

/** The section of one benchmark in RESULTS.md text, or undefined when it has none. */
export function sectionOf(results: string, name: string): string | undefined {
  const { start, end } = sectionMarkers(name);
  const from = results.indexOf(start);
  const to = results.indexOf(end, from);
  return from === -1 || to === -1 ? undefined : results.slice(from + start.length, to);
}

const cell = (text: string) => text.replace(/\r?\n/g, " ").replace(/\|/g, "\\|").trim();

/** The Markdown table of the headline rows of `names`' sections, in that order. */
export function headlineTable(results: string, names: readonly string[]): string {
  const rows: (Headline & { measured: string })[] = [];
  const missing: string[] = [];
  for (const name of names) {
    const section = sectionOf(results, name);
    const found = section === undefined ? [] : parseHeadlines(section);
    if (found.length === 0) missing.push(name);
    rows.push(...found);
  }
  const lines = [
    "| what | eddy | peers | measured |",
    "| --- | --- | --- | --- |",
    ...rows.map((r) => `| ${cell(r.what)} | ${cell(r.eddy)} | ${cell(r.peers)} | ${cell(r.measured)} |`),
  ];
  if (missing.length > 0)
    lines.push(
      "",
      `No headline yet from: ${missing.map((n) => `\`${n}\``).join(", ")} (run \`npm run bench -- ${missing.join(" ")}\`).`,
    );
  return lines.join("\n");
}

/** README text with the table between the markers replaced; throws when the markers are missing. */
export function withTable(readme: string, table: string): string {
  const from = readme.indexOf(TABLE_START);
  const to = readme.indexOf(TABLE_END, from);
  if (from === -1 || to === -1)
    throw new Error(`README.md has no ${TABLE_START} … ${TABLE_END} block for the benchmark table`);
  return `${readme.slice(0, from + TABLE_START.length)}\n${table}\n${readme.slice(to)}`;
}
