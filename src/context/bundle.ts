/**
 * Context bundles (`eddy.context_bundle.v1`): the conversation that spans runs comes from eddy's
 * own record (a thread's log, or tapes), never from provider state, which is only a cache. A bundle
 * is compiled from past runs within a token budget, is immutable and provider-agnostic (plain
 * Open Responses input items, no reasoning, no server ids), is stored content-addressed
 * (bundle-store.ts), and renders to `input` items through `ToolHistoryManager` like every other
 * history.
 *
 * Strategies:
 * - `recent_messages_v1`: the newest runs that fit the budget, newest first: each run's prompt and
 *   final answer; the newest run also with its tool calls and outputs when they fit (what the next
 *   run needs to continue it).
 * - `summaries_recent_messages_v1`: the same for the newest runs within three quarters of the
 *   budget, and every older run folded into one summary put first (written by the manager's
 *   summarizer: the summarization model when one is configured, else by rule).
 */
import { createHash } from "node:crypto";
import canonicalize from "canonicalize";
import { EddyError } from "../errors.js";
import type { CompactionMethod, Frame } from "../frames/frame.js";
import { functionCallItem, functionCallOutputItem, userMessageItem } from "../history/items.js";
import { nativeStrategy } from "../history/strategies.js";
import type { SummaryResult } from "../history/summarizer.js";
import { estimateCounter, TokenMeter } from "../history/tokens.js";
import type { RenderedHistory, ToolHistoryManager } from "../history/tool-history.js";
import { dropReasoning, messageText } from "../history/units.js";
import type { ItemParam, JsonObject } from "../protocol/types.js";
import { wellFormed } from "../util/json.js";

export const CONTEXT_BUNDLE_SCHEMA = "eddy.context_bundle.v1";

/** How a bundle chooses what to carry. */
export type ContextStrategy = "recent_messages_v1" | "summaries_recent_messages_v1";

/** Every context strategy, for flag and config validation. */
export const CONTEXT_STRATEGIES = [
  "recent_messages_v1",
  "summaries_recent_messages_v1",
] as const satisfies readonly ContextStrategy[];

/** Defaults of bundle compilation. */
export const CONTEXT_DEFAULTS = {
  /** Tokens (of the target model) the bundle may take. */
  budget: 32_000,
  strategy: "recent_messages_v1",
} as const satisfies { budget: number; strategy: ContextStrategy };

/** One past run, as a bundle draws on it. */
export interface PastRun {
  run_id: string;
  /** The user's prompt. */
  prompt: string;
  /** What the run added after its prompt (calls, outputs, reasoning, assistant messages), as input items. */
  items: JsonObject[];
  /** The final answer. */
  output_text: string;
  /** How it ended (`completed`, `max_turns`, …), or `unfinished` when nothing was recorded. */
  reason: string;
  model?: string | null;
}

/**
 * A provider-agnostic record of earlier runs (`eddy.context_bundle.v1`) that a later run starts from:
 * its messages within a token budget, and summaries of what was left out.
 */
export interface ContextBundle {
  schema: typeof CONTEXT_BUNDLE_SCHEMA;
  compiler: {
    id: "eddy.context_compiler.v1";
    strategy: ContextStrategy;
    budget_tokens: number;
    /** The tokenizer the budget was counted with. */
    tokenizer: string;
  };
  /** The thread compiled from, when there is one. */
  thread?: string;
  /** The runs the bundle draws on (verbatim or summarized), oldest first. */
  source: { run_id: string; reason: string; use: "summary" | "messages" | "items" }[];
  /** How older runs were summarized, when some were. */
  summary?: { method: CompactionMethod; model?: string; fallback_reason?: string };
  /** Input items (messages, function_call / function_call_output pairs), in conversation order. */
  items: JsonObject[];
  /** Token count of `items`. */
  token_estimate: number;
}

/** Options of `compileContextBundle`. */
export interface CompileOptions {
  /** Counts tokens (the target model's tokenizer) and writes summaries. */
  manager: ToolHistoryManager;
  /** @defaultValue CONTEXT_DEFAULTS.strategy ("recent_messages_v1") */
  strategy?: ContextStrategy;
  /** @defaultValue CONTEXT_DEFAULTS.budget (32,000 tokens) */
  budget?: number;
  /** Recorded in the bundle. @defaultValue none */
  thread?: string;
  /** Cancels a summarization call. @defaultValue none */
  signal?: AbortSignal;
}

/**
 * Compiles a bundle from past runs (oldest first), or from the frames of past runs (tapes, `--json`
 * logs), counting with the manager's tokenizer and summarizing with its summarizer.
 */
