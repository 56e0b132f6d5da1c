/**
 * The envelope stamper: gives each emitted frame its `run_id`, the next `seq` and the injected
 * clock's `ts`, in place (see frame.ts for why in place).
 */
import { EddyError } from "../errors.js";
import type { Frame } from "./frame.js";

/** A source of unix-millisecond timestamps. Injected so tests and replay are deterministic. */
export type Clock = () => number;

export const systemClock: Clock = () => Date.now();

export interface FrameStamper {
  readonly runId: string;
  /** The `seq` the next stamped frame will get (= number of frames stamped so far). */
  readonly nextSeq: number;
  /**
   * Stamps `frame` in place and returns it. A frame can be stamped once. `ts` is the clock's
   * reading, unless given (frames emitted together share one reading).
   */
  stamp<F extends Frame>(frame: F, ts?: number): F;
}

export function createFrameStamper(options: {
  runId: string;
  clock?: Clock;
  firstSeq?: number;
}): FrameStamper {
  const clock = options.clock ?? systemClock;
  const runId = options.runId;
  let seq = options.firstSeq ?? 0;
  return {
    runId,
    get nextSeq() {
      return seq;
    },
    stamp(frame, ts) {
      if (frame.seq !== -1) {
        throw new EddyError("frame_invalid", `frame ${frame.type} was already stamped (seq ${frame.seq})`);
      }
      frame.run_id = runId;
      frame.seq = seq++;
      frame.ts = ts ?? clock();
      return frame;
    },
  };
}
