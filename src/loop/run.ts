/**
 * `runAgent`: the provider-driven tool loop of ADR-0005. Each turn streams a response, runs its
 * function calls as they complete, and follows up — chained (`previous_response_id` + the new
 * outputs) or stateless (the whole history, `store:false`) — until the model answers, a terminal
 * tool or structured output produces a result, a limit stops it, or something fails. Whatever
 * happens, `run_ended` is the last frame and `seq` is contiguous.
 */
import { randomUUID } from "node:crypto";
import { realpathSync, statSync } from "node:fs";
import { EddyError } from "../errors.js";
import { type ContinuationMode, type FrameError, frame, type RunEndReason } from "../frames/frame.js";
import { functionCallOutputItem, toInputItem, userMessageItem } from "../history/items.js";
import { repairChainedOutputs, repairHistory } from "../history/pairing.js";
import type { CreateResponseBody, JsonObject, ToolChoiceParam } from "../protocol/types.js";
import type { AssembledCall, AssembledResponse } from "../provider/assembler/index.js";
import { executeToolCall } from "../tools/execute.js";
import { createToolRegistry, type ToolRegistry } from "../tools/registry.js";
import { compileSchema } from "../util/schema.js";
import { LOOP_DEFAULTS } from "./defaults.js";
import { FrameChannel } from "./frame-channel.js";
import type { RunHandle, RunOptions, RunResult, ToolExecutor } from "./options.js";
import { buildRequestBody, initialInput } from "./request.js";
import { callsSignature, decideAfterTurn, type StructuredOutputCheck } from "./stop-condition.js";
import { relaxToolChoice, toolChoiceRefusal } from "./tool-choice.js";
import { type AnsweredCall, type Refusal, ToolRunner } from "./tool-runner.js";
import { streamTurn, type TurnOutcome } from "./turn.js";
import { addUsage, emptyUsage } from "./usage.js";

/** Starts a run. Bad options (an unknown workspace, a bad tool) throw here, before anything is sent. */
export function runAgent(options: RunOptions): RunHandle {
  const runId = options.runId ?? `run_${randomUUID().replace(/-/g, "")}`;
  const workspace = resolveWorkspace(options.workspace ?? process.cwd());
  const registry = toRegistry(options.tools);
  const structured = options.outputSchema === undefined ? undefined : structuredCheck(options.outputSchema);
  const channel = new FrameChannel(options.clock === undefined ? { runId } : { runId, clock: options.clock });
  if (options.onFrame !== undefined) channel.observe(options.onFrame);
  const controller = new AbortController();
  const onUserAbort = () => controller.abort(options.signal?.reason ?? "cancelled");
  if (options.signal?.aborted) onUserAbort();
  else options.signal?.addEventListener("abort", onUserAbort, { once: true });
  channel.onConsumerExit = () => controller.abort("the consumer stopped reading frames");

  const loop = new AgentLoop(options, { channel, controller, registry, workspace, structured });
  const result = Promise.resolve()
    .then(() => loop.run())
    .finally(() => options.signal?.removeEventListener("abort", onUserAbort));
  return {
    runId,
    result,
    cancel: (reason?: string) => controller.abort(reason ?? "cancelled"),
    [Symbol.asyncIterator]: () => channel[Symbol.asyncIterator](),
  };
}

interface LoopDeps {
  channel: FrameChannel;
  controller: AbortController;
  registry: ToolRegistry;
  workspace: string;
  structured: { check: StructuredOutputCheck; format: JsonObject } | undefined;
}

class AgentLoop {
  private readonly channel: FrameChannel;
  private readonly signal: AbortSignal;
  private mode: ContinuationMode;
  /** The conversation as input items: the truth stateless requests are built from. */
  private history: JsonObject[];
  private previousResponseId: string | undefined;
  private pendingOutputs: JsonObject[] = [];
  private pendingCallIds: string[] = [];
  private toolChoice: ToolChoiceParam | null | undefined;
  private turn = 0;
  private toolCallsUsed = 0;
  private budgetExceeded = false;
  private terminalCalled = false;
  private readonly usage = emptyUsage();
  private lastResponse: AssembledResponse | undefined;
  private lastResponseId: string | null = null;
  private readonly signatures: string[] = [];
  private readonly executor: ToolExecutor;
  private readonly maxToolCalls: number;
  private readonly maxTurns: number;

