/**
 * The run a session inherits: the thread's last run, when an earlier session or process (another
 * chat, `eddy run --thread`, a served run) left it waiting for decisions on calls it deferred
 * (`approve: "defer"`). A session that starts on the thread decides them with `decide`, which
 * resumes that run from its tape, as it does its own turns (docs/architecture.md, "Sessions").
 *
 * The thread's log names the tape. The log is a file in the workspace, so the tape it names is read
 * as the untrusted input it is — a regular file, bounded, parsed (src/replay/tape.ts) — and taken
 * only when it records that same run, on that same thread, ended waiting for approval; the calls
 * come from the tape, as its run recorded them, so what the user decides is what would run.
 */
import { resolve } from "node:path";
import type { ThreadStore } from "../context/threads.js";
import { describeError } from "../errors.js";
import type { Frame } from "../frames/frame.js";
import { readTape, type Tape } from "../replay/tape.js";
import { realPathInside } from "../util/inside.js";

/** A call the inherited run waits for a decision on. */
export interface PendingCall {
  call_id: string;
  name: string;
  /** The arguments as the model produced them. */
  arguments: string;
}

/** The thread's last run, waiting for decisions: its tape, and the calls. */
export interface WaitingRun {
  runId: string;
  /** The tape's path (resolved against the workspace). */
  tape: string;
  calls: PendingCall[];
}

/**
 * The thread's last run when it waits for decisions: the run to continue, or — when its tape is
 * missing or does not record that run waiting — why it cannot be (`problem`, one line naming the
 * tape). Undefined when the last run does not wait (or the thread has no run).
 */
export async function findWaitingRun(
  store: ThreadStore,
  thread: string,
  workspace: string,
): Promise<WaitingRun | { runId: string; problem: string } | undefined> {
  const log = await store.read(thread).catch(() => undefined);
  const run = log?.runs.at(-1);
  const outcome = run?.outcome;
  if (run === undefined || outcome?.reason !== "awaiting_approval") return undefined;
  const runId = run.run_id;
  if (outcome.tape === undefined) return { runId, problem: "the thread's log names no tape for it" };
  // The log is a file of the workspace, like the tapes it names: a tape it names elsewhere (a
  // hand-edited log's /etc/shadow) is not read, and not even said to exist or not.
  const path = resolve(workspace, outcome.tape);
  if (realPathInside(workspace, path) === undefined)
    return {
      runId,
      problem: `its tape ${path} is not inside the workspace (nor through a symlink): not read; continue it with eddy resume TAPE`,
    };
  let tape: Tape;
  try {
    tape = readTape(path);
  } catch (err) {
    return { runId, problem: `its tape cannot be read: ${describeError(err)}` };
  }
  const ended = tape.frames.findLast((f) => f.type === "run_ended");
  if (tape.header.spec.thread !== thread || tape.header.run_id !== runId)
    return { runId, problem: `its tape ${path} records another run` };
  if (ended?.type !== "run_ended" || ended.reason !== "awaiting_approval")
    return { runId, problem: `its tape ${path} does not end waiting for approval (resumed elsewhere?)` };
  return { runId, tape: path, calls: waitingCalls(tape.frames, ended.pending_calls ?? []) };
}

/**
 * The calls `ids` (a run's `pending_calls`) as `frames` recorded them, with the arguments they were
 * deferred with — an approval question's, which a hook may have rewritten from the model's
 * `tool_call` — and a sub-agent's call (`AGENT_CALL/SUB_CALL`) found in its `tool_deferred` frame's
 * sub-run. A call not found is named `(unknown)`.
 */
export function waitingCalls(frames: readonly Frame[], ids: readonly string[]): PendingCall[] {
  return ids.map((id) => findCall(frames, id) ?? { call_id: id, name: "(unknown)", arguments: "" });
}

function findCall(frames: readonly Frame[], id: string): PendingCall | undefined {
  const slash = id.indexOf("/");
  if (slash > 0) {
    const agentCall = id.slice(0, slash);
    const deferred = frames.findLast((f) => f.type === "tool_deferred" && f.call_id === agentCall);
    if (deferred?.type !== "tool_deferred") return undefined;
    const inner = findCall(deferred.subrun.frames, id.slice(slash + 1));
    return inner === undefined ? undefined : { ...inner, call_id: id };
  }
  const call = frames.findLast(
    (f) => (f.type === "approval_requested" || f.type === "tool_call") && f.call_id === id,
  );
  if (call?.type !== "approval_requested" && call?.type !== "tool_call") return undefined;
  return { call_id: id, name: call.name, arguments: call.arguments };
}
