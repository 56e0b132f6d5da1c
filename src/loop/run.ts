/**
 * `runAgent`: the provider-driven tool loop (docs/decisions.md #3, #4). Each turn streams a response, runs its
 * function calls as they complete, and follows up — chained (`previous_response_id` + the new
 * outputs) or stateless (the whole history, `store:false`) — until the model answers, a terminal
 * tool or structured output produces a result, a limit stops it, or something fails. Whatever
 * happens, `run_ended` is the last frame and `seq` is contiguous.
 */
import { randomUUID } from "node:crypto";
import { realpathSync } from "node:fs";
import { describeError, EddyError } from "../errors.js";
import { type ContextCompaction, type FrameError, frame, type RunEndReason } from "../frames/frame.js";
import { userMessageItem } from "../history/items.js";
import type { ToolHistoryManager } from "../history/tool-history.js";
import type { CreateResponseBody, ItemParam, JsonObject, ToolChoiceParam } from "../protocol/types.js";
import type { AssembledCall, AssembledResponse } from "../provider/assembler/index.js";
import type { executeToolCall } from "../tools/execute.js";
import { executeCall } from "../tools/native-calls.js";
import { createToolRegistry, type ToolRegistry } from "../tools/registry.js";
import { compileSchema } from "../util/schema.js";
import type { AgentToolParent } from "./agent-tool.js";
import { type ApprovalHandler, Approvals } from "./approvals.js";
import { Conversation, type NextInput } from "./conversation.js";
import { LOOP_DEFAULTS } from "./defaults.js";
import { FrameChannel, type FrameObserver } from "./frame-channel.js";
import { checkGuardrails } from "./guardrails.js";
import { liveRegistry } from "./live-registry.js";
import type { RunDeps, RunHandle, RunResult, ToolExecutor } from "./options.js";
import { compactAfterOverflow, isContextOverflow, overflowError } from "./overflow.js";
import { assertPolicy, DEFAULT_POLICY } from "./policy.js";
import { MIN_OUTPUT_TOKENS, preparedSettings, type TurnSettings } from "./prepare-turn.js";
import { buildRequestBody } from "./request.js";
import { createRunHistory } from "./run-history.js";
import { type RunSpec, type RunSpecInput, type RunSpecOutputSchema, resolveRunSpec } from "./run-spec.js";
import {
  callsSignature,
  decideAfterTurn,
  type StructuredOutputCheck,
  type TurnDecision,
} from "./stop-condition.js";
import { firstStop, isStopConditionData, type StopCondition } from "./stop-when.js";
import { ToolBudget } from "./tool-budget.js";
import { relaxToolChoice } from "./tool-choice.js";
import { toolDeclarations } from "./tool-declarations.js";
import { type AnsweredCall, ToolRunner } from "./tool-runner.js";
import { unselectedTools, withoutTools } from "./tool-selection.js";
import { streamTurn, type TurnInput, type TurnOutcome } from "./turn.js";
import { addUsage, emptyUsage } from "./usage.js";

/**
 * Starts a run of `spec` (data: what to run, see `RunSpec`) with `deps` (live objects: what to run
 * it with, see `RunDeps`). A bad spec, a spec beyond `deps.policy`, an unknown workspace or a bad
 * tool throw here, before anything is sent; everything after — provider failures included — is an
 * outcome: frames say what happened and `result` settles with the end reason.
 *
 * @example
 * ```ts
 * const run = runAgent({ model: "gpt-5-mini", input: "What is in package.json?" }, { provider, tools });
 * for await (const frame of run) if (frame.type === "output_text_delta") process.stdout.write(frame.delta);
 * const { reason, outputText, usage } = await run.result;
 * ```
 */
