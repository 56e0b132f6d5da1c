/**
 * The replay gate (docs/decisions.md #9): recorded frame *k* is released only after the loop has
 * produced every frame that precedes it in the tape, so provider events, tool results and
 * cancellations land exactly where they did. If the loop stops producing frames while something
 * waits (the replay has diverged in a way that would deadlock), the wait gives up after
 * `stallMs` and the frame is released anyway; verification then reports the divergence.
 *
 * One stall is enough to know the replay has diverged: the first divergence is at or before the
 * frame the loop had not produced. So the budget is spent once per replay, and every later stall
 * gives up at once (on the next turn of the event loop, `setImmediate`, so frames already on their
 * way still come first). A tape with thousands of frames the loop cannot produce used to idle
 * `stallMs` for each; then a timer of 0 ms for each, which Node makes at least 1 ms: one line added
 * to a tape of a million frames idled 20 minutes (docs/pitfalls.md #99).
 */
import type { Frame } from "../frames/frame.js";

export interface FrameGate {
  /** Pass as the run's frame observer. */
  observer: (frame: Frame) => void;
  /** Resolves once `seq` frames have been emitted (i.e. the frame with seq `seq` may come next). */
  wait(seq: number): Promise<void>;
  /** Calls `action` synchronously right after the frame with seq `seq - 1` is emitted. */
  at(seq: number, action: () => void): void;
  readonly emitted: number;
  /** How many waits gave up because nothing moved (the first after `stallMs`, later ones at once). */
  readonly stalls: number;
}

export function createFrameGate(options: { stallMs?: number } = {}): FrameGate {
  const stallMs = options.stallMs ?? 2000;
  let emitted = 0;
  const waiters: { seq: number; resolve: () => void }[] = [];
  const actions = new Map<number, (() => void)[]>();
  // The first stall waits `stallMs` (a timer), every later one only a turn of the event loop.
  let stallTimer: ReturnType<typeof setTimeout> | undefined;
  let stallTurn: ReturnType<typeof setImmediate> | undefined;
  let stalls = 0;

  const release = () => {
    for (let i = waiters.length - 1; i >= 0; i--) {
      const w = waiters[i];
      if (w !== undefined && emitted >= w.seq) {
        waiters.splice(i, 1);
        w.resolve();
      }
    }
    armStall();
  };
  const stalled = () => {
    // Nothing moved: release the earliest waiter so the run can finish and be compared.
    stalls++;
    waiters.sort((a, b) => a.seq - b.seq);
    waiters.shift()?.resolve();
    armStall();
  };
  const armStall = () => {
    if (stallTimer !== undefined) clearTimeout(stallTimer);
    if (stallTurn !== undefined) clearImmediate(stallTurn);
    stallTimer = undefined;
    stallTurn = undefined;
    if (waiters.length === 0) return;
    if (stalls === 0) stallTimer = setTimeout(stalled, stallMs);
    else stallTurn = setImmediate(stalled);
  };

  return {
    get emitted() {
      return emitted;
    },
    get stalls() {
      return stalls;
    },
    observer: () => {
      emitted++;
      const due = actions.get(emitted);
      if (due !== undefined) {
        actions.delete(emitted);
        for (const action of due) action();
      }
      release();
    },
    wait(seq) {
      if (emitted >= seq) return Promise.resolve();
      return new Promise((resolve) => {
        waiters.push({ seq, resolve });
        armStall();
      });
    },
    at(seq, action) {
      if (emitted >= seq) {
        action();
        return;
      }
      const list = actions.get(seq) ?? [];
      list.push(action);
      actions.set(seq, list);
    },
  };
}
