/** Token usage summed over a run's turns. */
import type { Usage } from "../protocol/types.js";

export function emptyUsage(): Usage {
  return {
    input_tokens: 0,
    output_tokens: 0,
    total_tokens: 0,
    input_tokens_details: { cached_tokens: 0 },
    output_tokens_details: { reasoning_tokens: 0 },
  };
}

/**
 * Adds `usage` (as reported, possibly partial) into `sum`. A count is a whole number of tokens: a
 * provider's negative, fractional or absurd one (1e308) counts 0, and a sum stops at
 * `Number.MAX_SAFE_INTEGER` — it never becomes Infinity, which JSON writes as null (a tape that
 * then did not replay).
 */
export function addUsage(sum: Usage, usage: Usage | null | undefined): void {
  if (usage === null || usage === undefined || typeof usage !== "object") return;
  sum.input_tokens = add(sum.input_tokens, usage.input_tokens);
  sum.output_tokens = add(sum.output_tokens, usage.output_tokens);
  sum.total_tokens = add(sum.total_tokens, usage.total_tokens);
  const cached = usage.input_tokens_details?.cached_tokens;
  sum.input_tokens_details.cached_tokens = add(sum.input_tokens_details.cached_tokens, cached);
  const reasoning = usage.output_tokens_details?.reasoning_tokens;
  sum.output_tokens_details.reasoning_tokens = add(sum.output_tokens_details.reasoning_tokens, reasoning);
}

function add(sum: number, value: unknown): number {
  const count = typeof value === "number" && Number.isSafeInteger(value) && value >= 0 ? value : 0;
  return Math.min(sum + count, Number.MAX_SAFE_INTEGER);
}