export function runAgent(input: RunSpecInput | RunSpec, deps: RunDeps): RunHandle {
  const resolved = resolveRunSpec(input);
  assertDeps(deps);
  const runId = resolved.run_id ?? `run_${randomUUID().replace(/-/g, "")}`;
  const workspace = resolveWorkspace(deps.workspace ?? process.cwd());
  const base = toRegistry(deps.tools);
  if (deps.policy !== undefined)
    assertPolicy(resolved.tools ?? base.names(), deps.policy, "the run", resolved.hosted_tools);
  // The tools come from the caller's code; hosted tools come from the spec alone, which grants
  // nothing: without a policy declaring them, none is sent (DEFAULT_POLICY).
  else assertPolicy([], DEFAULT_POLICY, "the run", resolved.hosted_tools);
  const left = resolved.tools === undefined ? new Set<string>() : unselectedTools(base, resolved.tools);
  const select = (registry: ToolRegistry) => withoutTools(registry, left);
  const tools = liveRegistry(select(base));
  const spec: RunSpec = {
    ...resolved,
    run_id: runId,
    tools: tools.registry.names(),
    ...stopWhenData(resolved, deps),
  };
  const structured = spec.output_schema === undefined ? undefined : structuredCheck(spec.output_schema);
  const channel = new FrameChannel({
    runId,
    secrets: [...(deps.provider.secrets ?? []), ...(deps.secrets ?? [])],
    ...(deps.clock === undefined ? {} : { clock: deps.clock }),
  });
  const controller = new AbortController();
  if (deps.onFrame !== undefined)
    channel.observe(
      isolated(deps.onFrame, (err) =>
        controller.abort(`a frame observer (RunDeps.onFrame) failed: ${describeError(err)}`),
      ),
    );
  const onUserAbort = () => controller.abort(deps.signal?.reason ?? "cancelled");
  if (deps.signal?.aborted) onUserAbort();
  else deps.signal?.addEventListener("abort", onUserAbort, { once: true });
  channel.onConsumerExit = () => controller.abort("the consumer stopped reading frames");

  const loop = new AgentLoop(spec, deps, {
    channel,
    controller,
    registry: tools.registry,
    allTools: base,
    replaceTools: (next) => tools.replace(select(next)),
    workspace,
    structured,
    onApproval: approvalHandler(deps),
  });
  const result = Promise.resolve()
    .then(() => loop.run())
    .finally(() => deps.signal?.removeEventListener("abort", onUserAbort));
  return {
    runId,
    spec,
    result,
    cancel: (reason?: string) => controller.abort(reason ?? "cancelled"),
    [Symbol.asyncIterator]: () => channel[Symbol.asyncIterator](),
  };
}

/**
 * `observer`, safe for the channel: an observer must not throw, and one that does (a tape write on
 * a full disk) would otherwise break the emit of a frame half way and leave the run's consumer
 * waiting forever. Its first exception stops it (it sees no frame after) and `onError` hears why.
 */
function isolated(observer: FrameObserver, onError: (err: unknown) => void): FrameObserver {
  let failed = false;
  return (frame) => {
    if (failed) return;
    try {
      observer(frame);
    } catch (err) {
      failed = true;
      onError(err);
    }
  };
}

/** `RunDeps.stopWhen`'s data conditions join `RunSpec.stop_when`, so the spec (and a tape) carries them. */
function stopWhenData(spec: RunSpec, deps: RunDeps): Pick<RunSpec, "stop_when"> {
  const data = [deps.stopWhen ?? []].flat().filter(isStopConditionData);
  if (data.length === 0) return spec.stop_when === undefined ? {} : { stop_when: spec.stop_when };
  return { stop_when: [...(spec.stop_when ?? []), ...data] };
}

/** The run's stop conditions: the spec's (data) first, then the functions of `RunDeps.stopWhen`. */
function stopConditions(spec: RunSpec, deps: RunDeps): StopCondition[] {
  const functions = [deps.stopWhen ?? []].flat().filter((c) => !isStopConditionData(c));
  return [...(spec.stop_when ?? []), ...functions];
}

/** The run's approval handler: the one given, else the policy's mode (`ask` needs one given). */
function approvalHandler(deps: RunDeps): ApprovalHandler | undefined {
  if (deps.onApproval !== undefined) return deps.onApproval;
  const mode = deps.policy?.approve ?? "auto";
  switch (mode) {
    case "auto":
      return undefined;
    case "deny":
      return () => "deny";
    case "ask":
      throw new EddyError(
        "invalid_argument",
        'policy.approve "ask" needs an onApproval handler in RunDeps (or approve "auto", "deny", "defer")',
        { fault: "user" },
      );
    case "defer":
      return () => "defer";
    default:
      // A policy not made by createPolicy (plain JS, a parsed file): an unknown mode runs nothing unasked.
      throw new EddyError(
        "invalid_argument",
        `policy.approve: ${JSON.stringify(mode)} is not an approval mode (use "ask", "auto", "deny" or "defer")`,
        { fault: "user" },
      );
  }
}

/** The deps a run cannot start without, checked for callers without types (plain JS). */
function assertDeps(deps: RunDeps): void {
  const missing =
    deps === null || typeof deps !== "object"
      ? "deps: give the run its dependencies as an object ({ provider, tools?, workspace? })"
      : typeof deps.provider !== "object" ||
          deps.provider === null ||
          typeof deps.provider.stream !== "function" ||
          typeof deps.provider.capabilities !== "object"
        ? "deps.provider: give a provider (createProvider({ baseURL, apiKey }), or createMockServer for a local one)"
        : undefined;
  if (missing !== undefined) throw new EddyError("invalid_argument", missing, { fault: "user" });
}

interface LoopDeps {
  channel: FrameChannel;
  controller: AbortController;
  /** The run's tools (this object for the whole run; `replaceTools` changes what it answers). */
  registry: ToolRegistry;
  /** Every tool given to the run, before `RunSpec.tools` selected (an agent tool's sub-agent selects among them). */
  allTools: ToolRegistry;
  replaceTools: (next: ToolRegistry) => void;
  workspace: string;
  structured: { check: StructuredOutputCheck; format: JsonObject } | undefined;
  onApproval: ApprovalHandler | undefined;
}

