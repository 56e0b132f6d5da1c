/**
 * `eddy batch TASKS.jsonl --out DIR`: runs every task of the file (one JSON object per line:
 * `{"id", "prompt" | "input", "model"?, "instructions"?, "schema"?, "metadata"?, …}`) with the run
 * settings of the flags and config file, in this process (`--concurrency`) or on a BullMQ queue
 * that `eddy worker`s serve (`--queue redis://…`). Writes `DIR/results.jsonl`, `DIR/tapes/ID.tape`
 * and `DIR/summary.json`; running it again skips finished tasks and resumes interrupted ones.
 *
 * Exit codes: 0 every task completed; 1 a task failed or a line was bad; 2 bad usage; 130
 * interrupted (run the same command again to go on).
 */

import { basename, dirname, join, relative, resolve } from "node:path";
import {
  type BatchDir,
  type BatchSummary,
  holdBatchDir,
  isFailure,
  openBatchDir,
  summarize,
} from "../batch/batch-dir.js";
import { BATCH_DEFAULTS } from "../batch/defaults.js";
import { runBatch } from "../batch/pool.js";
import { copyName, sweepTaskWorkspaces } from "../batch/run-task.js";
import { type BatchTask, parseTasks } from "../batch/task.js";
import type { RunSpecInput } from "../loop/run-spec.js";
import { budgetOverruns, mergeRunSpecs } from "../loop/run-spec.js";
import type { McpToolInfo } from "../tools/mcp/index.js";
import { privateTempFolder } from "../util/make-dir.js";
import { readRegularTextSync } from "../util/regular-file.js";
import { agentSummaries } from "./agent-tools.js";
import { type BatchProgress, batchProgress } from "./batch-progress.js";
import { startBatchRuntime } from "./batch-run.js";
import type { EffectiveConfig, RunFlags } from "./config.js";
import { resolveConfig } from "./config.js";
import { CANCELLED, RUN_FAILED, SUCCESS } from "./exit-codes.js";
import { otelRequested, startOtelExport } from "./otel.js";
import { assertReadyToRun, checkWorkspace, usageError } from "./preflight.js";
import { type CliIo, cancelOnSignal, readSchema } from "./run-command.js";
import { BUDGET_FLAGS, specOf } from "./run-settings.js";
import { mcpEventLine, observeApart } from "./run-view.js";
import { secretsOf, startTargetProvider } from "./target-provider.js";
import { formatDuration, stylesFor, terminalSafe } from "./terminal.js";

/** Flags of `eddy batch` (the run settings of `eddy run`, plus the batch's own). */
export interface BatchFlags extends RunFlags {
  out: string;
  concurrency?: number;
  rpm?: number;
  tpm?: number;
  workspacePerTask?: boolean;
  retryFailed?: boolean;
  queue?: string;
}

/**
 * One line per budget that tasks ask above this batch's: they run with the batch's (withinBudgets,
 * applied in src/batch/run-task.ts; queued, a task is held to the flags here and to each worker's
 * own settings), and the user is told rather than left to find a shorter run.
 */
export function loweredBudgetLines(
  tasks: readonly BatchTask[],
  config: EffectiveConfig,
  queued: boolean,
): string[] {
  const local = specOf(config, { onlyFlags: queued });
  const byField = new Map<string, { count: number; id: string; asked: number; limit: number }>();
  for (const task of tasks)
    for (const o of budgetOverruns(mergeRunSpecs(local, task.spec), local, { onlySet: queued })) {
      const seen = byField.get(o.field);
      if (seen === undefined) byField.set(o.field, { count: 1, id: task.id, asked: o.asked, limit: o.limit });
      else seen.count++;
    }
  return [...byField].map(([field, s]) => {
    const who =
      s.count === 1
        ? `task ${JSON.stringify(s.id)} asks`
        : `${s.count} tasks (${JSON.stringify(s.id)} first) ask`;
    const flag = BUDGET_FLAGS[field];
    const how = flag === undefined ? "the most a batch allows" : `give ${flag} to allow more`;
    return `eddy: ${who} ${field} ${s.asked}, above this batch's ${s.limit}: ${s.count === 1 ? "it runs" : "they run"} with ${s.limit} (${how})`;
  });
}