  constructor(
    private readonly options: RunOptions,
    private readonly deps: LoopDeps,
  ) {
    this.channel = deps.channel;
    this.signal = deps.controller.signal;
    this.mode = options.mode ?? (options.provider.capabilities.previousResponseId ? "chained" : "stateless");
    this.history =
      typeof options.input === "string"
        ? [userMessageItem(options.input)]
        : [...(options.input as JsonObject[])];
    this.toolChoice = options.toolChoice;
    this.maxToolCalls = positive(options.maxToolCalls, LOOP_DEFAULTS.maxToolCalls, "maxToolCalls");
    this.maxTurns = positive(options.maxTurns, LOOP_DEFAULTS.maxTurns, "maxTurns");
    const { registry, workspace } = deps;
    this.executor =
      options.executeTool ??
      ((call, context) => {
        const execOptions: Parameters<typeof executeToolCall>[2] = { signal: context.signal, workspace };
        if (options.toolTimeoutMs !== undefined) execOptions.timeoutMs = options.toolTimeoutMs;
        if (options.toolOutputCapBytes !== undefined) execOptions.outputCapBytes = options.toolOutputCapBytes;
        return executeToolCall(registry, call, execOptions);
      });
  }

  async run(): Promise<RunResult> {
    const { channel, options } = this;
    const started: Parameters<FrameChannel["emit"]>[0] = frame("run_started", {
      model: options.model,
      mode: this.mode,
      input: options.input,
      tools: this.deps.registry.names(),
    });
    if (options.instructions !== undefined) started.instructions = options.instructions;
    channel.emit(started);
    const onCancel = () => {
      channel.emit(
        frame("cancel_requested", { turn: this.turn, reason: describeReason(this.signal.reason) }),
      );
    };
    if (this.signal.aborted) onCancel();
    else this.signal.addEventListener("abort", onCancel, { once: true });
    try {
      return await this.turns();
    } catch (err) {
      return this.end("failed", {
        code: "internal_error",
        message: `eddy failed: ${err instanceof Error ? err.message : String(err)}`,
      });
    } finally {
      this.signal.removeEventListener("abort", onCancel);
    }
  }

  private async turns(): Promise<RunResult> {
    for (;;) {
      if (this.signal.aborted) return this.end("cancelled", cancelledError());
      this.terminalCalled = false;
      const runner = this.newRunner();
      let turnOutcome = await streamTurn(this.turnInput(runner, this.nextBody(), 1));
      const { outcome } = turnOutcome;
      if (!outcome.ok && outcome.error.isPreviousResponseNotFound && this.canFallBack(runner, turnOutcome)) {
        // DESIGN.md §8.5: resend this turn statelessly, and stay stateless for the rest of the run.
        this.switchToStateless("previous_response_not_found");
        turnOutcome = await streamTurn(this.turnInput(runner, this.nextBody(), turnOutcome.lastAttempt + 1));
      }
      const decision = this.recordTurn(runner, turnOutcome);
      if (decision.next === "end") return this.end(decision.reason, decision.error, decision.result);
    }
  }

  private canFallBack(runner: ToolRunner, turn: TurnOutcome): boolean {
    return (
      this.mode === "chained" &&
      this.previousResponseId !== undefined &&
      runner.answered.length === 0 &&
      !turn.outcome.response.calls.length &&
      turn.outcome.response.outputText === "" &&
      !this.signal.aborted
    );
  }

  private switchToStateless(reason: string): void {
    this.channel.emit(frame("mode_changed", { turn: this.turn, from: this.mode, to: "stateless", reason }));
    this.mode = "stateless";
    this.previousResponseId = undefined;
  }

  private newRunner(): ToolRunner {
    return new ToolRunner({
      channel: this.channel,
      turn: this.turn,
      executor: this.executor,
      workspace: this.deps.workspace,
      signal: this.signal,
      outputCapBytes: this.options.toolOutputCapBytes,
    });
  }

  private turnInput(runner: ToolRunner, body: CreateResponseBody, firstAttempt: number) {
    return {
      channel: this.channel,
      provider: this.options.provider,
      turn: this.turn,
      body,
      firstAttempt,
      signal: this.signal,
      toolExecution: this.options.toolExecution ?? LOOP_DEFAULTS.toolExecution,
      runner,
      admit: (call: AssembledCall) => this.admit(call),
    };
  }