/** The turn loop: streams a turn, records it, decides what comes next. State lives in its parts. */
class AgentLoop {
  private readonly channel: FrameChannel;
  private readonly signal: AbortSignal;
  private readonly conversation: Conversation;
  private readonly budget: ToolBudget;
  private toolChoice: ToolChoiceParam | null | undefined;
  private turn = 0;
  private readonly usage = emptyUsage();
  private lastResponse: AssembledResponse | undefined;
  private lastResponseId: string | null = null;
  /** Each turn's calls as a comparable string (for the identical-turns stop). */
  private readonly signatures: string[] = [];
  private readonly executor: ToolExecutor;
  private readonly maxTurns: number;
  private readonly approvals: Approvals;
  private readonly history: ToolHistoryManager;
  /** Native tool types are offered (instead of function imitations). */
  private readonly nativeTools: boolean;
  /** Native call items are promoted and answered (native tools, or a remote MCP server's approvals). */
  private readonly nativeCalls: boolean;
  /** The cut-off answer a `continueIncomplete` follow-up continues. */
  private continuedText: string | undefined;
  /** The run's stop conditions (stop-when.ts). */
  private readonly stopWhen: StopCondition[];
  /** Names of every call answered so far (for stop conditions). */
  private readonly allCalls: string[] = [];
  /** The calls answered in the last turn. */
  private lastAnswered: readonly AnsweredCall[] = [];
  /** The `on_limit: "answer"` request: no tools are offered and no call runs. */
  private toolsOff = false;
  /** This turn's `prepareTurn` settings. */
  private prepared: TurnSettings | undefined;

  constructor(
    private readonly spec: RunSpec,
    private readonly runDeps: RunDeps,
    private readonly deps: LoopDeps,
  ) {
    this.channel = deps.channel;
    this.signal = deps.controller.signal;
    const { capabilities } = runDeps.provider;
    this.history = createRunHistory(spec, runDeps);
    this.nativeTools = spec.native_tools === "auto" ? capabilities.nativeTools : spec.native_tools;
    // A remote MCP server's approval requests must be answered wherever the tool is declared.
    this.nativeCalls = this.nativeTools || spec.hosted_tools.some((t) => t.type === "mcp");
    this.conversation = new Conversation({
      input: spec.input,
      context: spec.context?.items,
      mode: spec.mode === "auto" ? (capabilities.previousResponseId ? "chained" : "stateless") : spec.mode,
      keepItemIds: capabilities.keepItemIds,
      history: this.history,
      nativeCalls: this.nativeCalls,
    });
    this.toolChoice = spec.tool_choice;
    this.budget = new ToolBudget(spec.max_tool_calls, deps.registry);
    this.maxTurns = spec.max_turns;
    const agentRuns = runDeps.agentRuns ?? { started: 0 };
    this.executor = lendingParent(runDeps.executeTool ?? registryExecutor(spec, runDeps, deps), () =>
      toolParent(spec, runDeps, deps, agentRuns),
    );
    this.approvals = new Approvals(deps.registry, deps.onApproval);
    this.stopWhen = stopConditions(spec, runDeps);
  }

  async run(): Promise<RunResult> {
    const { channel, spec } = this;
    const started: Parameters<FrameChannel["emit"]>[0] = frame("run_started", {
      model: spec.model,
      mode: this.conversation.mode,
      input: startInput(spec),
      tools: this.deps.registry.names(),
    });
    if (spec.hosted_tools.length > 0) started.hosted_tools = spec.hosted_tools.map((t) => t.type);
    if (spec.instructions !== undefined) started.instructions = spec.instructions;
    if (spec.instruction_files !== undefined) started.instruction_files = [...spec.instruction_files];
    const servers = this.runDeps.mcpServers;
    if (servers !== undefined && servers.length > 0) started.mcp_servers = servers.map((s) => ({ ...s }));
    channel.emit(started);
    if (spec.context !== undefined) channel.emit(frame("context_compiled", { ...spec.context.compiled }));
    const onCancel = () => {
      channel.emit(
        frame("cancel_requested", { turn: this.turn, reason: describeReason(this.signal.reason) }),
      );
    };
    if (this.signal.aborted) onCancel();
    else this.signal.addEventListener("abort", onCancel, { once: true });
    try {
      // Each await below is skipped when there is nothing to wait for: a turn's hand-offs are its
      // cost over HTTP (bench/README.md, "The turn").
      if (this.hasGuardrails("input")) {
        const tripped = await this.guardrails("input", inputText(spec.input));
        if (tripped !== undefined) return tripped;
      }
      return await this.turns();
    } catch (err) {
      // A summary or compaction request the cancellation aborted.
      if (this.signal.aborted) return this.end("cancelled", cancelledError());
      return this.end("failed", { code: "internal_error", message: `eddy failed: ${describeError(err)}` });
    } finally {
      this.signal.removeEventListener("abort", onCancel);
    }
  }

