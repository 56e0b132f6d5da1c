/**
 * Batches on many machines, on BullMQ (Redis). The coordinator (`enqueueBatch`, `eddy batch
 * --queue`) puts one job per task on the queue and collects each task's result and tape as its job
 * completes; workers (`startBatchWorker`, `eddy worker`) run the jobs with their own provider —
 * keys never travel through Redis, only tasks, tapes and results do.
 *
 * Redis layout (`B` is the batch id):
 * - the BullMQ queue `eddy-batch` (keys `bull:eddy-batch:*`); job id `B-HASH(task id)`, data
 *   `{batch, task, retry, workspacePerTask}`, return value the task's result;
 * - `eddy:batch:B:meta`: the batch's shared settings (`rpm`, `tpm`);
 * - `eddy:batch:B:tapes` (hash task id → stream) and `eddy:batch:B:tape:UUID` (a stream per run,
 *   one tape line per entry), see redis-tapes.ts;
 * - `eddy:batch:B:rate:*`: the rate limit every worker's requests count against (limiter.ts).
 *
 * A worker that dies holding a task stops renewing its BullMQ lock; after `stallTimeoutMs` the
 * stalled-job check of a live worker puts the job back, and the worker that takes it resumes the
 * run from its tape (resume.ts): no recorded tool call runs again and no complete response is
 * requested again. BullMQ completes a job once, so each task has exactly one result.
 */
import { createHash } from "node:crypto";
import { type Job, Queue, QueueEvents, UnrecoverableError, WaitingError, Worker } from "bullmq";
import { Redis } from "ioredis";
import { EddyError } from "../errors.js";
import type { McpServerSummary, RunEndReason } from "../frames/frame.js";
import type { FrameObserver } from "../loop/frame-channel.js";
import type { Policy } from "../loop/policy.js";
import { checkPartialRunSpec, type PartialRunSpec } from "../loop/run-spec.js";
import type { Provider } from "../provider/provider.js";
import type { ToolRegistry } from "../tools/registry.js";
import { isJsonObject, isJsonText, nestsDeeperThan, RECORD_MAX_DEPTH } from "../util/json.js";
import { fieldPath } from "../util/zod-problems.js";
import { BATCH_DEFAULTS } from "./defaults.js";
import { limitedProvider } from "./limited-provider.js";
import { createRateLimiter, type RateLimiter } from "./limiter.js";
import { dropTape, readTapeText, redisTapeStore } from "./redis-tapes.js";
import { jobOfError, type QueueNotice, redisWatch } from "./redis-watch.js";
import { type BatchResult, removeTaskWorkspace, runTask, succeeded, type TaskContext } from "./run-task.js";
import { type BatchTask, parseTaskLine } from "./task.js";

export type { QueueNotice } from "./redis-watch.js";

/** The data of one job: a task's spec and nothing else that could steer a path or a permission. */
export interface QueuedTask {
  /** The batch's id (`[a-z0-9]{8,40}`, as batch-dir.ts makes them): names Redis keys and temp folders. */
  batch: string;
  task: BatchTask;
  /** Run again even when the task's tape shows it ended (a failure being retried). */
  retry: boolean;
  /** The task gets its own copy of the worker's workspace. */
  workspacePerTask: boolean;
}

/** A batch id: the only job field that names anything on disk or in Redis. */
const BATCH_ID = /^[a-z0-9]{8,40}$/;

/**
 * A job's data, checked as the untrusted input it is (anyone who can write to the Redis can add
 * jobs): the batch id a safe name, the task's id and spec valid (`checkPartialRunSpec`, no field a
 * batch owns), the flags booleans. Throws `invalid_argument` naming the field; the job then fails
 * with that reason and the worker goes on.
 */