type OutputSchema = NonNullable<RunSpecInput["output_schema"]>;

/** A batch about to run: its tasks, folder, settings, and how it reports. */
export interface BatchPlan {
  tasks: BatchTask[];
  pending: BatchTask[];
  retrying: Set<string>;
  dir: BatchDir;
  config: EffectiveConfig;
  flags: BatchFlags;
  progress: BatchProgress;
  signal: AbortSignal;
  /** `--schema`, read once (a relative path from `io.cwd`). */
  schema: OutputSchema | undefined;
}

export async function batchCommand(tasksPath: string, flags: BatchFlags, io: CliIo): Promise<number> {
  const startedAt = performance.now();
  const startedIso = new Date().toISOString();
  const styles = stylesFor(io.stderr, io.env);
  const { tasks, bad } = readTasks(tasksPath, io.cwd);
  for (const b of bad)
    io.stderr.write(
      `${terminalSafe(`eddy: ${tasksPath} line ${b.line}: ${b.message}; skipped`, { oneLine: true })}\n`,
    );
  const config = resolveConfig(flags, io.env, io.cwd);
  checkWorkspace(config.workspace.value);
  for (const line of loweredBudgetLines(tasks, config, flags.queue !== undefined))
    io.stderr.write(`${terminalSafe(line, { oneLine: true })}\n`);
  if (flags.queue === undefined) assertReadyToRun(withTaskModels(config, tasks), io.env);
  const schema = flags.schema === undefined ? undefined : readSchema(flags.schema, io.cwd);
  if (flags.queue !== undefined) await (await import("../batch/queue.js")).checkRedis(flags.queue);
  // One batch at a time in a folder: two wrote contradicting result lines for the same tasks.
  const lock = await holdBatchDir(resolve(io.cwd, flags.out));
  try {
    return await batchInFolder({ tasks, bad, config, flags, schema, io, styles, startedAt, startedIso });
  } finally {
    await lock.release();
  }
}

/** The batch once its folder is held: run what is pending, then the summary and the exit code. */
async function batchInFolder(args: {
  tasks: BatchTask[];
  bad: readonly unknown[];
  config: EffectiveConfig;
  flags: BatchFlags;
  schema: OutputSchema | undefined;
  io: CliIo;
  styles: ReturnType<typeof stylesFor>;
  startedAt: number;
  startedIso: string;
}): Promise<number> {
  const { tasks, bad, config, flags, schema, io, styles, startedAt, startedIso } = args;
  const dir = openBatchDir(resolve(io.cwd, flags.out), secretsOf(config));
  const retrying = new Set<string>();
  if (flags.retryFailed === true)
    for (const line of dir.results.values()) if (isFailure(line)) retrying.add(line.id);
  dir.drop(retrying);
  const pending = tasks.filter((t) => !dir.results.has(t.id));
  const progress = batchProgress(io, tasks.length, styles);
  progress.skipped(tasks.length - pending.length);
  const controller = new AbortController();
  const removeSignal = cancelOnSignal(io, controller);
  const plan: BatchPlan = {
    tasks,
    pending,
    retrying,
    dir,
    config,
    flags,
    progress,
    signal: controller.signal,
    schema,
  };
  try {
    if (pending.length > 0) {
      if (flags.queue !== undefined) {
        const { queuedBatch } = await import("./batch-queue.js");
        await queuedBatch(plan, flags.queue);
      } else await localBatch(plan, io);
    }
  } finally {
    progress.stop();
    removeSignal();
  }
  // A set: comparing each result with every task was quadratic (docs/pitfalls.md #104).
  const taskIds = new Set(tasks.map((t) => t.id));
  const summary = summarize(
    [...dir.results.values()].filter((l) => taskIds.has(l.id)),
    {
      tasks: tasks.length,
      badLines: bad.length,
      run: {
        started_at: startedIso,
        wall_ms: performance.now() - startedAt,
        tasks_run: pending.filter((t) => dir.results.has(t.id)).length,
      },
      previous: dir.summary,
    },
  );
  dir.writeSummary(summary);
  io.stderr.write(`${closingLine(summary, dir, io.cwd)}\n`);
  if (summary.pending > 0) {
    io.stderr.write(
      `eddy batch: ${summary.pending} task${summary.pending === 1 ? "" : "s"} unfinished; run the same command again to go on\n`,
    );
    return controller.signal.aborted ? CANCELLED : RUN_FAILED;
  }
  return summary.failed > 0 || bad.length > 0 ? RUN_FAILED : SUCCESS;
}

