/**
 * The one assembling stream under every provider. A provider implementation only produces frames
 * (a `FrameSource`); this module turns them into a `ProviderStream`: it steps the response
 * assembler with each `provider_event`, starts a fresh assembly at each `request_started`, hands
 * completed function calls to `onCall`, owns the retry-safety rule the source asks before
 * re-sending, and settles `result` exactly once — with the assembled response, also when the
 * request failed or the consumer stopped early (docs/architecture.md, "The provider contract").
 * Right after each `provider_event` it puts the frames derived from it (derive.ts: reasoning
 * deltas, finished items, the response's end), and hands out the event and those frames as one
 * group (`frameGroups`), so a consumer that emits a group at once keeps them together. Derived
 * frames a source yields (a fallback candidate's, a tape's) are dropped and derived again here.
 *
 * Sources push frames in batches (one network chunk's worth) to the stream, which hands them on a
 * group at a time. Pushed to the loop (`pumpGroups`), a network chunk's frames go from the bytes
 * to the loop's sink in one synchronous pass, with no promise between them; a generator level per
 * chunk cost ~8% of eddy's CPU per turn (bench/README.md, "The turn"). Pulled (`frameGroups`, the
 * stream itself), the source waits at each group until the consumer asks for the next.
 */
import { DERIVED_FRAME_TYPES, type ProviderEventFrame, type ProviderFrame } from "../frames/frame.js";
import type { JsonObject } from "../protocol/types.js";
import { type Assembly, finishAssembly, type TerminalKind } from "./assembler/index.js";
import { AttemptAssembly } from "./derive.js";
import { cancelledError, ProviderError } from "./errors.js";
import type { ProviderOutcome, ProviderRequest, ProviderStream, ProviderStreamOptions } from "./provider.js";
import { isNonRetryableCode } from "./retry.js";

/** What a source may ask about the request it produces frames for. */
export interface StreamControl {
  readonly request: ProviderRequest;
  readonly options: ProviderStreamOptions;
  /** How the current attempt's response has ended so far: null while it streams. */
  readonly terminal: TerminalKind | null;
  /**
   * The response is answered and waits only for its end (a finished Chat Completions choice
   * waiting for its usage chunk or `[DONE]`, `EventTranslator.finishing`): the source waits for
   * the rest briefly, as after a terminal event.
   */
  readonly finishing: boolean;
  /**
   * The retry-safety rule (docs/decisions.md #8): a request may be sent again — retried or failed
   * over — only while nothing visible was streamed and no call was complete in the current
   * attempt, the caller allows it (no tool ran) and the request was not cancelled.
   */
  canResend(): boolean;
  /** The failure a stream that was read to its end stands for: none for completed/incomplete. */
  endOfStreamError(sawDone: boolean): ProviderError | undefined;
}

/**
 * Takes one batch of a source's frames. Returns true to go on; false when the consumer stopped (the
 * source then closes what it opened and returns, and what it returns is not read); or a promise
 * of either, which the source awaits before it reads on (a pulling consumer, or the event loop's
 * next turn after a completed call). It throws what the consumer threw: the source closes what it
 * opened and lets it pass.
 */
export type BatchSink = (batch: readonly ProviderFrame[]) => boolean | Promise<boolean>;

/**
 * The frames of one request, attempt by attempt, pushed to `emit` in batches; each attempt starts
 * with `request_started`. Resolves to the failure that ended the request, or undefined when the
 * last attempt's stream was read to its end (its assembly then says how it ended).
 */
export type FrameSource = (control: StreamControl, emit: BatchSink) => Promise<ProviderError | undefined>;

/**
 * Maps the `provider_event`s of a non-Responses wire format (Chat Completions chunks) to the Open
 * Responses streaming events they stand for, in order. A fresh translator is made per attempt.
 */
export interface EventTranslator {
  /** The events one provider event stands for (often none, or several). */
  translate(frame: ProviderEventFrame): readonly JsonObject[];
  /**
   * The events the end of the attempt's body stands for (a terminal event the format only implies,
   * e.g. a finished chat choice whose usage chunk never came). Called once, when the body ended.
   */
  end(): readonly JsonObject[];
  /** The response is answered and waits only for its end (`StreamControl.finishing`). @defaultValue false */
  readonly finishing?: boolean;
}

export interface AssemblingStreamInit {
  request: ProviderRequest;
  options?: ProviderStreamOptions;
  source: FrameSource;
  /**
   * For wire formats whose events are not Open Responses events: called at each
   * `request_started` (undefined: this attempt's events are Open Responses events). While a
   * translator runs, the stream derives `output_text_delta` frames from the translated text deltas
   * itself and drops any the source yields (a fallback candidate's own stream already derived
   * them); the translator's end events (`EventTranslator.end`) derive no frames.
   * @defaultValue none (each event's `data` is an Open Responses event)
   */
  translator?: () => EventTranslator | undefined;
  /**
   * Record the assembly's notes (a final text that differs from its streamed deltas) in the
   * `provider_event.errors` of the event that brought them, as validation findings are recorded.
   * @defaultValue false (as with validation off: `errors` holds nothing but schema findings)
   */
  notes?: boolean;
}

