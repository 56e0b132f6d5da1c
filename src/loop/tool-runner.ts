/**
 * Runs a turn's tool calls while the response may still be streaming (docs/decisions.md #3).
 * Every accepted call gets exactly `tool_call` → [`approval_requested` → `approval_decided`] →
 * `tool_started` → `tool_ended`, refused ones included.
 *
 * Calls start in the order they were submitted (completion order). At most `concurrency` run at
 * once — 1 unless the run allows parallel calls — and a tool that is not parallel-safe runs alone:
 * it waits for the running calls to end, and later calls wait for it. A call needing approval asks
 * when its turn to start comes, so prompts come in order and one at a time.
 *
 * Frame order is deterministic given the tools' completion times: `tool_call` is emitted when the
 * call is submitted, `tool_started` when it gets its turn, refusals end synchronously. Only a
 * tool's own duration (and an approver's answer) decides where its `tool_ended` lands — which a
 * replay reproduces by releasing the recorded output (and decision) at that point.
 */
import {
  frame,
  type SubRun,
  type ToolCallFrame,
  type ToolEndedFrame,
  type ToolStartedFrame,
} from "../frames/frame.js";
import type { AssembledCall } from "../provider/assembler/index.js";
import { refusedToolOutput, type ToolCallResult } from "../tools/execute.js";
import type { ToolErrorCode } from "../tools/tool.js";
import { untilAborted } from "../util/abort.js";
import type { ApprovalDecision } from "./approvals.js";
import type { FrameChannel } from "./frame-channel.js";
import { afterToolCall, beforeToolCall, type ToolHooks } from "./hooks.js";
import type { ToolExecutor } from "./options.js";

/** A call of this turn with its answer. */
export interface AnsweredCall {
  call: AssembledCall;
  result: ToolCallResult;
}

/** A refusal decided before execution. */
export interface Refusal {
  code: ToolErrorCode;
  message: string;
}

/** How a call is run: alone or beside others, asked about first or not. */
export interface CallPolicy {
  /** The tool is not parallel-safe: it runs with no other call running. */
  exclusive: boolean;
  /** Ask `approve` before it runs. */
  needsApproval: boolean;
}

interface Task {
  call: AssembledCall;
  /** The arguments a `beforeToolCall` hook rewrote them to. */
  arguments?: string;
  refusal: Refusal | undefined;
  policy: CallPolicy;
}

export interface ToolRunnerOptions {
  channel: FrameChannel;
  turn: number;
  executor: ToolExecutor;
  workspace: string;
  signal: AbortSignal;
  outputCapBytes: number | undefined;
  /** Calls that may run at once. */
  concurrency: number;
  /** How each call is run. */
  policy: (call: AssembledCall) => CallPolicy;
  /** Asks for approval (only for calls whose policy says so). */
  approve: (call: AssembledCall) => Promise<ApprovalDecision>;
  /** The run's tool-call hooks (hooks.ts). @defaultValue none */
  hooks?: ToolHooks;
  /** Awaited between `tool_started` and the tool's run (`RunDeps.beforeToolRun`). @defaultValue none */
  beforeRun?: (signal: AbortSignal) => Promise<void>;
}

/** `askApproval`'s answer for a call whose decision is deferred to a later process. */
const DEFERRED = Symbol("deferred");

export class ToolRunner {
  private readonly queue: Task[] = [];
  /** Calls started and not yet ended (approvals included). */
  private running = 0;
  /** A call that must run alone is running. */
  private alone = false;
  private idleWaiters: (() => void)[] = [];
  /** Answered calls in the order they ended. */
  readonly answered: AnsweredCall[] = [];
  /** A tool really executed in this turn (so the request must not be retried). */
  ranAny = false;
  /**
   * Calls whose approval was deferred (`approve: "defer"`): not run, not answered; the run ends
   * `awaiting_approval` once the turn's other calls are done.
   */
  readonly deferred: AssembledCall[] = [];
  /**
   * Deferred calls of agent tools whose sub-agent ended awaiting approval, by call id: the
   * sub-run's waiting calls (its own ids) and its frames so far (they started; they are in `deferred` too).
   */
  readonly deferredSubRuns = new Map<string, { pending: string[]; subrun: SubRun }>();
  /** Set by `stopPending`: calls not started yet are answered with this refusal instead of running. */
  private stopReason: Refusal | undefined;

