/**
 * The replay provider: implements the provider contract from a tape. Each `stream()` call plays the
 * next recorded request segment (one provider stream: its attempts, retries and failures, up to the
 * loop's `turn_ended` or `mode_changed`). Recorded SSE messages are fed back through the same
 * SSE→frame mapping and the same assembler as a live run, so a replay re-checks that code; the
 * `request_started` frames carry the body the loop built *now*, so request bodies are compared too.
 * Transport facts (headers, failures, retry delays) come from the tape; nothing sleeps.
 */
import {
  frame,
  PROVIDER_FRAME_TYPES,
  type ProviderEventFrame,
  type ProviderFrame,
  type RequestFailedFrame,
} from "../frames/frame.js";
import { framesFromSse, type SseFrame } from "../frames/from-sse.js";
import { type Assembly, createAssembly, finishAssembly, step } from "../provider/assembler/index.js";
import type { ProviderCapabilities } from "../provider/capabilities.js";
import { ProviderError, type ProviderErrorKind } from "../provider/errors.js";
import type { Provider, ProviderOutcome, ProviderRequest, ProviderStream } from "../provider/provider.js";
import type { FrameGate } from "./gate.js";
import type { Tape } from "./tape.js";

const PROVIDER_FRAME_TYPE_SET: ReadonlySet<string> = new Set(PROVIDER_FRAME_TYPES);

/** The recorded provider frames of each `stream()` call, in order. */
export function providerSegments(tape: Tape): ProviderFrame[][] {
  const segments: ProviderFrame[][] = [];
  let current: ProviderFrame[] | undefined;
  for (const frame of tape.frames) {
    if (PROVIDER_FRAME_TYPE_SET.has(frame.type)) {
      if (current === undefined) {
        current = [];
        segments.push(current);
      }
      current.push(frame as ProviderFrame);
    } else if (frame.type === "turn_ended" || frame.type === "mode_changed") {
      current = undefined;
    }
  }
  return segments;
}

export function createReplayProvider(
  tape: Tape,
  gate: FrameGate,
  capabilities: ProviderCapabilities,
): Provider {
  const segments = providerSegments(tape);
  const validate = tape.header.options.validate;
  let next = 0;
  return {
    name: "replay",
    capabilities,
    stream: (request) => new ReplayStream(segments[next++], request, gate, validate),
  };
}

class ReplayStream implements ProviderStream {
  assembly: Assembly = createAssembly();
  readonly result: Promise<ProviderOutcome>;
  private settle!: (outcome: ProviderOutcome) => void;

  constructor(
    private readonly segment: ProviderFrame[] | undefined,
    private readonly request: ProviderRequest,
    private readonly gate: FrameGate,
    private readonly validate: boolean,
  ) {
    this.result = new Promise((resolve) => {
      this.settle = resolve;
    });
  }

  [Symbol.asyncIterator](): AsyncIterator<ProviderFrame> {
    return this.play();
  }

  private async *play(): AsyncGenerator<ProviderFrame> {
    let lastFailure: RequestFailedFrame | undefined;
    try {
      if (this.segment === undefined) {
        yield this.requestStarted(this.request.firstAttempt ?? 1);
        const failure = fresh<RequestFailedFrame>({
          type: "request_failed",
          turn: this.request.turn,
          attempt: this.request.firstAttempt ?? 1,
          code: "replay_exhausted",
          message:
            "the tape has no more recorded requests: the replayed run made a request the recorded one did not",
          kind: "decode",
          retryable: false,
        });
        yield failure;
        lastFailure = failure;
        return;
      }
      const derived: SseFrame[] = [];
      for (const recorded of this.segment) {
        await this.gate.wait(recorded.seq);
        switch (recorded.type) {
          case "request_started":
            this.assembly = createAssembly();
            lastFailure = undefined;
            yield this.requestStarted(recorded.attempt);
            break;
          case "provider_event": {
            derived.length = 0;
            framesFromSse(messageOf(recorded), { turn: recorded.turn, validate: this.validate }, (f) =>
              derived.push(f),
            );
            const first = derived.shift();
            if (first === undefined) break;
            if (first.type === "provider_event" && first.status === "event") step(this.assembly, first.data);
            yield first;
            break;
          }
          case "output_text_delta": {
            const delta = derived.shift();
            if (delta !== undefined) yield delta;
            break;
          }
          case "request_failed":
            lastFailure = recorded;
            yield fresh(recorded);
            break;
          default:
            yield fresh(recorded);
        }
      }
    } finally {
      this.settle(this.outcome(lastFailure));
    }
  }

  private requestStarted(attempt: number): ProviderFrame {
    return frame("request_started", { turn: this.request.turn, attempt, body: this.request.body });
  }

  private outcome(failure: RequestFailedFrame | undefined): ProviderOutcome {
    const response = finishAssembly(this.assembly);
    if (failure !== undefined) return { ok: false, error: errorFrom(failure), response };
    if (this.assembly.terminal === "completed" || this.assembly.terminal === "incomplete")
      return { ok: true, response };
    return {
      ok: false,
      error: new ProviderError({
        kind: "truncated",
        code: "stream_truncated",
        message: "the tape ends in the middle of a response",
        retryable: false,
      }),
      response,
    };
  }
}

/** The SSE message a recorded provider_event came from (JSON re-encoded: same meaning, same frames). */
function messageOf(frame: ProviderEventFrame) {
  const data = frame.raw ?? JSON.stringify(frame.data);
  return frame.event_name === undefined ? { data, raw: "" } : { data, raw: "", event: frame.event_name };
}

function errorFrom(frame: RequestFailedFrame): ProviderError {
  const kind = frame.kind as ProviderErrorKind;
  const fields: ConstructorParameters<typeof ProviderError>[0] = {
    kind,
    code: kind === "cancelled" ? "cancelled" : "provider_http",
    message: frame.message,
    retryable: frame.retryable,
    providerCode: frame.code,
  };
  if (frame.status !== undefined) fields.status = frame.status;
  if (frame.error_type !== undefined) fields.errorType = frame.error_type;
  if (frame.param !== undefined) fields.param = frame.param;
  if (frame.request_id !== undefined) fields.requestId = frame.request_id;
  return new ProviderError(fields);
}

/** A copy of a frame's payload with a fresh (unstamped) envelope. */
function fresh<F extends ProviderFrame>(
  frame: Omit<F, "run_id" | "seq" | "ts"> & Partial<Pick<F, "run_id" | "seq" | "ts">>,
): F {
  const { run_id: _r, seq: _s, ts: _t, ...payload } = frame as F;
  return { run_id: "", seq: -1, ts: 0, ...payload } as F;
}
