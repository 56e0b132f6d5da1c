import { describe, expect, it } from "vitest";
import { encodeToolOutput, type ToolOutput, toToolOutput } from "./output.js";
import { toolResult } from "./tool.js";
import { cutMiddle, shortenText, utf8CompleteEnd } from "./utf8.js";

const bytes = (s: string) => Buffer.byteLength(s, "utf8");

function out(fields: Partial<ToolOutput>): ToolOutput {
  return { tool: "t", ok: true, exit_code: 0, stdout: "", stderr: "", ...fields };
}

describe("toToolOutput / encodeToolOutput: the output object of docs/decisions.md #7", () => {
  it("keeps keys in the fixed order whatever order the object was built in", () => {
    const shuffled = {
      error: { message: "m", code: "c" },
      stderr: "e",
      artifacts: { a: 1 },
      stdout: "o",
      exit_code: 3,
      ok: false,
      tool: "x",
    };
    const { output } = encodeToolOutput(shuffled as ToolOutput);
    expect(output).toBe(
      '{"tool":"x","ok":false,"exit_code":3,"stdout":"o","stderr":"e","artifacts":{"a":1},"error":{"code":"c","message":"m"}}',
    );
  });

  it("omits artifacts and error when absent", () => {
    expect(encodeToolOutput(toToolOutput("read_file", toolResult({ ok: true, stdout: "hi" })))).toEqual({
      output: '{"tool":"read_file","ok":true,"exit_code":0,"stdout":"hi","stderr":""}',
      truncated: false,
    });
  });

  it("drops extra fields of a custom error (only code and message reach the model)", () => {
    const result = toolResult({ ok: false, error: { code: "x", message: "y", stack: "secret" } as never });
    expect(encodeToolOutput(toToolOutput("t", result)).output).not.toContain("secret");
  });
});

