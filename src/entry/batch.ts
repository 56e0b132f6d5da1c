/**
 * `eddy/batch`: many runs at once. `runBatch` runs tasks in a pool over one provider with one rate
 * limit, recording each task's tape and resuming a task whose process died from it; `resumeRun`
 * resumes one run from its tape; `enqueueBatch` and `startBatchWorker` spread a batch over
 * machines on a BullMQ queue (Redis).
 *
 * @example
 * ```ts
 * import { createOpenResponsesProvider, createBuiltinTools, createToolRegistry } from "eddy";
 * import { fileTapeStore, parseTasks, runBatch } from "eddy/batch";
 *
 * const provider = createOpenResponsesProvider({ baseURL: "https://api.openai.com/v1", apiKey });
 * const { tools } = createBuiltinTools();
 * const { tasks, bad } = parseTasks(readFileSync("tasks.jsonl", "utf8"));
 * const results = runBatch(tasks, {
 *   run: { provider, model: "gpt-5-mini", tools: createToolRegistry(tools) },
 *   concurrency: 16,
 *   rpm: 500,
 *   tapes: fileTapeStore("out/tapes"),
 * });
 * for await (const r of results) console.log(r.id, r.reason, r.usage.total_tokens);
 * ```
 *
 * @packageDocumentation
 */
export { BATCH_DEFAULTS } from "../batch/defaults.js";
export { createRateLimiter, type RateLimiter, type RateLimitOptions } from "../batch/limiter.js";
export { type BatchOptions, runBatch } from "../batch/pool.js";
export {
  type BatchWorker,
  type BatchWorkerOptions,
  checkQueuedTask,
  type EnqueueOptions,
  enqueueBatch,
  type QueuedTask,
  startBatchWorker,
} from "../batch/queue.js";
export {
  planResume,
  type ResumeHandle,
  type ResumeOptions,
  type ResumePlan,
  resumeRun,
} from "../batch/resume.js";
export type { BatchResult } from "../batch/run-task.js";
export { fileTapeStore, type TapeStore, type TapeWriter } from "../batch/tape-store.js";
export { type BadTaskLine, type BatchTask, type ParsedTasks, parseTasks } from "../batch/task.js";
