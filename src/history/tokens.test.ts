import { readFileSync } from "node:fs";
import { encode } from "gpt-tokenizer/encoding/o200k_base";
import { describe, expect, it } from "vitest";
import {
  countInPieces,
  createTokenCounter,
  estimateCounter,
  estimateTokens,
  MEDIA_TOKENS,
  TOKENIZER_PIECE_CHARS,
  TokenMeter,
} from "./tokens.js";

describe("token counts", () => {
  it("counts OpenAI models with their real encoding, others with the estimate", async () => {
    for (const model of ["gpt-5-mini", "gpt-4o", "o3", "openai/gpt-4.1", "chatgpt-4o-latest"])
      expect((await createTokenCounter(model)).name).toBe("o200k_base");
    expect((await createTokenCounter("gpt-4")).name).toBe("cl100k_base");
    expect((await createTokenCounter("gpt-oss-20b")).name).toBe("o200k_harmony");
    for (const model of ["qwen3", "claude-sonnet-4", "llama3.1:8b", null, undefined, ""])
      expect((await createTokenCounter(model)).name).toBe("estimate");
    const o200k = await createTokenCounter("gpt-5");
    expect(o200k.count("Hello, world!")).toBe(4);
    expect(o200k.count("a <|endoftext|> b")).toBeGreaterThan(3); // special-token text is text, not an error
    expect(o200k.count("")).toBe(0);
  });

  it("estimates by character class and never exceeds the UTF-8 byte length", () => {
    expect(estimateTokens("abcdefgh")).toBe(2);
    expect(estimateTokens("Привет")).toBe(3);
    expect(estimateTokens("北京")).toBe(2);
    expect(estimateTokens("🌍")).toBe(2);
    for (const s of ["a", "é", "北", "🌍", "x".repeat(7), "mixed 北京 🌍 é"])
      expect(estimateTokens(s)).toBeLessThanOrEqual(Buffer.byteLength(s));
  });

  it("counts items by their strings: encrypted reasoning by length, inline media flat, ids not at all", () => {
    const meter = new TokenMeter(estimateCounter);
    expect(
      meter.item({ type: "reasoning", id: "rs_123456789", summary: [], encrypted_content: "x".repeat(400) }),
    ).toBe(4 + 100);
    expect(
      meter.item({
        type: "message",
        role: "user",
        content: [{ type: "input_image", image_url: `data:image/png;base64,${"A".repeat(100_000)}` }],
      }),
    ).toBe(4 + 1 + MEDIA_TOKENS);
  });

  it("the cheap bound is never below the real count", async () => {
    const o200k = new TokenMeter(await createTokenCounter("gpt-5"));
    const items = [
      {
        type: "message",
        role: "user",
        content: [{ type: "input_text", text: "北京 🌍 Ünïcödé façade — naïve" }],
      },
      { type: "function_call", call_id: "c", name: "f", arguments: '{"a":"\\n\\t"}' },
      { type: "function_call_output", call_id: "c", output: "<|endoftext|> ok ".repeat(50) },
      {
        type: "message",
        role: "user",
        content: [{ type: "input_image", image_url: "data:image/png;base64,AA" }],
      },
    ];
    expect(o200k.upperBound(items)).toBeGreaterThanOrEqual(o200k.items(items));
    const est = new TokenMeter(estimateCounter);
    expect(est.upperBound(items)).toBeGreaterThanOrEqual(est.items(items));
  });
});

describe("long text is given to the tokenizer in pieces (found by a probe: BPE is quadratic in one word)", () => {
  it("pieces of at most TOKENIZER_PIECE_CHARS, cut before whitespace, never inside a surrogate pair, nothing lost", () => {
    const pieces: string[] = [];
    const text = `${"word ".repeat(700)}${"🌍".repeat(900)}${"a".repeat(2_500)}${" ".repeat(1_500)}end`;
    const n = countInPieces(text, (piece) => {
      pieces.push(piece);
      return 1;
    });
    expect(n).toBe(pieces.length);
    expect(pieces.join("")).toBe(text);
    for (const piece of pieces) {
      expect(piece.length).toBeLessThanOrEqual(TOKENIZER_PIECE_CHARS);
      const last = piece.charCodeAt(piece.length - 1);
      expect(last >= 0xd800 && last <= 0xdbff).toBe(false);
    }
    expect(pieces[1]?.startsWith(" word")).toBe(true);
    expect(countInPieces("", () => 1)).toBe(0);
  });

  it("200,000 of one letter or of spaces count (before: ~38 s on the main thread); prose counts as whole", async () => {
    const o200k = await createTokenCounter("gpt-5");
    const letters = "a".repeat(200_000);
    expect(o200k.count(letters)).toBe(200 * encode("a".repeat(1_000)).length);
    expect(o200k.count(" ".repeat(200_000))).toBeLessThanOrEqual(200_000);
    const readme = readFileSync(new URL("../../README.md", import.meta.url), "utf8");
    const whole = encode(readme, { disallowedSpecial: new Set() }).length;
    const pieces = o200k.count(readme);
    expect(pieces).toBeGreaterThanOrEqual(whole);
    expect(pieces - whole).toBeLessThanOrEqual(Math.ceil(readme.length / (TOKENIZER_PIECE_CHARS / 2)));
  });
});
