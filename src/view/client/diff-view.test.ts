import { describe, expect, it } from "vitest";
import { diffHunks } from "./diff-view.js";

describe("diffHunks (found by a probe: a hostile tape's rewrite froze the page for 42 s)", () => {
  const lines = (prefix: string, n: number) =>
    Array.from({ length: n }, (_, i) => `${prefix}${i}`).join("\n");

  it("a rewrite past the edit bound is not diffed (the page shows the new content)", () => {
    expect(diffHunks("f.txt", lines("a", 16_000), lines("b", 16_000))).toBeUndefined();
  });

  it("an edit within the bound is a diff; against an empty side too", () => {
    const before = lines("a", 16_000);
    const hunks = diffHunks("f.txt", before, before.replace("a7\n", "changed\n"));
    expect(hunks?.flatMap((h) => h.lines)).toContain("+changed");
    expect(diffHunks("f.txt", "", lines("b", 16_000))?.[0]?.lines.length).toBeGreaterThanOrEqual(16_000);
  });
});
