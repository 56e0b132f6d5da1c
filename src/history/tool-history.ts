/**
 * `ToolHistoryManager`: the one path tool history takes to a model (docs/decisions.md #17).
 * eddy's own conversation items, a context bundle's items and a foreign chat history all go
 * through `render`, which
 *
 * 1. reads the source (foreign messages are parsed: foreign.ts);
 * 2. drops reasoning the target model cannot use (produced by another model, or followed by
 *    nothing), stripping the ids of the items that were paired with it;
 * 3. repairs pairing: every call gets exactly one output, in call order; orphan outputs go;
 *    repeated call ids are renamed together with their outputs (pairing.ts);
 * 4. folds calls older than the `recentCallsToKeep` most recent into one summary once the history
 *    passes `truncationThreshold` tokens (by a model when `summarizationModel` is set, else by
 *    rule), remembering the fold so the next request reuses the same summary;
 * 5. renders through the strategy chosen once, from the `strategy` setting and the provider's
 *    `nativeToolHistory` capability (strategies.ts `resolveStrategy`).
 *
 * With the native strategy and nothing to repair or fold, `render` returns the very items it was
 * given: eddy's stateless requests and their replays stay byte-identical.
 *
 * The tool-history RFC's surface (docs/decisions.md #17) is a view over the same steps: calls fed
 * one by one with `addToolCall` are kept as native item pairs; `getCompactedHistory` folds those
 * older than the `recentCallsToKeep` newest with the same fold selection (whatever the threshold,
 * the summary written by rule, as the API is synchronous), and `renderAsItems` renders the summary
 * and each kept pair through a strategy (`NativeStrategy`, `TextEmbedStrategy`: strategies.ts).
 *
 * One manager per conversation: it remembers its fold and caches token counts per item.
 */
import { EddyError } from "../errors.js";
import type { ContextCompaction, HistoryRepair } from "../frames/frame.js";
import type { ItemParam, JsonObject } from "../protocol/types.js";
import type { Provider } from "../provider/provider.js";
import {
  type CompactHistoryResult,
  compactHistory,
  countCalls,
  replaceUnits,
  selectFold,
  takenItems,
} from "./compact.js";
import { type ForeignChatMessage, type HistoryNote, parseForeignMessages } from "./foreign.js";
import { functionCallItem, functionCallOutputItem } from "./items.js";
import {
  type ResolvedToolHistoryOptions,
  resolveHistoryOptions,
  type ToolHistoryOptions,
} from "./options.js";
import { orderOutputs, repairHistory } from "./pairing.js";
import {
  type BuiltinStrategy,
  type FormattedToolEntry,
  resolveStrategy,
  type ToolHistoryStrategy,
  type ToolHistoryStrategyName,
} from "./strategies.js";
import {
  createModelSummarizer,
  extractiveSummarizer,
  extractiveSummary,
  type Summarizer,
  type SummaryResult,
} from "./summarizer.js";
import { createTokenCounter, type TokenCounter, TokenMeter } from "./tokens.js";
import { failedResultText } from "./tool-text.js";
import {
  callRecords,
  dropDanglingReasoning,
  dropReasoning,
  type HistoryUnit,
  isFailedOutput,
  splitUnits,
} from "./units.js";

/** What to render: conversation items (eddy's own, a bundle's, any Open Responses items) or a foreign chat. */
export type HistorySource =
  | {
      items: readonly ItemParam[] | readonly JsonObject[];
      /** The model that produced these items; reasoning is dropped when it is not the manager's `model`. */
      model?: string | undefined;
    }
  | {
      messages: readonly ForeignChatMessage[];
      /** The model that produced the assistant messages (when they do not say). */
      sourceModel?: string | undefined;
    };

