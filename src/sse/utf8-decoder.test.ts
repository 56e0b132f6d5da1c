import { describe, expect, it } from "vitest";
import { STANDARD_CHUNKINGS, seededRandom, utf8 } from "../../test/support/chunking.js";
import { createUtf8StreamDecoder } from "./utf8-decoder.js";

/** What one streaming WHATWG decoder gives (BOM kept, as ours). */
function reference(bytes: Uint8Array): string {
  return new TextDecoder("utf-8", { ignoreBOM: true }).decode(bytes);
}

function decodeIn(chunks: readonly Uint8Array[]): string {
  const decoder = createUtf8StreamDecoder();
  let text = "";
  for (const c of chunks) text += decoder.decode(c);
  return text + decoder.flush();
}

/** Valid text with 1- to 4-byte sequences, and every kind of bad byte sequence. */
const PIECES: number[][] = [
  [...utf8("a")],
  [...utf8("é")],
  [...utf8("北")],
  [...utf8("🌍")],
  [...utf8("\n")],
  [0x80], // stray continuation
  [0xff], // never valid
  [0xc0, 0x80], // overlong
  [0xe5, 0x8c], // truncated 3-byte
  [0xf0, 0x9f, 0x8c], // truncated 4-byte
  [0xe0, 0x80, 0x80], // E0 needs A0–BF next
  [0xed, 0xa0, 0x80], // surrogate
  [0xf4, 0x90, 0x80, 0x80], // above U+10FFFF
  [0xef, 0xbb, 0xbf], // BOM
];

function randomBytes(rnd: () => number, pieces: number): Uint8Array {
  const out: number[] = [];
  for (let i = 0; i < pieces; i++) out.push(...(PIECES[Math.floor(rnd() * PIECES.length)] ?? []));
  return new Uint8Array(out);
}

describe("createUtf8StreamDecoder", () => {
  it("gives the streaming TextDecoder's text at every chunking, bad bytes included", () => {
    const rnd = seededRandom(3);
    for (let round = 0; round < 60; round++) {
      const bytes = randomBytes(rnd, 20 + Math.floor(rnd() * 60));
      const want = reference(bytes);
      for (const chunking of STANDARD_CHUNKINGS) {
        expect(decodeIn(chunking.split(bytes)), `${chunking.name}, round ${round}`).toBe(want);
      }
      for (let cut = 0; cut <= bytes.length; cut++) {
        expect(decodeIn([bytes.subarray(0, cut), bytes.subarray(cut)]), `cut ${cut}`).toBe(want);
      }
    }
  });

  it("decodes large inputs (the ICU path) and mixes both paths", () => {
    const text = "data: 北京 🌍 café\n".repeat(400);
    const bytes = utf8(text);
    expect(decodeIn([bytes])).toBe(text);
    const sizes = [5000, 3, 700, 1, 2048, 9000];
    const chunks: Uint8Array[] = [];
    for (let at = 0, i = 0; at < bytes.length; i++) {
      const n = sizes[i % sizes.length] ?? 1;
      chunks.push(bytes.subarray(at, at + n));
      at += n;
    }
    expect(decodeIn(chunks)).toBe(text);
  });

  it("a truncated sequence right before an incomplete tail of a large input gives its U+FFFD in place", () => {
    // 1,030 × "a", then 🌍, a truncated 北 (E5 8C), a BOM cut after its lead byte, a truncated 🌍.
    const bytes = new Uint8Array([
      ...utf8("a".repeat(1030)),
      ...[0xf0, 0x9f, 0x8c, 0x8d, 0xe5, 0x8c, 0xef],
      ...[0xbb, 0xbf, 0xf0, 0x9f, 0x8c],
    ]);
    const want = reference(bytes);
    expect(want.endsWith("🌍\uFFFD\uFEFF\uFFFD")).toBe(true);
    // The first input (over SMALL_INPUT) ends in E5 8C EF: EF is kept for the next, and E5 8C —
    // left at the end of what is decoded now — was held back by ICU in stream mode and its U+FFFD lost.
    expect(decodeIn([bytes.subarray(0, 1037), bytes.subarray(1037)])).toBe(want);
  });

  it("keeps an incomplete sequence until it completes, or flushes it as U+FFFD", () => {
    const decoder = createUtf8StreamDecoder();
    const globe = utf8("🌍");
    expect(decoder.decode(globe.subarray(0, 1))).toBe("");
    expect(decoder.decode(globe.subarray(1, 2))).toBe("");
    expect(decoder.decode(globe.subarray(2))).toBe("🌍");
    expect(decoder.decode(globe.subarray(0, 3))).toBe("");
    expect(decoder.flush()).toBe("\uFFFD");
    expect(decoder.flush()).toBe("");
  });

  it("streams decoded side by side do not disturb each other (the decoders underneath are shared)", () => {
    const rnd = seededRandom(11);
    for (let round = 0; round < 30; round++) {
      // Large inputs too, so both shared paths (fast and ICU) serve every stream.
      const inputs = [0, 1, 2].map(() => {
        const small = randomBytes(rnd, 10 + Math.floor(rnd() * 40));
        return round % 2 === 0 ? small : new Uint8Array([...small, ...utf8("北🌍é".repeat(300)), ...small]);
      });
      const decoders = inputs.map(() => createUtf8StreamDecoder());
      const texts = inputs.map(() => "");
      const cuts = inputs.map((b) => [
        0,
        ...[1, 2, 3].map(() => Math.floor(rnd() * b.length)).sort((x, y) => x - y),
        b.length,
      ]);
      // Round-robin: piece k of every stream before piece k+1 of any.
      for (let k = 0; k < 4; k++)
        inputs.forEach((bytes, i) => {
          const at = cuts[i] as number[];
          texts[i] += (decoders[i] as ReturnType<typeof createUtf8StreamDecoder>).decode(
            bytes.subarray(at[k] as number, at[k + 1] as number),
          );
        });
      inputs.forEach((bytes, i) => {
        texts[i] += (decoders[i] as ReturnType<typeof createUtf8StreamDecoder>).flush();
        expect(texts[i], `stream ${i}, round ${round}`).toBe(reference(bytes));
      });
    }
  });

  it("does not keep a reference to the caller's buffer", () => {
    const decoder = createUtf8StreamDecoder();
    const buffer = utf8("x北");
    expect(decoder.decode(buffer.subarray(0, 2))).toBe("x");
    buffer.fill(0x41); // the caller reuses its buffer
    expect(decoder.decode(utf8("北").subarray(1))).toBe("北");
  });
});