/** Wraps a frame source into a provider stream (see the module comment). */
export function createAssemblingStream(init: AssemblingStreamInit): ProviderStream {
  return new AssemblingStream(init);
}

class AssemblingStream implements ProviderStream, StreamControl {
  readonly result: Promise<ProviderOutcome>;
  readonly request: ProviderRequest;
  readonly options: ProviderStreamOptions;
  private attempt: AttemptAssembly;
  /** Calls of the current assembly already handed to `onCall`. */
  private delivered = 0;
  private settle!: (outcome: ProviderOutcome) => void;
  private settled = false;
  private iterated = false;

  constructor(private readonly init: AssemblingStreamInit) {
    this.request = init.request;
    this.options = init.options ?? {};
    this.attempt = this.newAttempt(undefined);
    this.result = new Promise((resolve) => {
      this.settle = resolve;
    });
  }

  private newAttempt(translator: EventTranslator | undefined): AttemptAssembly {
    return new AttemptAssembly({ nativeCalls: this.options.nativeCalls === true, translator });
  }

  private get assembly(): Assembly {
    return this.attempt.assembly;
  }

  get terminal(): TerminalKind | null {
    return this.assembly.terminal;
  }

  get finishing(): boolean {
    return this.attempt.translator?.finishing === true;
  }

  canResend(): boolean {
    return (
      !this.assembly.outputEmitted &&
      this.assembly.calls.length === 0 &&
      (this.options.canRetry?.() ?? true) &&
      !(this.options.signal?.aborted ?? false)
    );
  }

  endOfStreamError(sawDone: boolean): ProviderError | undefined {
    this.endTranslation();
    return endOfStreamError(this.assembly, sawDone);
  }

  [Symbol.asyncIterator](): AsyncIterator<ProviderFrame> {
    this.claim();
    return this.frames();
  }

  private async *frames(): AsyncGenerator<ProviderFrame> {
    for await (const group of this.pulled()) yield* group;
  }

  frameGroups(): AsyncIterable<readonly ProviderFrame[]> {
    this.claim();
    return this.pulled();
  }

  /**
   * The groups of `frameGroups` handed to `sink` as they come, without a promise per group: a
   * network chunk's groups go to the sink one after another in one synchronous pass, each followed
   * by the delivery of the calls it completed (the loop's path; bench/README.md, "The turn").
   * After a group that completed calls the pass waits for the event loop's next turn, so what the
   * calls set off without waiting on anything outside the process (an approval asked, a decision
   * an approver gives at once, a refusal) lands before the next group, wherever the network cut
   * the response: a live run and its replay, which hands frames over one at a time, then agree
   * (docs/decisions.md #9).
   */
  async pumpGroups(sink: (group: readonly ProviderFrame[]) => boolean): Promise<void> {
    this.claim();
    await this.pump(sink);
  }

  private claim(): void {
    if (this.iterated) throw new Error("a provider stream can be iterated once");
    this.iterated = true;
  }

  /**
   * The pump taken a group at a time: at each group it waits until the consumer asks for the next
   * one, and it stops (the request abandoned) when the consumer stops asking.
   */
  private async *pulled(): AsyncGenerator<readonly ProviderFrame[]> {
    let next = handoff<readonly ProviderFrame[] | undefined>();
    let resume: ((go: boolean) => void) | undefined;
    const pumped = this.pump(
      (group) =>
        new Promise<boolean>((go) => {
          resume = go;
          next.settle(group);
        }),
    ).then(
      () => next.settle(undefined),
      (err: unknown) => next.fail(err),
    );
    try {
      for (;;) {
        const group = await next.promise;
        if (group === undefined) return;
        next = handoff();
        yield group;
        const go = resume;
        resume = undefined;
        go?.(true);
      }
    } finally {
      resume?.(false);
      await pumped;
    }
  }

  /** Where `nextGroup` is in the current batch. */
  private at = 0;

  /**
   * Runs the source, handing each group to `sink` and the calls it completed to `onCall`; settles
   * `result` (cancelled when the sink stopped or threw, or the source threw).
   */
  private async pump(sink: (group: readonly ProviderFrame[]) => boolean | Promise<boolean>): Promise<void> {
    const onCall = this.options.onCall;
    let stopped = false;
    const stop = (): false => {
      stopped = true;
      return false;
    };
    // A group pulled (the sink's promise): its calls go once the consumer asks for the next group.
    const afterPull = (go: boolean, batch: readonly ProviderFrame[]): boolean | Promise<boolean> => {
      if (!go) return stop();
      if (onCall !== undefined) this.deliverCalls(onCall);
      return groups(batch);
    };
    const groups = (batch: readonly ProviderFrame[]): boolean | Promise<boolean> => {
      for (let g = this.nextGroup(batch); g !== undefined; g = this.nextGroup(batch)) {
        const shown = sink(g);
        if (shown === false) return stop();
        if (shown !== true) return shown.then((go) => afterPull(go, batch));
        if (onCall !== undefined && this.deliverCalls(onCall) > 0)
          return nextTurn().then(() => groups(batch));
      }
      return true;
    };
    try {
      const failure = await this.init.source(this, (batch) => {
        if (stopped) return false;
        this.at = 0;
        return groups(batch);
      });
      if (!stopped) this.finish(failure);
    } finally {
      if (!this.settled)
        this.settleWith({ ok: false, error: cancelledError(), response: finishAssembly(this.assembly) });
    }
  }