  private async turns(): Promise<RunResult> {
    for (;;) {
      if (this.signal.aborted) return this.end("cancelled", cancelledError());
      const refresh = this.runDeps.refreshTools;
      const refreshed = refresh === undefined ? undefined : await refresh(this.signal);
      if (refreshed !== undefined) this.deps.replaceTools(refreshed);
      this.budget.startTurn();
      this.prepared = undefined;
      if (this.runDeps.prepareTurn !== undefined) await this.prepareTurn();
      if (this.outputSpent()) return this.endOutputSpent();
      const runner = this.newRunner();
      const body = this.nextBody();
      let streamed = await streamTurn(this.turnInput(runner, body instanceof Promise ? await body : body, 1));
      if (this.shouldResendStateless(runner, streamed)) {
        // docs/decisions.md #5: resend this turn statelessly, and stay stateless for the rest of the run.
        this.switchToStateless("previous_response_not_found");
        streamed = await streamTurn(this.turnInput(runner, await this.nextBody(), streamed.lastAttempt + 1));
      }
      let compacted: ContextCompaction | undefined;
      const overflowed = this.nothingHappened(runner, streamed) && isContextOverflow(streamed.outcome);
      if (overflowed) {
        // Once per turn: compact, then send the turn again (overflow.ts).
        compacted = await this.compactAfterOverflow(streamed);
        if (compacted !== undefined)
          streamed = await streamTurn(
            this.turnInput(runner, await this.nextBody(), streamed.lastAttempt + 1),
          );
      }
      const decision = this.recordTurn(runner, streamed);
      if (runner.deferred.length > 0 && !this.signal.aborted) return this.endAwaitingApproval(runner);
      if (decision.next === "end" && overflowed && isContextOverflow(streamed.outcome))
        return this.end(
          decision.reason === "incomplete" ? "incomplete" : "invalid_request",
          overflowError(streamed.outcome, compacted),
        );
      if (decision.next === "end" && decision.reason === "completed") {
        if (this.hasGuardrails("output")) {
          const tripped = await this.guardrails("output", this.lastResponse?.outputText ?? "");
          if (tripped !== undefined) return tripped;
        }
        if (this.steer()) {
          this.prepareFollowUp();
          continue;
        }
      }
      if (decision.next === "end" && !this.continuesCutAnswer(decision, runner)) {
        if (isLimit(decision.reason) && this.spec.on_limit === "answer" && !this.signal.aborted)
          return this.answerOnLimit(decision.reason, decision.error);
        return this.end(decision.reason, decision.error, { result: decision.result });
      }
      const stop =
        decision.next === "continue" && this.stopWhen.length > 0
          ? await this.stopCondition(streamed)
          : undefined;
      if (stop !== undefined) return this.end("stop_condition", undefined, { stopCondition: stop });
      this.steer();
      this.prepareFollowUp();
    }
  }

  /**
   * `on_limit: "answer"`: the run reached a limit; one last request, with no tools and a note
   * asking for a final answer, so the user gets one. The reason stays the limit.
   */
  private async answerOnLimit(reason: RunEndReason, error: FrameError | undefined): Promise<RunResult> {
    this.conversation.addUserMessage(LOOP_DEFAULTS.limitAnswerPrompt);
    this.prepareFollowUp();
    this.toolsOff = true;
    // The last request is a turn too: prepareTurn is asked (a setting of the turn before is not kept).
    await this.prepareTurn();
    if (this.outputSpent()) return this.endOutputSpent();
    const runner = this.newRunner();
    const streamed = await streamTurn(this.turnInput(runner, await this.nextBody(), 1));
    this.recordTurn(runner, streamed);
    if (this.signal.aborted) return this.end("cancelled", cancelledError());
    return this.end(reason, error, { limitAnswer: true });
  }

  /** Adds the messages `RunDeps.steering` has for the next request (a `steered` frame each); true when any. */
  private steer(): boolean {
    const steering = this.runDeps.steering;
    if (steering === undefined || this.signal.aborted || this.turn >= this.maxTurns) return false;
    const messages = steering({ turn: this.turn }) ?? [];
    for (const message of messages) {
      this.conversation.addUserMessage(message);
      this.channel.emit(frame("steered", { turn: this.turn, message }));
    }
    return messages.length > 0;
  }

