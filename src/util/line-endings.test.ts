import { describe, expect, it } from "vitest";
import { diffableEndings, endingsOf, shownEndings } from "./line-endings.js";

describe("endingsOf", () => {
  it("names what ends the lines: none, LF, CRLF or mixed; a CR not before an LF ends none", () => {
    expect(endingsOf("")).toBe("none");
    expect(endingsOf("one line")).toBe("none");
    expect(endingsOf("a\rb\r")).toBe("none");
    expect(endingsOf("a\nb\n")).toBe("LF");
    expect(endingsOf("a\r\nb\r\n")).toBe("CRLF");
    expect(endingsOf("a\r\nb")).toBe("CRLF");
    expect(endingsOf("a\r\nb\n")).toBe("mixed");
    expect(endingsOf("\n\r\n")).toBe("mixed");
    expect(endingsOf("\r\n")).toBe("CRLF");
  });
});

describe("diffableEndings (docs/pitfalls.md #113, #120)", () => {
  it("a CRLF file on both sides: compared without the CRs, said once", () => {
    expect(diffableEndings("a\r\nb\r\n", "a\r\nc\r\n")).toEqual({
      before: "a\nb\n",
      after: "a\nc\n",
      note: "CRLF line endings, not shown below",
    });
  });

  it("CRLF → LF and LF → CRLF: the change of every line's ending is said, the lines compared", () => {
    expect(diffableEndings("a\r\nb\r\n", "a\nc\n")).toEqual({
      before: "a\nb\n",
      after: "a\nc\n",
      note: "its CRLF line endings become LF, on every line",
    });
    expect(diffableEndings("a\nb\n", "a\r\nb\r\n")).toEqual({
      before: "a\nb\n",
      after: "a\nb\n",
      note: "its LF line endings become CRLF, on every line",
    });
  });

  it("a side that mixes CRLF and LF keeps every CR (each is shown), and says so", () => {
    for (const [before, after] of [
      ["a\r\nb\n", "a\r\nb\r\n"],
      ["a\r\nb\r\n", "a\r\nb\n"],
      ["a\nb\n", "a\r\nb\n"],
    ] as const) {
      expect(diffableEndings(before, after)).toEqual({
        before,
        after,
        note: "mixed CRLF and LF line endings; each CR shows as ⟨CR⟩",
      });
    }
  });

  it("a lone CR is kept: in an LF file, and in a CRLF file beside the CRs taken off", () => {
    expect(diffableEndings("a\rb\n", "a\rc\n")).toEqual({ before: "a\rb\n", after: "a\rc\n" });
    expect(diffableEndings("a\rb\r\n", "a\r\r\n").after).toBe("a\r\n");
    expect(diffableEndings("x\r\r\n", "y\r\n")).toMatchObject({ before: "x\r\n", after: "y\n" });
  });

  it("an empty file: no note unless the other side is CRLF; LF and no line break are no note", () => {
    expect(diffableEndings("", "")).toEqual({ before: "", after: "" });
    expect(diffableEndings("", "a\nb\n")).toEqual({ before: "", after: "a\nb\n" });
    expect(diffableEndings("", "a\r\n")).toEqual({
      before: "",
      after: "a\n",
      note: "CRLF line endings, not shown below",
    });
    expect(diffableEndings("a\r\n", "")).toMatchObject({ before: "a\n", after: "" });
    expect(diffableEndings("x", "y")).toEqual({ before: "x", after: "y" });
  });
});

describe("shownEndings: one text, a diff already (docs/pitfalls.md #122)", () => {
  it("all CRLF loses the CRs and says so; mixed keeps them and says so; LF, none and empty say nothing", () => {
    expect(shownEndings("a\r\nb\r\n")).toEqual({
      text: "a\nb\n",
      note: "CRLF line endings, not shown below",
    });
    expect(shownEndings("a\r\nb\n")).toEqual({
      text: "a\r\nb\n",
      note: "mixed CRLF and LF line endings; each CR shows as ⟨CR⟩",
    });
    expect(shownEndings("a\nb\n")).toEqual({ text: "a\nb\n" });
    expect(shownEndings("a\rb")).toEqual({ text: "a\rb" });
    expect(shownEndings("")).toEqual({ text: "" });
    expect(shownEndings("x\r\r\n").text).toBe("x\r\n");
  });
});
