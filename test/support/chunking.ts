/**
 * Chunking helpers for stream tests: the same bytes cut in different ways. Every SSE and frame test
 * feeds its input at several of these (STYLE.md: "one byte at a time" included).
 */

/** A small deterministic PRNG (mulberry32) so "random" chunkings are reproducible. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export type Chunking = { name: string; split: (bytes: Uint8Array) => Uint8Array[] };

export function fixedChunks(size: number): Chunking {
  return {
    name: `${size}-byte`,
    split: (bytes) => {
      const out: Uint8Array[] = [];
      for (let i = 0; i < bytes.length; i += size) out.push(bytes.subarray(i, i + size));
      return out;
    },
  };
}

export function randomChunks(seed: number, maxSize = 512): Chunking {
  return {
    name: `random(1-${maxSize}, seed ${seed})`,
    split: (bytes) => {
      const rnd = seededRandom(seed);
      const out: Uint8Array[] = [];
      let i = 0;
      while (i < bytes.length) {
        const n = 1 + Math.floor(rnd() * maxSize);
        out.push(bytes.subarray(i, i + n));
        i += n;
      }
      return out;
    },
  };
}

export const WHOLE: Chunking = { name: "whole", split: (bytes) => [bytes] };

/** The chunkings every stream test runs: whole, 16 KiB, random 1–512 B, random 1–7 B, 7 B and 1 B. */
export const STANDARD_CHUNKINGS: Chunking[] = [
  WHOLE,
  fixedChunks(16 * 1024),
  randomChunks(1, 512),
  randomChunks(2, 7),
  fixedChunks(7),
  fixedChunks(1),
];

export function utf8(text: string): Uint8Array {
  return new TextEncoder().encode(text);
}