  /** `RunDeps.prepareTurn`'s settings for this turn (a `turn_prepared` frame when it changed any). */
  private async prepareTurn(): Promise<void> {
    this.prepared = undefined;
    const prepare = this.runDeps.prepareTurn;
    if (prepare === undefined) return;
    const settings = preparedSettings(
      await prepare({
        turn: this.turn,
        spec: this.spec,
        items: [...this.conversation.items],
        calls: [...this.allCalls],
        usage: { ...this.usage },
      }),
    );
    if (settings === undefined || Object.keys(settings).length === 0) return;
    // Lowered, never raised: the run's own bound holds (a server's, a policy's).
    const own = this.spec.request?.max_output_tokens;
    if (
      settings.max_output_tokens !== undefined &&
      typeof own === "number" &&
      own < settings.max_output_tokens
    )
      settings.max_output_tokens = own;
    this.prepared = settings;
    this.channel.emit(frame("turn_prepared", { turn: this.turn, ...settings }));
  }

  /** `prepareTurn` left this turn fewer output tokens than a request may ask for (prepare-turn.ts). */
  private outputSpent(): boolean {
    const tokens = this.prepared?.max_output_tokens;
    return tokens !== undefined && tokens < MIN_OUTPUT_TOKENS;
  }

  /** The run ends as when the upstream stops for `max_output_tokens`, without sending the request. */
  private endOutputSpent(): RunResult {
    const left = this.prepared?.max_output_tokens ?? 0;
    return this.end("incomplete", {
      code: "max_output_tokens",
      message: `the output token budget ran out: ${left} token${left === 1 ? "" : "s"} left, fewer than the ${MIN_OUTPUT_TOKENS} a request may ask for, so no further request was sent`,
    });
  }

  private hasGuardrails(stage: "input" | "output"): boolean {
    return (this.runDeps.guardrails?.[stage]?.length ?? 0) > 0;
  }

  /** Runs a stage's guardrails; the run's end when one tripped. */
  private async guardrails(stage: "input" | "output", text: string): Promise<RunResult | undefined> {
    const list = this.runDeps.guardrails?.[stage];
    if (list === undefined || list.length === 0) return undefined;
    const tripped = await checkGuardrails(stage, list, text, this.channel, this.signal);
    if (tripped === undefined) return undefined;
    const why = tripped.reason === undefined ? "" : `: ${tripped.reason}`;
    return this.end("guardrail", {
      code: "guardrail_tripped",
      message: `the ${stage} guardrail ${tripped.name} tripped${why}`,
    });
  }

  /** The label of the first stop condition that holds after this turn (stop-when.ts), if any. */
  private async stopCondition(streamed: TurnOutcome): Promise<string | undefined> {
    if (this.stopWhen.length === 0) return undefined;
    return firstStop(this.stopWhen, {
      turns: this.turn,
      calls: this.lastAnswered.map((a) => ({
        name: a.call.name,
        arguments: a.call.arguments,
        ok: a.result.ok,
      })),
      allCalls: [...this.allCalls],
      outputText: streamed.outcome.response.outputText,
      usage: { ...this.usage },
    });
  }

  /** A chained follow-up whose response the server lost, before anything happened in the turn. */
  private shouldResendStateless(runner: ToolRunner, streamed: TurnOutcome): boolean {
    const { outcome } = streamed;
    return (
      !outcome.ok &&
      outcome.error.isPreviousResponseNotFound &&
      this.conversation.isChaining &&
      this.nothingHappened(runner, streamed)
    );
  }

  /** The turn ran no tool, produced no call and showed no text: sending it again repeats nothing. */
  private nothingHappened(runner: ToolRunner, streamed: TurnOutcome): boolean {
    const { response } = streamed.outcome;
    return (
      runner.answered.length === 0 &&
      response.calls.length === 0 &&
      response.outputText === "" &&
      !this.signal.aborted
    );
  }

  /** Compacts the history after an overflow and says so in a `context_compacted` frame (overflow.ts). */
  private async compactAfterOverflow(streamed: TurnOutcome): Promise<ContextCompaction | undefined> {
    const { spec, runDeps } = this;
    const done = await compactAfterOverflow({
      provider: runDeps.provider,
      model: spec.model,
      instructions: spec.instructions,
      history: this.history,
      items: this.conversation.items as JsonObject[],
      outcome: streamed.outcome,
      keepItemIds: runDeps.provider.capabilities.keepItemIds,
      signal: this.signal,
    });
    if (done === undefined) return undefined;
    this.conversation.replaceHistory(done.items);
    this.channel.emit(frame("context_compacted", { turn: this.turn, ...done.compaction }));
    return done.compaction;
  }

  private switchToStateless(reason: string): void {
    this.channel.emit(
      frame("mode_changed", { turn: this.turn, from: this.conversation.mode, to: "stateless", reason }),
    );
    this.conversation.becomeStateless();
  }

