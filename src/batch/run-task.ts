/**
 * One task of a batch, start to finish: take its tape into account (a finished tape is its result;
 * an unfinished one is resumed, src/batch/resume.ts), give it its own workspace when asked, run
 * it with the batch's defaults under the task's own settings, record its tape, and say how it
 * ended. Used by the in-process pool (pool.ts) and by queue workers alike.
 */
import { randomUUID } from "node:crypto";
import { existsSync, lstatSync, readdirSync, rmdirSync, rmSync } from "node:fs";
import { join, resolve } from "node:path";
import { describeError, EddyError } from "../errors.js";
import type { Frame, FrameError, McpServerSummary, RunEndedFrame, RunEndReason } from "../frames/frame.js";
import type { ApprovalHandler } from "../loop/approvals.js";
import type { FrameObserver } from "../loop/frame-channel.js";
import type { ToolHooks } from "../loop/hooks.js";
import { type InstructionFile, withInstructionFiles } from "../loop/instruction-files.js";
import type { RunDeps, RunHandle } from "../loop/options.js";
import type { Policy } from "../loop/policy.js";
import { runAgent } from "../loop/run.js";
import {
  budgetOverruns,
  mergeRunSpecs,
  type PartialRunSpec,
  type RunSpec,
  resolveRunSpec,
  withinBudgets,
} from "../loop/run-spec.js";
import type { Usage } from "../protocol/types.js";
import type { Provider } from "../provider/provider.js";
import { createTapeHeader, type TapeHeaderExtras } from "../replay/header.js";
import type { Tape, TapeHeader, TapeResume } from "../replay/tape.js";
import { createToolRegistry, type ToolRegistry } from "../tools/registry.js";
import { isInside } from "../tools/workspace.js";
import { BATCH_DEFAULTS } from "./defaults.js";
import { planResume, resumeRun } from "./resume.js";
import type { TapeStore, TapeWriter } from "./tape-store.js";
import { type BatchTask, tapeFileName } from "./task.js";
import { copyWorkspace, workspaceCopyFailed } from "./workspace-copy.js";

/** How one task ended: its run's outcome, plus where its tape (and kept workspace) is. */
export interface BatchResult {
  id: string;
  reason: RunEndReason;
  outputText: string;
  /** The terminal tool's arguments or the parsed structured output. */
  result?: unknown;
  usage: Usage;
  turns: number;
  toolCalls: number;
  /** From `run_started` to `run_ended` (for a resumed run, including the time it was down). */
  durationMs: number;
  /** Where the tape is (`TapeStore.location`), when the batch keeps tapes. */
  tape?: string;
  error?: FrameError;
  /** The task's `metadata`, as given. */
  metadata?: Record<string, unknown>;
  /**
   * The task's own workspace, kept because the task did not succeed (`workspaces`): failed (while
   * fewer than `maxKeptWorkspaces` copies are kept), or cancelled with a tape to resume from.
   */
  workspace?: string;
  /** The task failed, but its copy was removed: `maxKeptWorkspaces` copies were kept already. */
  workspaceDropped?: boolean;
  /** Where the run was resumed, when it was. */
  resumes?: TapeResume[];
  /** Special files (FIFOs, sockets, devices) its workspace copy left out, workspace-relative. */
  skippedFiles?: string[];
}

