/**
 * The provider contract (type only): what any provider offers the loop. The HTTP provider, the
 * replay provider and test doubles implement it; the loop, replay and tests depend on it alone.
 *
 * A provider streams one request — all its attempts — as frames, keeps an assembly of the
 * current attempt that the loop reads between frames (to promote function calls the moment they
 * complete), and settles a result when the iteration ends. Provider failures are outcomes, not
 * exceptions: iterating never throws for an HTTP error, a timeout or a failed response; the frames
 * record it (`request_failed`, `retry`) and `result` carries the typed error.
 */
import type { ProviderFrame } from "../frames/frame.js";
import type { CreateResponseBody } from "../protocol/types.js";
import type { AssembledResponse, Assembly } from "./assembler/index.js";
import type { ProviderCapabilities } from "./capabilities.js";
import type { ProviderError } from "./errors.js";

export interface ProviderRequest {
  /** The exact body to send (`stream: true` is the provider's to set when it streams). */
  body: CreateResponseBody;
  /** 0-based turn of the run (frames carry it). */
  turn: number;
  /**
   * Number of the first attempt. 1 unless the loop re-sends a turn itself (e.g. the stateless
   * resend after `previous_response_not_found`, DESIGN.md §8.5).
   * @defaultValue 1
   */
  firstAttempt?: number;
}

export interface ProviderStreamOptions {
  /** Cancels the request at any point; the outcome is then a `cancelled` error. */
  signal?: AbortSignal;
  /**
   * Asked before every retry: false once something irreversible happened in this turn (a tool
   * ran), so the provider must not retry then (DESIGN.md §3.8).
   */
  canRetry?: () => boolean;
  /** True while the loop runs a tool: the idle timeout does not run then (DESIGN.md §8.6). */
  isBusy?: () => boolean;
}

/** How one request ended. */
export type ProviderOutcome =
  | { ok: true; response: AssembledResponse }
  | { ok: false; error: ProviderError; response: AssembledResponse };

export interface ProviderStream extends AsyncIterable<ProviderFrame> {
  /**
   * The assembly of the current attempt, updated before each `provider_event` frame is yielded.
   * Its `calls` array is append-only: the loop keeps a cursor and promotes new entries. A `retry`
   * frame means a new attempt starts and the assembly is replaced.
   */
  readonly assembly: Assembly;
  /** Settles (never rejects) once the iteration has ended. Iterate the stream to drive it. */
  readonly result: Promise<ProviderOutcome>;
}

export interface Provider {
  /** A short name for messages and tapes (`openai`, `mock`, `replay`, …). */
  readonly name: string;
  /** What the provider supports; everything that varies by provider reads it here. */
  readonly capabilities: ProviderCapabilities;
  stream(request: ProviderRequest, options?: ProviderStreamOptions): ProviderStream;
}
