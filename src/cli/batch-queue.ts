/**
 * `eddy batch … --queue redis://HOST:PORT`: the coordinator. The tasks go on the BullMQ queue
 * (with the run settings given as flags here; the rest comes from each worker's own flags,
 * environment and config file, its provider and keys included); each result and tape that comes
 * back is written into the batch folder as on one machine.
 */
import { renameSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { enqueueBatch } from "../batch/queue.js";
import { type BatchTask, tapeFileName } from "../batch/task.js";
import type { BatchPlan } from "./batch-command.js";
import { describeQueueNotice } from "./batch-progress.js";
import type { CliIo } from "./run-command.js";
import { readSchema } from "./run-command.js";

/** Runs the plan's pending tasks on the queue at `url`; returns when each has a result or on Ctrl-C. */
export async function queuedBatch(plan: BatchPlan, url: string, io: CliIo): Promise<void> {
  const { dir, progress, flags } = plan;
  io.stderr.write(
    `eddy batch: ${plan.pending.length} task${plan.pending.length === 1 ? "" : "s"} queued for eddy worker (batch ${dir.id})\n`,
  );
  await enqueueBatch({
    url,
    batch: dir.id,
    tasks: plan.pending.map((task) => withFlagSettings(task, plan)),
    retrying: plan.retrying,
    ...(flags.rpm === undefined ? {} : { rpm: flags.rpm }),
    ...(flags.tpm === undefined ? {} : { tpm: flags.tpm }),
    workspacePerTask: flags.workspacePerTask === true,
    signal: plan.signal,
    onStart: (id) => progress.started(id),
    onNotice: (notice) => io.stderr.write(`${describeQueueNotice("eddy batch", notice)}\n`),
    onResult: (result, tape) => {
      const path = join(dir.path, "tapes", tapeFileName(result.id));
      if (tape === undefined) delete result.tape;
      else {
        // The tape first, whole: a results line never points at a missing or partial tape.
        writeFileSync(`${path}.tmp`, tape);
        renameSync(`${path}.tmp`, path);
        result.tape = path;
      }
      progress.finished(dir.append(result));
    },
  });
}

/** The task with the run settings this command was given as flags (the task's own win). */
function withFlagSettings(task: BatchTask, plan: BatchPlan): BatchTask {
  const { config, flags } = plan;
  const out: BatchTask = { ...task };
  if (out.model === undefined && config.model.source === "flag") out.model = config.model.value;
  if (
    out.instructions === undefined &&
    config.instructions.source === "flag" &&
    config.instructions.value !== undefined
  )
    out.instructions = config.instructions.value;
  if (out.maxTurns === undefined && config.maxTurns.source === "flag") out.maxTurns = config.maxTurns.value;
  if (out.maxToolCalls === undefined && config.maxToolCalls.source === "flag")
    out.maxToolCalls = config.maxToolCalls.value;
  if (out.outputSchema === undefined && flags.schema !== undefined)
    out.outputSchema = readSchema(flags.schema);
  return out;
}