  constructor(private readonly options: ToolRunnerOptions) {}

  /** True while a call runs or waits for approval (the provider's idle timeout does not run then). */
  get busy(): boolean {
    return this.running > 0;
  }

  /** Accepts a completed call: emits `tool_call` now and runs (or refuses) it in turn. */
  submit(call: AssembledCall, refusal: Refusal | undefined): void {
    const callFrame: ToolCallFrame = frame("tool_call", {
      turn: this.options.turn,
      call_id: call.callId,
      item_id: call.itemId,
      name: call.name,
      arguments: call.arguments,
      output_index: call.outputIndex,
    });
    if (call.itemType !== "function_call") callFrame.item_type = call.itemType;
    this.options.channel.emit(callFrame);
    const policy =
      refusal === undefined ? this.options.policy(call) : { exclusive: false, needsApproval: false };
    this.queue.push({ call, refusal, policy });
    this.pump();
  }

  /** Calls that have not started yet will not run; they are answered with `refusal`. */
  stopPending(refusal: Refusal): void {
    this.stopReason ??= refusal;
    this.pump();
  }

  /** Resolves once every submitted call has ended. */
  drain(): Promise<void> {
    if (this.running === 0 && this.queue.length === 0) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  /** Starts what may start now, in submission order. */
  private pump(): void {
    for (;;) {
      const task = this.queue[0];
      if (task === undefined || !this.mayStart(task)) break;
      this.queue.shift();
      const refusal = task.refusal ?? this.stopReason;
      if (refusal !== undefined) {
        this.emitStarted(task);
        this.finish(task, this.refused(task, refusal));
        continue; // refusals end synchronously; go on with the next call
      }
      this.running++;
      if (task.policy.exclusive) this.alone = true;
      // Without a hook or an approval to wait for, the call starts now: `tool_started` lands right
      // after its `tool_call` however the response was chunked (the loop emits a chunk's groups in
      // one synchronous pass; bench/README.md, "The turn").
      if (this.options.hooks === undefined && !task.policy.needsApproval) void this.start(task, undefined);
      else void this.run(task);
    }
    if (this.running === 0 && this.queue.length === 0) {
      const waiters = this.idleWaiters;
      this.idleWaiters = [];
      for (const w of waiters) w();
    }
  }

  private mayStart(task: Task): boolean {
    if (this.alone) return false;
    if (task.refusal !== undefined || this.stopReason !== undefined)
      return this.running < this.options.concurrency;
    if (task.policy.exclusive) return this.running === 0;
    return this.running < this.options.concurrency;
  }

  /** Asks the hooks and the approver, then starts the call (or answers its denial). */
  private async run(task: Task): Promise<void> {
    const hooked = await this.beforeHook(task);
    // A rule (`needsApproval(args)`) judges the arguments that would run: a hook's rewrite, if any.
    const needsApproval =
      task.arguments === undefined
        ? task.policy.needsApproval
        : this.options.policy({ ...task.call, arguments: task.arguments }).needsApproval;
    const denial = hooked ?? (needsApproval ? await this.askApproval(task) : undefined);
    if (denial === DEFERRED) {
      this.deferred.push(task.call);
      this.release(task);
      return;
    }
    await this.start(task, denial);
  }

  /** Emits `tool_started` (synchronously), then runs the call — or answers `denial` — and ends it. */
  private async start(task: Task, denial: Refusal | undefined): Promise<void> {
    let result: ToolCallResult;
    this.emitStarted(task);
    if (denial !== undefined) result = this.refused(task, denial);
    else {
      this.ranAny = true;
      const { executor, workspace, signal, turn } = this.options;
      const { callId, name, itemType } = task.call;
      const args = task.arguments ?? task.call.arguments;
      const before = this.options.beforeRun?.(signal) ?? Promise.resolve();
      result = await before
        .then(
          () =>
            executor(
              { callId, name, arguments: args, ...(itemType === "function_call" ? {} : { itemType }) },
              { signal, workspace, turn },
            ),
          (err: unknown) => this.notRun(task, signal, err),
        )
        .catch((err: unknown) =>
          this.refused(task, { code: "tool_failed", message: `eddy failed to run the tool: ${String(err)}` }),
        );
      if (result.deferred !== undefined && result.subrun !== undefined && !signal.aborted) {
        // Its sub-agent waits for a decision: not answered now; the run ends awaiting approval.
        this.deferred.push(task.call);
        this.deferredSubRuns.set(callId, { pending: result.deferred, subrun: result.subrun as SubRun });
        this.release(task);
        return;
      }
      const hooks = this.options.hooks;
      if (hooks !== undefined)
        result = await afterToolCall(hooks, this.hookCall(task), result, this.options.channel, signal);
    }
    this.finish(task, result);
    this.release(task);
  }

  /** Asks the `beforeToolCall` hook; the refusal when it denies (a rewrite is kept in the task). */
  private async beforeHook(task: Task): Promise<Refusal | undefined> {
    const hooks = this.options.hooks;
    if (hooks === undefined) return undefined;
    const decided = await beforeToolCall(
      hooks,
      this.hookCall(task),
      this.options.channel,
      this.options.signal,
    );
    if ("refusal" in decided) return decided.refusal;
    if (decided.arguments !== task.call.arguments) task.arguments = decided.arguments;
    return undefined;
  }

  private hookCall(task: Task) {
    const { callId, name } = task.call;
    return { turn: this.options.turn, callId, name, arguments: task.arguments ?? task.call.arguments };
  }

  /** The call no longer holds its slot. */
  private release(task: Task): void {
    this.running--;
    if (task.policy.exclusive) this.alone = false;
    this.pump();
  }

  /**
   * Asks for approval; the refusal to answer with when the call must not run, or `DEFERRED`. The
   * call asked about is the one that would run: with the arguments a `beforeToolCall` hook
   * rewrote it to (the user approved the model's while the hook's ran).
   */
  private async askApproval(task: Task): Promise<Refusal | typeof DEFERRED | undefined> {
    const { channel, turn, signal } = this.options;
    const call = task.arguments === undefined ? task.call : { ...task.call, arguments: task.arguments };
    channel.emit(
      frame("approval_requested", { turn, call_id: call.callId, name: call.name, arguments: call.arguments }),
    );
    let decision: ApprovalDecision;
    try {
      decision = await untilAborted(this.options.approve(call), signal);
    } catch {
      decision = "deny";
    }
    if (decision === "defer" && !signal.aborted) return DEFERRED;
    if (decision === "defer") decision = "deny";
    channel.emit(frame("approval_decided", { turn, call_id: call.callId, name: call.name, decision }));
    if (signal.aborted)
      return {
        code: "cancelled",
        message: "The run was cancelled before this call started; it did not run.",
      };
    if (decision === "deny")
      return {
        code: "denied",
        message: "The user denied this call; it did not run. Ask them or try another way.",
      };
    return this.stopReason;
  }

  private emitStarted(task: Task): void {
    const started: ToolStartedFrame = frame("tool_started", {
      turn: this.options.turn,
      call_id: task.call.callId,
      name: task.call.name,
    });
    this.options.channel.emit(started);
  }

  /** The answer of a call `beforeRun` kept from running. */
  private notRun(task: Task, signal: AbortSignal, err: unknown): ToolCallResult {
    if (signal.aborted)
      return this.refused(task, {
        code: "cancelled",
        message: "The run was cancelled before this call started; it did not run.",
      });
    return this.refused(task, {
      code: "tool_failed",
      message: `eddy could not record the call's start, so it did not run it: ${String(err)}`,
    });
  }

  private refused(task: Task, refusal: Refusal): ToolCallResult {
    const cap = this.options.outputCapBytes;
    return refusedToolOutput(
      task.call.name,
      refusal.code,
      refusal.message,
      cap === undefined ? {} : { outputCapBytes: cap },
    );
  }

  private finish(task: Task, result: ToolCallResult): void {
    const ended: ToolEndedFrame = frame("tool_ended", {
      turn: this.options.turn,
      call_id: task.call.callId,
      name: task.call.name,
      ok: result.ok,
      output: result.output,
      duration_ms: Math.round(result.durationMs),
    });
    if (result.truncated) {
      ended.truncated = true;
      if (result.fullOutput !== undefined) ended.full_output = result.fullOutput;
    }
    if (result.imageUrl !== undefined) ended.image_url = result.imageUrl;
    if (result.fileChanges !== undefined && result.fileChanges.length > 0)
      ended.file_changes = result.fileChanges;
    if (result.subrun !== undefined) ended.subrun = result.subrun as SubRun;
    this.options.channel.emit(ended);
    this.answered.push({ call: task.call, result });
  }
}
