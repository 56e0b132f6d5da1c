/**
 * The docs say what the code does today (docs/decisions.md #15): the root entry's runtime name
 * count and its subpaths as docs/architecture.md lists them, checked against the code.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import * as root from "../src/index.js";
import { ROOT } from "./support/cli.js";

const architecture = readFileSync(join(ROOT, "docs", "architecture.md"), "utf8");
const pkg = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as {
  exports: Record<string, unknown>;
};

describe("docs/architecture.md matches the code", () => {
  it("states the root entry's runtime name count", () => {
    const stated = /lists its exports by name: (\d+) runtime names/.exec(architecture)?.[1];
    expect(Number(stated)).toBe(Object.keys(root).length);
  });

  it("lists every subpath of package.json in its subpath table and the entry row", () => {
    const subpaths = Object.keys(pkg.exports)
      .filter((k) => k !== "." && k !== "./package.json")
      .map((k) => `eddy/${k.slice(2)}`);
    expect(subpaths.length).toBeGreaterThan(5);
    for (const subpath of subpaths) {
      expect(architecture, subpath).toContain(`| \`${subpath}\` |`);
      expect(architecture, subpath).toMatch(new RegExp(`\\| \`entry/\` \\|[^\\n]*\`${subpath}\``));
    }
  });

  it("the root entry names its exports (no export *)", () => {
    expect(readFileSync(join(ROOT, "src", "index.ts"), "utf8")).not.toMatch(/export \*/);
  });
});
