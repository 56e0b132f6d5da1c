/**
 * Token usage the mock reports: a deterministic estimate (one token per 4 characters of text, the
 * rule of thumb providers document), overridden field by field by what a scenario turn scripts.
 */
import type { ItemField, Usage } from "../protocol/types.js";
import type { UsageOverrides } from "./plan.js";

/** Estimated tokens of a text. */
export function estimateTokens(text: string): number {
  return Math.ceil(text.length / 4);
}

/** The text of any input or output item (message content, arguments, outputs, summaries). */
export function itemText(item: unknown): string {
  if (item === null || typeof item !== "object") return "";
  const o = item as Record<string, unknown>;
  let out = "";
  for (const key of ["content", "summary", "output", "arguments", "name", "text", "refusal"]) {
    const v = o[key];
    if (typeof v === "string") out += v;
    else if (Array.isArray(v)) for (const part of v) out += itemText(part);
  }
  return out;
}

/**
 * The input token estimate of a request: its instructions and the text of every item the model sees
 * (the whole conversation: a `previous_response_id` chain's earlier input and output included),
 * at 4 characters per token. Message text, refusals, call names and arguments, tool outputs and
 * reasoning summaries count; images, files and tool definitions do not. `usage.input_tokens`
 * reports this number (unless a scenario overrides it), and a scenario's `contextWindow` is
 * checked against it, so a client sees the same figure it was refused for.
 */
export function estimateInputTokens(
  context: readonly unknown[],
  instructions: string | null | undefined,
): number {
  return estimateTokens((instructions ?? "") + context.map(itemText).join(""));
}

/** Usage of one response. */
export function computeUsage(options: {
  context: readonly unknown[];
  instructions: string | null | undefined;
  output: readonly ItemField[];
  overrides: UsageOverrides | undefined;
}): Usage {
  const { context, instructions, output, overrides = {} } = options;
  const reasoning = output
    .filter((i) => i.type === "reasoning")
    .map(itemText)
    .join("");
  const input = overrides.input_tokens ?? estimateInputTokens(context, instructions);
  const reasoningTokens = overrides.reasoning_tokens ?? estimateTokens(reasoning);
  const outputTokens = overrides.output_tokens ?? estimateTokens(output.map(itemText).join(""));
  return {
    input_tokens: input,
    input_tokens_details: { cached_tokens: overrides.cached_tokens ?? 0 },
    output_tokens: outputTokens,
    output_tokens_details: { reasoning_tokens: reasoningTokens },
    total_tokens: input + outputTokens,
  };
}
