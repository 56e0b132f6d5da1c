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
import type { McpServerSummary } from "../frames/frame.js";
import type { FrameObserver } from "../loop/frame-channel.js";
import type { Policy } from "../loop/policy.js";
import { checkPartialRunSpec, type PartialRunSpec } from "../loop/run-spec.js";
import type { Provider } from "../provider/provider.js";
import type { ToolRegistry } from "../tools/registry.js";
import { BATCH_DEFAULTS } from "./defaults.js";
import { limitedProvider } from "./limited-provider.js";
import { createRateLimiter, type RateLimiter } from "./limiter.js";
import { dropTape, readTapeText, redisTapeStore } from "./redis-tapes.js";
import { type BatchResult, runTask, succeeded, type TaskContext } from "./run-task.js";
import { type BatchTask, parseTaskLine } from "./task.js";

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
  const { batch, task, retry, workspacePerTask, ...rest } = data as Record<string, unknown>;
  const extra = Object.keys(rest);
  if (extra.length > 0) throw problem(`${extra[0]}: is not a known field`);
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
  if (taskExtra.length > 0) throw problem(`task.${taskExtra[0]}: is not a known field`);
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
    where = `${parsed.hostname}:${parsed.port || "6379"}`;
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
  /** A worker took a task. @defaultValue none */
  onStart?: (id: string) => void;
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
 * @example
 * ```ts
 * await enqueueBatch({ url: "redis://127.0.0.1:6379", batch: "b1", tasks, onResult: (r, tape) => save(r, tape) });
 * ```
 */
export async function enqueueBatch(options: EnqueueOptions): Promise<void> {
  const name = options.queueName ?? BATCH_DEFAULTS.queueName;
  const redis = connectRedis(options.url);
  const queue = new Queue(name, { connection: { url: options.url } });
  const events = new QueueEvents(name, { connection: { url: options.url, maxRetriesPerRequest: null } });
  const prefix = batchPrefix(options.batch);
  const byJob = new Map(options.tasks.map((t) => [jobId(options.batch, t.id), t]));
  const collected = new Set<string>();
  let finish: () => void = () => {};
  const allDone = new Promise<void>((resolve) => {
    finish = resolve;
  });
  let chain = Promise.resolve();
  let failure: unknown;
  /** Takes a finished job's result and tape (once), then removes both from Redis. */
  const collect = (id: string) => {
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
        await options.onResult(resultFromJob(job, task), await readTapeText(redis, prefix, task.id));
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
  };
  try {
    await events.waitUntilReady();
    events.on("active", ({ jobId: id }) => {
      const task = byJob.get(id);
      if (task !== undefined) options.onStart?.(task.id);
    });
    events.on("completed", ({ jobId: id }) => collect(id));
    events.on("failed", ({ jobId: id }) => collect(id));
    await redis.hset(`${prefix}:meta`, { rpm: options.rpm ?? 0, tpm: options.tpm ?? 0 });
    await queue.addBulk(
      options.tasks.map((task) => ({
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
          backoff: { type: "exponential", delay: 1000 },
        },
      })),
    );
    // Jobs that finished before this coordinator listened (it was restarted): collect them now.
    for (const job of await queue.getJobs(["completed", "failed"])) if (job.id !== undefined) collect(job.id);
    if (byJob.size === 0) finish();
    await untilAborted(allDone, options.signal);
    await chain;
    if (failure !== undefined) throw failure;
  } finally {
    await events.close();
    await queue.close();
    await redis.quit();
  }
}

/** The task's result from its job: the return value, or a failure saying why the job failed. */
function resultFromJob(job: Job | undefined, task: BatchTask): BatchResult {
  if (job !== undefined && job.returnvalue !== null && typeof job.returnvalue === "object")
    return job.returnvalue as BatchResult;
  const message = job?.failedReason ?? "the job disappeared from the queue";
  return {
    id: task.id,
    reason: "failed",
    outputText: "",
    usage: { input_tokens: 0, output_tokens: 0, total_tokens: 0 } as BatchResult["usage"],
    turns: 0,
    toolCalls: 0,
    durationMs: 0,
    error: { code: "worker_failed", message: `no worker could finish the task: ${message}` },
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
  /** Told about each task this worker starts and finishes. @defaultValue none */
  onTask?: (event: { type: "started"; id: string } | { type: "finished"; result: BatchResult }) => void;
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
  const redis = connectRedis(options.url);
  const queue = new Queue(name, { connection: { url: options.url } });
  const limiters = new Map<string, Promise<RateLimiter>>();
  const running = new Map<string, AbortController>();
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
      let data: QueuedTask;
      try {
        data = checkQueuedTask(job.data);
      } catch (err) {
        // Nothing of a job that fails its check is used: it fails now, with the reason, never retried.
        throw new UnrecoverableError((err as Error).message);
      }
      const controller = new AbortController();
      running.set(job.id as string, controller);
      try {
        const result = await processJob(data, options, {
          redis,
          limiter: await limiterFor(data.batch),
          signal: controller.signal,
        });
        if (result.reason === "cancelled" && stopping) {
          // Handed back, not finished: the next worker resumes it from its tape.
          await job.moveToWait(token);
          throw new WaitingError();
        }
        return result;
      } finally {
        running.delete(job.id as string);
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
  worker.on("error", () => {});
  await worker.waitUntilReady();
  return {
    async close() {
      stopping = true;
      for (const controller of running.values()) controller.abort("the worker is stopping");
      await worker.close();
      await queue.close();
      await redis.quit();
    },
  };
}

async function processJob(
  data: QueuedTask,
  options: BatchWorkerOptions,
  deps: { redis: Redis; limiter: RateLimiter; signal: AbortSignal },
): Promise<BatchResult> {
  options.onTask?.({ type: "started", id: data.task.id });
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
  if (options.secrets !== undefined) ctx.secrets = options.secrets;
  if (options.mcpServers !== undefined) ctx.mcpServers = options.mcpServers;
  if (options.onFrame !== undefined) ctx.onFrame = options.onFrame;
  if (options.tapeExtras !== undefined) ctx.tapeExtras = options.tapeExtras;
  if (data.workspacePerTask && options.workspaces !== undefined)
    ctx.workspaces = options.workspaces(data.batch);
  const result = await runTask(data.task, ctx);
  options.onTask?.({ type: "finished", result });
  return result;
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
