/**
 * Making a history smaller by whole units (units.ts): never a call without its output, never a
 * reasoning item without what follows it.
 *
 * - `compactHistory` (overflow): the provider said the context is too long. Whole oldest units are
 *   removed until the history fits a token budget, and one summary (or, with `method: "drop"`, a
 *   one-line notice) takes their place. Kept whatever happens: system and developer messages, the
 *   latest user message, and the last unit (the turn in progress).
 * - `selectFold` (threshold): the model units with tool calls that are older than the
 *   `recentCallsToKeep` most recent calls (the manager replaces them with a summary).
 *
 * Both are pure: same items and options, same result.
 */
import type { ContextCompaction } from "../frames/frame.js";
import type { JsonObject } from "../protocol/types.js";
import { extractiveSummary } from "./summarizer.js";
import { estimateCounter, type TokenCounter, TokenMeter } from "./tokens.js";
import { droppedNoticeMessage, isCompactionText, summaryMessage } from "./tool-text.js";
import { type HistoryUnit, messageText, splitUnits } from "./units.js";

/** Options of `compactHistory`. */
export interface CompactHistoryOptions {
  /** The token budget the history must fit after compaction. */
  budget: number;
  /** @defaultValue "summarize" */
  method?: "summarize" | "drop";
  /** Counts tokens. @defaultValue estimateCounter */
  counter?: TokenCounter;
  /**
   * A meter to reuse (its per-item cache); wins over `counter`.
   * @defaultValue none (a fresh meter over `counter`)
   */
  meter?: TokenMeter;
  /** Writes the summary of the removed items. @defaultValue extractiveSummary */
  summarize?: (removed: readonly JsonObject[]) => string;
}

/** What `compactHistory` did: the history that fits, what it took out, and the record of it. */
export interface CompactHistoryResult {
  /** The compacted history (the input items when nothing had to go). */
  items: JsonObject[];
  /** The items taken out, in order. */
  removed: JsonObject[];
  /** What was done, for a `context_compacted` frame; undefined when nothing was removed. */
  compaction: ContextCompaction | undefined;
  /** Whether `items` fits the budget (false: even removing every removable unit was not enough). */
  fits: boolean;
}

/**
 * Removes whole oldest units until the history fits `budget` tokens (see the module comment).
 *
 * ```ts
 * const { items, compaction, fits } = compactHistory(history, { budget: 100_000, counter });
 * if (!fits) throw new Error("the conversation does not fit the context window even compacted");
 * ```
 */
export function compactHistory(
  items: readonly JsonObject[],
  options: CompactHistoryOptions,
): CompactHistoryResult {
  const meter = options.meter ?? new TokenMeter(options.counter ?? estimateCounter);
  const method = options.method ?? "summarize";
  const summarize = options.summarize ?? extractiveSummary;
  const before = meter.items(items);
  if (before <= options.budget) return { items: [...items], removed: [], compaction: undefined, fits: true };

  const units = splitUnits(items);
  const keep = protectedUnits(items, units);
  const removed = new Set<number>();
  let removedTokens = 0;
  let result: { items: JsonObject[]; text: string | undefined } | undefined;
  for (let u = 0; u < units.length; u++) {
    if (keep.has(u)) continue;
    removed.add(u);
    removedTokens += meter.items(items.slice((units[u] as HistoryUnit).start, (units[u] as HistoryUnit).end));
    const taken = takenItems(items, units, removed);
    const text = method === "drop" ? undefined : summarize(taken);
    const replacement = (
      text === undefined ? droppedNoticeMessage(taken.length, countCalls(taken)) : summaryMessage(text)
    ) as JsonObject;
    result = { items: replaceUnits(items, units, removed, replacement), text };
    if (before - removedTokens + meter.item(replacement) <= options.budget) break;
  }
  if (result === undefined) return { items: [...items], removed: [], compaction: undefined, fits: false };
  const taken = takenItems(items, units, removed);
  const after = meter.items(result.items);
  const compaction: ContextCompaction = {
    trigger: "overflow",
    method: method === "drop" ? "dropped" : "extractive_summary",
    items_removed: taken.length,
    calls_removed: countCalls(taken),
    tokens_before: before,
    tokens_after: after,
    tokenizer: meter.counter.name,
  };
  if (result.text !== undefined) compaction.summary = result.text;
  return { items: result.items, removed: taken, compaction, fits: after <= options.budget };
}

/** Units `compactHistory` never removes: system/developer messages, the latest user message, the last unit. */
function protectedUnits(items: readonly JsonObject[], units: readonly HistoryUnit[]): Set<number> {
  const keep = new Set<number>();
  let latestUser = -1;
  units.forEach((unit, u) => {
    if (unit.kind !== "input") return;
    if (unit.role === "system" || unit.role === "developer") keep.add(u);
    else if (!isCompactionText(messageText(items[unit.start] as JsonObject))) latestUser = u;
  });
  if (latestUser !== -1) keep.add(latestUser);
  if (units.length > 0) keep.add(units.length - 1);
  return keep;
}

/**
 * The indexes of the units to fold so that only the `recentCallsToKeep` most recent calls stay
 * verbatim: every model unit with calls that ends before the unit holding the oldest kept call,
 * plus earlier summaries among them (re-summarized with the rest). A unit is never split, so a
 * parallel batch may keep more calls than asked.
 */
export function selectFold(
  items: readonly JsonObject[],
  units: readonly HistoryUnit[],
  recentCallsToKeep: number,
): Set<number> {
  let cut = units.length;
  let kept = 0;
  for (let u = units.length - 1; u >= 0 && kept < recentCallsToKeep; u--) {
    const unit = units[u] as HistoryUnit;
    if (unit.calls > 0) {
      kept += unit.calls;
      cut = u;
    }
  }
  const fold = new Set<number>();
  for (let u = 0; u < cut; u++) {
    const unit = units[u] as HistoryUnit;
    if (unit.kind === "model" && unit.calls > 0) fold.add(u);
    else if (unit.kind === "input" && isCompactionText(messageText(items[unit.start] as JsonObject)))
      fold.add(u);
  }
  // Only earlier summaries and nothing new: nothing to fold.
  if ([...fold].every((u) => (units[u] as HistoryUnit).kind === "input")) fold.clear();
  return fold;
}

/** The items of the chosen units, in order. */
export function takenItems(
  items: readonly JsonObject[],
  units: readonly HistoryUnit[],
  chosen: ReadonlySet<number>,
): JsonObject[] {
  const out: JsonObject[] = [];
  units.forEach((unit, u) => {
    if (chosen.has(u)) out.push(...items.slice(unit.start, unit.end));
  });
  return out;
}

/** `items` without the chosen units, `replacement` standing where the last of them was. */
export function replaceUnits(
  items: readonly JsonObject[],
  units: readonly HistoryUnit[],
  chosen: ReadonlySet<number>,
  replacement: JsonObject,
): JsonObject[] {
  const last = Math.max(...chosen);
  const out: JsonObject[] = [];
  units.forEach((unit, u) => {
    if (!chosen.has(u)) out.push(...items.slice(unit.start, unit.end));
    else if (u === last) out.push(replacement);
  });
  return out;
}

/** `function_call` items among `items`. */
export function countCalls(items: readonly JsonObject[]): number {
  return items.filter((i) => i.type === "function_call").length;
}