/** What running a task needs (the pool's options, made concrete). */
export interface TaskContext {
  /** The batch's spec: every task's own fields are merged over it (`mergeRunSpecs`). */
  spec: PartialRunSpec;
  /** What the batch's invocation allows (checked for every task's tools). @defaultValue the tools as given */
  policy?: Policy;
  /** The provider every request goes through (rate-limited when the batch is). */
  provider: Provider;
  /** A fresh registry for one task, so a tool's per-run state and `dispose` stay with it. */
  tools?: (task: BatchTask, workspace: string) => ToolRegistry;
  /** One registry every task shares (never disposed by a task). @defaultValue none */
  sharedTools?: ToolRegistry;
  /** Where tasks run (each task's own copy with `workspaces`). @defaultValue process.cwd() */
  workspace?: string;
  /** Values masked in every frame. @defaultValue none */
  secrets?: readonly string[];
  /**
   * Reads a task's instruction files (AGENTS.md, `findInstructionFiles`) from the workspace it runs
   * in — its own copy with `workspaces` (`copyOf`: the workspace it copies) — for a fresh start;
   * they go before its instructions, and `run_started.instruction_files` lists them. A resumed
   * task keeps the instructions its tape recorded. @defaultValue none read
   */
  instructionFiles?: (workspace: string, copyOf?: string) => readonly InstructionFile[];
  /** Decides calls that need approval when the policy says `ask`. @defaultValue none */
  onApproval?: ApprovalHandler;
  /**
   * The tool-call hooks of a task's run, given the workspace it runs in (its own copy with
   * `workspaces`): this process's, like the policy — a task never brings its own. A resumed task
   * gets them too (`ResumeOptions.hooks`). @defaultValue none
   */
  hooks?: (workspace: string) => ToolHooks;
  /** The MCP servers the tools come from (`run_started.mcp_servers`). @defaultValue none */
  mcpServers?: readonly McpServerSummary[];
  /** Sees every frame of every task's run (a tracer, a live view). @defaultValue none */
  onFrame?: FrameObserver;
  tapes?: TapeStore;
  tapeExtras?: Omit<TapeHeaderExtras, "provider" | "policy" | "mcpServers">;
  /** Each task gets its own copy of `workspace` in this folder (`FOLDER/ID`). @defaultValue none: tasks share `workspace` */
  workspaces?: string;
  /**
   * Failed tasks' copies kept in `workspaces` at most (the folder's other copies, not in flight in
   * this process, count); a later failure's copy is removed (`workspaceDropped`).
   * @defaultValue BATCH_DEFAULTS.maxKeptWorkspaces (20)
   */
  maxKeptWorkspaces?: number;
  retry?: (previous: BatchResult) => boolean;
  signal?: AbortSignal;
}

/** Whether a task that ended so has succeeded (anything else is a failure `retry` may run again). */
export function succeeded(reason: RunEndReason): boolean {
  return reason === "completed" || reason === "terminal_tool" || reason === "stop_condition";
}

/** Runs one task (see the module comment). Never throws for the run's own failures. */
export async function runTask(task: BatchTask, ctx: TaskContext): Promise<BatchResult> {
  const previous = await readPrevious(task.id, ctx.tapes);
  const decision = decide(task, previous, ctx);
  if (decision.kind === "reuse") return decision.result;
  let copy: TaskCopy;
  try {
    copy = taskWorkspace(task, ctx, decision.kind === "resume");
  } catch (err) {
    // A copy refused (not strictly inside the copies folder) or failed: the task fails, never the batch.
    if (EddyError.isInstance(err) && err.fault === "user") return refusedTask(task, err);
    return { ...resultOf(task, undefined, undefined, undefined, undefined), error: workspaceCopyFailed(err) };
  }
  const { workspaces } = ctx;
  const workspace = copy.dir;
  if (workspaces === undefined || workspace === undefined)
    return (await runIn(task, ctx, decision, copy)).result;
  const key = resolve(workspace);
  inFlight.add(key);
  try {
    return finishWorkspace(await runIn(task, ctx, decision, copy), ctx, workspaces, workspace);
  } catch (err) {
    // A task that could not be run (an internal error) resumes from its tape, with its copy, if it
    // has one; else nothing will use the copy. The error is the task's, not the removal's.
    if (ctx.tapes === undefined) {
      try {
        removeCopy(workspaces, workspace);
      } catch {
        // Said by the error thrown: the task could not be run.
      }
    }
    throw err;
  } finally {
    inFlight.delete(key);
  }
}

/** A task's own workspace: where it is (none when tasks share one), and what its copy left out. */
interface TaskCopy {
  dir: string | undefined;
  skipped?: string[];
}