/**
 * The tasks of the file (a relative `path` from `cwd`, the command's directory); a file that cannot
 * be read, or holds no task at all, is a usage error.
 */
function readTasks(path: string, cwd: string): ReturnType<typeof parseTasks> {
  const text = readRegularTextSync(resolve(cwd, path), {
    what: "the tasks file",
    maxBytes: BATCH_DEFAULTS.maxTasksFileBytes,
    name: path,
  });
  const parsed = parseTasks(text, { source: `the tasks file ${path}` });
  if (parsed.tasks.length === 0 && parsed.bad.length === 0)
    throw usageError(`the tasks file ${path} holds no task`);
  return parsed;
}

/** The configuration as preflight should see it: a model is not missing when every task names one. */
function withTaskModels(config: EffectiveConfig, tasks: readonly BatchTask[]): EffectiveConfig {
  if (config.model.value !== null || tasks.length === 0) return config;
  const model = tasks.every((t) => typeof t.spec.model === "string") ? tasks[0]?.spec.model : undefined;
  return typeof model === "string" ? { ...config, model: { value: model, source: "flag" } } : config;
}

/** Runs the pending tasks in this process. */
async function localBatch(plan: BatchPlan, io: CliIo): Promise<void> {
  const { config, flags, dir, progress, signal } = plan;
  const styles = stylesFor(io.stderr, io.env);
  const runtime = await startBatchRuntime({
    config,
    io,
    styles,
    command: "batch",
    signal,
    onMcpEvent: (event) => progress.notice(mcpEventLine(event, styles)),
  });
  if (runtime === undefined) return;
  const target = await startTargetProvider(config);
  if (target.notice !== undefined) progress.notice(styles.dim(target.notice));
  const otel = otelRequested(flags.otel, io.env)
    ? await startOtelExport({ env: io.env, providerName: target.provider.name, stderr: io.stderr })
    : undefined;
  try {
    const spec = plan.schema === undefined ? runtime.spec : { ...runtime.spec, output_schema: plan.schema };
    const workspaces = flags.workspacePerTask === true ? taskWorkspaces(dir) : undefined;
    const results = runBatch(plan.pending, {
      provider: target.provider,
      spec,
      policy: runtime.policy,
      tools: runtime.tools,
      workspace: config.workspace.value,
      secrets: [...secretsOf(config), ...runtime.secrets],
      mcpServers: runtime.mcpServers,
      ...(runtime.instructionFiles === undefined ? {} : { instructionFiles: runtime.instructionFiles }),
      ...(runtime.hooks === undefined ? {} : { hooks: runtime.hooks }),
      // Tracing fails alone: it never stops a task's tape (docs/pitfalls.md #95).
      ...(otel === undefined
        ? {}
        : {
            onFrame: observeApart(
              "tracing (--otel)",
              otel.observer,
              { write: (text) => progress.notice(text.trimEnd()) },
              styles,
            ),
          }),
      ...(flags.concurrency === undefined ? {} : { concurrency: flags.concurrency }),
      ...(flags.rpm === undefined ? {} : { rpm: flags.rpm }),
      ...(flags.tpm === undefined ? {} : { tpm: flags.tpm }),
      tapes: dir.tapes,
      tapeExtras: tapeExtrasFor(config, runtime.mcpTools),
      ...(workspaces === undefined ? {} : { workspaces }),
      retry: (previous) => plan.retrying.has(previous.id),
      signal,
      onStart: (task) => progress.started(task.id),
      onEnd: (result) => progress.ended(result.id),
    });
    for await (const result of results) {
      // Cancelled by Ctrl-C: not a result; its tape resumes next time.
      if (result.reason === "cancelled" && signal.aborted) continue;
      progress.finished(dir.append(result), result.workspaceDropped === true);
    }
    if (workspaces !== undefined) sweepCopies(plan, workspaces);
  } finally {
    await otel?.shutdown();
    await target.close();
    await runtime.close();
  }
}