/** Options of `ToolHistoryManager`: the settings, and the provider and model the history goes to. */
export interface ToolHistoryManagerOptions extends ToolHistoryOptions {
  /**
   * The provider the history goes to: its capabilities choose the strategy (`auto`) and summaries are asked of it.
   * @defaultValue none (strategy from `capabilities`; summaries extractive)
   */
  provider?: Provider;
  /** The capabilities to choose by when there is no provider. @defaultValue native */
  capabilities?: { nativeToolHistory: boolean };
  /**
   * The model the history goes to: it picks the tokenizer, and reasoning from other models is dropped.
   * @defaultValue none (the estimate counts tokens)
   */
  model?: string | null;
  /**
   * Writes summaries instead of the one the settings imply (a replay's `recordedSummarizer`, tests).
   * @defaultValue the model summarizer when `summarizationModel` is set, else the extractive one
   */
  summarizer?: Summarizer;
  /**
   * Counts tokens instead of the model's tokenizer.
   * @defaultValue the model's tokenizer (`createTokenCounter(model)`)
   */
  tokenCounter?: TokenCounter;
}

/** Options of one `ToolHistoryManager.render` call. */
export interface RenderOptions {
  /** Aborts a summarization call in flight. */
  signal?: AbortSignal;
  /**
   * The call item types the run answers (so they must be paired with outputs).
   * @defaultValue ["function_call"]
   */
  callTypes?: readonly string[];
}

/** What `render` produced. */
export interface RenderedHistory {
  /** The `input` items to send. */
  items: ItemParam[];
  /**
   * The conversation after repairs and folding, in native form: keep it as the conversation so
   * repairs are made (and reported) once.
   */
  history: JsonObject[];
  strategy: ToolHistoryStrategyName;
  /** Pairing repairs, for a `history_repaired` frame. */
  repairs: HistoryRepair[];
  /** Everything else dropped or changed (reasoning, ids, names, ignored parts, reordered outputs). */
  notes: HistoryNote[];
  /** Set when this render folded older calls into a summary: the `context_compacted` frame's payload. */
  compaction?: ContextCompaction;
}

/**
 * What `getCompactedHistory` returns: the calls added with `addToolCall`, those older than the
 * `recentCallsToKeep` newest folded into one summary.
 */
export interface CompactedHistory {
  /** The summary standing for the folded calls; null when none was folded. */
  summary: string | null;
  /** The calls kept verbatim, each with its result, oldest first. */
  recentCalls: FormattedToolEntry[];
  /** How many calls the summary stands for. */
  truncatedCount: number;
  /** How many calls were added. */
  originalCount: number;
}

/** The manager of tool history (see the module comment). */
export class ToolHistoryManager {
  /** The strategy every render uses, chosen once from the settings and the provider's capabilities. */
  readonly strategy: BuiltinStrategy;
  readonly recentCallsToKeep: number;
  readonly truncationThreshold: number;
  /** The settings as given, defaults filled in (a tape header records them so a replay rebuilds this manager). */
  readonly settings: ResolvedToolHistoryOptions;
  private readonly model: string | undefined;
  private readonly summarizer: Summarizer;
  private readonly counterOverride: TokenCounter | undefined;
  private meterPromise: Promise<TokenMeter> | undefined;
  /** The last fold: the original items it removed and the summary item standing for them. */
  private fold: { removed: ReadonlySet<JsonObject>; summary: JsonObject } | undefined;
  /** A meter for the cheap bound (needs no tokenizer). */
  private readonly bound = new TokenMeter({ name: "bound", count: (t) => t.length });
  /** The calls given to `addToolCall`: a `function_call` and its `function_call_output` each. */
  private readonly toolCalls: JsonObject[] = [];

  constructor(options: ToolHistoryManagerOptions = {}) {
    const resolved = resolveHistoryOptions(options);
    this.settings = resolved;
    this.recentCallsToKeep = resolved.recentCallsToKeep;
    this.truncationThreshold = resolved.truncationThreshold;
    this.strategy = resolveStrategy(
      resolved.strategy,
      options.provider?.capabilities ?? options.capabilities,
    );
    this.model = options.model ?? undefined;
    this.counterOverride = options.tokenCounter;
    if (options.summarizer !== undefined) this.summarizer = options.summarizer;
    else if (resolved.summarizationModel === undefined) this.summarizer = extractiveSummarizer;
    else if (options.provider === undefined) {
      throw new EddyError(
        "invalid_config",
        `summarizationModel ${JSON.stringify(resolved.summarizationModel)} needs a provider to ask: pass \`provider\``,
        { fault: "user" },
      );
    } else
      this.summarizer = createModelSummarizer({
        provider: options.provider,
        model: resolved.summarizationModel,
      });
  }

