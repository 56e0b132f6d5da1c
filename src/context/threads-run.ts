/**
 * A run on a thread, before and after: `prepareThreadRun` compiles the thread's past runs into a
 * bundle (stored content-addressed), renders it through the run's `ToolHistoryManager`, appends
 * the new prompt to the log and returns everything the loop needs before its first request — the
 * input items and the `context_compiled` frame's payload. `finishThreadRun` appends the outcome.
 *
 * A run started from a bundle sends no `previous_response_id`: the bundle is the whole context.
 */
import type { ContextCompilation } from "../frames/frame.js";
import { userMessageItem } from "../history/items.js";
import type { RenderedHistory, ToolHistoryManager } from "../history/tool-history.js";
import { messageText } from "../history/units.js";
import type { ItemParam, JsonObject, Usage } from "../protocol/types.js";
import { redactAcrossParts, redactDeep, redactSecrets, usableSecrets } from "../util/redact.js";
import {
  type CompileOptions,
  type ContextBundle,
  type ContextStrategy,
  compileContextBundle,
  type PastRun,
  renderContextBundle,
} from "./bundle.js";
import type { ThreadLog, ThreadStore } from "./threads.js";

export interface PrepareThreadRunOptions {
  store: ThreadStore;
  thread: string;
  /** The new run's prompt. */
  prompt: string;
  /** The new run's id (pass the same `runId` to `runAgent`). */
  runId: string;
  model: string | null;
  /** The run's manager: counts tokens, summarizes, renders with the run's strategy. */
  manager: ToolHistoryManager;
  /** @defaultValue CONTEXT_DEFAULTS.strategy */
  strategy?: ContextStrategy;
  /** @defaultValue CONTEXT_DEFAULTS.budget */
  budget?: number;
  signal?: AbortSignal;
  /**
   * Values masked as `***` in what the log keeps — the prompt, and (`finishThreadRun`) the answer and
   * the items — as the run's frames and tape mask them: the log is a file in the workspace, shown by
   * `eddy threads show`. The model still gets the prompt as it is. @defaultValue none
   */
  secrets?: readonly (string | undefined)[];
}

/** What a thread run starts with. */
export interface PreparedThreadRun {
  thread: string;
  runId: string;
  prompt: string;
  /** The run's `input`: the rendered bundle, then the prompt. */
  input: ItemParam[];
  /** How many of `input` come from the bundle (the prompt follows them). */
  contextItems: number;
  bundle: ContextBundle;
  bundleId: string;
  /** The `context_compiled` frame's payload: `frame("context_compiled", prepared.compiled)`. */
  compiled: ContextCompilation;
  /** The bundle's render (repairs and notes, normally none). */
  rendered: RenderedHistory;
  /** What the log masks (`PrepareThreadRunOptions.secrets`, the usable ones). */
  secrets: readonly string[];
}

/**
 * What appending a run's outcome to its thread needs: the thread, the run, its prompt (to find where
 * the run's own items start) and what the log masks. A `PreparedThreadRun` is one; a run resumed
 * from its tape rebuilds one from the tape (batch/resume.ts, `threadRunOfTape`).
 */
export type ThreadRunRef = Pick<
  PreparedThreadRun,
  "thread" | "runId" | "prompt" | "contextItems" | "secrets"
>;

