/**
 * Reasoning items: summary parts (`reasoning_summary_*`) and raw reasoning text
 * (`reasoning.*`, or `reasoning_text.*` as OpenAI and LM Studio name it) are kept as distinct
 * channels keyed by index, never concatenated (docs/pitfalls.md #33). `encrypted_content` is taken from
 * the `output_item.done` item only (docs/pitfalls.md #11: the `added` value can be stale).
 */
import type { JsonObject } from "../../protocol/types.js";
import { isClosed, itemFor, num, str } from "./item-lookup.js";
import type { Assembly } from "./state.js";

export function onReasoningEvent(state: Assembly, event: JsonObject): void {
  const item = itemFor(state, event, "reasoning");
  if (isClosed(item)) return;
  const type = event.type as string;
  const isSummary = type.startsWith("response.reasoning_summary_");
  const channel = isSummary ? item.summary : item.reasoningText;
  const index = num(isSummary ? event.summary_index : event.content_index) ?? 0;
  let entry = channel.get(index);
  if (entry === undefined) {
    entry = { streamed: "" };
    channel.set(index, entry);
  }
  if (type.endsWith(".delta")) {
    const delta = str(event.delta);
    if (delta !== undefined) entry.streamed += delta;
  } else if (type.endsWith("text.done") || type === "response.reasoning.done") {
    const text = str(event.text);
    if (text !== undefined) entry.final = text;
  } else if (type === "response.reasoning_summary_part.done") {
    const part = event.part;
    const text = part !== null && typeof part === "object" ? str((part as JsonObject).text) : undefined;
    if (text !== undefined) entry.final = text;
  }
}
