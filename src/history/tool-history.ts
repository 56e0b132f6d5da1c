/**
 * Tool history for *foreign* conversations (seed 004, RFC 00025): one `ToolHistoryManager` holds
 * past tool calls and their results, keeps the recent ones verbatim, summarizes older ones once the
 * results outgrow a budget, and renders them as input items through a strategy:
 *
 * - `nativeStrategy`: `function_call` + `function_call_output` items (pairs kept intact);
 * - `textEmbedStrategy`: results as user text, calls omitted (for servers that reject
 *   `function_call` input items, and so the model cannot mimic call syntax).
 *
 * The strategy is chosen in one place, from the provider's `nativeToolHistory` capability
 * (`strategyFor`). eddy's own loop never uses this: within a run, history always travels as native
 * items (DESIGN.md §8.3). This is for histories eddy did not produce — a chat transcript, an
 * earlier session — that must be handed to a Responses model.
 */
import type { ItemParam, JsonObject } from "../protocol/types.js";

export interface ToolHistoryEntry {
  callId: string;
  name: string;
  /** The arguments, as the JSON string the model produced (an object is JSON-encoded). */
  arguments: string | JsonObject;
  /** The result text the tool returned. */
  result: string;
  isError?: boolean;
}

export interface ToolHistoryOptions {
  /**
   * Calls kept verbatim once the history is compacted.
   * @defaultValue 6
   */
  recentCallsToKeep?: number;
  /**
   * Characters of results above which older calls are summarized.
   * @defaultValue 40_000
   */
  truncationThreshold?: number;
}

export const TOOL_HISTORY_DEFAULTS = { recentCallsToKeep: 6, truncationThreshold: 40_000 } as const;

export interface CompactedHistory {
  /** One text summarizing the calls that were not kept, or undefined when none were dropped. */
  summary: string | undefined;
  recent: ToolHistoryEntry[];
}

export interface ToolHistoryStrategy {
  readonly name: "native" | "text-embed";
  renderEntry(entry: ToolHistoryEntry): ItemParam[];
  renderSummary(summary: string): ItemParam[];
}

const userText = (text: string): ItemParam =>
  ({ type: "message", role: "user", content: [{ type: "input_text", text }] }) as ItemParam;

export const textEmbedStrategy: ToolHistoryStrategy = {
  name: "text-embed",
  renderEntry: (entry) => [
    userText(`Context (tool result of ${entry.name}${entry.isError ? ", failed" : ""}):\n${entry.result}`),
  ],
  renderSummary: (summary) => (summary === "" ? [] : [userText(summary)]),
};

export const nativeStrategy: ToolHistoryStrategy = {
  name: "native",
  renderEntry: (entry) => [
    {
      type: "function_call",
      call_id: entry.callId,
      name: entry.name,
      arguments: typeof entry.arguments === "string" ? entry.arguments : JSON.stringify(entry.arguments),
    } as ItemParam,
    { type: "function_call_output", call_id: entry.callId, output: entry.result } as ItemParam,
  ],
  // Summaries have no native item: they go as text.
  renderSummary: (summary) => textEmbedStrategy.renderSummary(summary),
};

/** The one place the rendering strategy is chosen. */
export function strategyFor(capabilities: { nativeToolHistory: boolean }): ToolHistoryStrategy {
  return capabilities.nativeToolHistory ? nativeStrategy : textEmbedStrategy;
}

export class ToolHistoryManager {
  private readonly entries: ToolHistoryEntry[] = [];
  private readonly recentCallsToKeep: number;
  private readonly truncationThreshold: number;

  constructor(options: ToolHistoryOptions = {}) {
    this.recentCallsToKeep = options.recentCallsToKeep ?? TOOL_HISTORY_DEFAULTS.recentCallsToKeep;
    this.truncationThreshold = options.truncationThreshold ?? TOOL_HISTORY_DEFAULTS.truncationThreshold;
  }

  addToolCall(entry: ToolHistoryEntry): void {
    this.entries.push(entry);
  }

  /** Pairs the `function_call`s and `function_call_output`s of an item list (by `call_id`) and adds them. */
  addFromItems(items: readonly JsonObject[]): void {
    const calls = new Map<string, JsonObject>();
    for (const item of items) {
      if (item.type === "function_call" && typeof item.call_id === "string") calls.set(item.call_id, item);
      if (item.type !== "function_call_output" || typeof item.call_id !== "string") continue;
      const call = calls.get(item.call_id);
      if (call === undefined) continue; // an orphan output cannot be attributed: leave it out
      calls.delete(item.call_id);
      this.addToolCall({
        callId: item.call_id,
        name: typeof call.name === "string" ? call.name : "tool",
        arguments: typeof call.arguments === "string" ? call.arguments : "{}",
        result: typeof item.output === "string" ? item.output : JSON.stringify(item.output),
      });
    }
  }

  get size(): number {
    return this.entries.length;
  }

  /** All calls while their results fit the budget; else the recent ones plus a summary of the rest. */
  getCompactedHistory(): CompactedHistory {
    const total = this.entries.reduce((n, e) => n + e.result.length, 0);
    if (total <= this.truncationThreshold || this.entries.length <= this.recentCallsToKeep) {
      return { summary: undefined, recent: [...this.entries] };
    }
    const cut = this.entries.length - this.recentCallsToKeep;
    return { summary: summarize(this.entries.slice(0, cut)), recent: this.entries.slice(cut) };
  }

  renderAsItems(strategy: ToolHistoryStrategy = textEmbedStrategy): ItemParam[] {
    const { summary, recent } = this.getCompactedHistory();
    const items: ItemParam[] = summary === undefined ? [] : strategy.renderSummary(summary);
    for (const entry of recent) items.push(...strategy.renderEntry(entry));
    return items;
  }
}

const CATEGORIES: [string, RegExp][] = [
  ["read", /read|cat|open|view|get_file|fetch/i],
  ["write", /write|patch|edit|create|delete|move/i],
  ["terminal", /shell|bash|exec|run|terminal|command/i],
  ["search", /grep|search|find|list|ls|glob/i],
];

/** A deterministic summary of older calls, grouped by kind (read / write / terminal / search / other). */
function summarize(entries: readonly ToolHistoryEntry[]): string {
  const groups = new Map<string, ToolHistoryEntry[]>();
  for (const e of entries) {
    const kind = CATEGORIES.find(([, re]) => re.test(e.name))?.[0] ?? "other";
    groups.set(kind, [...(groups.get(kind) ?? []), e]);
  }
  const lines = [`Earlier tool calls (${entries.length}, summarized to save context):`];
  for (const kind of ["read", "write", "terminal", "search", "other"]) {
    const list = groups.get(kind);
    if (list === undefined) continue;
    const failed = list.filter((e) => e.isError).length;
    const names = [...new Set(list.map((e) => `${e.name}(${brief(e.arguments)})`))].slice(0, 8);
    lines.push(
      `- ${kind}: ${list.length} call${list.length === 1 ? "" : "s"}${failed ? `, ${failed} failed` : ""}: ${names.join(", ")}`,
    );
  }
  return lines.join("\n");
}

function brief(args: string | JsonObject): string {
  const text = typeof args === "string" ? args : JSON.stringify(args);
  const oneLine = text.replace(/\s+/g, " ");
  return oneLine.length > 60 ? `${oneLine.slice(0, 59)}…` : oneLine;
}