  /** Renders a history as `input` items (see the module comment). */
  async render(source: HistorySource, options: RenderOptions = {}): Promise<RenderedHistory> {
    const notes: HistoryNote[] = [];
    let items: JsonObject[];
    if ("messages" in source) {
      const parsed = parseForeignMessages(source.messages, {
        model: this.model,
        sourceModel: source.sourceModel,
      });
      items = parsed.items;
      notes.push(...parsed.notes);
    } else {
      items = source.items as JsonObject[];
      if (source.model !== undefined && this.model !== undefined && source.model !== this.model) {
        const changed = dropReasoning(items);
        items = changed.items;
        if (changed.dropped > 0) {
          notes.push({
            kind: "reasoning_dropped",
            detail: `${changed.dropped} reasoning item(s) from ${source.model} dropped: encrypted reasoning only replays to the model that produced it (${this.model} now)`,
          });
        }
        if (changed.stripped > 0)
          notes.push({
            kind: "ids_stripped",
            detail: `the ids of ${changed.stripped} item(s) paired with that reasoning were stripped`,
          });
      }
    }
    const dangling = dropDanglingReasoning(items);
    if (dangling.dropped > 0) {
      items = dangling.items;
      notes.push({
        kind: "reasoning_dropped",
        detail: `${dangling.dropped} reasoning item(s) with nothing following them dropped`,
      });
    }
    const repaired = repairHistory(
      items,
      options.callTypes === undefined ? {} : { callTypes: options.callTypes },
    );
    const ordered = orderOutputs(repaired.items);
    if (ordered.moved > 0)
      notes.push({
        kind: "outputs_reordered",
        detail: `${ordered.moved} output(s) moved into the order of their calls`,
      });
    const folded = await this.applyThreshold(ordered.items, options.signal);
    const out: RenderedHistory = {
      items: this.renderItems(folded.items),
      history: folded.items,
      strategy: this.strategy.name,
      repairs: repaired.repairs,
      notes,
    };
    if (folded.compaction !== undefined) out.compaction = folded.compaction;
    return out;
  }

  /**
   * Adds a finished tool call to the history `getCompactedHistory` and `renderAsItems` read: a
   * `function_call` item (`args` as JSON, or the arguments string as the model wrote it) and its
   * `function_call_output`. With `isError`, the result is marked as a failure (`Error: …`), which
   * the text forms and the summary report.
   */
  addToolCall(
    callId: string,
    name: string,
    args: Readonly<Record<string, unknown>> | string,
    result: string,
    isError = false,
  ): void {
    if (typeof callId !== "string" || callId === "") throw badToolCall("callId must be a non-empty string");
    if (typeof name !== "string" || name === "") throw badToolCall("name must be a non-empty string");
    if (typeof result !== "string") throw badToolCall(`result of ${callId} must be a string`);
    const output = isError === true && !isFailedOutput(result) ? failedResultText(result) : result;
    this.toolCalls.push(
      functionCallItem(callId, name, argumentsText(callId, args)),
      functionCallOutputItem(callId, output),
    );
  }

  /**
   * The calls added with `addToolCall`, those older than the `recentCallsToKeep` newest folded into
   * one summary — the fold `render` makes, by count here whatever `truncationThreshold` says, and
   * summarized by rule (a configured summarization model is asked only by `render`). Repeated call
   * ids are renamed as `render` renames them.
   */
  getCompactedHistory(): CompactedHistory {
    const items = repairHistory(this.toolCalls).items;
    const { chosen, taken } = this.selectOlder(items);
    const folded = new Set(taken);
    return {
      summary: chosen.size === 0 ? null : extractiveSummary(taken),
      recentCalls: toolEntries(items.filter((item) => !folded.has(item))),
      truncatedCount: countCalls(taken),
      originalCount: countCalls(items),
    };
  }