  private newRunner(): ToolRunner {
    const { spec, deps } = this;
    const parallel = spec.parallel_tool_calls;
    const turn = this.turn;
    return new ToolRunner({
      channel: this.channel,
      turn,
      executor: this.executor,
      workspace: deps.workspace,
      signal: this.signal,
      outputCapBytes: spec.tool_output_cap_bytes,
      concurrency: parallel ? spec.tool_concurrency : 1,
      policy: (call) => ({
        exclusive: deps.registry.resolve(call.name)?.definition.parallel === false,
        needsApproval: this.approvals.needs(call),
      }),
      approve: (call) => this.approvals.decide(call, turn, this.signal),
      ...(this.runDeps.hooks === undefined ? {} : { hooks: this.runDeps.hooks }),
      ...(this.runDeps.beforeToolRun === undefined ? {} : { beforeRun: this.runDeps.beforeToolRun }),
    });
  }

  private turnInput(runner: ToolRunner, body: CreateResponseBody, firstAttempt: number): TurnInput {
    return {
      channel: this.channel,
      provider: this.runDeps.provider,
      turn: this.turn,
      body,
      firstAttempt,
      signal: this.signal,
      toolExecution: this.spec.tool_execution,
      runner,
      admit: (call: AssembledCall) => this.admit(call),
      nativeCalls: this.nativeCalls,
      remainingToolCalls: this.budget.remaining,
    };
  }

  /** Whether a call may run: tools on, offered in this turn, within the budget and `tool_choice`. */
  private admit(call: AssembledCall) {
    if (this.toolsOff)
      return { code: "tool_not_allowed", message: "No tools are offered in this request; answer in text." };
    const offered = this.prepared?.tools;
    if (offered !== undefined && !offered.includes(call.name))
      return { code: "tool_not_allowed", message: `The tool ${call.name} is not offered in this turn.` };
    return this.budget.admit(call, this.prepared?.tool_choice ?? this.toolChoice);
  }

  /** The next request body; the pairing check's repairs and a threshold fold are reported first. */
  private nextBody(): CreateResponseBody | Promise<CreateResponseBody> {
    const next = this.conversation.nextInput(this.signal);
    return next instanceof Promise ? next.then((n) => this.bodyOf(n)) : this.bodyOf(next);
  }

  private bodyOf(next: NextInput): CreateResponseBody {
    const { spec } = this;
    if (next.repairs.length > 0)
      this.channel.emit(frame("history_repaired", { turn: this.turn, repairs: next.repairs }));
    if (next.compaction !== undefined)
      this.channel.emit(frame("context_compacted", { turn: this.turn, ...next.compaction }));
    const turn = this.prepared;
    return buildRequestBody({
      model: turn?.model ?? spec.model,
      instructions: turn?.instructions ?? spec.instructions,
      input: next.input,
      mode: this.conversation.mode,
      previousResponseId: next.previousResponseId,
      tools: this.toolsOff
        ? []
        : toolDeclarations(turnRegistry(this.deps.registry, turn?.tools), {
            native: this.nativeTools,
            shell: spec.native_shell,
            hosted: spec.hosted_tools,
          }),
      sendTools: this.turn === 0 || spec.tools_on_follow_up === "every_request",
      toolChoice: turn?.tool_choice ?? this.toolChoice,
      parallelToolCalls: spec.parallel_tool_calls,
      remainingToolCalls: this.budget.remaining,
      capabilities: this.runDeps.provider.capabilities,
      textFormat: this.deps.structured?.format,
      extra:
        turn?.max_output_tokens === undefined
          ? spec.request
          : { ...spec.request, max_output_tokens: turn.max_output_tokens },
    });
  }

  /** Emits `turn_ended`, records the turn in the conversation and decides what comes next. */
  private recordTurn(runner: ToolRunner, streamed: TurnOutcome): TurnDecision {
    const { outcome } = streamed;
    const response = outcome.response;
    this.lastResponse = response;
    if (response.id !== null) this.lastResponseId = response.id;
    addUsage(this.usage, response.usage);
    this.channel.emit(
      frame("turn_ended", {
        turn: this.turn,
        response_id: response.id,
        // A response the loop stopped reading (turn.ts) was cancelled by eddy, whatever came of it.
        status: streamed.cutAfterCalls === undefined ? turnStatus(outcome) : "cancelled",
        usage: response.usage,
      }),
    );
    this.turn++;
    const answered = runner.answered;
    this.lastAnswered = answered;
    for (const a of answered) this.allCalls.push(a.call.name);
    this.conversation.record(response, answered);
    if (answered.length > 0) this.signatures.push(callsSignature(answered));
    return decideAfterTurn({
      outcome,
      answered,
      budgetExceeded: this.budget.exceeded,
      // A cancellation wins over a cut (both stop the request).
      ...(streamed.cutAfterCalls === undefined || this.signal.aborted
        ? {}
        : { cutAfterCalls: streamed.cutAfterCalls }),
      turnsDone: this.turn,
      maxTurns: this.maxTurns,
      identicalTurns: identicalTail(this.signatures, answered.length > 0),
      identicalTurnsLimit: LOOP_DEFAULTS.identicalTurnsLimit,
      structured: this.deps.structured?.check,
    });
  }

