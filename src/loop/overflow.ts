/**
 * A turn the provider refused because the conversation no longer fits the model's context window
 * (`context_length_exceeded` as an HTTP 400, an `error` event or `response.failed`; or
 * `response.incomplete` for a context reason): the history is compacted once and the turn is sent
 * again. Compaction asks the server (`Provider.compact`, `POST /responses/compact`) when the
 * provider has the `compaction` capability, else — or when the server refuses, or answers with no
 * items (the next request would carry no input, the latest prompt gone too) — removes or
 * summarizes whole oldest turns through the run's `ToolHistoryManager` (history/compact.ts: never
 * a call without its output, never reasoning without what follows it). A `context_compacted`
 * frame records what was done; if the resend overflows too, the run ends with an error that says so.
 */
import { describeError } from "../errors.js";
import type { ContextCompaction, FrameError } from "../frames/frame.js";
import { countCalls } from "../history/compact.js";
import { toInputItem } from "../history/items.js";
import type { ToolHistoryManager } from "../history/tool-history.js";
import type { JsonObject } from "../protocol/types.js";
import type { Provider, ProviderOutcome } from "../provider/provider.js";

/** Share of a context window the compacted history may take (room for instructions, tools and the answer). */
export const OVERFLOW_WINDOW_SHARE = 0.75;

/** True when the outcome says the input is longer than the model's context window. */
export function isContextOverflow(outcome: ProviderOutcome): boolean {
  if (!outcome.ok) return /context_(length|window)/i.test(outcome.error.providerCode ?? "");
  const { response } = outcome;
  return response.terminal === "incomplete" && /context|input_tokens/i.test(response.incompleteReason ?? "");
}

/**
 * The token budget the compacted history must fit: a share of the context window when the error
 * names it (OpenAI: "maximum context length is N tokens"; "a context window of N"), else half of
 * what the history counts now.
 */
export function overflowBudget(message: string, tokensNow: number): number {
  const named =
    /maximum context length is\s+([\d,]+)/i.exec(message) ??
    /\b(?:context window|context length|window) (?:of|is)\s+([\d,]+)/i.exec(message);
  const window = named?.[1] === undefined ? Number.NaN : Number(named[1].replace(/,/g, ""));
  if (Number.isFinite(window) && window > 0) return Math.max(1, Math.floor(window * OVERFLOW_WINDOW_SHARE));
  return Math.max(1, Math.floor(tokensNow / 2));
}

/** What `compactAfterOverflow` needs from the run. */
export interface OverflowCompactionInput {
  provider: Provider;
  model: string | null;
  instructions: string | undefined;
  history: ToolHistoryManager;
  /** The conversation as input items (everything, also in chained mode). */
  items: readonly JsonObject[];
  /** The failed outcome (its message may name the context window). */
  outcome: ProviderOutcome;
  keepItemIds: boolean;
  signal: AbortSignal;
}

/** The compacted history and the `context_compacted` payload; undefined when nothing could be removed. */
export async function compactAfterOverflow(
  input: OverflowCompactionInput,
): Promise<{ items: JsonObject[]; compaction: ContextCompaction } | undefined> {
  const { provider, history, items, signal } = input;
  const meter = await history.tokenMeter();
  const before = meter.items(items);
  let serverFailure: string | undefined;
  if (provider.capabilities.compaction && provider.compact !== undefined) {
    try {
      const request: Parameters<NonNullable<Provider["compact"]>>[0] = { model: input.model, input: items };
      if (input.instructions !== undefined) request.instructions = input.instructions;
      const { output } = await provider.compact(request, { signal });
      const compacted: JsonObject[] = [];
      for (const item of output) {
        const asInput = toInputItem(item, { keepItemIds: input.keepItemIds });
        if (asInput !== undefined) compacted.push(asInput);
      }
      // Nothing back would send the next request with no input at all: the latest prompt gone too.
      if (compacted.length === 0) throw new Error("the server's compaction answered with no items");
      return {
        items: compacted,
        compaction: {
          trigger: "overflow",
          method: "server_compact",
          items_removed: items.length,
          calls_removed: countCalls(items),
          tokens_before: before,
          tokens_after: meter.items(compacted),
          tokenizer: meter.counter.name,
          output,
        },
      };
    } catch (err) {
      if (signal.aborted) throw err;
      serverFailure = describeError(err);
    }
  }
  const message = input.outcome.ok ? "" : input.outcome.error.message;
  const local = await history.compactForOverflow(items, { budget: overflowBudget(message, before), signal });
  if (local.compaction === undefined) return undefined;
  const compaction = local.compaction;
  if (serverFailure !== undefined) compaction.server_error = serverFailure;
  return { items: local.items, compaction };
}

/** The run's end error when the context still overflows (or nothing could be removed). */
export function overflowError(
  outcome: ProviderOutcome,
  compacted: ContextCompaction | undefined,
): FrameError {
  const said = (
    outcome.ok ? `the response is incomplete (${outcome.response.incompleteReason})` : outcome.error.message
  ).replace(/\.+$/, "");
  const what =
    compacted === undefined
      ? "nothing could be compacted (only the system messages, the latest prompt and the turn in progress are left)"
      : `it still does not fit after compacting (${compacted.method}: ${compacted.tokens_before} → ${compacted.tokens_after} tokens, ${compacted.items_removed} items removed)`;
  return {
    code: "context_length_exceeded",
    message: `the conversation is longer than the model's context window and ${what}: ${said}. Start a new conversation, or use a model with a larger context window.`,
  };
}