  /**
   * The next group of `batch`: a `provider_event` with the frames derived from it (the assembly
   * stepped with it), or another frame alone; undefined once the batch is used up. Derived frames
   * a source yields are dropped (they are derived again here).
   */
  private nextGroup(batch: readonly ProviderFrame[]): ProviderFrame[] | undefined {
    while (this.at < batch.length) {
      const f = batch[this.at++] as ProviderFrame;
      if (f.type === "provider_event") {
        const group: ProviderFrame[] = [f];
        // Without a translator, the SSE mapping's text deltas follow their event in the batch.
        while (this.attempt.translator === undefined && batch[this.at]?.type === "output_text_delta")
          group.push(batch[this.at++] as ProviderFrame);
        this.stepEvent(f, group);
        return group;
      }
      if (!DERIVED.has(f.type) && (f.type !== "output_text_delta" || this.attempt.translator === undefined)) {
        if (f.type === "request_started") this.reset();
        return [f];
      }
    }
    return undefined;
  }

  /** Steps the attempt with one provider event; its derived frames join its group. */
  private stepEvent(f: ProviderEventFrame, group: ProviderFrame[]): void {
    const derived = this.attempt.event(f);
    // Most events note nothing and derive nothing: no array is made for them (bench/README.md, "The turn").
    if (this.attempt.translator === undefined && this.assembly.notes.length > 0) {
      const notes = this.assembly.notes.splice(0);
      if (this.init.notes === true) f.errors = [...(f.errors ?? []), ...notes];
    }
    for (let i = 0; i < derived.length; i++) group.push(derived[i] as ProviderFrame);
  }

  private reset(): void {
    this.attempt = this.newAttempt(this.init.translator?.());
    this.delivered = 0;
  }

  /** The body of the current attempt ended: the translator's end events are stepped. */
  private endTranslation(): void {
    this.attempt.endTranslation();
    if (this.options.onCall !== undefined) this.deliverCalls(this.options.onCall);
  }

  /** Hands `onCall` the calls completed since the last delivery; returns how many. */
  private deliverCalls(onCall: (call: Assembly["calls"][number]) => void): number {
    const calls = this.assembly.calls;
    const from = this.delivered;
    while (this.delivered < calls.length) onCall(calls[this.delivered++] as Assembly["calls"][number]);
    return this.delivered - from;
  }

  /** Settles from how the source ended: its failure, else what the assembly says. */
  private finish(failure: ProviderError | undefined): void {
    if (failure === undefined) this.endTranslation();
    const response = finishAssembly(this.assembly);
    const error = failure ?? endOfStreamError(this.assembly, false);
    this.settleWith(error === undefined ? { ok: true, response } : { ok: false, error, response });
  }

  private settleWith(outcome: ProviderOutcome): void {
    if (this.settled) return;
    this.settled = true;
    this.settle(outcome);
  }
}

const DERIVED: ReadonlySet<string> = new Set(DERIVED_FRAME_TYPES);

/** A promise with its settling functions apart (the pull side of `pulled`). */
function handoff<T>(): { promise: Promise<T>; settle: (value: T) => void; fail: (err: unknown) => void } {
  let settle!: (value: T) => void;
  let fail!: (err: unknown) => void;
  const promise = new Promise<T>((resolve, reject) => {
    settle = resolve;
    fail = reject;
  });
  return { promise, settle, fail };
}

/** Resolves in the event loop's next turn, after every microtask queued before it. */
function nextTurn(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

/** The error of a stream that was read to its end: none for completed and incomplete responses. */
function endOfStreamError(a: Assembly, sawDone: boolean): ProviderError | undefined {
  switch (a.terminal) {
    case "completed":
    case "incomplete":
      return undefined;
    case "failed":
    case "error": {
      const code = a.error?.code ?? null;
      const fields: ConstructorParameters<typeof ProviderError>[0] = {
        kind: "stream_failed",
        code: code === "previous_response_not_found" ? "previous_response_not_found" : "response_failed",
        message: `the provider failed the response${code ? ` (${code})` : ""}: ${a.error?.message ?? "no reason given"}`,
        retryable: !isNonRetryableCode(code) && a.error?.type !== "invalid_request_error",
        providerCode: code,
      };
      if (a.error?.type !== undefined) fields.errorType = a.error.type;
      if (a.error?.param !== undefined) fields.param = a.error.param;
      return new ProviderError(fields);
    }
    default:
      return new ProviderError({
        kind: "truncated",
        code: "stream_truncated",
        message: sawDone
          ? "the stream sent [DONE] without a terminal response event (response.completed/incomplete/failed)"
          : "the stream ended before a terminal response event (response.completed/incomplete/failed)",
        retryable: true,
      });
  }
}
