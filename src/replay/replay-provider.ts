/**
 * The replay provider: implements the provider contract from a tape. Each `stream()` call plays the
 * next recorded request segment (one provider stream: its attempts, retries and failures, up to the
 * loop's `turn_ended` or `mode_changed`). Recorded SSE messages are fed back through the same
 * SSE→frame mapping and the same assembling stream as a live run — for the API the tape header
 * names (`provider.wire`: Chat Completions chunks go through their translator) — so a replay
 * re-checks that code; the `request_started` frames carry the body the loop built *now* (and its
 * wire translation), so request bodies are compared too. Transport facts (headers, failures, retry
 * delays) come from the tape; nothing sleeps.
 */
import {
  type ContextCompactedFrame,
  DERIVED_FRAME_TYPES,
  frame,
  PROVIDER_FRAME_TYPES,
  type ProviderEventFrame,
  type ProviderFrame,
  type RequestFailedFrame,
} from "../frames/frame.js";
import type { SseFrame } from "../frames/from-sse.js";
import type { JsonObject, Usage } from "../protocol/types.js";
import { createAssemblingStream, type FrameSource } from "../provider/assembling-stream.js";
import type { ProviderCapabilities } from "../provider/capabilities.js";
import { ProviderError, type ProviderErrorKind } from "../provider/errors.js";
import type { Provider, ProviderRequest } from "../provider/provider.js";
import { type WireCodec, wireChain, wireCodec } from "../provider/wire-api.js";
import type { FrameGate } from "./gate.js";
import type { Tape } from "./tape.js";

const PROVIDER_FRAME_TYPE_SET: ReadonlySet<string> = new Set(PROVIDER_FRAME_TYPES);
const DERIVED: ReadonlySet<string> = new Set(DERIVED_FRAME_TYPES);

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
    } else if (
      frame.type === "turn_ended" ||
      frame.type === "mode_changed" ||
      // An overflow's compaction comes between a turn's refused request and its resend.
      frame.type === "context_compacted"
    ) {
      current = undefined;
    }
  }
  return segments;
}

/**
 * A provider that plays `tape`'s recorded requests in order, releasing each recorded frame only
 * when `gate` says the run has reached it.
 */
export function createReplayProvider(
  tape: Tape,
  gate: FrameGate,
  capabilities: ProviderCapabilities,
): Provider {
  const segments = providerSegments(tape);
  const validate = tape.header.provider.validate;
  // Hand-built headers (tests) may lack `provider`: the API is then Open Responses.
  const wire = tape.header.provider?.wire;
  const chain = wireChain(wire).map(wireCodec);
  let next = 0;
  const provider: Provider = {
    name: "replay",
    capabilities,
    stream: (request, options = {}) => {
      // Each request starts at the chain's first provider; a recorded fallback moves to the next.
      const current: ReplayContext["current"] = { codec: chain[0] as WireCodec, usage: undefined };
      return createAssemblingStream({
        request,
        options,
        source: recordedSource(segments[next++], { request, gate, validate, chain, current }),
        translator: () => current.codec.createTranslator?.(request, current.usage),
        notes: validate,
      });
    },
  };
  const compact = recordedCompactions(tape);
  if (compact !== undefined) provider.compact = compact;
  return wire === undefined ? provider : { ...provider, wire };
}

interface ReplayContext {
  request: ProviderRequest;
  gate: FrameGate;
  validate: boolean;
  /** The codecs of the recorded provider and its fallback candidates, in order. */
  chain: readonly WireCodec[];
  /**
   * The codec of the attempt being replayed and the usage it estimated, if it did (the assembling
   * stream's translator reads them): estimated again from the tape's masked text, it would differ.
   */
  current: { codec: WireCodec; usage: Usage | undefined };
}

/** The usage each attempt of a segment estimated (`usage.estimated`), by attempt number. */
function estimatesOf(segment: readonly ProviderFrame[]): Map<number, Usage> {
  const estimates = new Map<number, Usage>();
  let attempt = 0;
  for (const f of segment) {
    if (f.type === "request_started") attempt = f.attempt;
    else if (
      f.type === "response_ended" &&
      f.usage !== null &&
      (f.usage as { estimated?: unknown }).estimated === true
    )
      estimates.set(attempt, f.usage);
  }
  return estimates;
}

/**
 * The server's compactions as the tape recorded them (each overflow's `context_compacted` frame
 * holds the server's output, or the error it failed with); none when the recorded run never asked.
 */