  /** Whether a promoted call may run: a terminal tool already ended the run, tool_choice, the budget. */
  private admit(call: AssembledCall): Refusal | undefined {
    if (this.terminalCalled) {
      return {
        code: "not_run",
        message: "The run already ended with a terminal tool call; this call did not run.",
      };
    }
    const refusal = toolChoiceRefusal(
      this.toolChoice,
      this.deps.registry.resolve(call.name)?.name ?? call.name,
    );
    if (refusal !== undefined) {
      this.toolCallsUsed++;
      return { code: "tool_not_allowed", message: refusal };
    }
    if (this.toolCallsUsed >= this.maxToolCalls) {
      this.budgetExceeded = true;
      return {
        code: "max_tool_calls",
        message: `The run's tool-call budget (${this.maxToolCalls}) is spent; this call did not run.`,
      };
    }
    this.toolCallsUsed++;
    if (this.deps.registry.resolve(call.name)?.definition.terminal === true) this.terminalCalled = true;
    return undefined;
  }

  /** The next request body, with the pre-send history check (DESIGN.md: every call has exactly one output). */
  private nextBody(): CreateResponseBody {
    const { options } = this;
    let input: string | JsonObject[];
    if (this.mode === "stateless") {
      const repaired = repairHistory(this.history);
      this.reportRepairs(repaired.repairs);
      this.history = repaired.items;
      // A copy: the body is recorded in frames and must not change when the history grows.
      input =
        this.turn === 0 && typeof options.input === "string"
          ? initialInput(options.input, true)
          : [...this.history];
    } else if (this.previousResponseId === undefined) {
      if (typeof options.input === "string") input = initialInput(options.input, false);
      else {
        const repaired = repairHistory(this.history);
        this.reportRepairs(repaired.repairs);
        this.history = repaired.items;
        input = [...this.history];
      }
    } else {
      const repaired = repairChainedOutputs(this.pendingCallIds, this.pendingOutputs);
      this.reportRepairs(repaired.repairs);
      input = repaired.items;
    }
    const sendTools =
      this.turn === 0 || (options.toolsOnFollowUp ?? LOOP_DEFAULTS.toolsOnFollowUp) === "every_request";
    return buildRequestBody({
      model: options.model,
      instructions: options.instructions,
      input,
      mode: this.mode,
      previousResponseId: this.mode === "chained" ? this.previousResponseId : undefined,
      tools: sendTools ? this.deps.registry.declarations() : undefined,
      toolChoice: this.toolChoice,
      parallelToolCalls: options.parallelToolCalls ?? LOOP_DEFAULTS.parallelToolCalls,
      remainingToolCalls: this.maxToolCalls - this.toolCallsUsed,
      capabilities: options.provider.capabilities,
      textFormat: this.deps.structured?.format,
      extra: options.request,
    });
  }

  private reportRepairs(repairs: ReturnType<typeof repairHistory>["repairs"]): void {
    if (repairs.length === 0) return;
    this.channel.emit(frame("history_repaired", { turn: this.turn, repairs }));
  }

  /** Emits `turn_ended`, appends the turn to the history and decides what comes next. */
  private recordTurn(runner: ToolRunner, turnOutcome: TurnOutcome) {
    const { outcome } = turnOutcome;
    const response = outcome.response;
    this.lastResponse = response;
    if (response.id !== null) this.lastResponseId = response.id;
    addUsage(this.usage, response.usage);
    this.channel.emit(
      frame("turn_ended", {
        turn: this.turn,
        response_id: response.id,
        status: outcome.ok
          ? response.status
          : outcome.error.kind === "cancelled"
            ? "cancelled"
            : response.terminal === null
              ? "error"
              : response.status,
        usage: response.usage,
      }),
    );
    this.turn++;
    const answered = runner.answered;
    this.appendToHistory(response, answered);
    if (answered.length > 0) {
      this.signatures.push(callsSignature(answered));
    }
    const decision = decideAfterTurn({
      outcome,
      answered,
      budgetExceeded: this.budgetExceeded,
      turnsDone: this.turn,
      maxTurns: this.maxTurns,
      identicalTurns: identicalTail(this.signatures, answered.length > 0),
      identicalTurnsLimit: LOOP_DEFAULTS.identicalTurnsLimit,
      structured: this.deps.structured?.check,
    });
    if (decision.next === "continue") this.prepareFollowUp(response, answered);
    return decision;
  }

  private appendToHistory(response: AssembledResponse, answered: readonly AnsweredCall[]): void {
    const normalization = { keepItemIds: this.options.provider.capabilities.keepItemIds };
    for (const item of response.items) {
      const input = toInputItem(item, normalization);
      if (input !== undefined) this.history.push(input);
    }
    for (const a of answered) this.history.push(functionCallOutputItem(a.call.callId, a.result.output));
  }