  /**
   * `continueIncomplete`: a final answer cut off by `max_output_tokens` is continued once — a
   * follow-up asks the model to go on, and the run's text is both parts together.
   */
  private continuesCutAnswer(decision: TurnDecision, runner: ToolRunner): boolean {
    const response = this.lastResponse;
    if (
      !this.spec.continue_incomplete ||
      this.continuedText !== undefined ||
      decision.next !== "end" ||
      decision.reason !== "incomplete" ||
      response?.incompleteReason !== "max_output_tokens" ||
      runner.answered.length > 0 ||
      response.calls.length > 0 ||
      response.outputText === "" ||
      this.turn >= this.maxTurns
    )
      return false;
    this.continuedText = response.outputText;
    this.conversation.addUserMessage(LOOP_DEFAULTS.continuePrompt);
    return true;
  }

  private prepareFollowUp(): void {
    if (this.spec.reset_tool_choice) this.toolChoice = relaxToolChoice(this.toolChoice);
    if (!this.conversation.followUp()) this.switchToStateless("the response had no id to continue from");
  }

  /**
   * The turn's deferred calls wait for a decision from a later process (`eddy resume --decide`).
   * An agent tool's call whose sub-agent waits is recorded first (`tool_deferred`, with the
   * sub-run's frames); its waiting calls are named `CALL_ID/SUB_CALL_ID`.
   */
  private endAwaitingApproval(runner: ToolRunner): RunResult {
    const pending: string[] = [];
    for (const call of runner.deferred) {
      const nested = runner.deferredSubRuns.get(call.callId);
      if (nested === undefined) {
        pending.push(call.callId);
        continue;
      }
      const ids = nested.pending.map((id) => `${call.callId}/${id}`);
      pending.push(...ids);
      this.channel.emit(
        frame("tool_deferred", {
          turn: this.turn - 1,
          call_id: call.callId,
          name: call.name,
          pending_calls: ids,
          subrun: nested.subrun,
        }),
      );
    }
    return this.end(
      "awaiting_approval",
      {
        code: "awaiting_approval",
        message: `${pending.length} call${pending.length === 1 ? "" : "s"} await${pending.length === 1 ? "s" : ""} approval: ${pending.join(", ")}`,
      },
      { pending },
    );
  }

  private end(reason: RunEndReason, error?: FrameError, extra: EndExtra = {}): RunResult {
    const { result, pending } = extra;
    const outputText = (this.continuedText ?? "") + (this.lastResponse?.outputText ?? "");
    const ended = frame("run_ended", {
      reason,
      output_text: outputText,
      response_id: this.lastResponseId,
      usage: this.usage,
      turns: this.turn,
      tool_calls: this.budget.used,
    });
    if (error !== undefined && reason !== "completed" && reason !== "terminal_tool") ended.error = error;
    if (result !== undefined) ended.result = result;
    if (pending !== undefined) ended.pending_calls = pending;
    if (extra.stopCondition !== undefined) ended.stop_condition = extra.stopCondition;
    if (extra.limitAnswer === true) ended.limit_answer = true;
    // The result says what the (masked) frame says.
    const sent = this.channel.emit(ended);
    this.channel.close();
    const out: RunResult = {
      runId: this.channel.runId,
      reason,
      outputText: sent.output_text,
      responseId: sent.response_id,
      usage: this.usage,
      items: this.conversation.items,
      turns: this.turn,
      toolCalls: this.budget.used,
    };
    if (sent.error !== undefined) out.error = sent.error;
    if (sent.result !== undefined) out.result = sent.result;
    if (sent.pending_calls !== undefined) out.pendingCalls = sent.pending_calls;
    if (sent.stop_condition !== undefined) out.stopCondition = sent.stop_condition;
    return out;
  }
}

/** What `run_ended` carries besides the reason and error. */
interface EndExtra {
  result?: unknown;
  pending?: string[];
  stopCondition?: string;
  limitAnswer?: boolean;
}

/** The run's tools narrowed to a turn's selection (`prepareTurn`). */
function turnRegistry(registry: ToolRegistry, names: readonly string[] | undefined): ToolRegistry {
  if (names === undefined) return registry;
  return withoutTools(registry, new Set(registry.names().filter((n) => !names.includes(n))));
}

/** The input's text, for input guardrails (the text parts of input items, one per line). */
function inputText(input: RunSpec["input"]): string {
  if (typeof input === "string") return input;
  const texts: string[] = [];
  for (const item of input as unknown as JsonObject[]) {
    const content = item.content;
    if (typeof content === "string") texts.push(content);
    else if (Array.isArray(content))
      for (const part of content as JsonObject[]) if (typeof part.text === "string") texts.push(part.text);
  }
  return texts.join("\n");
}

