/**
 * `runAgentOnThread`: a run that continues a named thread (context/threads.ts). Before the run the
 * thread's past runs are compiled into a context bundle (stored content-addressed under `.eddy/`)
 * and rendered by the run's `ToolHistoryManager`; the run starts from that context
 * (`RunOptions.context`: a `context_compiled` frame right after `run_started`, no
 * `previous_response_id` from earlier runs); when it ends, its outcome is appended to the thread's
 * log. `eddy run --thread NAME` is this function.
 */
import { randomUUID } from "node:crypto";
import type { ContextStrategy } from "../context/bundle.js";
import { createThreadStore, type ThreadStore } from "../context/threads.js";
import { finishThreadRun, type PreparedThreadRun, prepareThreadRun } from "../context/threads-run.js";
import { EddyError } from "../errors.js";
import type { RunHandle, RunOptions, RunResult } from "./options.js";
import { runAgent } from "./run.js";
import { createRunHistory } from "./run-history.js";

/** Which thread a run continues, and how its context is compiled. */
export interface ThreadRunSettings {
  /** The thread's name (1–64 letters, digits, `.`, `_`, `-`). */
  name: string;
  /** Where threads and bundles live. @defaultValue createThreadStore({ workspace: options.workspace ?? process.cwd() }) */
  store?: ThreadStore;
  /** @defaultValue CONTEXT_DEFAULTS.strategy ("recent_messages_v1") */
  strategy?: ContextStrategy;
  /** Tokens the compiled context may take. @defaultValue CONTEXT_DEFAULTS.budget (32,000) */
  budget?: number;
  /** The run's tape path, kept in the outcome record (`eddy threads show`). @defaultValue none */
  tape?: string;
}

/** A run on a thread: the run, what it started from, and the options it was started with. */
export interface ThreadRunHandle extends RunHandle {
  /** The compiled context: bundle, bundle id, the `context_compiled` payload. */
  readonly prepared: PreparedThreadRun;
  /** The options `runAgent` was given (with `context` and the run's manager): build a tape header from them. */
  readonly runOptions: RunOptions;
  /** Settles once the run has ended and its outcome is in the thread's log. */
  readonly result: Promise<RunResult>;
}

/**
 * Runs `options.input` (the prompt, a string) as the next run of `options.thread.name`. Bad
 * options throw before anything is written or sent.
 *
 * @example
 * ```ts
 * const run = await runAgentOnThread({ provider, model, input: "What did we decide?", thread: { name: "design" } });
 * for await (const frame of run) if (frame.type === "output_text_delta") process.stdout.write(frame.delta);
 * await run.result; // the outcome is in .eddy/threads/design.jsonl
 * ```
 */
export async function runAgentOnThread(
  options: RunOptions & { thread: ThreadRunSettings },
): Promise<ThreadRunHandle> {
  const { thread, ...rest } = options;
  if (typeof rest.input !== "string")
    throw new EddyError("invalid_argument", "a run on a thread takes its prompt as a string `input`", {
      fault: "user",
    });
  if (rest.context !== undefined)
    throw new EddyError("invalid_argument", "a run on a thread compiles its own context: drop `context`", {
      fault: "user",
    });
  const store = thread.store ?? createThreadStore({ workspace: rest.workspace ?? process.cwd() });
  const history = createRunHistory(rest);
  const runId = rest.runId ?? `run_${randomUUID().replace(/-/g, "")}`;
  const prepareOptions: Parameters<typeof prepareThreadRun>[0] = {
    store,
    thread: thread.name,
    prompt: rest.input,
    runId,
    model: rest.model,
    manager: history,
  };
  if (thread.strategy !== undefined) prepareOptions.strategy = thread.strategy;
  if (thread.budget !== undefined) prepareOptions.budget = thread.budget;
  if (rest.signal !== undefined) prepareOptions.signal = rest.signal;
  const prepared = await prepareThreadRun(prepareOptions);
  const runOptions: RunOptions = {
    ...rest,
    runId,
    history,
    context: { items: prepared.input.slice(0, prepared.contextItems), compiled: prepared.compiled },
  };
  let handle: RunHandle;
  try {
    handle = runAgent(runOptions);
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
    prepared,
    runOptions,
    result,
    cancel: (reason) => handle.cancel(reason),
    [Symbol.asyncIterator]: () => handle[Symbol.asyncIterator](),
  };
}
