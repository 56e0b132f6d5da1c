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

/** Adds `usage` (as reported, possibly partial) into `sum`. */
export function addUsage(sum: Usage, usage: Usage | null | undefined): void {
  if (usage === null || usage === undefined || typeof usage !== "object") return;
  sum.input_tokens += num(usage.input_tokens);
  sum.output_tokens += num(usage.output_tokens);
  sum.total_tokens += num(usage.total_tokens);
  sum.input_tokens_details.cached_tokens += num(usage.input_tokens_details?.cached_tokens);
  sum.output_tokens_details.reasoning_tokens += num(usage.output_tokens_details?.reasoning_tokens);
}

function num(value: unknown): number {
  return typeof value === "number" && Number.isFinite(value) ? value : 0;
}
