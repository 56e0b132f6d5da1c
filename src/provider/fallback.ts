/**
 * Ordered fallback across providers: the next candidate is tried when one fails with a
 * `provider_error` (transport, 401/403, 5xx/429 after its own retries, truncation) while the
 * request may still be re-sent (the retry-safety rule of assembling-stream.ts). A `retry` frame
 * with reason `fallback:<name>` marks the switch; attempts keep counting. Failures that another
 * provider would repeat (invalid requests, failed responses) end the turn.
 *
 * The candidates' streams are the frame source of one assembling stream, so calls reach the
 * caller once, from the outer stream (each frame is assembled by the candidate's stream and again
 * by the outer one; only runs with fallbacks pay for that). Candidates may speak different APIs:
 * the outer stream translates each attempt's events with the translator of the candidate that
 * made it (wire-api.ts).
 */
import { EddyError } from "../errors.js";
import { frame, type ProviderFrame } from "../frames/frame.js";
import { createAssemblingStream, type FrameSource } from "./assembling-stream.js";
import type { Provider, ProviderRequest, ProviderStreamOptions } from "./provider.js";
import { chainWire, wireCodec } from "./wire-api.js";

/** One provider of a fallback chain. */
export interface FallbackCandidate {
  provider: Provider;
  /** Model to request from this candidate (replaces the body's `model`). @defaultValue the body's */
  model?: string;
}

/**
 * A provider that tries `candidates` in order. Capabilities and name are the first candidate's.
 *
 * @example
 * ```ts
 * const provider = createFallbackProvider([{ provider: openai }, { provider: openrouter, model: "openai/gpt-5-mini" }]);
 * ```
 */
export function createFallbackProvider(candidates: readonly FallbackCandidate[]): Provider {
  const first = candidates[0];
  if (first === undefined)
    throw new EddyError("invalid_config", "a fallback provider needs at least one candidate", {
      fault: "user",
    });
  const provider: Provider = {
    name: first.provider.name,
    capabilities: first.provider.capabilities,
    secrets: candidates.flatMap((c) => c.provider.secrets ?? []),
    close: async () => {
      await Promise.all(candidates.map((c) => c.provider.close?.()));
    },
    stream: (request, options = {}) => {
      const current: { candidate: FallbackCandidate } = { candidate: first };
      return createAssemblingStream({
        request,
        options,
        source: candidateSource(candidates, request, options, current),
        translator: () => wireCodec(current.candidate.provider.wire).createTranslator?.(request),
      });
    },
  };
  const wire = chainWire(candidates.map((c) => c.provider.wire));
  return wire === undefined ? provider : { ...provider, wire };
}

function candidateSource(
  candidates: readonly FallbackCandidate[],
  request: ProviderRequest,
  options: ProviderStreamOptions,
  current: { candidate: FallbackCandidate },
): FrameSource {
  // Calls reach the caller from the outer stream only.
  const { onCall: _outer, ...innerOptions } = options;
  return async function fallback(control, emit) {
    let firstAttempt = request.firstAttempt ?? 1;
    for (let i = 0; ; i++) {
      const candidate = candidates[i] as FallbackCandidate;
      current.candidate = candidate;
      const body = candidate.model === undefined ? request.body : { ...request.body, model: candidate.model };
      const inner = candidate.provider.stream({ ...request, body, firstAttempt }, innerOptions);
      let lastAttempt = firstAttempt;
      // Groups keep an event's text deltas with it for the outer stream (which derives the rest
      // again); leaving the loop early abandons the candidate's request.
      for await (const group of inner.frameGroups?.() ?? singles(inner)) {
        for (const f of group) if (f.type === "request_started") lastAttempt = f.attempt;
        if (!(await emit(group))) return undefined;
      }
      const outcome = await inner.result;
      if (outcome.ok) return undefined;
      const next = candidates[i + 1];
      if (next === undefined || outcome.error.runEndReason !== "provider_error" || !control.canResend())
        return outcome.error;
      firstAttempt = lastAttempt + 1;
      const moved = frame("retry", {
        turn: request.turn,
        attempt: firstAttempt,
        delay_ms: 0,
        reason: `fallback:${next.provider.name}`,
      });
      if (!(await emit([moved]))) return undefined;
    }
  };
}

async function* singles(stream: AsyncIterable<ProviderFrame>): AsyncGenerator<readonly ProviderFrame[]> {
  for await (const f of stream) yield [f];
}