/** The limits `on_limit: "answer"` applies to. */
function isLimit(reason: RunEndReason): boolean {
  return reason === "max_turns" || reason === "max_tool_calls";
}

/** `run_started.input`: the input as given, after the context items when the run starts from a context. */
function startInput(spec: RunSpec): string | ItemParam[] {
  const input = typeof spec.input === "string" ? spec.input : [...spec.input];
  if (spec.context === undefined) return input;
  const own = typeof input === "string" ? [userMessageItem(input) as ItemParam] : input;
  return [...spec.context.items, ...own];
}

/** `turn_ended.status`: the response status, `cancelled`, or `error` when no terminal event came. */
function turnStatus(outcome: TurnOutcome["outcome"]): string {
  if (outcome.ok) return outcome.response.status;
  if (outcome.error.kind === "cancelled") return "cancelled";
  return outcome.response.terminal === null ? "error" : outcome.response.status;
}

/** Every call's context gets what the run lends its tools, whoever executes it (a resume's executor too). */
function lendingParent(executor: ToolExecutor, parent: () => AgentToolParent): ToolExecutor {
  return (call, context) => executor(call, { ...context, parent: parent() });
}

/** Executes calls with the run's registry, in its workspace, with its timeouts and output cap. */
function registryExecutor(spec: RunSpec, runDeps: RunDeps, deps: LoopDeps): ToolExecutor {
  return (call, context) => {
    const execOptions: Parameters<typeof executeToolCall>[2] = {
      signal: context.signal,
      workspace: deps.workspace,
    };
    if (spec.tool_timeout_ms !== undefined) execOptions.timeoutMs = spec.tool_timeout_ms;
    if (spec.tool_output_cap_bytes !== undefined) execOptions.outputCapBytes = spec.tool_output_cap_bytes;
    if (runDeps.provider.capabilities.toolOutputImages) execOptions.imagesInOutput = true;
    if (context.parent !== undefined) execOptions.parent = context.parent;
    return executeCall(deps.registry, call, execOptions);
  };
}

/** What the run lends its tools (`ToolContext.parent`): what an `agentTool` runs its sub-agent with. */
function toolParent(
  spec: RunSpec,
  runDeps: RunDeps,
  deps: LoopDeps,
  agentRuns: { started: number },
): AgentToolParent {
  const parent: AgentToolParent = {
    provider: runDeps.provider,
    tools: deps.allTools,
    workspace: deps.workspace,
    agentRuns,
  };
  if (spec.model !== null) parent.model = spec.model;
  if (runDeps.policy !== undefined) parent.policy = runDeps.policy;
  if (deps.onApproval !== undefined) parent.onApproval = deps.onApproval;
  if (runDeps.hooks !== undefined) parent.hooks = runDeps.hooks;
  if (runDeps.secrets !== undefined) parent.secrets = runDeps.secrets;
  if (runDeps.resumeSubRun !== undefined) parent.resumeSubRun = runDeps.resumeSubRun;
  if (runDeps.agentDepth !== undefined) parent.depth = runDeps.agentDepth;
  return parent;
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

/** The workspace's real path; a missing one (or a file) is a usage error before anything is sent. */
function resolveWorkspace(path: string): string {
  try {
    // The native realpath(3): one call, where node's JS realpath lstat()s every component of the
    // path (half the CPU for a 5-component path, bench/README.md "The turn"). Of `PATH/.`, so the
    // same call refuses a file (ENOTDIR) without a stat.
    if (typeof path === "string" && path.length > 0) return realpathSync.native(`${path}/.`);
  } catch {}
  throw new EddyError(
    "invalid_config",
    `workspace ${JSON.stringify(path)} does not exist or is not a directory`,
    {
      fault: "user",
    },
  );
}

function toRegistry(tools: RunDeps["tools"]): ToolRegistry {
  if (tools === undefined) return createToolRegistry([]);
  if (Array.isArray(tools)) return createToolRegistry(tools);
  const registry = tools as Partial<ToolRegistry> | null;
  if (typeof registry?.names !== "function" || typeof registry.resolve !== "function")
    throw new EddyError(
      "invalid_argument",
      "deps.tools: give an array of tools (defineTool) or a registry (createToolRegistry)",
      { fault: "user" },
    );
  return tools as ToolRegistry;
}

function structuredCheck(schema: RunSpecOutputSchema): {
  check: StructuredOutputCheck;
  format: JsonObject;
} {
  // A spec is data (a task line, a queue job, a serve request, a tape): its patterns run on RE2, in
  // linear time, so a crafted answer cannot freeze the process (docs/pitfalls.md #102).
  const compiled = compileSchema(`output schema "${schema.name}"`, schema.schema, { untrusted: true });
  const format: JsonObject = { type: "json_schema", name: schema.name };
  if (schema.description !== undefined) format.description = schema.description;
  format.schema = compiled.jsonSchema;
  format.strict = schema.strict;
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
