import { describe, expect, it } from "vitest";
import { diffHunks, fileDiffLines, patchLines } from "./diff-view.js";

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

describe("fileDiffLines: a CRLF file (docs/pitfalls.md #120)", () => {
  const texts = (before: string | null, after: string) =>
    fileDiffLines({ path: "a.txt", before, after, append: false });
  const shown = (before: string | null, after: string) => texts(before, after).lines.map((l) => l.text);

  it("LF content for a CRLF file: the one changed line, the endings said once in the title", () => {
    // Before: every line removed with its CR and added again without.
    const view = texts("one\r\ntwo\r\nthree\r\n", "one\ntwo!\nthree\n");
    expect(view.notes).toEqual(["its CRLF line endings become LF, on every line"]);
    expect(view.lines.map((l) => l.text)).toEqual([
      "@@ -1,3 +1,3 @@\n",
      " one\n",
      "-two\n",
      "+two!\n",
      " three\n",
    ]);
  });

  it("a CRLF file kept CRLF: no CR anywhere, one note; a change of the endings only is said so", () => {
    const view = texts("a\r\nb\r\nc\r\n", "a\r\nB\r\nc\r\n");
    expect(view.notes).toEqual(["CRLF line endings, not shown below"]);
    expect(view.lines.map((l) => l.text).join("")).not.toMatch(/\r|⟨CR⟩/);
    expect(view.lines.filter((l) => l.class !== "diff-ctx").map((l) => l.text)).toEqual([
      "@@ -1,3 +1,3 @@\n",
      "-b\n",
      "+B\n",
    ]);
    expect(texts("a\nb\n", "a\r\nb\r\n")).toMatchObject({
      notes: ["its LF line endings become CRLF, on every line"],
      lines: [],
      empty: "no other change",
    });
    expect(texts("a\r\n", "a\r\n")).toMatchObject({ lines: [], empty: "no change" });
  });

  it("a mixed file keeps each CR, shown as ⟨CR⟩, so a single line's ending change shows", () => {
    const view = texts("a\r\nb\n", "a\r\nb\r\n");
    expect(view.notes).toEqual(["mixed CRLF and LF line endings; each CR shows as ⟨CR⟩"]);
    expect(view.lines.map((l) => l.text)).toEqual(["@@ -1,2 +1,2 @@\n", " a⟨CR⟩\n", "-b\n", "+b⟨CR⟩\n"]);
  });

  it("a lone CR always shows; new content of a CRLF file shows without CRs, both notes said", () => {
    expect(shown("x\ry\n", "x\rz\n")).toContain("+x⟨CR⟩z\n");
    const fresh = texts(null, "one\r\ntwo\r\n");
    expect(fresh.notes[0]).toBe("CRLF line endings, not shown below");
    expect(fresh.notes[1]).toMatch(/^new content/);
    expect(fresh.lines.map((l) => l.text)).toEqual(["+one\n", "+two\n", "+\n"]);
    expect(texts("", "").empty).toBe("no change");
  });
});

describe("patchLines: an apply_patch envelope's line endings (docs/pitfalls.md #122)", () => {
  const lf = "*** Begin Patch\n*** Update File: a.txt\n@@\n one\n-two\n+two!\n three\n*** End Patch\n";
  const shown = (patch: string) => patchLines(patch).lines.map((l) => [l.class, l.text]);

  it("a CRLF envelope shows as the LF one, its endings said once", () => {
    // Before: every line kept its raw CR ("-two\r\n"), invisible on the page.
    const view = patchLines(lf.replaceAll("\n", "\r\n"));
    expect(view.notes).toEqual(["CRLF line endings, not shown below"]);
    expect(view.lines).toEqual(patchLines(lf).lines);
    expect(view.lines.map((l) => l.text).join("")).not.toMatch(/\r|⟨CR⟩/);
    expect(shown(lf).filter(([c]) => c === "diff-del" || c === "diff-add")).toEqual([
      ["diff-del", "-two\n"],
      ["diff-add", "+two!\n"],
    ]);
  });

  it("an LF envelope: no note, lines as they were", () => {
    expect(patchLines(lf).notes).toEqual([]);
    expect(shown(lf)[0]).toEqual(["diff-file", "*** Begin Patch\n"]);
    expect(shown(lf)[2]).toEqual(["diff-hunk", "@@\n"]);
  });

  it("a mixed envelope keeps each CR, shown as ⟨CR⟩; a lone CR always shows", () => {
    const mixed = lf.replace("-two\n", "-two\r\n");
    const view = patchLines(mixed);
    expect(view.notes).toEqual(["mixed CRLF and LF line endings; each CR shows as ⟨CR⟩"]);
    expect(view.lines.map((l) => l.text)).toContain("-two⟨CR⟩\n");
    expect(view.lines.map((l) => l.text).join("")).not.toMatch(/\r/);
    const lone = patchLines(lf.replace("+two!\n", "+two\r!\n"));
    expect(lone.notes).toEqual([]);
    expect(lone.lines.map((l) => l.text)).toContain("+two⟨CR⟩!\n");
    const crlfLone = patchLines(lf.replace("+two!\n", "+two\r!\n").replaceAll("\n", "\r\n"));
    expect(crlfLone.notes).toEqual(["CRLF line endings, not shown below"]);
    expect(crlfLone.lines.map((l) => l.text)).toContain("+two⟨CR⟩!\n");
  });

  it("hostile text: an empty patch, control characters other than CR pass as they are", () => {
    expect(patchLines("")).toEqual({ notes: [], lines: [{ class: "diff-ctx", text: "\n" }] });
    expect(patchLines("+a\u001b[2J\r\n").lines[0]?.text).toBe("+a\u001b[2J\n");
  });
});
