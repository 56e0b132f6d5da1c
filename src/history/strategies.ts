/**
 * How tool history is rendered into `input` items (docs/decisions.md #17: one manager, two
 * swappable strategies), and the one place the strategy is chosen.
 *
 * - `NativeStrategy` (`nativeStrategy`): items go as they are — `function_call` and
 *   `function_call_output` items, reasoning with its `encrypted_content`, assistant messages with
 *   their `phase`, ids — so eddy's own stateless requests are byte-identical to the history they
 *   come from.
 * - `TextEmbedStrategy` (`textEmbedStrategy`): for servers that reject `function_call` input items
 *   (`nativeToolHistory: false`): each result becomes a user message (tool-text.ts), calls are
 *   omitted so the model cannot imitate call syntax in prose, reasoning is dropped (its following
 *   call is gone) and item ids are stripped.
 *
 * Each class renders a whole entry (a call with its result: `renderEntry`, the interface
 * `ToolHistoryManager.renderAsItems` takes) and, for `ToolHistoryManager.render`, the single items
 * of a conversation (`renderCall`, `renderResult`, `renderOther`); the summary the same way for both.
 */
import type { ItemParam, JsonObject } from "../protocol/types.js";
import { embeddedResultMessage, summaryMessage, type ToolCallRecord } from "./tool-text.js";

export type { ToolCallRecord } from "./tool-text.js";

/** The name of a rendering strategy. */
export type ToolHistoryStrategyName = "native" | "text-embed";

/** `auto` picks by the provider's `nativeToolHistory` capability. */
export type ToolHistoryStrategySetting = "auto" | ToolHistoryStrategyName;

/**
 * One tool call paired with its result: what `ToolHistoryManager.getCompactedHistory` lists and a
 * strategy's `renderEntry` renders (the tool-history RFC's `FormattedToolEntry`, carried as native
 * items rather than as text: docs/decisions.md #17).
 */
export interface FormattedToolEntry {
  /** The `function_call` item. */
  call: JsonObject;
  /** The `function_call_output` item answering it (same `call_id`). */
  output: JsonObject;
  /** The pair as the text forms need it: name, arguments, result, whether it failed. */
  record: ToolCallRecord;
}

/**
 * Renders tool history as input items (the tool-history RFC's strategy interface,
 * docs/decisions.md #17): one call with its result, and the summary of older calls.
 * `NativeStrategy` and `TextEmbedStrategy` are eddy's two; any object of this shape can be handed
 * to `ToolHistoryManager.renderAsItems`.
 */
export interface ToolHistoryStrategy {
  /** The strategy's name (`"native"`, `"text-embed"` for eddy's own). */
  readonly name: string;
  /** One call and its result as input items. */
  renderEntry(entry: FormattedToolEntry): ItemParam[];
  /** The summary that stands for older calls (nothing for an empty summary). */
  renderSummary(summary: string): ItemParam[];
}

/**
 * Tool history as the provider's own items: calls and outputs resent as `function_call` and
 * `function_call_output`, unchanged (the items of an entry are the very objects it holds).
 *
 * @example
 * ```ts
 * const history = new ToolHistoryManager({ recentCallsToKeep: 2 });
 * history.addToolCall("call_1", "read_file", { path: "a.ts" }, "export const a = 1;");
 * const input = history.renderAsItems(new NativeStrategy()); // function_call, function_call_output
 * ```
 */
export class NativeStrategy implements ToolHistoryStrategy {
  readonly name = "native";

  /** The call item, then its output item. */
  renderEntry(entry: FormattedToolEntry): ItemParam[] {
    return [...this.renderCall(entry.call), ...this.renderResult(entry.output)];
  }

  /** The summary as one user message (tool-text.ts `summaryMessage`); nothing when it is empty. */
  renderSummary(summary: string): ItemParam[] {
    return summary === "" ? [] : [summaryMessage(summary)];
  }

  /** A `function_call` item, as it is. */
  renderCall(item: JsonObject, _record?: ToolCallRecord): ItemParam[] {
    return [item as ItemParam];
  }

  /** A `function_call_output` item, as it is. */
  renderResult(item: JsonObject, _record?: ToolCallRecord): ItemParam[] {
    return [item as ItemParam];
  }

  /** Any other item (messages, reasoning, compaction, unknown types), as it is. */
  renderOther(item: JsonObject): ItemParam[] {
    return [item as ItemParam];
  }
}

/**
 * Tool history for providers that take no tool items: calls omitted, each result embedded as text
 * in a user message (tool-text.ts `embeddedResultMessage`), so there is no call syntax in prose for
 * the model to imitate.
 *
 * @example
 * ```ts
 * const history = new ToolHistoryManager();
 * history.addToolCall("call_1", "shell", { command: "npm test" }, "1 failed", true);
 * const input = history.renderAsItems(new TextEmbedStrategy()); // one user message, no function_call
 * ```
 */
export class TextEmbedStrategy implements ToolHistoryStrategy {
  readonly name = "text-embed";

  /** The result as one user message; the call itself is left out. */
  renderEntry(entry: FormattedToolEntry): ItemParam[] {
    return [...this.renderCall(entry.call), ...this.renderResult(entry.output, entry.record)];
  }

  /** The summary as one user message, as the native strategy renders it. */
  renderSummary(summary: string): ItemParam[] {
    return summary === "" ? [] : [summaryMessage(summary)];
  }

  /** Nothing: calls are left out. */
  renderCall(_item: JsonObject, _record?: ToolCallRecord): ItemParam[] {
    return [];
  }

  /** The result, named by its call's tool and marked when it failed, as a user message. */
  renderResult(_item: JsonObject, record: ToolCallRecord): ItemParam[] {
    return [embeddedResultMessage(record)];
  }

  /** Reasoning is dropped (its call is gone); other items lose their server `id`. */
  renderOther(item: JsonObject): ItemParam[] {
    if (item.type === "reasoning") return [];
    if (!("id" in item)) return [item as ItemParam];
    const { id: _id, ...rest } = item;
    return [rest as ItemParam];
  }
}

/** eddy's two strategies: what the manager renders its own history with. */
export type BuiltinStrategy = NativeStrategy | TextEmbedStrategy;

/** The native strategy the manager uses (one instance of `NativeStrategy`). */
export const nativeStrategy: NativeStrategy = new NativeStrategy();

/** The text-embed strategy the manager uses (one instance of `TextEmbedStrategy`). */
export const textEmbedStrategy: TextEmbedStrategy = new TextEmbedStrategy();

/**
 * The one place the strategy is chosen: `native` and `text-embed` force one; `auto` follows the
 * provider's `nativeToolHistory` capability (native when it is unknown). Switching is one setting.
 */
export function resolveStrategy(
  setting: ToolHistoryStrategySetting,
  capabilities: { nativeToolHistory: boolean } | undefined,
): BuiltinStrategy {
  switch (setting) {
    case "native":
      return nativeStrategy;
    case "text-embed":
      return textEmbedStrategy;
    case "auto":
      return capabilities?.nativeToolHistory === false ? textEmbedStrategy : nativeStrategy;
  }
}
