/**
 * How streamed text is cut into deltas. Deterministic, lazy (a million-word text costs no array
 * of a million deltas), and never inside a UTF-16 surrogate pair (cuts are made on code points),
 * so every delta is valid text on its own; byte-level splits of multi-byte characters are the
 * `chunkBytes` fault's job, not this one's.
 */

/** Word-sized deltas: each word with the whitespace after it, long words cut at `maxChars` code points. */
export function* textDeltas(text: string, maxChars: number): Generator<string> {
  const words = /\S+\s*|\s+/gu;
  for (let m = words.exec(text); m !== null; m = words.exec(text)) yield* fragments(m[0], maxChars);
}

/** Fixed-size fragments of `size` code points (the last one shorter); none for an empty text. */
export function* fragments(text: string, size: number): Generator<string> {
  if (text.length <= size) {
    if (text !== "") yield text;
    return;
  }
  let piece = "";
  let count = 0;
  for (const point of text) {
    piece += point;
    if (++count === size) {
      yield piece;
      piece = "";
      count = 0;
    }
  }
  if (piece !== "") yield piece;
}

const PAD = "mOcKoBfUsCaTiOn0123456789";

/**
 * Deterministic stand-in for the provider's `obfuscation` padding (spec §2 `stream_options`): pads
 * each delta event so that delta plus padding is a multiple of 16 characters long.
 */
export function obfuscation(delta: string): string {
  const n = 16 - (delta.length % 16);
  return PAD.slice(0, n);
}
