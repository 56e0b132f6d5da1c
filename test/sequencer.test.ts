import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { describe, expect, it } from "vitest";
import { knownDurations, slowestFirst } from "./support/sequencer.js";

const file = (path: string, size: number, cachedMs?: number, failed?: boolean) => ({
  path,
  size,
  cachedMs,
  failed,
});

describe("the slowest test files first", () => {
  it("orders by the table when there is no cache, then by size", () => {
    const known = new Map([
      ["test/slow.e2e.test.ts", 60],
      ["test/mid.test.ts", 10],
    ]);
    const order = slowestFirst(
      [
        file("src/a.test.ts", 9000),
        file("test/mid.test.ts", 10),
        file("test/slow.e2e.test.ts", 20),
        file("src/b.test.ts", 100),
      ],
      known,
    ).map((f) => f.path);
    expect(order).toEqual(["test/slow.e2e.test.ts", "test/mid.test.ts", "src/a.test.ts", "src/b.test.ts"]);
  });

  it("lets the cache win over the table, and runs failed files first", () => {
    const known = new Map([["test/slow.e2e.test.ts", 60]]);
    const order = slowestFirst(
      [
        file("test/slow.e2e.test.ts", 1, 2_000),
        file("src/a.test.ts", 1, 5_000),
        file("src/f.test.ts", 1, 10, true),
      ],
      known,
    ).map((f) => f.path);
    expect(order).toEqual(["src/f.test.ts", "src/a.test.ts", "test/slow.e2e.test.ts"]);
  });

  it("reads the committed table, and ignores a missing or malformed one", () => {
    const committed = knownDurations();
    expect(committed.get("test/view.browser.test.ts")).toBeGreaterThan(1);
    const dir = mkdtempSync(join(tmpdir(), "eddy-seq-"));
    const bad = join(dir, "durations.json");
    writeFileSync(
      bad,
      JSON.stringify({ "a.test.ts": "slow", "b.test.ts": -1, "c.test.ts": 3, "d.test.ts": null }),
    );
    expect([...knownDurations(pathToFileURL(bad))]).toEqual([["c.test.ts", 3]]);
    writeFileSync(bad, "[1,2");
    expect(knownDurations(pathToFileURL(bad)).size).toBe(0);
    expect(knownDurations(pathToFileURL(join(dir, "missing.json"))).size).toBe(0);
  });
});
