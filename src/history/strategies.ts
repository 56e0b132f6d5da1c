/**
 * How tool history is rendered into `input` items (docs/decisions.md #17: one manager, two
 * swappable strategies), and the one place the strategy is chosen.
 *
 * - `nativeStrategy`: items go as they are — `function_call` and `function_call_output` items,
 *   reasoning with its `encrypted_content`, assistant messages with their `phase`, ids — so eddy's
 *   own stateless requests are byte-identical to the history they come from.
 * - `textEmbedStrategy`: for servers that reject `function_call` input items
 *   (`nativeToolHistory: false`): each result becomes a user message (tool-text.ts), calls are
 *   omitted so the model cannot imitate call syntax in prose, reasoning is dropped (its following
 *   call is gone) and item ids are stripped.
 */
import type { ItemParam, JsonObject } from "../protocol/types.js";
import { embeddedResultMessage, summaryMessage, type ToolCallRecord } from "./tool-text.js";

export type { ToolCallRecord } from "./tool-text.js";

/** The name of a rendering strategy. */
export type ToolHistoryStrategyName = "native" | "text-embed";

/** `auto` picks by the provider's `nativeToolHistory` capability. */
export type ToolHistoryStrategySetting = "auto" | ToolHistoryStrategyName;

/** Renders the pieces of a history as input items. */
export interface ToolHistoryStrategy {
  readonly name: ToolHistoryStrategyName;
  /** A `function_call` item (with its record). */
  renderCall(item: JsonObject, record: ToolCallRecord | undefined): ItemParam[];
  /** A `function_call_output` item (with the record of its call). */
  renderResult(item: JsonObject, record: ToolCallRecord): ItemParam[];
  /** The text that replaces summarized turns. */
  renderSummary(summary: string): ItemParam[];
  /** Any other item: messages, reasoning, compaction, unknown types. */
  renderOther(item: JsonObject): ItemParam[];
}

const asIs = (item: JsonObject): ItemParam[] => [item as ItemParam];

/**
 * Tool history as the provider's own items: calls and outputs resent as `function_call` and
 * `function_call_output`, unchanged.
 */
export const nativeStrategy: ToolHistoryStrategy = {
  name: "native",
  renderCall: asIs,
  renderResult: asIs,
  renderSummary: (summary) => (summary === "" ? [] : [summaryMessage(summary)]),
  renderOther: asIs,
};

/**
 * Tool history for providers that take no tool items: calls omitted, each result embedded as text
 * in a message (no imitation of calls the model could copy).
 */
export const textEmbedStrategy: ToolHistoryStrategy = {
  name: "text-embed",
  renderCall: () => [],
  renderResult: (_item, record) => [embeddedResultMessage(record)],
  renderSummary: nativeStrategy.renderSummary,
  renderOther: (item) => {
    if (item.type === "reasoning") return [];
    if (!("id" in item)) return [item as ItemParam];
    const { id: _id, ...rest } = item;
    return [rest as ItemParam];
  },
};

/**
 * The one place the strategy is chosen: `native` and `text-embed` force one; `auto` follows the
 * provider's `nativeToolHistory` capability (native when it is unknown). Switching is one setting.
 */
export function resolveStrategy(
  setting: ToolHistoryStrategySetting,
  capabilities: { nativeToolHistory: boolean } | undefined,
): ToolHistoryStrategy {
  switch (setting) {
    case "native":
      return nativeStrategy;
    case "text-embed":
      return textEmbedStrategy;
    case "auto":
      return capabilities?.nativeToolHistory === false ? textEmbedStrategy : nativeStrategy;
  }
}
