/**
 * Bounded capture of a child process stream: keeps the first half of the budget and a rolling
 * last half, dropping the middle as it streams, so a command printing gigabytes costs at most the
 * budget in memory. Decoded once at the end, so multi-byte characters split across chunks survive.
 */
import { utf8CompleteEnd, utf8TailStart } from "../utf8.js";

/** A stream capture: feed chunks, then read the text once. */
export interface StreamCapture {
  push(chunk: Buffer): void;
  /** The captured text (head, a note if the middle was dropped, tail) and the byte counts. */
  finish(): { text: string; totalBytes: number; dropped: boolean };
}

/** Creates a capture keeping at most about `capBytes` bytes. */
export function createStreamCapture(capBytes: number): StreamCapture {
  const half = Math.max(1, Math.floor(capBytes / 2));
  const head: Buffer[] = [];
  let headBytes = 0;
  const tail: Buffer[] = [];
  let tailBytes = 0;
  let total = 0;
  return {
    push(chunk) {
      total += chunk.length;
      let rest = chunk;
      if (headBytes < half) {
        const take = Math.min(rest.length, half - headBytes);
        head.push(rest.subarray(0, take));
        headBytes += take;
        rest = rest.subarray(take);
      }
      if (rest.length === 0) return;
      tail.push(rest);
      tailBytes += rest.length;
      // Drop whole chunks from the front while what remains still covers the last `half` bytes.
      while (tail.length > 1 && tailBytes - (tail[0]?.length ?? 0) >= half) {
        tailBytes -= tail.shift()?.length ?? 0;
      }
    },
    finish() {
      const headBuf = Buffer.concat(head);
      const tailBuf = Buffer.concat(tail);
      if (total === headBuf.length + tailBuf.length) {
        return {
          text: Buffer.concat([headBuf, tailBuf]).toString("utf8"),
          totalBytes: total,
          dropped: false,
        };
      }
      const headEnd = utf8CompleteEnd(headBuf);
      const tailStart = utf8TailStart(tailBuf, Math.max(0, tailBuf.length - half));
      const kept = headEnd + (tailBuf.length - tailStart);
      const note = `\n[… eddy: ${total - kept} bytes of output dropped while streaming …]\n`;
      return {
        text: `${headBuf.subarray(0, headEnd).toString("utf8")}${note}${tailBuf.subarray(tailStart).toString("utf8")}`,
        totalBytes: total,
        dropped: true,
      };
    },
  };
}