export function checkQueuedTask(data: unknown): QueuedTask {
  const problem = (message: string) =>
    new EddyError("invalid_argument", `queue job: ${message}`, { fault: "user" });
  if (data === null || typeof data !== "object" || Array.isArray(data)) throw problem("expected an object");
  // Before anything walks it: deeper data would overflow the stack of the checks below (docs/pitfalls.md #74).
  if (nestsDeeperThan(data, RECORD_MAX_DEPTH))
    throw problem(`nests deeper than ${RECORD_MAX_DEPTH} levels of arrays and objects`);
  const { batch, task, retry, workspacePerTask, ...rest } = data as Record<string, unknown>;
  const extra = Object.keys(rest);
  if (extra.length > 0) throw problem(`${fieldPath([extra[0] as string])}: is not a known field`);
  if (typeof batch !== "string" || !BATCH_ID.test(batch))
    throw problem(
      `batch: must be 8–40 lowercase letters and digits (got ${JSON.stringify(batch)?.slice(0, 60)})`,
    );
  if (typeof retry !== "boolean") throw problem("retry: expected a boolean");
  if (typeof workspacePerTask !== "boolean") throw problem("workspacePerTask: expected a boolean");
  if (task === null || typeof task !== "object" || Array.isArray(task))
    throw problem("task: expected an object");
  const { id, spec, metadata, ...taskRest } = task as Record<string, unknown>;
  const taskExtra = Object.keys(taskRest);
  if (taskExtra.length > 0)
    throw problem(`${fieldPath(["task", taskExtra[0] as string])}: is not a known field`);
  if (spec === null || typeof spec !== "object" || Array.isArray(spec))
    throw problem("task.spec: expected an object");
  checkPartialRunSpec(spec, "queue job: task.spec");
  // The task's id and spec are checked as a tasks-file line would be.
  const line = parseTaskLine(
    JSON.stringify({ ...(spec as object), id, ...(metadata === undefined ? {} : { metadata }) }),
  );
  if (typeof line === "string") throw problem(`task: ${line}`);
  return { batch, task: line, retry, workspacePerTask };
}

/** Redis key prefix of a batch's own keys. */
export function batchPrefix(batch: string): string {
  return `eddy:batch:${batch}`;
}

/** The job id of a task: stable, so enqueueing a task twice does not run it twice. */
export function jobId(batch: string, taskId: string): string {
  return `${batch}-${createHash("sha256").update(taskId).digest("hex").slice(0, 24)}`;
}

/**
 * Checks that Redis answers at `url` (within 5 s), so a wrong `--queue` is one clear line instead
 * of a client reconnecting forever. The URL's password is never part of the message.
 */
export async function checkRedis(url: string): Promise<void> {
  let where: string;
  try {
    const parsed = new URL(url);
    if (parsed.protocol !== "redis:" && parsed.protocol !== "rediss:") throw new Error("scheme");
    where = redisWhere(url);
  } catch {
    throw new EddyError("invalid_config", "the queue must be a redis://HOST:PORT URL", { fault: "user" });
  }
  const probe = new Redis(url, {
    lazyConnect: true,
    connectTimeout: 5000,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
  });
  // The socket's own error (ECONNREFUSED, ENOTFOUND) says more than the client's "Connection is closed".
  let cause: unknown;
  probe.on("error", (err: unknown) => {
    cause ??= err;
  });
  try {
    await probe.connect();
    await probe.ping();
  } catch (err) {
    const e = (cause ?? err) as NodeJS.ErrnoException;
    const reason = e.code ?? e.message;
    throw new EddyError(
      "invalid_config",
      `cannot reach Redis at ${where} (${reason}): start redis-server there, or fix the --queue URL`,
      { fault: "user" },
    );
  } finally {
    probe.disconnect();
  }
}

/** HOST:PORT of a Redis URL, for messages (never its password). */
export function redisWhere(url: string): string {
  const parsed = new URL(url);
  return `${parsed.hostname}:${parsed.port || "6379"}`;
}

/** A Redis connection for eddy's own keys (BullMQ opens its own from the same URL). */
export function connectRedis(url: string): Redis {
  // No auto-pipelining: ioredis then fails on the scripts rate-limiter-flexible defines (defineCommand).
  return new Redis(url, { maxRetriesPerRequest: null });
}

