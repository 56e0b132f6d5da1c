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

  it("does not keep a reference to the caller's buffer", () => {
    const decoder = createUtf8StreamDecoder();
    const buffer = utf8("x北");
    expect(decoder.decode(buffer.subarray(0, 2))).toBe("x");
    buffer.fill(0x41); // the caller reuses its buffer
    expect(decoder.decode(utf8("北").subarray(1))).toBe("北");
  });
});