/** How a task's run went, for what becomes of its copy. */
interface TaskRun {
  result: BatchResult;
  /** Refused before it ran (its spec, the policy, its tape could not be opened): nothing to keep. */
  refused: boolean;
  /** Its run started (`run_started` went to its tape): a cancelled one can resume. */
  started: boolean;
}

/** Task copies this process is running a task in (not counted as kept ones), by absolute path. */
const inFlight = new Set<string>();

/** Runs the task in its workspace (`copy.dir`, else the shared one); never removes it. */
async function runIn(
  task: BatchTask,
  ctx: TaskContext,
  decision: Decision,
  copy: TaskCopy,
): Promise<TaskRun> {
  const workspace = copy.dir;
  const own = ctx.tools?.(task, workspace ?? ctx.workspace ?? process.cwd());
  const registry = own ?? ctx.sharedTools ?? createToolRegistry([]);
  const seen: { started?: Frame; ended?: RunEndedFrame } = {};
  let writer: TapeWriter | undefined;
  // Write-ahead: a call's `tool_started` is stored before the tool runs, so a process that dies
  // during the call leaves a tape that says so, and resuming never runs it again (resume.ts).
  const beforeToolRun = (signal: AbortSignal) => writer?.flush(signal) ?? Promise.resolve();
  let handle: RunHandle | undefined;
  let observerFailed = false;
  const onFrame = (frame: Frame) => {
    if (frame.type === "run_started") seen.started = frame;
    else if (frame.type === "run_ended") seen.ended = frame;
    writer?.write(frame);
    if (ctx.onFrame === undefined || observerFailed) return;
    // The caller's observer fails alone: thrown from here, it stopped the task's tape too (the
    // run's one observer, src/loop/run.ts), and the tape never got its run_ended (docs/pitfalls.md
    // #95). As with RunDeps.onFrame, the run is cancelled naming it; the tape goes on to its end.
    try {
      ctx.onFrame(frame);
    } catch (err) {
      observerFailed = true;
      handle?.cancel(`a frame observer (onFrame) failed: ${describeError(err)}`);
    }
  };
  let header: TapeHeader | undefined;
  try {
    if (decision.kind === "resume") {
      const resumed = resumeTask(decision.tape, ctx, registry, workspace, { onFrame, beforeToolRun }, () =>
        writer?.commit(),
      );
      header = resumed.header;
      handle = resumed;
    } else {
      handle = startTask(task, ctx, registry, workspace, { onFrame, beforeToolRun });
      header = tapeHeader(handle.spec, ctx);
    }
    // Frames only flow from the next tick on, so the tape is open before the first one.
    writer = ctx.tapes?.open(task.id, header, decision.kind === "resume" ? "on_commit" : "now");
    for await (const _ of handle);
    await handle.result;
  } catch (err) {
    // A run whose tape could not be opened (a symlink planted there) has started: it is cancelled
    // before its first request and ended, never left running unrecorded.
    handle?.cancel(describeError(err));
    await handle?.result.catch(() => {});
    // A task whose spec the batch's policy refuses, or that is invalid once merged: its own failure.
    if (!EddyError.isInstance(err) || err.fault !== "user") throw err;
    return { result: refusedTask(task, err), refused: true, started: seen.started !== undefined };
  } finally {
    await writer?.close();
    // Only a registry made for this task is released: a shared one still serves the others.
    await own?.dispose();
  }
  const result = resultOf(task, seen.started, seen.ended, ctx.tapes?.location(task.id), header?.resumes);
  if (copy.skipped !== undefined && copy.skipped.length > 0) result.skippedFiles = copy.skipped;
  return { result, refused: false, started: seen.started !== undefined };
}

/** How a task's run feeds its tape: every frame, and the wait for its `tool_started` to be stored. */
interface TapeHooks {
  onFrame: (frame: Frame) => void;
  beforeToolRun: (signal: AbortSignal) => Promise<void>;
}

