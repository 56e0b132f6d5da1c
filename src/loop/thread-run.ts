/**
 * `runAgentOnThread`: a run that continues a named thread (context/threads.ts). Before the run the
 * thread's past runs are compiled into a context bundle (stored content-addressed under `.eddy/`)
 * and rendered by the run's `ToolHistoryManager`; the run starts from that context
 * (`RunSpec.context`: a `context_compiled` frame right after `run_started`, no
 * `previous_response_id` from earlier runs); when it ends, its outcome is appended to the thread's
 * log. `eddy run --thread NAME` is this function.
 */
import { randomUUID } from "node:crypto";
import type { ContextStrategy } from "../context/bundle.js";
import { createThreadStore, type ThreadStore } from "../context/threads.js";
import { finishThreadRun, type PreparedThreadRun, prepareThreadRun } from "../context/threads-run.js";
import { EddyError } from "../errors.js";
import type { RunDeps, RunHandle, RunResult } from "./options.js";
import { runAgent } from "./run.js";
import { createRunHistory } from "./run-history.js";
import { type RunSpec, type RunSpecInput, resolveRunSpec } from "./run-spec.js";

/** How a thread's context is compiled and where the thread lives (its name is `RunSpec.thread`). */
export interface ThreadRunSettings {
  /** Where threads and bundles live. @defaultValue createThreadStore({ workspace: deps.workspace ?? process.cwd() }) */
  store?: ThreadStore;
  /** @defaultValue CONTEXT_DEFAULTS.strategy ("recent_messages_v1") */
  strategy?: ContextStrategy;
  /** Tokens the compiled context may take. @defaultValue CONTEXT_DEFAULTS.budget (32,000) */
  budget?: number;
  /** The run's tape path, kept in the outcome record (`eddy threads show`). @defaultValue none */
  tape?: string;
  /**
   * The caller holds the thread for this run already (`ThreadStore.hold`, as a session does for all
   * its turns). @defaultValue false: the run holds it from before its context is compiled until
   * its outcome is in the log, and throws `thread_busy` when another holds it (one conversation at
   * a time on a thread, context/thread-hold.ts)
   */
  held?: boolean;
}

/** A run on a thread: the run, and what it started from. */
export interface ThreadRunHandle extends RunHandle {
  /** The compiled context: bundle, bundle id, the `context_compiled` payload. */
  readonly prepared: PreparedThreadRun;
  /** Settles once the run has ended and its outcome is in the thread's log. */
  readonly result: Promise<RunResult>;
}

/**
 * Runs `spec.input` (the prompt, a string) as the next run of the thread `spec.thread`. Bad
 * input throws before anything is written or sent. The handle's `spec` carries the compiled
 * context (`spec.context`), so a tape header built from it replays without the thread.
 *
 * @example
 * ```ts
 * const run = await runAgentOnThread({ model, input: "What did we decide?", thread: "design" }, { provider });
 * for await (const frame of run) if (frame.type === "output_text_delta") process.stdout.write(frame.delta);
 * await run.result; // the outcome is in .eddy/threads/design.jsonl
 * ```
 */
export async function runAgentOnThread(
  input: RunSpecInput | RunSpec,
  deps: RunDeps,
  thread: ThreadRunSettings = {},
): Promise<ThreadRunHandle> {
  const spec = resolveRunSpec(input);
  const name = spec.thread;
  if (name === undefined)
    throw new EddyError("invalid_run_spec", "run spec: thread: is required for a run on a thread", {
      fault: "user",
      details: { field: "thread" },
    });
  if (typeof spec.input !== "string")
    throw new EddyError(
      "invalid_run_spec",
      "run spec: input: a run on a thread takes its prompt as a string",
      {
        fault: "user",
        details: { field: "input" },
      },
    );
  if (spec.context !== undefined)
    throw new EddyError("invalid_run_spec", "run spec: context: a run on a thread compiles its own context", {
      fault: "user",
      details: { field: "context" },
    });
  const store = thread.store ?? createThreadStore({ workspace: deps.workspace ?? process.cwd() });
  const hold = thread.held === true ? undefined : await store.hold(name, "a run on the thread");
  try {
    const handle = await startOnThread(
      spec as RunSpec & { thread: string; input: string },
      deps,
      thread,
      store,
    );
    if (hold === undefined) return handle;
    const result = handle.result.finally(() => hold.release());
    result.catch(() => {});
    return { ...handle, result, [Symbol.asyncIterator]: () => handle[Symbol.asyncIterator]() };
  } catch (err) {
    await hold?.release();
    throw err;
  }
}

/** The run once its thread is held: the context compiled, the run started, its outcome appended when it ends. */
async function startOnThread(
  spec: RunSpec & { thread: string; input: string },
  deps: RunDeps,
  thread: ThreadRunSettings,
  store: ThreadStore,
): Promise<ThreadRunHandle> {
  const name = spec.thread;
  const runId = spec.run_id ?? `run_${randomUUID().replace(/-/g, "")}`;
  const history = createRunHistory(spec, deps);
  const prepareOptions: Parameters<typeof prepareThreadRun>[0] = {
    store,
    thread: name,
    prompt: spec.input,
    runId,
    model: spec.model,
    manager: history,
  };
  if (thread.strategy !== undefined) prepareOptions.strategy = thread.strategy;
  if (thread.budget !== undefined) prepareOptions.budget = thread.budget;
  if (deps.signal !== undefined) prepareOptions.signal = deps.signal;
  // The log masks what the run's frames mask (frame-channel.ts).
  prepareOptions.secrets = [...(deps.provider.secrets ?? []), ...(deps.secrets ?? [])];
  const prepared = await prepareThreadRun(prepareOptions);
  const context = { items: prepared.input.slice(0, prepared.contextItems), compiled: prepared.compiled };
  let handle: RunHandle;
  try {
    handle = runAgent({ ...spec, run_id: runId, context }, { ...deps, history });
  } catch (err) {
    // The prompt is in the log already: say the run never started.
    await finishThreadRun(store, prepared, { reason: "not_started", outputText: "", items: [], usage: null });
    throw err;
  }
  const finished = thread.tape === undefined ? {} : { tape: thread.tape };
  const result = handle.result.then(async (r) => {
    await finishThreadRun(store, prepared, r, finished);
    return r;
  });
  return {
    runId: handle.runId,
    spec: handle.spec,
    prepared,
    result,
    cancel: (reason) => handle.cancel(reason),
    [Symbol.asyncIterator]: () => handle[Symbol.asyncIterator](),
  };
}