/** Options of `enqueueBatch`. */
export interface EnqueueOptions {
  /** `redis://HOST:PORT[/DB]`. */
  url: string;
  /** The batch's id (stable across invocations, so a second one collects what the first left). */
  batch: string;
  tasks: readonly BatchTask[];
  /** Ids of tasks to run again even though their tapes show they ended. @defaultValue none */
  retrying?: ReadonlySet<string>;
  /** @defaultValue no limit */
  rpm?: number;
  /** @defaultValue no limit */
  tpm?: number;
  /** @defaultValue false */
  workspacePerTask?: boolean;
  /** Stops waiting (the jobs stay queued; collect them by enqueueing again). @defaultValue none */
  signal?: AbortSignal;
  /** @defaultValue BATCH_DEFAULTS.queueName */
  queueName?: string;
  /** How often the jobs are checked for (a Redis restarted empty loses them). @defaultValue BATCH_DEFAULTS.queueCheckMs */
  checkEveryMs?: number;
  /** A worker took a task. @defaultValue none */
  onStart?: (id: string) => void;
  /** The connection was lost or came back; vanished tasks were queued again. @defaultValue none */
  onNotice?: (notice: QueueNotice) => void;
  /**
   * A task finished: its result and its tape's text. Write them down before returning: the job and
   * the tape are removed from Redis once this resolves.
   */
  onResult: (result: BatchResult, tape: string | undefined) => void | Promise<void>;
}

/**
 * Puts the tasks on the queue and collects every result (see the module comment); resolves once
 * each task has one, or when `signal` aborts.
 *
 * Every `checkEveryMs` the coordinator checks that the batch's jobs are still in Redis: a Redis
 * restarted empty (or flushed) loses them with their tapes, and no event would ever say so. The
 * vanished ones are queued again (they start over: their tapes went too) and `onNotice` says so;
 * a finished job whose event was missed during an outage is collected by the same check.
 *
 * @example
 * ```ts
 * await enqueueBatch({ url: "redis://127.0.0.1:6379", batch: "b1", tasks, onResult: (r, tape) => save(r, tape) });
 * ```
 */
export async function enqueueBatch(options: EnqueueOptions): Promise<void> {
  const name = options.queueName ?? BATCH_DEFAULTS.queueName;
  const watch = redisWatch(redisWhere(options.url), options.onNotice ?? (() => {}));
  const redis = connectRedis(options.url);
  watch.watchMain(redis);
  const queue = new Queue(name, { connection: { url: options.url, maxRetriesPerRequest: null } });
  const events = new QueueEvents(name, { connection: { url: options.url, maxRetriesPerRequest: null } });
  watch.watch(queue);
  watch.watch(events);
  const collector = createCollector(options, redis, queue);
  let timer: NodeJS.Timeout | undefined;
  try {
    await events.waitUntilReady();
    events.on("active", ({ jobId: id }) => collector.started(id));
    events.on("completed", ({ jobId: id }) => collector.collect(id));
    events.on("failed", ({ jobId: id }) => collector.collect(id));
    await collector.enqueue(options.tasks);
    // Jobs that finished before this coordinator listened (it was restarted): collect them now.
    for (const job of await queue.getJobs(["completed", "failed"]))
      if (job.id !== undefined) collector.collect(job.id);
    timer = setInterval(() => void collector.check(), options.checkEveryMs ?? BATCH_DEFAULTS.queueCheckMs);
    await collector.done(options.signal);
  } finally {
    clearInterval(timer);
    watch.stop();
    await events.close();
    await queue.close();
    await redis.quit().catch(() => redis.disconnect());
  }
}

/** The coordinator's bookkeeping: which jobs are out, which results came back. */
interface Collector {
  /** Writes the batch's settings and adds a job per task (jobs already there are left as they are). */
  enqueue(tasks: readonly BatchTask[]): Promise<void>;
  started(jobId: string): void;
  /** Takes a finished job's result and tape (once), then removes both from Redis. */
  collect(jobId: string): void;
  /** Queues again the jobs that vanished; collects finished ones whose event was missed. */
  check(): Promise<void>;
  /** Resolves once every task has its result (or on abort); throws what `onResult` threw. */
  done(signal: AbortSignal | undefined): Promise<void>;
}

