/**
 * `eddy worker --queue redis://HOST:PORT [--concurrency N]`: serves the tasks `eddy batch --queue`
 * puts on the queue, with this machine's provider (flags, `OPENRESPONSES_BASE_URL`,
 * `OPENRESPONSES_API_KEY`, `EDDY_MODEL`, or the config file), tools and workspace. One line per
 * finished task on stdout; Ctrl-C hands the tasks in flight back to the queue (another worker
 * resumes them from their tapes) and exits 130. With `--workspace-per-task` batches, a batch's
 * copies folder goes once idle for `BATCH_DEFAULTS.workerCopiesKeepMs` (src/batch/worker-copies.ts).
 */

import { toResultLine } from "../batch/batch-dir.js";
import { type BatchWorkerOptions, checkRedis, startBatchWorker } from "../batch/queue.js";
import { type WorkerCopies, workerCopies } from "../batch/worker-copies.js";
import { tapeExtrasFor } from "./batch-command.js";
import { describeLine, droppedCopyLine, queueNoticeLines, REFUSALS_SAID } from "./batch-progress.js";
import { startBatchRuntime, unattendedApproveMode } from "./batch-run.js";
import type { EffectiveConfig, RunFlags } from "./config.js";
import { resolveConfig } from "./config.js";
import { CANCELLED } from "./exit-codes.js";
import { otelRequested, startOtelExport } from "./otel.js";
import { assertReadyToRun, checkWorkspace } from "./preflight.js";
import type { CliIo } from "./run-command.js";
import { mcpEventLine, observeApart } from "./run-view.js";
import { secretsOf, startTargetProvider } from "./target-provider.js";
import { stylesFor } from "./terminal.js";

/** Flags of `eddy worker`. */
export interface WorkerFlags extends RunFlags {
  queue: string;
  concurrency?: number;
  stallTimeout?: number;
}

export async function workerCommand(flags: WorkerFlags, io: CliIo): Promise<number> {
  const config = resolveConfig(flags, io.env, io.cwd);
  checkWorkspace(config.workspace.value);
  assertReadyToRun(taskModelsAllowed(config), io.env);
  unattendedApproveMode(config, "worker");
  await checkRedis(flags.queue);
  const styles = stylesFor(io.stdout, io.env);
  const controller = new AbortController();
  const notices = queueNoticeLines("eddy worker", (line) => io.stderr.write(`${line}\n`));
  let toldDropped = false;
  const runtime = await startBatchRuntime({
    config,
    io,
    styles,
    command: "worker",
    signal: controller.signal,
    onMcpEvent: (event) => io.stderr.write(`${mcpEventLine(event, styles)}\n`),
  });
  if (runtime === undefined) return CANCELLED;
  const target = await startTargetProvider(config);
  const otel = otelRequested(flags.otel, io.env)
    ? await startOtelExport({ env: io.env, providerName: target.provider.name, stderr: io.stderr })
    : undefined;
  const copies = workerCopies({ onProblem: (line) => io.stderr.write(`eddy worker: ${line}\n`) });
  try {
    const worker = await startBatchWorker({
      url: flags.queue,
      provider: target.provider,
      spec: runtime.spec,
      policy: runtime.policy,
      tools: runtime.tools,
      workspace: config.workspace.value,
      mcpServers: runtime.mcpServers,
      ...(runtime.instructionFiles === undefined ? {} : { instructionFiles: runtime.instructionFiles }),
      ...(runtime.hooks === undefined ? {} : { hooks: runtime.hooks }),
      // Tracing fails alone: it never stops a task's tape (docs/pitfalls.md #95).
      ...(otel === undefined
        ? {}
        : { onFrame: observeApart("tracing (--otel)", otel.observer, io.stderr, styles) }),
      ...(flags.concurrency === undefined ? {} : { concurrency: flags.concurrency }),
      ...(flags.stallTimeout === undefined ? {} : { stallTimeoutMs: flags.stallTimeout }),
      tapeExtras: tapeExtrasFor(config, runtime.mcpTools),
      ...copiesOptions(copies),
      secrets: [...secretsOf(config), ...runtime.secrets],
      onNotice: (notice) => notices.say(notice),
      onTask: (event) => {
        if (event.type !== "finished" || (event.result.reason === "cancelled" && controller.signal.aborted))
          return;
        io.stdout.write(`${describeLine(toResultLine(event.result, io.cwd), styles)}\n`);
        if (event.result.workspaceDropped === true && !toldDropped) {
          toldDropped = true;
          io.stderr.write(`${droppedCopyLine("eddy worker")}\n`);
        }
      },
    });
    copies.start();
    if (target.notice !== undefined) io.stderr.write(`${styles.dim(target.notice)}\n`);
    io.stderr.write(`eddy worker: serving the queue at ${where(flags.queue)}; Ctrl-C stops it\n`);
    await new Promise<void>((resolve) => {
      const remove = io.onSignal(() => {
        remove();
        resolve();
      });
    });
    controller.abort("the worker is stopping");
    await worker.close();
    const refused =
      notices.refused > REFUSALS_SAID
        ? `; ${notices.refused.toLocaleString("en-US")} jobs refused in all`
        : "";
    io.stderr.write(`eddy worker: stopped (tasks in flight went back to the queue${refused})\n`);
    return CANCELLED;
  } finally {
    copies.stop();
    await otel?.shutdown();
    await target.close();
    await runtime.close();
  }
}

/**
 * Where a batch's task copies go, and what tells the copies folders which are in use: a worker
 * never knows a batch is over, so its folders go once idle (docs/decisions.md #42). The batch id
 * comes from the job: the folder is checked to be this user's own (src/util/make-dir.ts).
 */
function copiesOptions(copies: WorkerCopies): Pick<BatchWorkerOptions, "workspaces" | "onJob"> {
  return {
    workspaces: (batch) => copies.folderFor(batch),
    onJob: (event) => (event.type === "started" ? copies.started(event.batch) : copies.ended(event.batch)),
  };
}

/** A worker serves tasks that may name their own model: only the key check applies up front. */
function taskModelsAllowed(config: EffectiveConfig): EffectiveConfig {
  return config.model.value === null
    ? { ...config, model: { value: "(per task)", source: "default" } }
    : config;
}

/** HOST:PORT of a Redis URL (never its password). */
function where(url: string): string {
  const parsed = new URL(url);
  return `${parsed.hostname}:${parsed.port || "6379"}`;
}
