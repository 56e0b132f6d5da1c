/** Batch defaults, in one place for the library and the CLI. */
export const BATCH_DEFAULTS = {
  /** Runs at once in one process (`--concurrency`). */
  concurrency: 8,
  /** Runs at once per worker (`eddy worker --concurrency`). */
  workerConcurrency: 8,
  /**
   * How long a worker's hold on a task lasts without being renewed (`--stall-timeout`): a worker
   * that dies gives its tasks to another after about this long (BullMQ's lock duration).
   */
  stallTimeoutMs: 30_000,
  /** How often a task may be handed on after its worker died before it fails. */
  maxStalls: 5,
  /** The BullMQ queue every batch and worker uses (`--queue redis://…/?name=…` picks another). */
  queueName: "eddy-batch",
  /**
   * How often a coordinator checks that its jobs are still in Redis (a Redis restarted empty or
   * flushed loses them, and no event says so): vanished ones are queued again.
   */
  queueCheckMs: 2000,
  /** The largest tasks file read (only a regular file is read: src/util/regular-file.ts). */
  maxTasksFileBytes: 256 * 1024 * 1024,
  /**
   * Bad lines a tasks file may hold before it is refused whole, nothing run: each is a failed parse
   * (~20 µs) and a line on stderr, and two million of them are not a tasks file with mistakes in it
   * (docs/pitfalls.md #109).
   */
  maxBadTaskLines: 1_000,
  /**
   * Failed tasks' workspace copies (`--workspace-per-task`) kept in a batch's copies folder at most;
   * a later failure's copy is removed: a copy of the workspace each, they filled the temporary
   * folder without a bound (docs/decisions.md #42).
   */
  maxKeptWorkspaces: 20,
  /**
   * How long an `eddy worker` keeps a batch's copies folder once no job of the batch has started or
   * finished in it: a worker never knows a batch is over, and every batch it served left its folder
   * (up to `maxKeptWorkspaces` copies) in the temporary folder for good (docs/decisions.md #42).
   */
  workerCopiesKeepMs: 24 * 60 * 60 * 1000,
  /** How often an `eddy worker` looks for idle copies folders (and once as it starts). */
  workerCopiesSweepMs: 60 * 60 * 1000,
} as const;