/**
 * What a task's tape header says besides its spec: validation, the provider's profile, the MCP
 * tools, the config file's `agents` (so `eddy replay` rebuilds them).
 */
export function tapeExtrasFor(config: EffectiveConfig, mcpTools: readonly McpToolInfo[]) {
  return {
    validate: config.validate.value,
    providerName: config.target.kind === "mock" ? "mock" : config.target.profile.name,
    mcpTools,
    agents: agentSummaries(config.agents),
  };
}

/**
 * Once the batch's runs are over (all, or Ctrl-C): its copies folder keeps only what a later run
 * uses — failed tasks' copies their results name, unfinished tasks' (they resume in them, which is
 * said) — and goes when it is empty (docs/decisions.md #42).
 */
function sweepCopies(plan: BatchPlan, workspaces: string): void {
  const named = new Set<string>();
  const unfinished = new Set<string>();
  for (const task of plan.tasks) {
    const line = plan.dir.results.get(task.id);
    if (line === undefined) unfinished.add(copyName(task.id));
    else if (line.workspace !== undefined && dirname(line.workspace) === workspaces)
      named.add(basename(line.workspace));
  }
  const kept = sweepTaskWorkspaces(workspaces, new Set([...named, ...unfinished]));
  const waiting = kept.filter((name) => unfinished.has(name)).length;
  if (waiting > 0)
    plan.progress.notice(
      `eddy batch: the workspace copies of ${waiting} unfinished task${waiting === 1 ? "" : "s"} stay in ${workspaces}: they resume in them when the batch runs again`,
    );
}

/** Where tasks get their own workspace copies: one folder per batch, so a resumed task finds its copy. */
export function taskWorkspaces(dir: BatchDir): string {
  return privateTempFolder(`eddy-batch-${dir.id}`);
}

function closingLine(summary: BatchSummary, dir: BatchDir, cwd: string): string {
  const completed = (summary.by_reason.completed ?? 0) + (summary.by_reason.terminal_tool ?? 0);
  const parts = [
    `${summary.tasks} task${summary.tasks === 1 ? "" : "s"}`,
    `${completed} completed`,
    `${summary.failed} failed`,
    `${summary.usage.input_tokens.toLocaleString("en-US")} in / ${summary.usage.output_tokens.toLocaleString("en-US")} out tokens`,
    formatDuration(summary.runs.at(-1)?.wall_ms ?? summary.wall_ms) +
      (summary.runs.length > 1
        ? ` (${formatDuration(summary.wall_ms)} over ${summary.runs.length} runs)`
        : ""),
  ];
  if (summary.bad_lines > 0)
    parts.push(`${summary.bad_lines} bad line${summary.bad_lines === 1 ? "" : "s"} skipped`);
  return `eddy batch: ${parts.join(" · ")} → ${relative(cwd, join(dir.path, "results.jsonl")) || "results.jsonl"}`;
}