  /**
   * The calls added with `addToolCall` as `input` items: the summary of the older ones, then each
   * recent call with its result, rendered by `strategy` (`renderSummary`, `renderEntry`); without
   * one, by the manager's own `strategy` (chosen once from the setting and the capability).
   */
  renderAsItems(strategy: ToolHistoryStrategy = this.strategy): ItemParam[] {
    const compacted = this.getCompactedHistory();
    const items: ItemParam[] = [];
    if (compacted.summary !== null) items.push(...strategy.renderSummary(compacted.summary));
    for (const entry of compacted.recentCalls) items.push(...strategy.renderEntry(entry));
    return items;
  }

  /**
   * Makes `items` fit `budget` tokens after the provider said the context is too long: whole oldest
   * turns are summarized (by the configured summarizer, extractive as the fallback) or dropped
   * (compact.ts `compactHistory`). `fits: false` means even that was not enough.
   */
  async compactForOverflow(
    items: readonly JsonObject[],
    options: { budget: number; method?: "summarize" | "drop"; signal?: AbortSignal },
  ): Promise<CompactHistoryResult> {
    const meter = await this.meter();
    const method = options.method ?? "summarize";
    const first = compactHistory(items, { budget: options.budget, method, meter });
    if (first.compaction === undefined || method === "drop" || this.summarizer === extractiveSummarizer)
      return first;
    const summary = await this.summarizer(first.removed, withSignal(options.signal));
    const second = compactHistory(items, {
      budget: options.budget,
      meter,
      summarize: (removed) => (sameItems(removed, first.removed) ? summary.text : extractiveSummary(removed)),
    });
    if (second.compaction !== undefined && sameItems(second.removed, first.removed))
      describeSummary(second.compaction, summary);
    return second;
  }

  /** Writes a summary of `items` with the configured summarizer (context bundles use it for older runs). */
  summarize(items: readonly JsonObject[], options: { signal?: AbortSignal } = {}): Promise<SummaryResult> {
    return this.summarizer(items, options);
  }

  /** Counts the tokens of `items` with the target model's tokenizer (or the estimate). */
  async countTokens(items: readonly JsonObject[]): Promise<{ tokens: number; tokenizer: string }> {
    const meter = await this.meter();
    return { tokens: meter.items(items), tokenizer: meter.counter.name };
  }

  /** The token meter of the target model (its tokenizer loaded on the first call). */
  tokenMeter(): Promise<TokenMeter> {
    return this.meter();
  }

  private meter(): Promise<TokenMeter> {
    this.meterPromise ??= (
      this.counterOverride !== undefined
        ? Promise.resolve(this.counterOverride)
        : createTokenCounter(this.model)
    ).then((counter) => new TokenMeter(counter));
    return this.meterPromise;
  }

  private renderItems(items: readonly JsonObject[]): ItemParam[] {
    const { strategy } = this;
    if (strategy.name === "native") return items as ItemParam[];
    const records = callRecords(items);
    const out: ItemParam[] = [];
    for (const item of items) {
      if (item.type === "function_call") out.push(...strategy.renderCall(item, undefined));
      else if (item.type === "function_call_output") {
        const record = records.get(item);
        out.push(
          ...(record === undefined ? strategy.renderOther(item) : strategy.renderResult(item, record)),
        );
      } else out.push(...strategy.renderOther(item));
    }
    return out;
  }

