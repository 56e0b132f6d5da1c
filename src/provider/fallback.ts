/**
 * Ordered fallback across providers: the next candidate is tried when one fails with a
 * `provider_error` (transport, 401/403, 5xx/429 after its own retries, truncation) before any
 * output. A `retry` frame with reason `fallback:<name>` marks the switch; attempts keep counting.
 * Failures that another provider would repeat (invalid requests, failed responses) end the turn.
 */
import { EddyError } from "../errors.js";
import { frame, type ProviderFrame, type RetryFrame } from "../frames/frame.js";
import { type Assembly, createAssembly, finishAssembly } from "./assembler/index.js";
import { cancelledError } from "./errors.js";
import type {
  Provider,
  ProviderOutcome,
  ProviderRequest,
  ProviderStream,
  ProviderStreamOptions,
} from "./provider.js";

export interface FallbackCandidate {
  provider: Provider;
  /** Model to request from this candidate (replaces the body's `model`). */
  model?: string;
}

/** A provider that tries `candidates` in order. Capabilities and name are the first candidate's. */
export function createFallbackProvider(candidates: FallbackCandidate[]): Provider {
  const first = candidates[0];
  if (first === undefined)
    throw new EddyError("invalid_config", "a fallback provider needs at least one candidate");
  return {
    name: first.provider.name,
    capabilities: first.provider.capabilities,
    stream: (request, options = {}) => new FallbackStream(candidates, request, options),
  };
}

class FallbackStream implements ProviderStream {
  private current: ProviderStream | undefined;
  readonly result: Promise<ProviderOutcome>;
  private settle!: (outcome: ProviderOutcome) => void;

  constructor(
    private readonly candidates: FallbackCandidate[],
    private readonly request: ProviderRequest,
    private readonly options: ProviderStreamOptions,
  ) {
    this.result = new Promise((resolve) => {
      this.settle = resolve;
    });
  }

  get assembly(): Assembly {
    return this.current?.assembly ?? createAssembly();
  }

  [Symbol.asyncIterator](): AsyncIterator<ProviderFrame> {
    return this.run();
  }

  private async *run(): AsyncGenerator<ProviderFrame> {
    try {
      yield* this.tryCandidates();
    } finally {
      this.settle({ ok: false, error: cancelledError(), response: finishAssembly(this.assembly) }); // no-op once settled
    }
  }

  private async *tryCandidates(): AsyncGenerator<ProviderFrame> {
    let firstAttempt = this.request.firstAttempt ?? 1;
    for (let i = 0; i < this.candidates.length; i++) {
      const candidate = this.candidates[i] as FallbackCandidate;
      const body =
        candidate.model === undefined ? this.request.body : { ...this.request.body, model: candidate.model };
      const inner = candidate.provider.stream({ ...this.request, body, firstAttempt }, this.options);
      this.current = inner;
      let lastAttempt = firstAttempt;
      for await (const frame of inner) {
        if (frame.type === "request_started") lastAttempt = frame.attempt;
        yield frame;
      }
      const outcome = await inner.result;
      const next = this.candidates[i + 1];
      const tryNext =
        !outcome.ok &&
        next !== undefined &&
        outcome.error.runEndReason === "provider_error" &&
        !inner.assembly.outputEmitted &&
        inner.assembly.calls.length === 0 &&
        (this.options.canRetry?.() ?? true) &&
        !(this.options.signal?.aborted ?? false);
      if (!tryNext) {
        this.settle(outcome);
        return;
      }
      firstAttempt = lastAttempt + 1;
      const retry: RetryFrame = frame("retry", {
        turn: this.request.turn,
        attempt: firstAttempt,
        delay_ms: 0,
        reason: `fallback:${next.provider.name}`,
      });
      yield retry;
    }
  }
}
