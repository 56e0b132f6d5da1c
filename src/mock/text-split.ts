/**
 * How streamed text is cut into deltas. Deterministic, and never inside a UTF-16 surrogate pair
 * (cuts are made on code points), so every delta is valid text on its own; byte-level splits of
 * multi-byte characters are the `chunkBytes` fault's job, not this one's.
 */

/** Word-sized deltas: each word with the whitespace after it, long words cut at `maxChars` code points. */
export function textDeltas(text: string, maxChars: number): string[] {
  const out: string[] = [];
  for (const token of text.match(/\S+\s*|\s+/gu) ?? []) out.push(...fragments(token, maxChars));
  return out;
}

/** Fixed-size fragments of `size` code points (the last one shorter). */
export function fragments(text: string, size: number): string[] {
  const points = Array.from(text);
  if (points.length <= size) return text === "" ? [] : [text];
  const out: string[] = [];
  for (let i = 0; i < points.length; i += size) out.push(points.slice(i, i + size).join(""));
  return out;
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