function recordedCompactions(tape: Tape): Provider["compact"] {
  const asked = tape.frames.filter(
    (f): f is ContextCompactedFrame =>
      f.type === "context_compacted" && (f.output !== undefined || f.server_error !== undefined),
  );
  if (asked.length === 0) return undefined;
  return async () => {
    const recorded = asked.shift();
    if (recorded?.output !== undefined) return { output: recorded.output, usage: null };
    throw new ProviderError({
      kind: "http",
      code: "provider_http",
      message:
        recorded?.server_error ??
        "the replayed run asked the server to compact more often than the recorded one",
      retryable: false,
    });
  };
}

/** The recorded frames of one request, provider events re-derived from their SSE messages. */
function recordedSource(segment: ProviderFrame[] | undefined, context: ReplayContext): FrameSource {
  const { request, gate, validate, chain, current } = context;
  let candidate = 0;
  // How the recorded attempt went: over WebSocket, its messages are mapped as WebSocket messages.
  let transport: "websocket" | undefined;
  const requestStarted = (attempt: number): ProviderFrame => {
    const started = frame("request_started", { turn: request.turn, attempt, body: request.body });
    const wireBody = wireBodyOf(current.codec, request);
    if (wireBody !== undefined) started.wire_body = wireBody;
    if (transport !== undefined) started.transport = transport;
    return started;
  };
  return async function replay(_control, emit) {
    if (segment === undefined) {
      const attempt = request.firstAttempt ?? 1;
      const failure = frame("request_failed", {
        turn: request.turn,
        attempt,
        code: "replay_exhausted",
        message:
          "the tape has no more recorded requests: the replayed run made a request the recorded one did not",
        kind: "decode",
        retryable: false,
      });
      await emit([requestStarted(attempt), failure]);
      return errorFrom(failure);
    }
    let lastFailure: RequestFailedFrame | undefined;
    const derived: SseFrame[] = [];
    const estimates = estimatesOf(segment);
    /** The batch a recorded frame stands for today (none for a derived frame not derived again). */
    const replayed = (recorded: ProviderFrame): ProviderFrame[] | undefined => {
      switch (recorded.type) {
        case "request_started":
          lastFailure = undefined;
          transport = recorded.transport;
          current.usage = estimates.get(recorded.attempt);
          return [requestStarted(recorded.attempt)];
        case "provider_event": {
          derived.length = 0;
          const options = {
            turn: recorded.turn,
            validate,
            ...(transport === undefined ? {} : { transport }),
          };
          current.codec.framesFromSse(messageOf(recorded), options, (f) => derived.push(f));
          const first = derived.shift();
          return first === undefined ? undefined : [first];
        }
        case "output_text_delta": {
          const delta = derived.shift();
          return delta === undefined ? undefined : [delta];
        }
        case "request_failed":
          lastFailure = recorded;
          return [fresh(recorded)];
        case "retry":
          // A fallback chain moved to its next candidate (fallback.ts): its API from now on.
          if (recorded.reason.startsWith("fallback:")) {
            candidate = Math.min(candidate + 1, chain.length - 1);
            current.codec = chain[candidate] as WireCodec;
          }
          return [fresh(recorded)];
        default:
          return [fresh(recorded)];
      }
    };
    for (const recorded of segment) {
      // Derived from the recorded events again by the assembling stream, in the same place.
      if (DERIVED.has(recorded.type)) continue;
      await gate.wait(recorded.seq);
      const batch = replayed(recorded);
      if (batch !== undefined && !(await emit(batch))) return undefined;
    }
    return lastFailure === undefined ? undefined : errorFrom(lastFailure);
  };
}

/** The wire body a live provider would send now; none when the request cannot be expressed (it failed then too). */
function wireBodyOf(codec: WireCodec, request: ProviderRequest): JsonObject | undefined {
  try {
    return codec.wireBody?.(request.body);
  } catch {
    return undefined;
  }
}

/** The SSE message a recorded provider_event came from (JSON re-encoded: same meaning, same frames). */
function messageOf(frame: ProviderEventFrame) {
  // A tape is untrusted: a `raw` that is not a string, or no `data` at all, is an empty message
  // (the replay then names where it diverges) rather than a crash.
  const data = typeof frame.raw === "string" ? frame.raw : (JSON.stringify(frame.data) ?? "");
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
