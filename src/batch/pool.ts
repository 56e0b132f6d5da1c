/**
 * `runBatch`: many runs in one process — a pool of `concurrency` runs over one provider, every
 * request held to one rate limit (a 429 pauses them all), each task's tape recorded and resumed
 * when the batch runs again (run-task.ts). Results come out as tasks finish.
 */
import { setMaxListeners } from "node:events";
import type { McpServerSummary } from "../frames/frame.js";
import type { ApprovalHandler } from "../loop/approvals.js";
import type { FrameObserver } from "../loop/frame-channel.js";
import type { Policy } from "../loop/policy.js";
import type { PartialRunSpec } from "../loop/run-spec.js";
import type { Provider } from "../provider/provider.js";
import { createToolRegistry, type ToolRegistry } from "../tools/registry.js";
import type { ToolDefinition } from "../tools/tool.js";
import { BATCH_DEFAULTS } from "./defaults.js";
import { limitedProvider } from "./limited-provider.js";
import { createRateLimiter, type RateLimiter } from "./limiter.js";
import { type BatchResult, runTask, type TaskContext } from "./run-task.js";
import type { TapeStore } from "./tape-store.js";
import type { BatchTask } from "./task.js";

/** Options of `runBatch`. */
export interface BatchOptions {
  /** The provider every task's requests go through. */
  provider: Provider;
  /** What every task starts from (model, instructions, limits, …); a task's own fields win. @defaultValue {} */
  spec?: PartialRunSpec;
  /**
   * What the batch's invocation allows: each task's tools are checked against it, and its
   * `approve` mode decides calls that need approval. @defaultValue the tools as given, nothing asked
   */
  policy?: Policy;
  /**
   * The tools: one registry every task shares, or a factory making each task its own (tools with
   * per-run state, like `shell`'s background jobs, are then released when the task ends).
   * @defaultValue none
   */
  tools?: ToolRegistry | readonly ToolDefinition[] | ((task: BatchTask, workspace: string) => ToolRegistry);
  /** Where the tasks run. @defaultValue process.cwd() */
  workspace?: string;
  /** Values masked in every frame (keys, tokens of tool servers). @defaultValue none */
  secrets?: readonly string[];
  /** Decides calls that need approval when the policy says `ask`. @defaultValue none */
  onApproval?: ApprovalHandler;
  /** Reads each task's instruction files (AGENTS.md) from its workspace (`TaskContext.instructionFiles`). @defaultValue none read */
  instructionFiles?: TaskContext["instructionFiles"];
  /** Each task's tool-call hooks, given its workspace (`TaskContext.hooks`). @defaultValue none */
  hooks?: TaskContext["hooks"];
  /** The MCP servers the tools come from (`run_started.mcp_servers`). @defaultValue none */
  mcpServers?: readonly McpServerSummary[];
  /** Sees every frame of every task's run (a tracer, a live view). @defaultValue none */
  onFrame?: FrameObserver;
  /** Runs at once. @defaultValue BATCH_DEFAULTS.concurrency (8) */
  concurrency?: number;
  /** Requests per minute, over the whole batch. @defaultValue no limit */
  rpm?: number;
  /** Tokens (input + output) per minute, over the whole batch. @defaultValue no limit */
  tpm?: number;
  /** A limiter to use instead of `rpm`/`tpm` (e.g. one shared through Redis). @defaultValue from rpm/tpm */
  limiter?: RateLimiter;
  /**
   * Where tapes are kept. A task whose tape shows a finished run is not run again (its result is
   * read from the tape); one whose run was cut short is resumed from it. @defaultValue no tapes
   */
  tapes?: TapeStore;
  /** Header facts for the tapes (validation, the provider's profile name, MCP tools). @defaultValue none */
  tapeExtras?: TaskContext["tapeExtras"];
  /**
   * Give each task its own copy of `workspace` in this folder (`FOLDER/ID`); a successful or
   * refused task's copy is removed, a failed one's kept (at most `maxKeptWorkspaces`), a cancelled
   * one's kept when its tape can resume it (docs/decisions.md #42). @defaultValue tasks share `workspace`
   */
  workspaces?: string;
  /** Failed tasks' copies kept in `workspaces` at most (`TaskContext.maxKeptWorkspaces`). @defaultValue BATCH_DEFAULTS.maxKeptWorkspaces (20) */
  maxKeptWorkspaces?: number;
  /**
   * Whether a task whose tape shows it ended so runs again: resumed after `provider_error`,
   * restarted otherwise. @defaultValue never
   */
  retry?: (previous: BatchResult) => boolean;
  /** Stops the batch: runs in flight end `cancelled` (their tapes resume next time). @defaultValue none */
  signal?: AbortSignal;
  /** Told when each task starts (for progress). @defaultValue none */
  onStart?: (task: BatchTask) => void;
  /**
   * Told when each task's run ends, before its worker takes the next task (the result is yielded
   * later, when the consumer asks for it): a progress count of `onStart` minus `onEnd` never
   * exceeds `concurrency`. @defaultValue none
   */
  onEnd?: (result: BatchResult) => void;
}

