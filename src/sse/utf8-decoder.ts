/**
 * Streaming UTF-8 → text for the SSE decoder, faster than one `TextDecoder` in `stream` mode.
 *
 * Node's `TextDecoder` has two paths: a fast one for whole inputs (`decode(bytes)`), and ICU's
 * converter, which a decoder uses for good once it was called with `{stream: true}`; the converter
 * must be created per decoder and costs more per call. The fast path is faster for small inputs
 * (network chunks of a few hundred bytes: ~30% at 64 B, ~10% at 512 B) and slower for large ones
 * (~1.7× at 16 KiB, node 20). So this decoder keeps an incomplete trailing UTF-8 sequence (1–3
 * bytes) itself and hands the decoders the rest: inputs up to `SMALL_INPUT` bytes go through the
 * fast path, larger ones through ICU. Both decode each input whole (ICU flushed, not streaming), so
 * neither holds state between calls: a truncated sequence left at the end of an input is invalid
 * (the kept lead byte follows it) and becomes U+FFFD there, as WHATWG's decoder gives. (ICU in
 * stream mode kept such a sequence and lost its U+FFFD.)
 *
 * The text is the same as one streaming `TextDecoder` gives at any chunking: invalid bytes become
 * U+FFFD exactly as the WHATWG decoder does (it is self-synchronizing, and every cut is made where
 * its state is initial); only the U+FFFD of a bad sequence at a chunk's end may come one chunk
 * later. A BOM is kept: the caller strips the first one.
 */

/** Inputs up to this many bytes use the fast path; larger ones ICU. */
const SMALL_INPUT = 1024;

export interface Utf8StreamDecoder {
  /** The text of `bytes`, less an incomplete sequence at its end (kept for the next call). */
  decode(bytes: Uint8Array): string;
  /** End of input: the text of a kept incomplete sequence (U+FFFD), or "". */
  flush(): string;
}

/**
 * The decoders are shared by every stream, as neither holds state between calls (see above);
 * making one per stream cost an ICU converter, a share of each request's CPU (bench/README.md,
 * "The turn").
 */
const small = new TextDecoder("utf-8", { ignoreBOM: true });
let large: InstanceType<typeof TextDecoder> | undefined;

/** The ICU decoder: one `{stream: true}` call on nothing moves it off the fast path for good. */
function icu(): InstanceType<typeof TextDecoder> {
  if (large === undefined) {
    large = new TextDecoder("utf-8", { ignoreBOM: true });
    large.decode(new Uint8Array(0), { stream: true });
  }
  return large;
}

export function createUtf8StreamDecoder(): Utf8StreamDecoder {
  /** An incomplete sequence from the end of the last input: a lead byte and 0–2 continuation bytes. */
  let carry: Uint8Array | undefined;

  function whole(bytes: Uint8Array): string {
    return bytes.length <= SMALL_INPUT ? small.decode(bytes) : icu().decode(bytes);
  }

  return {
    decode(bytes) {
      let start = 0;
      let head = "";
      if (carry !== undefined) {
        const need = sequenceLength(carry[0] as number) - carry.length;
        let take = 0;
        while (take < need && take < bytes.length && isContinuation(bytes[take] as number)) take++;
        if (take < need && take === bytes.length) {
          carry = concat(carry, bytes); // still incomplete, and this input is used up
          return "";
        }
        head = small.decode(concat(carry, bytes.subarray(0, take)));
        carry = undefined;
        start = take;
      }
      let end = bytes.length;
      const tail = incompleteTail(bytes, start);
      if (tail !== -1) {
        carry = bytes.slice(tail); // a copy: the caller may reuse its buffer
        end = tail;
      }
      if (end === start) return head;
      const body = whole(start === 0 && end === bytes.length ? bytes : bytes.subarray(start, end));
      return head.length > 0 ? head + body : body;
    },
    flush() {
      if (carry === undefined) return "";
      const text = small.decode(carry);
      carry = undefined;
      return text;
    },
  };
}

function isContinuation(byte: number): boolean {
  return (byte & 0xc0) === 0x80;
}

/** Bytes in the sequence a lead byte starts (1 for anything that is not a valid multi-byte lead). */
function sequenceLength(lead: number): number {
  if (lead >= 0xc2 && lead <= 0xdf) return 2;
  if (lead >= 0xe0 && lead <= 0xef) return 3;
  if (lead >= 0xf0 && lead <= 0xf4) return 4;
  return 1;
}

/** Where an incomplete multi-byte sequence at the end of `bytes[start…]` begins, or -1. */
function incompleteTail(bytes: Uint8Array, start: number): number {
  const len = bytes.length;
  for (let k = 1; k <= 3 && len - k >= start; k++) {
    const byte = bytes[len - k] as number;
    if (isContinuation(byte)) continue;
    return sequenceLength(byte) > k ? len - k : -1;
  }
  return -1;
}

function concat(a: Uint8Array, b: Uint8Array): Uint8Array {
  const out = new Uint8Array(a.length + b.length);
  out.set(a, 0);
  out.set(b, a.length);
  return out;
}