export function compileContextBundle(
  runs: readonly PastRun[] | readonly (readonly Frame[])[],
  options: CompileOptions,
): Promise<ContextBundle>;
/**
 * @deprecated The synchronous form `eddy run --context` used: `recent_messages_v1`, the estimate
 * for tokens, no summaries. Pass `{ manager }` for the real one.
 */
export function compileContextBundle(
  runs: readonly PastRun[] | readonly (readonly Frame[])[],
  options?: { budget?: number },
): ContextBundle;
export function compileContextBundle(
  runs: readonly PastRun[] | readonly (readonly Frame[])[],
  options: Partial<CompileOptions> = {},
): ContextBundle | Promise<ContextBundle> {
  const past = runs.map((r) =>
    Array.isArray(r) ? pastRunFromFrames(r as readonly Frame[]) : (r as PastRun),
  );
  const strategy = options.strategy ?? CONTEXT_DEFAULTS.strategy;
  const budget = options.budget ?? CONTEXT_DEFAULTS.budget;
  if (!Number.isInteger(budget) || budget < 1)
    throw new EddyError(
      "invalid_argument",
      `the context budget must be a number of tokens ≥ 1 (got ${budget})`,
      {
        fault: "user",
      },
    );
  if (!(CONTEXT_STRATEGIES as readonly string[]).includes(strategy))
    throw new EddyError(
      "invalid_argument",
      `unknown context strategy ${JSON.stringify(strategy)}: use ${CONTEXT_STRATEGIES.join(" or ")}`,
      { fault: "user" },
    );
  const { manager } = options;
  if (manager === undefined)
    return assemble(
      plan(past, budget, budget, new TokenMeter(estimateCounter)),
      strategy,
      budget,
      options.thread,
    );
  return (async () => {
    const meter = await manager.tokenMeter();
    const recentBudget = strategy === "summaries_recent_messages_v1" ? Math.floor((budget * 3) / 4) : budget;
    const planned = plan(past, budget, recentBudget, meter);
    if (strategy !== "summaries_recent_messages_v1" || planned.older.length === 0)
      return assemble(planned, strategy, budget, options.thread);
    const summary = await manager.summarize(
      planned.older.flatMap(withItems),
      options.signal === undefined ? {} : { signal: options.signal },
    );
    const [message] = manager.strategy.renderSummary(clipToTokens(summary.text, budget - planned.used));
    return assemble(planned, strategy, budget, options.thread, {
      summary,
      message: message as JsonObject | undefined,
    });
  })();
}

interface Plan {
  chosen: { run: PastRun; items: JsonObject[]; use: "messages" | "items" }[];
  older: PastRun[];
  used: number;
  meter: TokenMeter;
}

/** Newest first: the newest run with its items when they fit, else its messages; older runs by their messages. */
function plan(past: readonly PastRun[], budget: number, recentBudget: number, meter: TokenMeter): Plan {
  const chosen: Plan["chosen"] = [];
  let used = 0;
  for (let i = past.length - 1; i >= 0; i--) {
    const run = past[i] as PastRun;
    const variants: { items: JsonObject[]; use: "messages" | "items" }[] = [];
    if (i === past.length - 1 && run.items.some((it) => it.type === "function_call"))
      variants.push({ items: withItems(run), use: "items" });
    variants.push({ items: messagesOf(run), use: "messages" });
    const fit = variants.find((v) => used + meter.items(v.items) <= Math.min(budget, recentBudget));
    if (fit === undefined) break;
    chosen.unshift({ run, ...fit });
    used += meter.items(fit.items);
  }
  return { chosen, older: past.slice(0, past.length - chosen.length), used, meter };
}

function assemble(
  planned: Plan,
  strategy: ContextStrategy,
  budget: number,
  thread: string | undefined,
  summarized?: { summary: SummaryResult; message: JsonObject | undefined },
): ContextBundle {
  const items: JsonObject[] = [];
  const bundle: ContextBundle = {
    schema: CONTEXT_BUNDLE_SCHEMA,
    compiler: {
      id: "eddy.context_compiler.v1",
      strategy,
      budget_tokens: budget,
      tokenizer: planned.meter.counter.name,
    },
    source: [],
    items,
    token_estimate: 0,
  };
  if (thread !== undefined) bundle.thread = thread;
  if (summarized !== undefined) {
    if (summarized.message !== undefined) items.push(summarized.message);
    const { summary } = summarized;
    bundle.summary = { method: summary.method };
    if (summary.model !== undefined) bundle.summary.model = summary.model;
    if (summary.fallback_reason !== undefined) bundle.summary.fallback_reason = summary.fallback_reason;
    for (const run of planned.older)
      bundle.source.push({ run_id: run.run_id, reason: run.reason, use: "summary" });
  }
  for (const c of planned.chosen) {
    items.push(...c.items);
    bundle.source.push({ run_id: c.run.run_id, reason: c.run.reason, use: c.use });
  }
  bundle.token_estimate = planned.meter.items(items);
  return bundle;
}

