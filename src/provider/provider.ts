/**
 * The provider contract (type only): what any provider offers the loop. The Open Responses HTTP
 * provider, the fallback provider, the replay provider and test doubles implement it; the loop,
 * replay and tests depend on it alone (docs/architecture.md, "The provider contract").
 *
 * A provider streams one request — all its attempts — as frames and settles a result when the
 * iteration ends. Function calls reach the caller through `onCall` the moment they complete
 * (docs/decisions.md #3). Provider failures are outcomes, not exceptions: iterating never throws
 * for an HTTP error, a timeout or a failed response; the frames record it (`request_failed`,
 * `retry`) and `result` carries the typed error.
 */
import type { ProviderFrame } from "../frames/frame.js";
import type { CreateResponseBody, ItemParam, JsonObject, Usage } from "../protocol/types.js";
import type { AssembledCall, AssembledResponse } from "./assembler/index.js";
import type { ProviderCapabilities } from "./capabilities.js";
import type { ProviderError } from "./errors.js";
import type { WireApi } from "./wire-api.js";

/** One request of a run: the body to send and where it stands in the run. */
export interface ProviderRequest {
  /** The exact body to send (`stream: true` is the provider's to set when it streams). */
  body: CreateResponseBody;
  /** 0-based turn of the run (frames carry it). */
  turn: number;
  /**
   * Number of the first attempt. 1 unless the loop re-sends a turn itself (e.g. the stateless
   * resend after `previous_response_not_found`, docs/decisions.md #5).
   * @defaultValue 1
   */
  firstAttempt?: number;
}

/** How the caller takes part in one request: cancelling it, vetoing retries, receiving calls. */
export interface ProviderStreamOptions {
  /** Cancels the request at any point; the outcome is then a `cancelled` error. @defaultValue none */
  signal?: AbortSignal;
  /**
   * Asked before every retry: false once something irreversible happened in this turn (a tool
   * ran), so the provider must not re-send the request then (docs/decisions.md #8).
   * @defaultValue () => true
   */
  canRetry?: () => boolean;
  /**
   * True while the caller runs a tool: the idle timeout does not run then (docs/decisions.md #8).
   * @defaultValue () => false
   */
  isBusy?: () => boolean;
  /**
   * Receives each function call the moment it is complete (its `output_item.done`, or the
   * terminal response for a call that never got one), in completion order, right after the
   * consumer has taken the frame that completed it. A call is never withdrawn: once a call has
   * been handed out, the request is not retried.
   * @defaultValue none (the calls are in the result's `response.calls`)
   */
  onCall?: (call: AssembledCall) => void;
  /**
   * Also promote native call items (`apply_patch_call`, local `shell_call`, `local_shell_call`,
   * `custom_tool_call`, `mcp_approval_request`: assembler/native-calls.ts). Off, they stay
   * provider items the loop does not answer (a provider that runs such tools itself, like xAI's
   * `custom_tool_call`s, sends them as a record).
   * @defaultValue false
   */
  nativeCalls?: boolean;
}

/** How one request ended. `response` is what was assembled, also when it failed. */
export type ProviderOutcome =
  | { ok: true; response: AssembledResponse }
  | { ok: false; error: ProviderError; response: AssembledResponse };

/**
 * One request in flight: iterate it (once) for its frames; `result` settles — it never rejects —
 * once the iteration has ended. Stopping the iteration early (`break`) cancels the request.
 */
export interface ProviderStream extends AsyncIterable<ProviderFrame> {
  readonly result: Promise<ProviderOutcome>;
  /**
   * The same frames in groups: a `provider_event` together with the frames derived from it
   * (`output_text_delta`, `reasoning_delta`, `item_done`, `response_ended`), every other frame
   * alone. A consumer that emits each group at once, without awaiting in between, guarantees that
   * nothing it emits in reaction (a tool's frames) lands among them — the loop does. Iterate
   * either this or the stream itself, once. @defaultValue none (the stream's frames one by one)
   */
  frameGroups?(): AsyncIterable<readonly ProviderFrame[]>;
  /**
   * The groups of `frameGroups` pushed to `sink` instead of pulled: the groups of one network
   * chunk one after another, synchronously, with no promise per group — except that after a group
   * that completed calls (`onCall`) it waits for the event loop's next turn, so what the calls set
   * off at once lands before the next group however the response was chunked (docs/decisions.md
   * #9). `sink` returns false to
   * stop (as a `break` would: the request is cancelled). Resolves once the stream has ended;
   * `result` has settled by then. Use this, `frameGroups` or the stream itself, once.
   * @defaultValue none (iterate `frameGroups` or the stream)
   */
  pumpGroups?(sink: (group: readonly ProviderFrame[]) => boolean): Promise<void>;
}

/**
 * Something that answers Open Responses requests: an HTTP server (speaking Open Responses or Chat
 * Completions), a tape, a test double.
 */
export interface Provider {
  /** A short name for messages and tapes (`openai`, `mock`, `replay`, …). */
  readonly name: string;
  /** What the provider supports; everything that varies by provider reads it here. */
  readonly capabilities: ProviderCapabilities;
  /**
   * Values the provider sends that must never be shown or recorded (its API key, auth header
   * values, a password from the base URL). A run masks them in every frame it emits, wherever
   * they appear — e.g. echoed back in a request id or an error message.
   * @defaultValue none
   */
  readonly secrets?: readonly string[];
  /**
   * The HTTP API the provider speaks and the settings that shape its requests; a tape records it
   * so a replay maps the recorded events as the live run did (wire-api.ts).
   * @defaultValue `{ api: "responses" }`
   */
  readonly wire?: WireApi;
  /**
   * Releases what the provider holds open between requests (WebSocket connections). Call it when
   * the provider is no longer needed (the CLI does after each run); it may still be used after,
   * opening what it needs again. Idle connections never keep the process alive.
   * @defaultValue none (nothing to release)
   */
  close?(): Promise<void>;

  /** Starts a request. Nothing is sent until the stream is iterated. */
  stream(request: ProviderRequest, options?: ProviderStreamOptions): ProviderStream;
  /**
   * Compacts a conversation on the server (`POST /responses/compact`): the items that stand for it
   * afterwards (the recent messages and an opaque `compaction` item), to send as the next request's
   * input without `previous_response_id`. Throws a `ProviderError` when the server refuses.
   * Only called when `capabilities.compaction` is true.
   * @defaultValue none (the provider cannot compact; overflows are compacted locally)
   */
  compact?(request: CompactRequest, options?: { signal?: AbortSignal }): Promise<CompactResult>;
}

/** What `Provider.compact` sends (`CompactResponseMethodPublicBody` in the vendored spec). */
export interface CompactRequest {
  model: string | null;
  /** The conversation as input items. */
  input: readonly ItemParam[] | readonly JsonObject[];
  /** @defaultValue none */
  previousResponseId?: string;
  /** @defaultValue none */
  instructions?: string;
}

/** What `Provider.compact` answers (`CompactResource` in the vendored spec): the compacted items and the pass's usage. */
export interface CompactResult {
  output: JsonObject[];
  usage: Usage | null;
}
