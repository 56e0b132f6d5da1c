/**
 * Byte-level cuts that never split a UTF-8 sequence. Every cap in the tools layer counts UTF-8
 * bytes (what the provider and the context window see), not UTF-16 code units, and cuts only
 * between whole characters, so no cut can leave half a surrogate pair or a broken sequence.
 */

import { wholeCut } from "../util/text.js";

/** True for a UTF-8 continuation byte (`10xxxxxx`): a cut before it would split a character. */
function isContinuation(byte: number | undefined): boolean {
  return byte !== undefined && (byte & 0xc0) === 0x80;
}

/** The largest `end ≤ max` such that `bytes.subarray(0, end)` ends on a character boundary. */
export function utf8HeadEnd(bytes: Uint8Array, max: number): number {
  let end = Math.max(0, Math.min(max, bytes.length));
  while (end > 0 && end < bytes.length && isContinuation(bytes[end])) end--;
  return end;
}

/** The smallest `start ≥ min` such that `bytes.subarray(start)` begins on a character boundary. */
export function utf8TailStart(bytes: Uint8Array, min: number): number {
  let start = Math.max(0, Math.min(min, bytes.length));
  while (start < bytes.length && isContinuation(bytes[start])) start++;
  return start;
}

/**
 * The end of the last complete character of `bytes`, which may stop in the middle of one (a
 * stream's head whose continuation bytes were never kept).
 */
export function utf8CompleteEnd(bytes: Uint8Array): number {
  const n = bytes.length;
  for (let i = n - 1; i >= Math.max(0, n - 4); i--) {
    const b = bytes[i] ?? 0;
    if ((b & 0xc0) === 0x80) continue;
    const need = b >= 0xf0 ? 4 : b >= 0xe0 ? 3 : b >= 0xc0 ? 2 : 1;
    return i + need <= n ? n : i;
  }
  return n;
}

/** The text of `bytes` cut to at most `maxBytes` bytes from the start, on a character boundary. */
export function utf8Head(bytes: Buffer, maxBytes: number): string {
  return bytes.subarray(0, utf8HeadEnd(bytes, maxBytes)).toString("utf8");
}

/** What `cutMiddle` kept and dropped. */
export interface MiddleCut {
  head: string;
  tail: string;
  /** Bytes dropped between head and tail. */
  cutBytes: number;
}

/**
 * Keeps at most `keepBytes` bytes of `bytes`: about half from the start and half from the end,
 * each cut on a character boundary. Returns `undefined` when everything fits.
 */
export function cutMiddle(bytes: Buffer, keepBytes: number): MiddleCut | undefined {
  if (bytes.length <= keepBytes) return undefined;
  const keep = Math.max(0, keepBytes);
  const headEnd = utf8HeadEnd(bytes, Math.ceil(keep / 2));
  const tailStart = utf8TailStart(bytes, bytes.length - (keep - headEnd));
  return {
    head: bytes.subarray(0, headEnd).toString("utf8"),
    tail: bytes.subarray(tailStart).toString("utf8"),
    cutBytes: tailStart - headEnd,
  };
}

/**
 * `text` cut to at most `maxChars` UTF-16 code units plus "…", never between the two halves of a
 * surrogate pair. For previews and messages, where a character count is the natural unit.
 */
export function shortenText(text: string, maxChars: number): string {
  if (text.length <= maxChars) return text;
  return `${text.slice(0, wholeCut(text, maxChars))}…`;
}