/** Compiles, stores and renders the thread's context and appends the prompt (see the module comment). */
export async function prepareThreadRun(options: PrepareThreadRunOptions): Promise<PreparedThreadRun> {
  const { store, thread, manager } = options;
  const log = await store.read(thread);
  const compileOptions: CompileOptions = { manager, thread };
  if (options.strategy !== undefined) compileOptions.strategy = options.strategy;
  if (options.budget !== undefined) compileOptions.budget = options.budget;
  if (options.signal !== undefined) compileOptions.signal = options.signal;
  const past = pastRuns(log);
  const bundle = await compileContextBundle(past, compileOptions);
  const bundleId = await store.saveBundle(bundle);
  const { rendered, compiled } = await renderCompiledContext(bundle, bundleId, manager);
  if (past.length > compiled.runs) compiled.runs_left_out = past.length - compiled.runs;
  const secrets = usableSecrets(options.secrets ?? []);
  await store.append(thread, {
    kind: "prompt",
    run_id: options.runId,
    prompt: redactSecrets(options.prompt, secrets),
    model: options.model,
    bundle_id: bundleId,
  });
  return {
    thread,
    runId: options.runId,
    prompt: options.prompt,
    input: [...rendered.items, userMessageItem(options.prompt) as ItemParam],
    contextItems: rendered.items.length,
    bundle,
    bundleId,
    compiled,
    rendered,
    secrets,
  };
}

/**
 * A stored bundle rendered by the run's manager, and the `context_compiled` frame's payload for it
 * (what `RunOptions.context` takes, with `rendered.items`).
 */
export async function renderCompiledContext(
  bundle: ContextBundle,
  bundleId: string,
  manager: ToolHistoryManager,
): Promise<{ rendered: RenderedHistory; compiled: ContextCompilation }> {
  const rendered = await renderContextBundle(bundle, manager);
  const counted = await manager.countTokens(rendered.items as JsonObject[]);
  const compiled: ContextCompilation = {
    bundle_id: bundleId,
    strategy: bundle.compiler.strategy,
    item_count: rendered.items.length,
    token_estimate: counted.tokens,
    tokenizer: counted.tokenizer,
    runs: bundle.source.length,
  };
  if (bundle.thread !== undefined) compiled.thread = bundle.thread;
  if (bundle.summary !== undefined) compiled.summary_method = bundle.summary.method;
  return { rendered, compiled };
}

/** The parts of a run's result a thread keeps (a `RunResult` has them). */
export interface ThreadRunResult {
  reason: string;
  outputText: string;
  /** The run's conversation as input items (its input, then what it added). */
  items: readonly JsonObject[] | readonly ItemParam[];
  usage: Usage | null;
}

/** Appends the run's outcome: final text, the items it added after its prompt, usage, tape. */
export async function finishThreadRun(
  store: ThreadStore,
  prepared: ThreadRunRef,
  result: ThreadRunResult,
  options: { tape?: string } = {},
): Promise<void> {
  const record: Parameters<ThreadStore["append"]>[1] = {
    kind: "outcome",
    run_id: prepared.runId,
    reason: result.reason,
    output_text: result.outputText,
    items: itemsAfterPrompt(result.items as readonly JsonObject[], prepared),
    usage: result.usage,
  };
  if (options.tape !== undefined) record.tape = options.tape;
  // A secret split between a message's content parts is masked across them first (util/redact.ts).
  const masked = redactDeep(redactAcrossParts(record, prepared.secrets), prepared.secrets);
  await store.append(prepared.thread, masked);
}

/** The items after the run's own prompt (the last user message with its text; else after the context). */
function itemsAfterPrompt(items: readonly JsonObject[], prepared: ThreadRunRef): JsonObject[] {
  for (let i = items.length - 1; i >= 0; i--) {
    const item = items[i] as JsonObject;
    if (item.type === "message" && item.role === "user" && messageText(item) === prepared.prompt)
      return items.slice(i + 1);
  }
  return items.slice(Math.min(items.length, prepared.contextItems + 1));
}

/** The log's runs as a bundle draws on them (a run with no outcome yet: its prompt only). */
export function pastRuns(log: ThreadLog): PastRun[] {
  return log.runs.map((run) => ({
    run_id: run.run_id,
    prompt: run.prompt.prompt,
    items: run.outcome?.items ?? [],
    output_text: run.outcome?.output_text ?? "",
    reason: run.outcome?.reason ?? "unfinished",
    model: run.prompt.model,
  }));
}