function createCollector(options: EnqueueOptions, redis: Redis, queue: Queue): Collector {
  const prefix = batchPrefix(options.batch);
  const byJob = new Map(options.tasks.map((t) => [jobId(options.batch, t.id), t]));
  const collected = new Set<string>();
  let finish: () => void = () => {};
  const allDone = new Promise<void>((resolve) => {
    finish = resolve;
  });
  let chain = Promise.resolve();
  let failure: unknown;
  let checking = false;
  const self: Collector = {
    async enqueue(tasks) {
      await redis.hset(`${prefix}:meta`, { rpm: options.rpm ?? 0, tpm: options.tpm ?? 0 });
      await queue.addBulk(tasks.map((task) => jobOf(task, options)));
    },
    started(id) {
      const task = byJob.get(id);
      if (task !== undefined) options.onStart?.(task.id);
    },
    collect(id) {
      const task = byJob.get(id);
      if (task === undefined || collected.has(id)) return;
      // One at a time, in arrival order: the caller appends to one results file.
      chain = chain
        .then(async () => {
          const job = await queue.getJob(id);
          const state = job === undefined ? "unknown" : await job.getState();
          // A failed attempt that will be retried is not the task's end.
          if (collected.has(id) || (state !== "completed" && state !== "failed")) return;
          collected.add(id);
          await options.onResult(
            resultFromJob(job, task),
            await collectedTape(redis, prefix, task.id, options.onNotice),
          );
          await dropTape(redis, prefix, task.id);
          await job?.remove().catch(() => {});
        })
        .catch((err: unknown) => {
          failure ??= err;
          finish();
        })
        .finally(() => {
          if (collected.size === byJob.size) finish();
        });
    },
    async check() {
      if (checking) return;
      checking = true;
      try {
        await checkJobs({ redis, queue, prefix, byJob, collected, options, collector: self });
      } catch {
        // Redis is away: the connection watch has said so; the next check tries again.
      } finally {
        checking = false;
      }
    },
    async done(signal) {
      if (byJob.size === 0) finish();
      await untilAborted(allDone, signal);
      await chain;
      if (failure !== undefined) throw failure;
    },
  };
  return self;
}

/** One check of `Collector.check`: every job still out is in Redis, and its end was not missed. */
async function checkJobs(ctx: {
  redis: Redis;
  queue: Queue;
  prefix: string;
  byJob: ReadonlyMap<string, BatchTask>;
  collected: ReadonlySet<string>;
  options: EnqueueOptions;
  collector: Collector;
}): Promise<void> {
  const { redis, queue, byJob, collected } = ctx;
  const out = [...byJob.keys()].filter((id) => !collected.has(id));
  if (out.length === 0) return;
  const pipeline = redis.pipeline();
  for (const id of out) pipeline.hexists(queue.toKey(id), "finishedOn");
  for (const id of out) pipeline.exists(queue.toKey(id));
  const answers = (await pipeline.exec()) ?? [];
  const vanished: string[] = [];
  out.forEach((id, i) => {
    if (answers[i]?.[1] === 1) ctx.collector.collect(id);
    else if (answers[out.length + i]?.[1] === 0) vanished.push(id);
  });
  // Collected (and removed) while the answers came back: not vanished.
  const lost = vanished.filter((id) => !collected.has(id)).map((id) => byJob.get(id) as BatchTask);
  if (lost.length === 0) return;
  await ctx.collector.enqueue(lost);
  ctx.options.onNotice?.({ type: "tasks_requeued", ids: lost.map((t) => t.id) });
}

/** The job that runs `task`. */
function jobOf(task: BatchTask, options: EnqueueOptions) {
  return {
    name: "task",
    data: {
      batch: options.batch,
      task,
      retry: options.retrying?.has(task.id) ?? false,
      workspacePerTask: options.workspacePerTask ?? false,
    } satisfies QueuedTask,
    opts: {
      jobId: jobId(options.batch, task.id),
      attempts: 3,
      backoff: { type: "exponential" as const, delay: 1000 },
    },
  };
}

/** The task's result from its job: the return value, or a failure saying why the job failed. */
function resultFromJob(job: Job | undefined, task: BatchTask): BatchResult {
  if (job !== undefined && job.returnvalue !== null && job.returnvalue !== undefined) {
    // What a worker returned comes from Redis: anyone who can write there can put anything in it.
    const problem = resultProblem(job.returnvalue, task.id);
    if (problem === undefined) return job.returnvalue as BatchResult;
    return failedResult(task, "worker_failed", `a worker's result for the task is not valid: ${problem}`);
  }
  const message = job?.failedReason ?? "the job disappeared from the queue";
  return failedResult(task, "worker_failed", `no worker could finish the task: ${message}`);
}