/**
 * Runs `tasks` with at most `concurrency` runs at once; yields each task's result as it finishes.
 * Stopping the iteration (`break`) cancels the runs in flight.
 *
 * @example
 * ```ts
 * const tasks = [{ id: "a", input: "What is in package.json?" }, { id: "b", input: "List the files" }];
 * for await (const r of runBatch(tasks, { provider, spec: { model: "gpt-5-mini" }, tools, concurrency: 4, rpm: 60 })) {
 *   console.log(r.id, r.reason, r.outputText);
 * }
 * ```
 */
export function runBatch(
  tasks: Iterable<BatchTask> | AsyncIterable<BatchTask>,
  options: BatchOptions,
): AsyncIterable<BatchResult> {
  return { [Symbol.asyncIterator]: () => pool(tasks, options) };
}

async function* pool(
  tasks: Iterable<BatchTask> | AsyncIterable<BatchTask>,
  options: BatchOptions,
): AsyncGenerator<BatchResult> {
  const concurrency = options.concurrency ?? BATCH_DEFAULTS.concurrency;
  if (!Number.isInteger(concurrency) || concurrency < 1)
    throw new RangeError(`concurrency must be an integer ≥ 1 (got ${String(concurrency)})`);
  const controller = new AbortController();
  // Every run in flight listens on this one signal (its requests, tools and waits do too): Node's
  // warning about more than 10 listeners is about leaks, which this is not.
  setMaxListeners(0, controller.signal);
  const onAbort = () => controller.abort(options.signal?.reason ?? "cancelled");
  if (options.signal?.aborted) onAbort();
  else options.signal?.addEventListener("abort", onAbort, { once: true });
  const ctx = taskContext(options, controller.signal);
  const source = toAsyncIterator(tasks);
  const done: BatchResult[] = [];
  let wake: (() => void) | undefined;
  let failure: { error: unknown } | undefined;
  const worker = async () => {
    for (;;) {
      if (controller.signal.aborted) return;
      const next = await source.next();
      if (next.done === true) return;
      options.onStart?.(next.value);
      const result = await runTask(next.value, ctx);
      options.onEnd?.(result);
      done.push(result);
      wake?.();
    }
  };
  let running = concurrency;
  for (let i = 0; i < concurrency; i++) {
    worker()
      .catch((error: unknown) => {
        failure ??= { error };
        controller.abort("a task could not be run");
      })
      .finally(() => {
        running--;
        wake?.();
      });
  }
  try {
    for (;;) {
      while (done.length > 0) yield done.shift() as BatchResult;
      if (failure !== undefined) throw failure.error;
      if (running === 0) return;
      await new Promise<void>((resolve) => {
        wake = resolve;
      });
      wake = undefined;
    }
  } finally {
    // The consumer stopped early, or the batch ended: nothing may go on running.
    controller.abort("the batch stopped");
    options.signal?.removeEventListener("abort", onAbort);
  }
}

function taskContext(options: BatchOptions, signal: AbortSignal): TaskContext {
  const limiter =
    options.limiter ??
    (options.rpm === undefined && options.tpm === undefined
      ? undefined
      : createRateLimiter({
          ...(options.rpm === undefined ? {} : { rpm: options.rpm }),
          ...(options.tpm === undefined ? {} : { tpm: options.tpm }),
        }));
  const ctx: TaskContext = {
    spec: options.spec ?? {},
    provider: limiter === undefined ? options.provider : limitedProvider(options.provider, limiter),
    signal,
  };
  const { tools } = options;
  if (typeof tools === "function") ctx.tools = tools;
  else if (Array.isArray(tools)) ctx.sharedTools = createToolRegistry(tools);
  else if (tools !== undefined) ctx.sharedTools = tools as ToolRegistry;
  const optional = [
    "policy",
    "workspace",
    "secrets",
    "instructionFiles",
    "hooks",
    "onApproval",
    "mcpServers",
    "onFrame",
    "tapes",
    "tapeExtras",
    "workspaces",
    "maxKeptWorkspaces",
    "retry",
  ] as const;
  for (const key of optional)
    if (options[key] !== undefined) (ctx as unknown as Record<string, unknown>)[key] = options[key];
  return ctx;
}

/** One iterator several workers pull from (each `next()` hands out a different task). */
function toAsyncIterator<T>(items: Iterable<T> | AsyncIterable<T>): { next(): Promise<IteratorResult<T>> } {
  if (Symbol.asyncIterator in items) {
    const it = items[Symbol.asyncIterator]();
    // Serialize pulls: an async generator queues them anyway, a hand-written iterator may not.
    let last: Promise<unknown> = Promise.resolve();
    return {
      next() {
        const p = last.then(() => it.next());
        last = p.catch(() => {});
        return p;
      },
    };
  }
  const it = items[Symbol.iterator]();
  return { next: async () => it.next() };
}
