/**
 * The run's frame channel: the one place frames are stamped (run_id, contiguous seq, ts), cleared
 * of secrets and handed out. Producers (the provider pump, the tool runner, the loop) `emit`; the
 * consumer iterates. Observers (a tape recorder, the replay gate, a renderer) see every frame
 * synchronously as it is stamped, in seq order.
 *
 * Redaction happens here, once, so every way a frame leaves the run — the iteration, `onFrame`,
 * tapes, `--json`, the human view — gets the same masked frame: any configured secret (API keys,
 * auth header values, URL passwords) is replaced by `***` wherever it appears, e.g. in a request
 * id or an error message a provider echoed back (docs/decisions.md #9).
 */
import { EddyError } from "../errors.js";
import type { Frame } from "../frames/frame.js";
import { type Clock, createFrameStamper, type FrameStamper, systemClock } from "../frames/stamp.js";
import { redactDeep, usableSecrets } from "../util/redact.js";
import { SplitSecretGuard } from "./split-secrets.js";

/** Sees each frame right after it is stamped. Must not throw; must not emit. */
export type FrameObserver = (frame: Frame) => void;

export class FrameChannel implements AsyncIterable<Frame> {
  private readonly stamper: FrameStamper;
  private readonly buffer: Frame[] = [];
  private head = 0;
  private waiter: (() => void) | undefined;
  private closed = false;
  private iterated = false;
  private readonly observers: FrameObserver[] = [];
  private readonly secrets: string[];
  /** Holds back deltas that may end in the start of a secret (split-secrets.ts); none without secrets. */
  private readonly guard: SplitSecretGuard | undefined;

  private readonly clock: Clock;

  constructor(options: { runId: string; clock?: Clock; secrets?: readonly (string | undefined)[] }) {
    this.stamper = createFrameStamper(options);
    this.clock = options.clock ?? systemClock;
    this.secrets = usableSecrets(options.secrets ?? []);
    this.guard = this.secrets.length === 0 ? undefined : new SplitSecretGuard(this.secrets);
  }

  get runId(): string {
    return this.stamper.runId;
  }

  /** Number of frames emitted so far (= the next frame's seq). */
  get emitted(): number {
    return this.stamper.nextSeq;
  }

  observe(observer: FrameObserver): void {
    this.observers.push(observer);
  }

  private readonly pending: Frame[] = [];
  private emitting = false;
  /** The clock reading the frames of the group being emitted share (`emitGroup`). */
  private groupTs: number | undefined;

  /**
   * Emits frames that arrived together (a provider event and the frames derived from it) with one
   * clock reading for all of them, as `emit` would one by one. A delta that may end in the start of
   * a secret is held back until the next frame says (split-secrets.ts).
   */
  emitGroup(frames: readonly Frame[]): void {
    // Checked here too: a group the guard holds back would not reach `emitOne`'s check.
    const late = frames[0];
    if (this.closed && late !== undefined)
      throw new EddyError("frame_invalid", `frame ${late.type} emitted after run_ended`);
    if (this.guard === undefined) this.emitTogether(frames);
    else for (const group of this.guard.push(frames)) this.emitTogether(group);
  }

  private emitTogether(frames: readonly Frame[]): void {
    this.groupTs = this.clock();
    try {
      for (const f of frames) this.emitOne(f);
    } finally {
      this.groupTs = undefined;
    }
  }

  /** Sends what the guard holds back, in order, before anything else. */
  private release(): void {
    if (this.guard?.holding === true) for (const group of this.guard.take()) this.emitTogether(group);
  }

  /**
   * Stamps and queues a frame. Re-entrant emits (an observer whose action makes the loop emit,
   * e.g. replay aborting the run) are queued and stamped after the current frame, so every
   * observer sees frames in seq order. Emitting after `close()` is a bug and throws. Returns the
   * frame as handed out (a masked copy when it held a secret).
   */
  emit<F extends Frame>(frame: F): F {
    this.release();
    return this.emitOne(frame);
  }

  private emitOne<F extends Frame>(frame: F): F {
    if (this.closed) throw new EddyError("frame_invalid", `frame ${frame.type} emitted after run_ended`);
    const sent = this.secrets.length === 0 ? frame : redactDeep(frame, this.secrets);
    this.pending.push(sent);
    if (this.emitting) return sent;
    this.emitting = true;
    try {
      for (let next = this.pending.shift(); next !== undefined; next = this.pending.shift()) {
        this.stamper.stamp(next, this.groupTs);
        this.buffer.push(next);
        for (const observer of this.observers) observer(next);
      }
    } finally {
      this.emitting = false;
    }
    const waiter = this.waiter;
    if (waiter !== undefined) {
      this.waiter = undefined;
      waiter();
    }
    return sent;
  }

  /** Ends the stream (after `run_ended`). */
  close(): void {
    if (!this.closed) this.release();
    this.closed = true;
    const waiter = this.waiter;
    this.waiter = undefined;
    waiter?.();
  }

  /** Called when the consumer stops early (break); the run uses it to cancel itself. */
  onConsumerExit: () => void = () => {};

  [Symbol.asyncIterator](): AsyncIterator<Frame> {
    if (this.iterated) {
      throw new EddyError(
        "invalid_argument",
        "a run's frames can be iterated once; use an observer (onFrame) to fan them out",
      );
    }
    this.iterated = true;
    // A buffered frame is handed out as an already-settled promise: no async function frame per
    // frame (bench/README.md, "The turn"); only an empty buffer waits.
    const take = (): IteratorResult<Frame> => {
      const value = this.buffer[this.head] as Frame;
      this.buffer[this.head] = undefined as unknown as Frame; // let the consumer's frames be collected
      this.head++;
      if (this.head > 1024 && this.head * 2 > this.buffer.length) {
        this.buffer.splice(0, this.head);
        this.head = 0;
      }
      return { value, done: false };
    };
    const wait = async (): Promise<IteratorResult<Frame>> => {
      for (;;) {
        if (this.head < this.buffer.length) return take();
        if (this.closed) return { value: undefined, done: true };
        await new Promise<void>((resolve) => {
          this.waiter = resolve;
        });
      }
    };
    return {
      next: () => (this.head < this.buffer.length ? Promise.resolve(take()) : wait()),
      return: async () => {
        if (!this.closed) this.onConsumerExit();
        return { value: undefined, done: true };
      },
    };
  }
}