/** Every reason a run ends with (the type keeps it complete). */
const END_REASONS: Record<RunEndReason, true> = {
  completed: true,
  terminal_tool: true,
  max_tool_calls: true,
  max_turns: true,
  no_progress: true,
  incomplete: true,
  failed: true,
  provider_error: true,
  invalid_request: true,
  cancelled: true,
  awaiting_approval: true,
  stop_condition: true,
  guardrail: true,
};

const count = (v: unknown) => typeof v === "number" && Number.isFinite(v) && v >= 0;

/** Why a job's return value is not a `BatchResult` of task `id`, or undefined when it is one. */
export function resultProblem(value: unknown, id: string): string | undefined {
  if (!isJsonObject(value)) return "it is not an object";
  // Before anything walks it: the results line's JSON.stringify overflowed the stack (docs/pitfalls.md #74).
  if (nestsDeeperThan(value, RECORD_MAX_DEPTH))
    return `it nests deeper than ${RECORD_MAX_DEPTH} levels of arrays and objects`;
  const r = value as Record<string, unknown>;
  if (r.id !== id) return `its id is not the task's (${JSON.stringify(r.id)?.slice(0, 60)})`;
  if (typeof r.reason !== "string" || !Object.hasOwn(END_REASONS, r.reason))
    return "reason: not a run end reason";
  if (typeof r.outputText !== "string") return "outputText: expected a string";
  const usage = r.usage as Record<string, unknown> | null;
  if (
    usage !== null &&
    !(
      isJsonObject(usage) &&
      count(usage.input_tokens) &&
      count(usage.output_tokens) &&
      (usage.total_tokens === undefined || count(usage.total_tokens))
    )
  )
    return "usage: expected token counts";
  if (r.metadata !== undefined && !isJsonObject(r.metadata)) return "metadata: expected an object";
  if (r.resumes !== undefined && !(Array.isArray(r.resumes) && r.resumes.every(isJsonObject)))
    return "resumes: expected a list of resume points";
  if (
    r.skippedFiles !== undefined &&
    !(Array.isArray(r.skippedFiles) && r.skippedFiles.every((f) => typeof f === "string"))
  )
    return "skippedFiles: expected a list of paths";
  for (const key of ["turns", "toolCalls", "durationMs"] as const)
    if (!count(r[key])) return `${key}: expected a count`;
  for (const key of ["tape", "workspace"] as const)
    if (r[key] !== undefined && typeof r[key] !== "string") return `${key}: expected a string`;
  if (r.workspaceDropped !== undefined && r.workspaceDropped !== true)
    return "workspaceDropped: expected true";
  const error = r.error as Record<string, unknown> | undefined;
  if (
    error !== undefined &&
    !(isJsonObject(error) && typeof error.code === "string" && typeof error.message === "string")
  )
    return "error: expected {code, message}";
  return undefined;
}

function failedResult(task: BatchTask, code: string, message: string): BatchResult {
  return {
    id: task.id,
    reason: "failed",
    outputText: "",
    usage: { input_tokens: 0, output_tokens: 0, total_tokens: 0 } as BatchResult["usage"],
    turns: 0,
    toolCalls: 0,
    durationMs: 0,
    error: { code, message },
    ...(task.metadata === undefined ? {} : { metadata: task.metadata }),
  };
}

function untilAborted(done: Promise<void>, signal: AbortSignal | undefined): Promise<void> {
  if (signal === undefined) return done;
  if (signal.aborted) return Promise.resolve();
  return Promise.race([
    done,
    new Promise<void>((resolve) => signal.addEventListener("abort", () => resolve(), { once: true })),
  ]);
}