/** A fresh run of the task: the batch's spec with the task's over it. */
function startTask(
  task: BatchTask,
  ctx: TaskContext,
  registry: ToolRegistry,
  workspace: string | undefined,
  hooks: TapeHooks,
): RunHandle {
  // The run id is the tape's name in every frame; fixing it here lets the header carry it.
  // Which instruction files are read is this process's to say (its workspace, the task's copy), never a task's.
  const { instruction_files: _claimed, ...own } = task.spec;
  // Budgets too are the invocation's: a task (a line of a file, a queue job) may lower them, never raise them.
  const merged: PartialRunSpec = {
    ...withinBudgets(mergeRunSpecs(ctx.spec, own), ctx.spec),
    run_id: `run_${randomId()}`,
  };
  // Stateless (--stateless: nothing stored at the provider) is the invocation's retention choice:
  // a task or a queue job may not turn it into a chained run.
  if (ctx.spec.mode === "stateless") merged.mode = "stateless";
  if (ctx.instructionFiles !== undefined) {
    const root = workspace ?? ctx.workspace ?? process.cwd();
    const copyOf = ctx.workspaces === undefined ? undefined : (ctx.workspace ?? process.cwd());
    Object.assign(merged, withInstructionFiles(merged.instructions, ctx.instructionFiles(root, copyOf)));
  }
  const spec = resolveRunSpec(merged, `task ${task.id}`);
  return runAgent(spec, { ...runDeps(ctx, registry, workspace), ...hooks });
}

/** The task's run resumed from its tape, under the batch's policy. */
function resumeTask(
  tape: Tape,
  ctx: TaskContext,
  registry: ToolRegistry,
  workspace: string | undefined,
  hooks: TapeHooks,
  onResumed: () => void,
): RunHandle & { header: TapeHeader } {
  // A tape (in the batch folder, or in Redis for a worker) cannot raise a budget either: it is
  // resumed as recorded, so one above this invocation's is refused, not cut down.
  const over = budgetOverruns(tape.header.spec, ctx.spec)[0];
  if (over !== undefined)
    throw new EddyError(
      "invalid_run_spec",
      `the task's tape asks ${over.field} ${over.asked}, above this invocation's limit of ${over.limit}: give the batch (or the worker) a higher ${over.field} to resume it`,
      { fault: "user", details: { field: over.field } },
    );
  const deps = runDeps(ctx, registry, workspace);
  return resumeRun(tape, {
    provider: deps.provider,
    registry,
    workspace: deps.workspace ?? process.cwd(),
    ...(ctx.policy === undefined ? {} : { policy: ctx.policy }),
    ...(ctx.onApproval === undefined ? {} : { onApproval: ctx.onApproval }),
    ...(ctx.signal === undefined ? {} : { signal: ctx.signal }),
    ...(ctx.secrets === undefined ? {} : { secrets: ctx.secrets }),
    ...(deps.hooks === undefined ? {} : { hooks: deps.hooks }),
    budgets: ctx.spec,
    ...hooks,
    onResumed,
  });
}

function runDeps(ctx: TaskContext, registry: ToolRegistry, workspace: string | undefined): RunDeps {
  const deps: RunDeps = { provider: ctx.provider, tools: registry };
  const root = workspace ?? ctx.workspace;
  if (root !== undefined) deps.workspace = root;
  if (ctx.policy !== undefined) deps.policy = ctx.policy;
  if (ctx.onApproval !== undefined) deps.onApproval = ctx.onApproval;
  if (ctx.signal !== undefined) deps.signal = ctx.signal;
  if (ctx.secrets !== undefined) deps.secrets = ctx.secrets;
  if (ctx.mcpServers !== undefined) deps.mcpServers = ctx.mcpServers;
  if (ctx.hooks !== undefined) deps.hooks = ctx.hooks(root ?? process.cwd());
  return deps;
}

