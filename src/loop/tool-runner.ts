/**
 * Runs a turn's tool calls one after another, in the order they complete (= `output_index` order;
 * ADR-0005), while the response may still be streaming. Every accepted call gets exactly
 * `tool_call` → `tool_started` → `tool_ended` (DESIGN.md §5, §8.7), refused ones included.
 *
 * Frame order is deterministic given the tool's completion time: `tool_call` is emitted when the
 * call is submitted, `tool_started` right then if nothing runs (else right after the previous
 * `tool_ended`), and refusals end synchronously. Only a tool's own duration decides where its
 * `tool_ended` lands — which a replay reproduces by releasing the recorded output at that point.
 */
import { frame, type ToolCallFrame, type ToolEndedFrame, type ToolStartedFrame } from "../frames/frame.js";
import type { AssembledCall } from "../provider/assembler/index.js";
import { refusedToolOutput, type ToolCallResult } from "../tools/execute.js";
import type { ToolErrorCode } from "../tools/tool.js";
import type { FrameChannel } from "./frame-channel.js";
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

interface Task {
  call: AssembledCall;
  refusal: Refusal | undefined;
}

export interface ToolRunnerOptions {
  channel: FrameChannel;
  turn: number;
  executor: ToolExecutor;
  workspace: string;
  signal: AbortSignal;
  outputCapBytes: number | undefined;
}

export class ToolRunner {
  private readonly queue: Task[] = [];
  private active = false;
  private idleWaiters: (() => void)[] = [];
  /** Answered calls in execution order. */
  readonly answered: AnsweredCall[] = [];
  /** A tool really executed in this turn (so the request must not be retried). */
  ranAny = false;
  /** Set by `stopPending`: calls not started yet are answered with this refusal instead of running. */
  private stopReason: Refusal | undefined;

  constructor(private readonly options: ToolRunnerOptions) {}

  /** True while a call runs (the provider's idle timeout does not run then). */
  get busy(): boolean {
    return this.active;
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
    this.options.channel.emit(callFrame);
    this.queue.push({ call, refusal });
    if (!this.active) this.startNext();
  }

  /** Calls that have not started yet will not run; they are answered with `refusal`. */
  stopPending(refusal: Refusal): void {
    this.stopReason ??= refusal;
  }

  /** Resolves once every submitted call has ended. */
  drain(): Promise<void> {
    if (!this.active && this.queue.length === 0) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  private startNext(): void {
    for (;;) {
      const task = this.queue.shift();
      if (task === undefined) {
        this.active = false;
        const waiters = this.idleWaiters;
        this.idleWaiters = [];
        for (const w of waiters) w();
        return;
      }
      this.active = true;
      const started: ToolStartedFrame = frame("tool_started", {
        turn: this.options.turn,
        call_id: task.call.callId,
        name: task.call.name,
      });
      this.options.channel.emit(started);
      const refusal = task.refusal ?? this.stopReason;
      if (refusal !== undefined) {
        const result = refusedToolOutput(
          task.call.name,
          refusal.code,
          refusal.message,
          capOption(this.options.outputCapBytes),
        );
        this.finish(task, result);
        continue; // refusals end synchronously; go on with the next call
      }
      this.ranAny = true;
      const { executor, workspace, signal, turn } = this.options;
      executor(
        { callId: task.call.callId, name: task.call.name, arguments: task.call.arguments },
        { signal, workspace, turn },
      )
        .catch((err: unknown) =>
          refusedToolOutput(
            task.call.name,
            "tool_failed",
            `eddy failed to run the tool: ${String(err)}`,
            capOption(this.options.outputCapBytes),
          ),
        )
        .then((result) => {
          this.finish(task, result);
          this.startNext();
        });
      return;
    }
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
    this.options.channel.emit(ended);
    this.answered.push({ call: task.call, result });
  }
}

function capOption(outputCapBytes: number | undefined): { outputCapBytes?: number } {
  return outputCapBytes === undefined ? {} : { outputCapBytes };
}