/** Options of `startBatchWorker`: this worker's own provider, tools, settings and policy. */
export interface BatchWorkerOptions {
  /** `redis://HOST:PORT[/DB]`. */
  url: string;
  /** This worker's provider (keys never travel through Redis). */
  provider: Provider;
  /** This worker's settings; a job's task spec is merged over them. @defaultValue {} */
  spec?: PartialRunSpec;
  /** What this worker allows: every job's tools are checked against it. @defaultValue the tools as given */
  policy?: Policy;
  /** A fresh registry for each task. */
  tools: (task: BatchTask, workspace: string) => ToolRegistry;
  /** Where tasks run (copied per task when the batch asks). @defaultValue process.cwd() */
  workspace?: string;
  /**
   * Reads each task's instruction files (AGENTS.md) from the workspace this worker runs it in
   * (`TaskContext.instructionFiles`): a job never names files. @defaultValue none read
   */
  instructionFiles?: TaskContext["instructionFiles"];
  /** Each task's tool-call hooks, this worker's (`TaskContext.hooks`): a job never brings its own. @defaultValue none */
  hooks?: TaskContext["hooks"];
  /** The MCP servers the tools come from (`run_started.mcp_servers`). @defaultValue none */
  mcpServers?: readonly McpServerSummary[];
  /** Sees every frame of every task this worker runs (a tracer). @defaultValue none */
  onFrame?: FrameObserver;
  /** Runs at once in this worker. @defaultValue BATCH_DEFAULTS.workerConcurrency (8) */
  concurrency?: number;
  /** How long before a dead worker's tasks go to another. @defaultValue BATCH_DEFAULTS.stallTimeoutMs (30000) */
  stallTimeoutMs?: number;
  /** Header facts for the tapes. @defaultValue none */
  tapeExtras?: TaskContext["tapeExtras"];
  /** Where a batch's per-task workspace copies go (when the batch asks for them). @defaultValue none */
  workspaces?: (batch: string) => string;
  /** Values that never reach a tape (this worker's keys). @defaultValue none */
  secrets?: readonly string[];
  /** @defaultValue BATCH_DEFAULTS.queueName */
  queueName?: string;
  /**
   * Told as each job starts (its batch's copies folder is in use from then) and as it ends,
   * whatever its outcome: every `started` gets its `ended` (the CLI's worker removes idle copies
   * folders, src/batch/worker-copies.ts). @defaultValue none
   */
  onJob?: (event: { type: "started" | "ended"; batch: string }) => void;
  /** Told about each task this worker starts and finishes. @defaultValue none */
  onTask?: (event: { type: "started"; id: string } | { type: "finished"; result: BatchResult }) => void;
  /** The connection was lost or came back; a task's job vanished while it ran. @defaultValue none */
  onNotice?: (notice: QueueNotice) => void;
}

/** A running worker. */
export interface BatchWorker {
  /** Stops taking tasks; tasks in flight are cancelled and handed back to the queue (another worker resumes them). */
  close(): Promise<void>;
}

/**
 * Serves the queue: runs each job's task with this worker's provider and returns its result.
 *
 * @example
 * ```ts
 * const worker = await startBatchWorker({ url: "redis://127.0.0.1:6379", provider, spec: { model: "gpt-5-mini" }, tools: () => registry });
 * process.on("SIGTERM", () => worker.close());
 * ```
 */