/** The result of a task refused before it ran (its spec is invalid, or beyond the batch's policy). */
function refusedTask(task: BatchTask, err: EddyError): BatchResult {
  const result = resultOf(task, undefined, undefined, undefined, undefined);
  result.reason = "invalid_request";
  result.error = { code: err.code, message: err.message };
  return result;
}

type Decision = { kind: "reuse"; result: BatchResult } | { kind: "resume"; tape: Tape } | { kind: "start" };

/**
 * What to do given the task's tape: a run that ended by itself is the task's result (unless
 * `retry` wants it again: resumed after a `provider_error`, restarted otherwise); a run that was
 * cut short (killed, cancelled) is resumed; no tape, a fresh start.
 */
function decide(task: BatchTask, previous: Tape | undefined, ctx: TaskContext): Decision {
  if (previous === undefined) return { kind: "start" };
  const ended = previous.frames.find((f): f is RunEndedFrame => f.type === "run_ended");
  if (ended !== undefined && ended.reason !== "cancelled") {
    const started = previous.frames.find((f) => f.type === "run_started");
    const result = resultOf(task, started, ended, ctx.tapes?.location(task.id), previous.header.resumes);
    if (ctx.retry?.(result) !== true) return { kind: "reuse", result };
    if (ended.reason !== "provider_error") return { kind: "start" };
  }
  return planResume(previous).status === "resumable" ? { kind: "resume", tape: previous } : { kind: "start" };
}

/** The task's old tape; one that cannot be read (cut mid-header, hand-edited) means a fresh start. */
async function readPrevious(id: string, tapes: TapeStore | undefined): Promise<Tape | undefined> {
  if (tapes === undefined) return undefined;
  try {
    return await tapes.read(id);
  } catch {
    return undefined;
  }
}

function tapeHeader(spec: RunSpec, ctx: TaskContext): TapeHeader {
  return createTapeHeader(spec, {
    ...ctx.tapeExtras,
    provider: ctx.provider,
    ...(ctx.policy === undefined ? {} : { policy: ctx.policy }),
    ...(ctx.mcpServers === undefined ? {} : { mcpServers: ctx.mcpServers }),
  });
}

function randomId(): string {
  return randomUUID().replace(/-/g, "");
}

/** The task's result from its run's first and last frames. */
export function resultOf(
  task: BatchTask,
  started: Frame | undefined,
  ended: RunEndedFrame | undefined,
  tape: string | undefined,
  resumes: TapeResume[] | undefined,
): BatchResult {
  const result: BatchResult = {
    id: task.id,
    reason: ended?.reason ?? "failed",
    outputText: ended?.output_text ?? "",
    usage: ended?.usage ?? ({ input_tokens: 0, output_tokens: 0, total_tokens: 0 } as Usage),
    turns: ended?.turns ?? 0,
    toolCalls: ended?.tool_calls ?? 0,
    durationMs: ended !== undefined && started !== undefined ? Math.max(0, ended.ts - started.ts) : 0,
  };
  if (ended === undefined)
    result.error = { code: "internal_error", message: "the run ended without run_ended" };
  else if (ended.error !== undefined) result.error = ended.error;
  if (ended?.result !== undefined) result.result = ended.result;
  if (tape !== undefined) result.tape = tape;
  if (task.metadata !== undefined) result.metadata = task.metadata;
  if (resumes !== undefined && resumes.length > 0) result.resumes = resumes;
  return result;
}

/**
 * The task's own copy of the workspace (`workspaces/ID`), when the batch gives each task one. A
 * resumed task keeps the copy its first process left (the files its recorded tools wrote); a fresh
 * start gets a new copy.
 */
function taskWorkspace(task: BatchTask, ctx: TaskContext, resuming: boolean): TaskCopy {
  if (ctx.workspaces === undefined) return { dir: ctx.workspace };
  const dir = join(ctx.workspaces, copyName(task.id));
  if (resuming && existsSync(dir)) return { dir };
  removeCopy(ctx.workspaces, dir);
  // Special files (FIFOs, sockets, devices) are left out and listed; a failed copy throws one line.
  return { dir, skipped: copyWorkspace(ctx.workspace ?? process.cwd(), dir).skipped };
}