describe("output cap (docs/decisions.md #7)", () => {
  const cap = 4096;

  it.each<[string, Partial<ToolOutput>]>([
    ["ASCII stdout", { stdout: `HEAD-${"x".repeat(20_000)}-TAIL` }],
    ["newline-heavy stdout (escaping doubles the size)", { stdout: `HEAD-${"\n".repeat(20_000)}-TAIL` }],
    ["control characters (6-byte escapes)", { stdout: `HEAD-${"\u0001".repeat(20_000)}-TAIL` }],
    ["emoji (4-byte UTF-8, surrogate pairs)", { stdout: `HEAD-${"😀".repeat(5000)}-TAIL` }],
    ["CJK (3-byte UTF-8)", { stdout: `HEAD-${"漢".repeat(7000)}-TAIL` }],
    ["quotes and backslashes", { stdout: `HEAD-${'"\\'.repeat(10_000)}-TAIL` }],
    [
      "both streams large",
      { stdout: `HEAD-${"o".repeat(9000)}-TAIL`, stderr: `EHEAD-${"e".repeat(9000)}-ETAIL` },
    ],
    ["large stderr, small stdout", { stdout: "small", stderr: `EHEAD-${"e".repeat(20_000)}-ETAIL` }],
  ])("%s: valid JSON, ≤ cap bytes, head and tail kept, full output kept aside", (_label, fields) => {
    const original = out({ ...fields, artifacts: { path: "a.txt" } });
    const encoded = encodeToolOutput(original, { capBytes: cap, hint: "use start_line/end_line" });
    expect(encoded.truncated).toBe(true);
    expect(bytes(encoded.output)).toBeLessThanOrEqual(cap);
    const parsed = JSON.parse(encoded.output) as ToolOutput;
    expect(Object.keys(parsed)).toEqual(["tool", "ok", "exit_code", "stdout", "stderr", "artifacts"]);
    expect(parsed.artifacts).toEqual({ path: "a.txt" });
    for (const stream of ["stdout", "stderr"] as const) {
      const text = original[stream];
      if (bytes(text) < 1000) {
        expect(parsed[stream]).toBe(text);
        continue;
      }
      const head = text.startsWith("E") ? "EHEAD-" : "HEAD-";
      const tail = text.startsWith("E") ? "-ETAIL" : "-TAIL";
      expect(parsed[stream].startsWith(head)).toBe(true);
      expect(parsed[stream].endsWith(tail)).toBe(true);
      expect(parsed[stream]).toMatch(
        /\[… eddy: \d+ of \d+ bytes of std(out|err) cut here; use start_line\/end_line …\]/,
      );
      expect(parsed[stream]).not.toContain("\ufffd");
    }
    expect(encoded.fullOutput).toBe(encodeToolOutput(original, { capBytes: 10_000_000 }).output);
  });

  it("reports the exact number of bytes cut", () => {
    const stdout = "a".repeat(50_000);
    const parsed = JSON.parse(encodeToolOutput(out({ stdout }), { capBytes: cap }).output) as ToolOutput;
    const match = /(\d+) of 50000 bytes of stdout cut/.exec(parsed.stdout);
    const kept = parsed.stdout.replace(/\n\[… eddy:[^\]]*\]\n/, "").length;
    expect(Number(match?.[1])).toBe(50_000 - kept);
  });

  it("uses the default cap of 64 KiB", () => {
    const encoded = encodeToolOutput(out({ stdout: "z".repeat(100_000) }));
    expect(encoded.truncated).toBe(true);
    expect(bytes(encoded.output)).toBeLessThanOrEqual(64 * 1024);
    expect(bytes(encoded.output)).toBeGreaterThan(60 * 1024);
  });

  it("leaves an output exactly at the cap alone", () => {
    const empty = bytes(encodeToolOutput(out({})).output);
    const exact = out({ stdout: "x".repeat(cap - empty) });
    const encoded = encodeToolOutput(exact, { capBytes: cap });
    expect(encoded).toEqual({ output: expect.any(String), truncated: false });
    expect(bytes(encoded.output)).toBe(cap);
  });

  it("still fits when artifacts alone are over the cap", () => {
    const encoded = encodeToolOutput(
      out({
        stdout: "s".repeat(10_000),
        artifacts: { huge: "h".repeat(10_000) },
        error: { code: "c", message: "m".repeat(5000) },
      }),
      { capBytes: cap },
    );
    expect(bytes(encoded.output)).toBeLessThanOrEqual(cap);
    const parsed = JSON.parse(encoded.output) as ToolOutput;
    expect(parsed.artifacts).toMatchObject({ truncated: true });
    expect(parsed.error?.code).toBe("c");
  });
});

describe("UTF-8 helpers", () => {
  it("cutMiddle never splits a character", () => {
    const text = "é😀漢a".repeat(100);
    const buf = Buffer.from(text);
    for (let keep = 0; keep < 60; keep++) {
      const cut = cutMiddle(buf, keep);
      expect(cut).toBeDefined();
      if (cut === undefined) continue;
      expect(bytes(cut.head) + bytes(cut.tail)).toBeLessThanOrEqual(keep);
      expect(`${cut.head}${cut.tail}`).not.toContain("\ufffd");
      expect(bytes(cut.head) + bytes(cut.tail) + cut.cutBytes).toBe(buf.length);
    }
  });

  it("utf8CompleteEnd drops an incomplete last character", () => {
    const buf = Buffer.from("a😀");
    expect(utf8CompleteEnd(buf)).toBe(5);
    expect(utf8CompleteEnd(buf.subarray(0, 3))).toBe(1);
    expect(utf8CompleteEnd(buf.subarray(0, 1))).toBe(1);
  });

  it("shortenText never leaves half a surrogate pair", () => {
    expect(shortenText("ab😀cd", 3)).toBe("ab…");
    expect(shortenText("abc", 3)).toBe("abc");
  });
});
