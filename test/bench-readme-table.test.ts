/**
 * README's benchmark table is rebuilt from the headline rows each benchmark writes into its section of
 * bench/RESULTS.md (bench/harness.ts, bench/readme-table.ts); the suite benchmark reads vitest's
 * summary (bench/suite/index.ts).
 */
import { describe, expect, it } from "vitest";
import { headlineLines, numRange, parseHeadlines } from "../bench/harness.js";
import { headlineTable, TABLE_END, TABLE_START, withTable } from "../bench/readme-table.js";
import { vitestSummary } from "../bench/suite/index.js";

const env = { date: "2026-11-28T08:00:00.000Z", loadavg: "1.50 2.00 3.00" };

describe("headline rows", () => {
  it("round-trip through their comment lines, with the date and load of the run", () => {
    const rows = [
      { what: "a | b", eddy: "1.2× the floor", peers: "x 3×" },
      { what: "second", eddy: "ok", peers: "—" },
    ];
    const text = headlineLines(rows, env);
    expect(text.split("\n")).toHaveLength(2);
    expect(parseHeadlines(`# section\n\n${text}\nmore text`)).toEqual(
      rows.map((r) => ({ ...r, measured: "2026-11-28, loadavg 1.50" })),
    );
  });

  it("cannot end their comment early, whatever the text says", () => {
    const row = { what: "evil --> <!-- x", eddy: "<script>", peers: "a\nb" };
    const line = headlineLines([row], env);
    expect(line.indexOf("-->")).toBe(line.length - 3); // only the comment's own end
    expect(line).not.toContain("<script>");
    expect(parseHeadlines(line)[0]).toMatchObject(row);
  });

  it("skips lines that are not well-formed headlines", () => {
    const text = [
      "<!-- headline {not json} -->",
      '<!-- headline {"what":1,"eddy":"a","peers":"b","measured":"c"} -->',
      '<!-- headline {"what":"w","eddy":"e","peers":"p"} -->',
      '<!-- headline {"what":"w","eddy":"e","peers":"p","measured":"m"} -->',
    ].join("\n");
    expect(parseHeadlines(text)).toEqual([{ what: "w", eddy: "e", peers: "p", measured: "m" }]);
  });
});

describe("README's table", () => {
  const section = (name: string, body: string) =>
    `<!-- bench:${name}:start -->\n${body}\n<!-- bench:${name}:end -->`;
  const results = [
    "# Benchmark results",
    section("b", `## B\n${headlineLines([{ what: "b1", eddy: "2×", peers: "p|q" }], env)}`),
    section("a", `## A\n${headlineLines([{ what: "a1", eddy: "1×", peers: "—" }], env)}`),
    section("c", "## C without headlines"),
  ].join("\n\n");

  it("lists the rows in the benchmarks' order, escaping cells, and names the benchmarks without rows", () => {
    const table = headlineTable(results, ["a", "b", "c", "d"]);
    expect(table.split("\n").slice(0, 4)).toEqual([
      "| what | eddy | peers | measured |",
      "| --- | --- | --- | --- |",
      "| a1 | 1× | — | 2026-11-28, loadavg 1.50 |",
      "| b1 | 2× | p\\|q | 2026-11-28, loadavg 1.50 |",
    ]);
    expect(table).toContain("No headline yet from: `c`, `d`");
  });

  it("replaces only what is between the markers, and says so when they are missing", () => {
    const readme = `# eddy\n\nintro\n\n${TABLE_START}\nold table\n${TABLE_END}\n\nafter\n`;
    const next = withTable(readme, "| new |");
    expect(next).toBe(`# eddy\n\nintro\n\n${TABLE_START}\n| new |\n${TABLE_END}\n\nafter\n`);
    expect(withTable(next, "| new |")).toBe(next);
    expect(() => withTable("# no markers\n", "x")).toThrow(/bench:table:start/);
    expect(() => withTable(`${TABLE_END}\nx\n${TABLE_START}\n`, "x")).toThrow(/bench:table:start/);
  });
});

it("a range of values reads lowest–highest, one number when they agree", () => {
  expect(numRange([3.21, 1.04, 2], 1)).toBe("1.0–3.2");
  expect(numRange([2, 2.04], 1)).toBe("2.0");
});

describe("vitest's summary", () => {
  it("gives the duration in seconds and the test counts, colours or not", () => {
    const output = [
      " \u001b[2m Test Files \u001b[22m \u001b[1m\u001b[32m209 passed\u001b[39m\u001b[22m (209)",
      "      Tests  2917 passed | 1 skipped (2918)",
      "   Start at  07:00:00",
      "   Duration  290.12s (transform 5.1s, setup 0ms)",
    ].join("\n");
    expect(vitestSummary(output)).toEqual({ seconds: 290.12, tests: "2917 passed | 1 skipped (2918)" });
    expect(vitestSummary("   Duration  950ms (transform 1ms)")).toEqual({ seconds: 0.95 });
    expect(vitestSummary("no summary")).toEqual({});
  });
});