  private prepareFollowUp(response: AssembledResponse, answered: readonly AnsweredCall[]): void {
    if (this.options.resetToolChoice ?? LOOP_DEFAULTS.resetToolChoice)
      this.toolChoice = relaxToolChoice(this.toolChoice);
    if (this.mode !== "chained") return;
    if (response.id === null) {
      this.switchToStateless("the response had no id to continue from");
      return;
    }
    this.previousResponseId = response.id;
    this.pendingOutputs = answered.map((a) => functionCallOutputItem(a.call.callId, a.result.output));
    this.pendingCallIds = response.calls.map((c) => c.callId);
  }

  private end(reason: RunEndReason, error?: FrameError, result?: unknown): RunResult {
    const outputText = this.lastResponse?.outputText ?? "";
    const ended = frame("run_ended", {
      reason,
      output_text: outputText,
      response_id: this.lastResponseId,
      usage: this.usage,
      turns: this.turn,
      tool_calls: this.toolCallsUsed,
    });
    if (error !== undefined && reason !== "completed" && reason !== "terminal_tool") ended.error = error;
    if (result !== undefined) ended.result = result;
    this.channel.emit(ended);
    this.channel.close();
    const out: RunResult = {
      runId: this.channel.runId,
      reason,
      outputText,
      responseId: this.lastResponseId,
      usage: this.usage,
      items: this.history,
      turns: this.turn,
      toolCalls: this.toolCallsUsed,
    };
    if (ended.error !== undefined) out.error = ended.error;
    if (result !== undefined) out.result = result;
    return out;
  }
}

function identicalTail(signatures: readonly string[], hadCalls: boolean): number {
  if (!hadCalls) return 0;
  const last = signatures[signatures.length - 1];
  let n = 0;
  for (let i = signatures.length - 1; i >= 0 && signatures[i] === last; i--) n++;
  return n;
}

function cancelledError(): FrameError {
  return { code: "cancelled", message: "the run was cancelled" };
}

function describeReason(reason: unknown): string {
  if (typeof reason === "string") return reason;
  if (reason instanceof Error) return reason.message;
  return "cancelled";
}

function positive(value: number | undefined, fallback: number, name: string): number {
  if (value === undefined) return fallback;
  if (!Number.isInteger(value) || value < 1) {
    throw new EddyError("invalid_argument", `${name} must be an integer ≥ 1 (got ${String(value)})`, {
      fault: "user",
    });
  }
  return value;
}

/** Workspaces already resolved (a run resolves its workspace before anything else; most runs reuse one). */
const resolvedWorkspaces = new Map<string, string>();

function resolveWorkspace(path: string): string {
  const known = resolvedWorkspaces.get(path);
  if (known !== undefined) return known;
  try {
    const real = realpathSync(path);
    if (!statSync(real).isDirectory()) throw new Error("not a directory");
    if (resolvedWorkspaces.size < 256) resolvedWorkspaces.set(path, real);
    return real;
  } catch {
    throw new EddyError(
      "invalid_config",
      `workspace ${JSON.stringify(path)} does not exist or is not a directory`,
      {
        fault: "user",
      },
    );
  }
}

function toRegistry(tools: RunOptions["tools"]): ToolRegistry {
  if (tools === undefined) return createToolRegistry([]);
  if (Array.isArray(tools)) return createToolRegistry(tools);
  return tools as ToolRegistry;
}

function structuredCheck(schema: NonNullable<RunOptions["outputSchema"]>): {
  check: StructuredOutputCheck;
  format: JsonObject;
} {
  const compiled = compileSchema(`output schema "${schema.name}"`, schema.schema);
  const format: JsonObject = { type: "json_schema", name: schema.name };
  if (schema.description !== undefined) format.description = schema.description;
  format.schema = compiled.jsonSchema;
  format.strict = schema.strict ?? true;
  return {
    format,
    check(text) {
      let value: unknown;
      try {
        value = JSON.parse(text);
      } catch (err) {
        return {
          ok: false,
          message: `the final answer is not valid JSON (${(err as Error).message}); expected JSON matching the ${schema.name} schema`,
        };
      }
      const checked = compiled.validate(value);
      return checked.ok
        ? { ok: true, value: checked.value }
        : {
            ok: false,
            message: `the final answer does not match the ${schema.name} schema: ${checked.problems.join("; ")}`,
          };
    },
  };
}