export async function startBatchWorker(options: BatchWorkerOptions): Promise<BatchWorker> {
  const name = options.queueName ?? BATCH_DEFAULTS.queueName;
  const jobs = workerJobs(options.onNotice);
  const onNotice = (notice: QueueNotice) => {
    // Such a job would stay active for ever: no worker can take it, so none applies its stall limit.
    if (notice.type === "job_unreadable") failUnreadableJobs(redis, name).catch(() => {});
    options.onNotice?.(notice);
  };
  const watch = redisWatch(redisWhere(options.url), onNotice, jobs.onJobError);
  const redis = connectRedis(options.url);
  watch.watchMain(redis);
  const queue = new Queue(name, { connection: { url: options.url, maxRetriesPerRequest: null } });
  watch.watch(queue);
  const limiters = new Map<string, Promise<RateLimiter>>();
  let stopping = false;
  const limiterFor = (batch: string) => {
    let limiter = limiters.get(batch);
    if (limiter === undefined) {
      limiter = sharedLimiter(redis, queue, batch);
      limiters.set(batch, limiter);
    }
    return limiter;
  };
  const worker = new Worker<QueuedTask, BatchResult>(
    name,
    async (job, token) => {
      const id = job.id as string;
      const data = checkedJob(job.data, (reason) =>
        options.onNotice?.({ type: "job_refused", job: id, reason }),
      );
      const signal = jobs.started(id, data.task.id);
      options.onJob?.({ type: "started", batch: data.batch });
      try {
        options.onTask?.({ type: "started", id: data.task.id });
        const deps = { redis, limiter: await limiterFor(data.batch), signal };
        const result = await processJob(data, options, deps);
        // Its job vanished while it ran (told once): nothing to complete, nobody to tell.
        if (jobs.lost(id)) throw new Error(`the job of task ${data.task.id} vanished from Redis`);
        options.onTask?.({ type: "finished", result });
        if (result.reason === "cancelled" && stopping) {
          // Handed back, not finished: the next worker resumes it from its tape.
          dropHandedBackCopy(result, data, options);
          await job.moveToWait(token);
          throw new WaitingError();
        }
        return result;
      } finally {
        jobs.ended(id);
        options.onJob?.({ type: "ended", batch: data.batch });
      }
    },
    {
      connection: { url: options.url, maxRetriesPerRequest: null },
      concurrency: options.concurrency ?? BATCH_DEFAULTS.workerConcurrency,
      lockDuration: options.stallTimeoutMs ?? BATCH_DEFAULTS.stallTimeoutMs,
      stalledInterval: options.stallTimeoutMs ?? BATCH_DEFAULTS.stallTimeoutMs,
      maxStalledCount: BATCH_DEFAULTS.maxStalls,
    },
  );
  watch.watch(worker);
  await worker.waitUntilReady();
  return {
    async close() {
      stopping = true;
      jobs.stopAll("the worker is stopping");
      await worker.close();
      watch.stop();
      await queue.close();
      await redis.quit().catch(() => redis.disconnect());
    },
  };
}

/**
 * A task handed back as its worker stops resumes wherever a worker takes it — in a fresh copy of
 * that worker's workspace (its copy is on this machine): the copy here is removed, not left in the
 * temporary folder for no one (docs/decisions.md #42).
 */
function dropHandedBackCopy(result: BatchResult, data: QueuedTask, options: BatchWorkerOptions): void {
  if (result.workspace === undefined || !data.workspacePerTask || options.workspaces === undefined) return;
  try {
    removeTaskWorkspace(options.workspaces(data.batch), result.workspace);
  } catch {
    // Refused (not a task copy): left as it is; handing the task back matters more.
  }
}

/** Why `failUnreadableJobs` failed a job. */
export const UNREADABLE_JOB = "its data in Redis is not JSON: no worker can read it";

/**
 * Fails the queue's active jobs whose data is not JSON. BullMQ parses a job's data as a worker
 * takes it, so such a job never runs, and its stall limit — applied when a worker processes the job
 * — never fails it: it stayed active for ever, and the batch waiting for it with it. It is moved to
 * failed as BullMQ moves a job (BullMQ's own keys, default prefix), its data made `{}` so the
 * coordinator can read the job, with `UNREADABLE_JOB` as the reason. Returns the job ids.
 */
export async function failUnreadableJobs(redis: Redis, queueName: string): Promise<string[]> {
  const base = `bull:${queueName}`;
  const failed: string[] = [];
  for (const id of await redis.lrange(`${base}:active`, 0, -1)) {
    const data = await redis.hget(`${base}:${id}`, "data");
    if (data === null || isJsonText(data)) continue;
    const now = Date.now();
    await redis
      .multi()
      .lrem(`${base}:active`, 0, id)
      .srem(`${base}:stalled`, id)
      .del(`${base}:${id}:lock`)
      .hset(`${base}:${id}`, { data: "{}", failedReason: UNREADABLE_JOB, finishedOn: now })
      .zadd(`${base}:failed`, now, id)
      .exec();
    failed.push(id);
  }
  return failed;
}

/** A finished task's tape from Redis; one too large to read is left out (and said), not the batch's end. */
export async function collectedTape(
  redis: Redis,
  prefix: string,
  id: string,
  onNotice: ((notice: QueueNotice) => void) | undefined,
): Promise<string | undefined> {
  try {
    return await readTapeText(redis, prefix, id);
  } catch (err) {
    // A key of the wrong type (WRONGTYPE) is Redis's answer about the data, not a lost connection.
    const refused = (err as Error | null)?.name === "ReplyError";
    if (!refused && (!EddyError.isInstance(err) || err.code !== "tape_invalid")) throw err;
    onNotice?.({ type: "tape_not_kept", id, reason: (err as Error).message });
    return undefined;
  }
}

