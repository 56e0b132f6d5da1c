/**
 * `eddy batch … --queue redis://HOST:PORT`: the coordinator. The tasks go on the BullMQ queue,
 * each a partial spec: the task's own fields over the spec fields given here as flags; the rest
 * comes from each worker's own flags, environment and config file, its provider, keys and policy
 * included (permissions never travel through the queue). Each result and tape that comes back is
 * written into the batch folder as on one machine.
 */
import { renameSync } from "node:fs";
import { join } from "node:path";
import { enqueueBatch } from "../batch/queue.js";
import { type BatchTask, tapeFileName } from "../batch/task.js";
import { mergeRunSpecs, withinBudgets } from "../loop/run-spec.js";
import { writeRegularFileSync } from "../util/regular-file.js";
import type { BatchPlan } from "./batch-command.js";
import { describeQueueNotice } from "./batch-progress.js";
import { specOf } from "./run-settings.js";

/** Runs the plan's pending tasks on the queue at `url`; returns when each has a result or on Ctrl-C. */
export async function queuedBatch(plan: BatchPlan, url: string): Promise<void> {
  const { dir, progress, flags } = plan;
  progress.notice(
    `eddy batch: ${plan.pending.length} task${plan.pending.length === 1 ? "" : "s"} queued for eddy worker (batch ${dir.id})`,
  );
  await enqueueBatch({
    url,
    batch: dir.id,
    tasks: plan.pending.map((task) => withFlagSpec(task, plan)),
    retrying: plan.retrying,
    ...(flags.rpm === undefined ? {} : { rpm: flags.rpm }),
    ...(flags.tpm === undefined ? {} : { tpm: flags.tpm }),
    workspacePerTask: flags.workspacePerTask === true,
    signal: plan.signal,
    onStart: (id) => progress.started(id),
    onNotice: (notice) => progress.notice(describeQueueNotice("eddy batch", notice)),
    onResult: (result, tape) => {
      const path = join(dir.path, "tapes", tapeFileName(result.id));
      if (tape === undefined) delete result.tape;
      else {
        // The tape first, whole: a results line never points at a missing or partial tape.
        // Never through a symlink planted as `ID.tape.tmp` (docs/batch.md); the rename replaces one.
        const how = { what: "the tape", code: "invalid_config", noFollow: true } as const;
        writeRegularFileSync(`${path}.tmp`, tape, how);
        renameSync(`${path}.tmp`, path);
        result.tape = path;
      }
      progress.finished(dir.append(result), result.workspaceDropped === true);
    },
  });
}

/**
 * The task with the settings this command was given as flags merged under it (the task's own
 * win): a worker merges the job's spec over its own settings, so the coordinator's flags beat a
 * worker's config file, as they would on one machine. A budget given here as a flag
 * (`--max-turns`, …) is a ceiling a task cannot raise; each worker then holds the job to its own.
 */
function withFlagSpec(task: BatchTask, plan: BatchPlan): BatchTask {
  const flags = specOf(plan.config, { onlyFlags: true });
  if (plan.schema !== undefined) flags.output_schema = plan.schema;
  return { ...task, spec: withinBudgets(mergeRunSpecs(flags, task.spec), flags, { onlySet: true }) };
}