  /** Steps 4 of `render`: reuse the last fold, and fold more once past the threshold. */
  private async applyThreshold(
    source: JsonObject[],
    signal: AbortSignal | undefined,
  ): Promise<{ items: JsonObject[]; compaction?: ContextCompaction }> {
    let items = this.reuseFold(source);
    // Cheap first: no byte-level tokenizer counts more tokens than the JSON has bytes.
    if (this.bound.upperBound(items) <= this.truncationThreshold) return { items };
    const meter = await this.meter();
    const before = meter.items(items);
    if (before <= this.truncationThreshold) return { items };
    const { units, chosen, taken } = this.selectOlder(items);
    if (chosen.size === 0) return { items };
    const summary = await this.summarizer(taken, withSignal(signal));
    const [summaryItem] = this.strategy.renderSummary(summary.text) as JsonObject[];
    if (summaryItem === undefined) return { items };
    const previous = this.fold;
    const removed = new Set<JsonObject>(previous?.removed ?? []);
    for (const item of taken) if (item !== previous?.summary) removed.add(item);
    this.fold = { removed, summary: summaryItem };
    items = replaceUnits(items, units, chosen, summaryItem);
    const compaction: ContextCompaction = {
      trigger: "threshold",
      method: summary.method,
      items_removed: taken.length,
      calls_removed: countCalls(taken),
      tokens_before: before,
      tokens_after: meter.items(items),
      tokenizer: meter.counter.name,
      summary: summary.text,
    };
    describeSummary(compaction, summary);
    return { items, compaction };
  }

  /** The units of `items` holding calls older than the `recentCallsToKeep` newest, and their items. */
  private selectOlder(items: readonly JsonObject[]): {
    units: HistoryUnit[];
    chosen: Set<number>;
    taken: JsonObject[];
  } {
    const units = splitUnits(items);
    const chosen = selectFold(items, units, this.recentCallsToKeep);
    return { units, chosen, taken: takenItems(items, units, chosen) };
  }

  /** The source with the last fold applied again, when every item it removed is still there. */
  private reuseFold(source: JsonObject[]): JsonObject[] {
    const fold = this.fold;
    if (fold === undefined) return source;
    let last = -1;
    let found = 0;
    source.forEach((item, i) => {
      if (fold.removed.has(item)) {
        found++;
        last = i;
      }
    });
    if (found === 0) return source; // the caller kept the folded history: nothing to redo
    if (found !== fold.removed.size) {
      this.fold = undefined; // a different conversation: start over
      return source;
    }
    const out: JsonObject[] = [];
    source.forEach((item, i) => {
      if (!fold.removed.has(item)) out.push(item);
      else if (i === last) out.push(fold.summary);
    });
    return out;
  }
}

function describeSummary(compaction: ContextCompaction, summary: SummaryResult): void {
  compaction.method = summary.method;
  if (summary.model !== undefined) compaction.model = summary.model;
  if (summary.fallback_reason !== undefined) compaction.fallback_reason = summary.fallback_reason;
}

function sameItems(a: readonly JsonObject[], b: readonly JsonObject[]): boolean {
  return a.length === b.length && a.every((item, i) => item === b[i]);
}

function withSignal(signal: AbortSignal | undefined): { signal?: AbortSignal } {
  return signal === undefined ? {} : { signal };
}

/** Each `function_call_output` of `items` with the call it answers, in order. */
function toolEntries(items: readonly JsonObject[]): FormattedToolEntry[] {
  const records = callRecords(items);
  const calls = new Map<unknown, JsonObject>();
  const out: FormattedToolEntry[] = [];
  for (const item of items) {
    if (item.type === "function_call") calls.set(item.call_id, item);
    const record = records.get(item);
    const call = calls.get(item.call_id);
    if (item.type === "function_call_output" && record !== undefined && call !== undefined)
      out.push({ call, output: item, record });
  }
  return out;
}

/** The arguments string of a call given to `addToolCall`. */
function argumentsText(callId: string, args: Readonly<Record<string, unknown>> | string): string {
  if (typeof args === "string") return args;
  if (args === null || typeof args !== "object" || Array.isArray(args))
    throw badToolCall(`args of ${callId} must be an object (or the arguments JSON string)`);
  try {
    return JSON.stringify(args);
  } catch (err) {
    const reason = (err instanceof Error ? err.message : String(err)).split("\n")[0];
    throw badToolCall(`args of ${callId} cannot be written as JSON (${reason}): pass plain JSON data`);
  }
}

function badToolCall(problem: string): EddyError {
  return new EddyError("invalid_argument", `addToolCall: ${problem}`, { fault: "user" });
}