/**
 * What becomes of a task's copy once its run is over (docs/decisions.md #42). Kept, and named in
 * the result: a failed task's, while fewer than `maxKeptWorkspaces` copies are kept in the folder
 * (else removed, `workspaceDropped`); a cancelled task's whose run started and has a tape, which
 * resumes in it. Removed: a successful task's, a refused task's (it never ran), a cancelled one's
 * that has nothing to resume from.
 */
function finishWorkspace(run: TaskRun, ctx: TaskContext, workspaces: string, workspace: string): BatchResult {
  const { result } = run;
  const keep =
    run.refused || succeeded(result.reason)
      ? false
      : result.reason === "cancelled"
        ? run.started && ctx.tapes !== undefined
        : keptCopies(workspaces) < (ctx.maxKeptWorkspaces ?? BATCH_DEFAULTS.maxKeptWorkspaces);
  if (keep) {
    result.workspace = workspace;
    return result;
  }
  removeCopy(workspaces, workspace);
  if (!run.refused && !succeeded(result.reason) && result.reason !== "cancelled")
    result.workspaceDropped = true;
  return result;
}

/** The task copies in `workspaces` that no task of this process runs in: kept ones (or another process's). */
function keptCopies(workspaces: string): number {
  let kept = 0;
  for (const entry of readdirSync(workspaces, { withFileTypes: true }))
    if (entry.isDirectory() && !inFlight.has(resolve(workspaces, entry.name))) kept++;
  return kept;
}

/** The name of a task's copy in the copies folder (its tape's name, without `.tape`). */
export function copyName(taskId: string): string {
  return tapeFileName(taskId).replace(/\.tape$/, "");
}

/**
 * Removes every task copy in `workspaces` that `keep` does not name (`copyName`s: the copies
 * failed tasks' results name, and unfinished tasks', which resume in them), then the folder itself
 * if it is empty. What else is there is no run's any more: a refused or finished task's, one an
 * earlier process left. Returns the names kept; an entry that is not a folder is left alone.
 */
export function sweepTaskWorkspaces(workspaces: string, keep: ReadonlySet<string>): string[] {
  const kept: string[] = [];
  for (const entry of readdirSync(workspaces, { withFileTypes: true })) {
    if (!entry.isDirectory()) continue;
    if (keep.has(entry.name)) kept.push(entry.name);
    else removeCopy(workspaces, join(workspaces, entry.name));
  }
  try {
    rmdirSync(workspaces);
  } catch {
    // Not empty: copies kept, or another entry.
  }
  return kept;
}

/**
 * Removes a task's copy (`removeCopy`) from outside a run: a queue worker's, when the worker stops
 * and hands the task back (it resumes wherever a worker takes it, from a fresh copy).
 */
export function removeTaskWorkspace(workspaces: string, dir: string): void {
  removeCopy(workspaces, dir);
}

/**
 * Removes a task's copy — only a directory strictly below `workspaces` (never `workspaces` itself,
 * a path that climbs out, or a symlink: the ids that build the path come from a task file or a
 * queue job, docs/architecture.md "One home for a run's settings").
 */
function removeCopy(workspaces: string, dir: string): void {
  const parent = resolve(workspaces);
  const target = resolve(dir);
  if (target === parent || !isInside(parent, target)) {
    throw new EddyError(
      "path_outside_workspace",
      `refusing to remove ${target}: it is not a task copy inside ${parent}`,
      {
        fault: "user",
      },
    );
  }
  const stat = lstatSync(target, { throwIfNoEntry: false });
  if (stat === undefined) return;
  if (!stat.isDirectory()) {
    throw new EddyError(
      "path_outside_workspace",
      `refusing to remove ${target}: a task copy is a directory, this is not`,
      {
        fault: "user",
      },
    );
  }
  rmSync(target, { recursive: true, force: true });
}
