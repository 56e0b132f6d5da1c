/** Cutting text by UTF-16 code units without splitting a character. */

/**
 * The index to cut `text` at, at most `end`, that does not fall between the two halves of a
 * surrogate pair (one code unit less when it would).
 */
export function wholeCut(text: string, end: number): number {
  if (end <= 0 || end >= text.length) return Math.max(0, Math.min(end, text.length));
  const last = text.charCodeAt(end - 1);
  return last >= 0xd800 && last <= 0xdbff ? end - 1 : end;
}