/** Renders a bundle as `input` items through the manager (and its strategy). */
export function renderContextBundle(
  bundle: ContextBundle,
  manager: ToolHistoryManager,
): Promise<RenderedHistory>;
/**
 * @deprecated The synchronous form `eddy run --context` used: the bundle's items as they are (the
 * native strategy, no manager). Pass the run's manager for the real one.
 */
export function renderContextBundle(bundle: ContextBundle): ItemParam[];
export function renderContextBundle(
  bundle: ContextBundle,
  manager?: ToolHistoryManager,
): ItemParam[] | Promise<RenderedHistory> {
  if (bundle.schema !== CONTEXT_BUNDLE_SCHEMA) {
    throw new EddyError(
      "invalid_argument",
      `not a context bundle (schema ${JSON.stringify(bundle.schema)})`,
      { fault: "user" },
    );
  }
  if (manager === undefined) return bundle.items.flatMap((item) => nativeStrategy.renderOther(item));
  return manager.render({ items: bundle.items });
}

/** The bundle's id: sha256 (hex) of its canonical JSON (RFC 8785). */
export function bundleId(bundle: ContextBundle): string {
  return createHash("sha256").update(canonicalJson(bundle)).digest("hex");
}

/**
 * The canonical JSON text of a value (RFC 8785 JSON Canonicalization Scheme). RFC 8785 has no
 * form for a lone surrogate (a model's or a tool's text may hold one): it becomes U+FFFD.
 */
export function canonicalJson(value: unknown): string {
  const text = canonicalize(wellFormed(value));
  if (text === undefined)
    throw new EddyError("invalid_argument", "the value has no JSON form", { fault: "system" });
  return text;
}

/** A past run read back from its frames (a tape or a `--json` log). */
export function pastRunFromFrames(frames: readonly Frame[]): PastRun {
  const started = frames.find((f) => f.type === "run_started");
  if (started === undefined || started.type !== "run_started")
    throw new EddyError("invalid_argument", "a run to compile has no run_started frame", { fault: "user" });
  const ended = [...frames].reverse().find((f) => f.type === "run_ended");
  const items: JsonObject[] = [];
  const calls = new Map<string, JsonObject>();
  for (const f of frames) {
    if (f.type === "tool_call") calls.set(f.call_id, functionCallItem(f.call_id, f.name, f.arguments));
    else if (f.type === "tool_ended") {
      const call = calls.get(f.call_id);
      if (call !== undefined) items.push(call, functionCallOutputItem(f.call_id, f.output));
    }
  }
  const answer = ended?.type === "run_ended" ? ended.output_text : "";
  if (answer !== "") items.push(assistantMessage(answer));
  return {
    run_id: started.run_id,
    prompt: promptOf(started.input),
    items,
    output_text: answer,
    reason: ended?.type === "run_ended" ? ended.reason : "unfinished",
    model: started.model,
  };
}

/** The prompt of a run's input: the text of its last user message. */
export function promptOf(input: string | readonly ItemParam[] | readonly JsonObject[]): string {
  if (typeof input === "string") return input;
  for (let i = input.length - 1; i >= 0; i--) {
    const item = input[i] as JsonObject;
    if (item.type === "message" && item.role === "user") return messageText(item);
  }
  return "";
}

function messagesOf(run: PastRun): JsonObject[] {
  const out: JsonObject[] = [];
  if (run.prompt !== "") out.push(userMessageItem(run.prompt));
  if (run.output_text !== "") out.push(assistantMessage(run.output_text));
  return out;
}

/** The prompt and everything the run added, without reasoning or server ids (a bundle outlives both). */
function withItems(run: PastRun): JsonObject[] {
  const { items } = dropReasoning(run.items);
  const out: JsonObject[] = run.prompt === "" ? [] : [userMessageItem(run.prompt)];
  for (const item of items) {
    if (!("id" in item)) out.push(item);
    else {
      const { id: _id, ...rest } = item;
      out.push(rest);
    }
  }
  const answered = items.some(
    (i) => i.type === "message" && i.role === "assistant" && messageText(i) === run.output_text,
  );
  if (run.output_text !== "" && !answered) out.push(assistantMessage(run.output_text));
  return out;
}

function assistantMessage(text: string): JsonObject {
  return { type: "message", role: "assistant", content: [{ type: "output_text", text, annotations: [] }] };
}

/** Clips a text to about `tokens` tokens (4 characters each), keeping its start. */
function clipToTokens(text: string, tokens: number): string {
  const max = Math.max(200, tokens * 4);
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}
