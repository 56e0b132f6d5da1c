/**
 * The worker thread behind `worker-task.ts`: runs the tasks it is sent, one message at a time,
 * and answers with the result or the error as plain data. Nothing here aborts on its own: the
 * parent terminates the thread to cancel.
 */
import { parentPort } from "node:worker_threads";
import { assertNever } from "../../errors.js";
import { type GrepRequest, searchWorkspace } from "./grep-search.js";
import { applyChunksTask, type ChunksInput } from "./patch-apply.js";
import { serializeError, type WorkerReply, type WorkerTaskMessage } from "./worker-task.js";

const never = new AbortController().signal;

async function run(message: WorkerTaskMessage): Promise<unknown> {
  switch (message.task) {
    case "grep":
      return searchWorkspace(message.input as GrepRequest, never);
    case "apply_chunks":
      return applyChunksTask(message.input as ChunksInput);
    default:
      return assertNever(message.task, "worker task");
  }
}

parentPort?.on("message", (message: WorkerTaskMessage) => {
  run(message).then(
    (value) => parentPort?.postMessage({ ok: true, value } satisfies WorkerReply),
    (error: unknown) =>
      parentPort?.postMessage({ ok: false, error: serializeError(error) } satisfies WorkerReply),
  );
});