/** A job's data once checked; nothing of a job that fails its check is used: it fails now, with the reason, never retried. */
function checkedJob(data: unknown, refused: (reason: string) => void): QueuedTask {
  try {
    return checkQueuedTask(data);
  } catch (err) {
    refused((err as Error).message);
    throw new UnrecoverableError((err as Error).message);
  }
}

/** A worker's runs by job id, and the jobs that vanished under them. */
function workerJobs(onNotice: BatchWorkerOptions["onNotice"]) {
  const running = new Map<string, { task: string; controller: AbortController }>();
  const tasks = new Map<string, string>();
  const vanished = new Set<string>();
  return {
    /** A job starts: its run's signal. */
    started(id: string, task: string): AbortSignal {
      const controller = new AbortController();
      running.set(id, { task, controller });
      tasks.set(id, task);
      vanished.delete(id);
      return controller.signal;
    },
    ended(id: string) {
      running.delete(id);
    },
    lost: (id: string) => vanished.has(id),
    stopAll(reason: string) {
      for (const { controller } of running.values()) controller.abort(reason);
    },
    /**
     * BullMQ says a job's key or lock is gone (Redis restarted empty or flushed, or the job went to
     * another worker): its run is stopped, since its result could not be kept, and that is said once.
     */
    onJobError(error: Error) {
      const id = jobOfError(error);
      if (id === undefined || !tasks.has(id) || vanished.has(id)) return;
      vanished.add(id);
      running.get(id)?.controller.abort("its job vanished from Redis");
      const reason = error.message.split("\n")[0] ?? error.name;
      onNotice?.({ type: "task_lost", id: tasks.get(id) as string, reason });
    },
  };
}

async function processJob(
  data: QueuedTask,
  options: BatchWorkerOptions,
  deps: { redis: Redis; limiter: RateLimiter; signal: AbortSignal },
): Promise<BatchResult> {
  const ctx: TaskContext = {
    spec: options.spec ?? {},
    provider: limitedProvider(options.provider, deps.limiter),
    tools: options.tools,
    tapes: redisTapeStore(deps.redis, batchPrefix(data.batch), options.secrets ?? []),
    retry: (previous) => data.retry && !succeeded(previous.reason),
    signal: deps.signal,
  };
  if (options.policy !== undefined) ctx.policy = options.policy;
  if (options.workspace !== undefined) ctx.workspace = options.workspace;
  if (options.instructionFiles !== undefined) ctx.instructionFiles = options.instructionFiles;
  if (options.hooks !== undefined) ctx.hooks = options.hooks;
  if (options.secrets !== undefined) ctx.secrets = options.secrets;
  if (options.mcpServers !== undefined) ctx.mcpServers = options.mcpServers;
  if (options.onFrame !== undefined) ctx.onFrame = options.onFrame;
  if (options.tapeExtras !== undefined) ctx.tapeExtras = options.tapeExtras;
  if (data.workspacePerTask && options.workspaces !== undefined)
    ctx.workspaces = options.workspaces(data.batch);
  return runTask(data.task, ctx);
}

/**
 * The batch's rate limit, shared by every worker: its settings from Redis, its counters in Redis;
 * a 429 pauses every worker's requests and, through BullMQ's queue-wide rate limit, their intake of
 * new tasks.
 */
async function sharedLimiter(redis: Redis, queue: Queue, batch: string): Promise<RateLimiter> {
  const meta = await redis.hgetall(`${batchPrefix(batch)}:meta`);
  const rpm = Number(meta.rpm ?? 0);
  const tpm = Number(meta.tpm ?? 0);
  const limiter = createRateLimiter({
    redis,
    key: `${batchPrefix(batch)}:rate`,
    ...(rpm > 0 ? { rpm } : {}),
    ...(tpm > 0 ? { tpm } : {}),
  });
  return {
    acquire: (signal) => limiter.acquire(signal),
    spend: (tokens) => limiter.spend(tokens),
    async pause(ms) {
      await limiter.pause(ms);
      await queue.rateLimit(ms);
    },
  };
}
