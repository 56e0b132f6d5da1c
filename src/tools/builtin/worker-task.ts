/**
 * Runs built-in tool work in a worker thread (`tools-worker.ts`), so work that is long or
 * CPU-bound cannot block the run's event loop (the loop must stay able to act on a cancellation
 * or a timeout within 2 s), and an abort terminates the thread at once, in the middle of a
 * synchronous computation if need be. A finished worker is kept (unreferenced, so it never keeps
 * the process alive) for the next task: starting one costs tens of milliseconds.
 */
import { createRequire } from "node:module";
import type * as WorkerThreads from "node:worker_threads";
import type { Worker } from "node:worker_threads";
import { EddyError, type EddyErrorCode, type ErrorFault } from "../../errors.js";

/** The tasks `tools-worker.ts` knows. */
export type WorkerTaskName = "grep" | "apply_chunks";

/** A task sent to the worker. */
export interface WorkerTaskMessage {
  task: WorkerTaskName;
  input: unknown;
}

/** An error as it crosses the thread boundary. */
export interface SerializedError {
  name: string;
  message: string;
  /** `EddyError.code`, or the `node:fs` errno code (`EACCES`, …). */
  code?: string;
  fault?: ErrorFault;
}

/** The worker's answer. */
export type WorkerReply = { ok: true; value: unknown } | { ok: false; error: SerializedError };

/** Idle workers kept for reuse (one is enough: tools of a run mostly run one at a time). */
const MAX_IDLE = 1;
const idle: Worker[] = [];

/**
 * Runs `task` with `input` (plain data) in a worker thread and resolves with its result. Errors
 * thrown there are rethrown here (an `EddyError` keeps its code; a `node:fs` error its errno
 * code). When `signal` aborts, the thread is terminated and the promise rejects with `cancelled`.
 */
export function runInWorker<T>(task: WorkerTaskName, input: unknown, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(cancelled());
  const worker = idle.pop() ?? startWorker();
  worker.ref();
  return new Promise<T>((resolve, reject) => {
    const detach = () => {
      worker.off("message", onMessage);
      worker.off("error", onError);
      worker.off("exit", onExit);
      signal.removeEventListener("abort", onAbort);
    };
    const onMessage = (reply: WorkerReply) => {
      detach();
      release(worker);
      if (reply.ok) resolve(reply.value as T);
      else reject(revive(reply.error));
    };
    const onError = (error: Error) => {
      detach();
      void worker.terminate();
      reject(new EddyError("tool_failed", `the ${task} worker failed: ${error.message}`, { cause: error }));
    };
    const onExit = (code: number) => {
      detach();
      reject(new EddyError("tool_failed", `the ${task} worker exited unexpectedly (code ${code})`));
    };
    const onAbort = () => {
      detach();
      void worker.terminate();
      reject(cancelled());
    };
    worker.on("message", onMessage);
    worker.on("error", onError);
    worker.on("exit", onExit);
    signal.addEventListener("abort", onAbort, { once: true });
    worker.postMessage({ task, input } satisfies WorkerTaskMessage);
  });
}

function release(worker: Worker): void {
  if (idle.length >= MAX_IDLE) {
    void worker.terminate();
    return;
  }
  worker.unref();
  idle.push(worker);
}

function startWorker(): Worker {
  const fromSources = import.meta.url.endsWith(".ts");
  const url = new URL(fromSources ? "./tools-worker.ts" : "./tools-worker.js", import.meta.url);
  // Running from the TypeScript sources (tests, `npm run bench`): load the worker through tsx,
  // as the parent process was.
  const bootstrap = `import("tsx/esm/api").then((tsx) => { tsx.register(); return import(${JSON.stringify(url.href)}); });`;
  // node:worker_threads loads with the first worker, not with every run.
  const { Worker } = createRequire(import.meta.url)("node:worker_threads") as typeof WorkerThreads;
  const worker = fromSources ? new Worker(bootstrap, { eval: true }) : new Worker(url);
  // An idle worker that dies is never handed out again.
  worker.on("exit", () => {
    const at = idle.indexOf(worker);
    if (at !== -1) idle.splice(at, 1);
  });
  return worker;
}

function cancelled(): EddyError {
  return new EddyError("cancelled", "the run was cancelled");
}

/** Turns an error into plain data for `postMessage`. */
export function serializeError(error: unknown): SerializedError {
  if (EddyError.isInstance(error)) {
    return { name: "EddyError", message: error.message, code: error.code, fault: error.fault };
  }
  if (error instanceof Error) {
    const code = (error as NodeJS.ErrnoException).code;
    return { name: error.name, message: error.message, ...(code === undefined ? {} : { code }) };
  }
  return { name: "Error", message: String(error) };
}

function revive(error: SerializedError): Error {
  if (error.name === "EddyError" && error.code !== undefined) {
    return new EddyError(error.code as EddyErrorCode, error.message, { fault: error.fault ?? "system" });
  }
  return Object.assign(new Error(error.message), { name: error.name, code: error.code });
}
