import { describe, expect, it } from "vitest";
import { hasControlChars, safeJson } from "./control-chars.js";

describe("safeJson", () => {
  it("escapes what JSON.stringify leaves raw and a terminal acts on; the JSON is the same", () => {
    const value = { a: "x\u009b31m\u202eY\u2066z\u2069\u2028 ok é 中\u007f" };
    const shown = safeJson(value);
    expect(shown).toBe('{"a":"x\\u009b31m\\u202eY\\u2066z\\u2069\\u2028 ok é 中\\u007f"}');
    expect(JSON.parse(shown)).toEqual(value);
  });

  it("C1 at the start and the end, NUL, ESC, a lone surrogate: all escaped, indented as asked", () => {
    const value = { t: "\u009b\u0000\u001b[2J\ud800x\udc00\u0085" };
    const shown = safeJson(value, 2);
    expect(shown).toBe('{\n  "t": "\\u009b\\u0000\\u001b[2J\\ud800x\\udc00\\u0085"\n}');
    expect(JSON.parse(shown)).toEqual(value);
  });
});

describe("hasControlChars", () => {
  it("finds C0, C1 and direction characters, not other Unicode", () => {
    for (const c of ["\u0000", "\u001b", "\u009b", "\u200e", "\u202e", "\u2066"])
      expect(hasControlChars(`a${c}`)).toBe(true);
    expect(hasControlChars("émoji 🎉 中文 العربية")).toBe(false);
  });
});
