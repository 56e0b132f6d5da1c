import { stripVTControlCharacters } from "node:util";
import { describe, expect, it } from "vitest";
import { clip, TerminalSanitizer, terminalSafe } from "./terminal.js";

const ESC = "\u001b";
// biome-ignore lint/suspicious/noControlCharactersInRegex: what must never reach a terminal
const CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/;
const BEL = "\u0007";
const ST = `${ESC}\\`;

/** [what, hostile text, what the terminal must be shown instead] */
const VECTORS: Array<[string, string, string]> = [
  ["OSC 0 window title (BEL)", `a${ESC}]0;pwned${BEL}b`, "ab"],
  ["OSC 2 window title (ST)", `a${ESC}]2;pwned${ST}b`, "ab"],
  ["OSC 52 clipboard write", `x${ESC}]52;c;Y3VybCBldmlsLnNoIHwgc2g=${BEL}y`, "xy"],
  ["OSC 52 with base64 '+' and '/'", `x${ESC}]52;c;a+b/c==${ST}y`, "xy"],
  ["OSC 8 hyperlink", `${ESC}]8;;https://evil.example${ST}click${ESC}]8;;${ST}`, "click"],
  ["unterminated OSC eats the rest", `ok${ESC}]0;title never ends`, "ok"],
  ["CSI 2J clear screen", `a${ESC}[2Jb`, "ab"],
  ["CSI H cursor home + 3J scrollback wipe", `${ESC}[H${ESC}[3Jtext`, "text"],
  ["CSI colour", `${ESC}[31mred${ESC}[0m`, "red"],
  ["CSI private mode (alt screen)", `${ESC}[?1049hx`, "x"],
  ["CSI with intermediates", `${ESC}[1 qx`, "x"],
  ["8-bit CSI (U+009B)", `a\u009b2Jb`, "ab"],
  ["8-bit OSC (U+009D) ended by U+009C", `a\u009d0;t\u009cb`, "ab"],
  ["DCS string", `a${ESC}Pq#0;2;0;0;0${ST}b`, "ab"],
  ["APC / PM / SOS strings", `a${ESC}_x${ST}${ESC}^y${ST}${ESC}Xz${ST}b`, "ab"],
  ["ESC c full reset", `a${ESC}cb`, "ab"],
  ["ESC 7 / ESC 8 save and restore cursor", `a${ESC}7b${ESC}8c`, "abc"],
  ["charset switch ESC ( 0", `a${ESC}(0b`, "ab"],
  ["lone ESC at the end", `a${ESC}`, "a"],
  ["BEL, backspace, form feed, vertical tab", `a${BEL}b\bc\fd\ve`, "abcde"],
  ["carriage return overwriting a line", "safe\rEVIL", "safeEVIL"],
  ["DEL and other C1 controls", "a\u007fb\u0085c\u008dd", "abcd"],
  ["NUL", "a\u0000b", "ab"],
];

describe("terminalSafe", () => {
  it.each(VECTORS)("removes %s", (_what, text, shown) => {
    const safe = terminalSafe(text);
    expect(safe).toBe(shown);
    // Nothing a terminal acts on is left.
    expect(safe).not.toMatch(CONTROL);
  });

  it("shows the bidirectional overrides, embeddings and isolates as U+FFFD (they reorder what follows)", () => {
    expect(terminalSafe("notes\u202egnp.sh")).toBe("notes\ufffdgnp.sh");
    expect(terminalSafe("a\u2066b\u2069c\u202ad\u202ce")).toBe("a\ufffdb\ufffdc\ufffdd\ufffde");
    // Marks (LRM, RLM) steer nothing on their own: kept, as right-to-left text needs them.
    expect(terminalSafe("\u05e9\u05dc\u05d5\u05dd\u200e!")).toBe("\u05e9\u05dc\u05d5\u05dd\u200e!");
  });

  it("keeps text, tabs, newlines and all Unicode byte for byte", () => {
    const text = "plain\ttext\nline 2 — émoji 🎉, 中文, العربية, ∑ ≠ ∞\n";
    expect(terminalSafe(text)).toBe(text);
  });

  it("a sequence split across pieces is removed whole", () => {
    for (const text of VECTORS.map(([, t]) => `<${t}>`)) {
      const whole = terminalSafe(text);
      for (const size of [1, 2, 3, 5]) {
        const filter = new TerminalSanitizer();
        const pieces = text.match(new RegExp(`[\\s\\S]{1,${size}}`, "g")) ?? [];
        expect(
          pieces.map((p) => filter.write(p)).join(""),
          `${JSON.stringify(text)} in pieces of ${size}`,
        ).toBe(whole);
      }
    }
  });

  it("gives up on a control string that never ends, after 64 KiB: the rest is text again", () => {
    const text = `${ESC}]0;${"a".repeat(70_000)}`;
    const shown = terminalSafe(text);
    expect(shown.length).toBeGreaterThan(0);
    expect(shown.length).toBeLessThan(10_000);
    expect(shown).not.toMatch(CONTROL);
  });

  it("one line: newlines and tabs become spaces", () => {
    expect(terminalSafe("a\nb\tc\r\nd", { oneLine: true })).toBe("a b c d");
  });

  it("does what strip-ansi-style stripping leaves undone", () => {
    // Node's stripVTControlCharacters (the regex strip-ansi uses) keeps these:
    const leftOver = [`x${ESC}]52;c;a+b/c==${BEL}y`, "a\u009d0;t\u009cb", `a${BEL}\bb`, "safe\rEVIL"];
    for (const text of leftOver) {
      expect(stripVTControlCharacters(text)).toMatch(CONTROL);
      expect(terminalSafe(text)).not.toMatch(CONTROL);
    }
  });

  it("is linear: a megabyte of escapes takes one pass", () => {
    const text = `${ESC}[`.repeat(500_000);
    expect(terminalSafe(text)).toBe("");
  });
});

describe("clip", () => {
  it("collapses whitespace, cuts on a code point boundary with an ellipsis, and keeps short text whole", () => {
    expect(clip("a  b\n\tc", 10)).toBe("a b c");
    expect(clip("abcdef", 6)).toBe("abcdef");
    expect(clip("abcdefg", 6)).toBe("abcde…");
    expect(clip("😀😀😀😀", 3)).toBe("😀😀…");
    expect(clip("   ", 5)).toBe(" ");
    expect(clip("", 5)).toBe("");
  });

  it("reads only the start of a huge text (a model's 50 MB arguments)", () => {
    const huge = `{"path":"${"a".repeat(50 * 1024 * 1024)}"}`;
    expect(clip(huge, 12)).toBe('{"path":"aa…');
    expect(clip(`x${" ".repeat(1_000_000)}y`, 5)).toBe("x y");
  });
});
