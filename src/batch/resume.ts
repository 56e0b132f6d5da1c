/**
 * Resuming a run from its tape after the process died (SIGKILL, OOM, power) or the run was
 * cancelled: the run is rebuilt from the tape's header and driven through the replay machinery
 * (src/replay/*) up to the resume point — recorded responses and tool outputs, released where the
 * tape has them — and goes on live from there, in the same loop, with the same run id. So:
 *
 * - every tool call whose output is recorded is not run again (its recorded output is used);
 * - no response that was received in full is requested again: the resume point is after the last
 *   complete turn, or inside the unfinished turn when its response had ended (its calls without a
 *   recorded output then run);
 * - the next request continues from the last response — chained on its id, and when the provider
 *   no longer has it (`previous_response_not_found`), stateless from the history the replayed
 *   turns rebuilt (the loop's own fallback, docs/decisions.md #5);
 * - the resumed tape is the run's whole tape: the reproduced frames, then the live ones, so it
 *   replays like any other (`eddy replay`); its header's `resumes` says where it was resumed.
 *
 * At most once (docs/architecture.md, "Resuming a run"): a call that had started when the process
 * died (`tool_started` recorded, no `tool_ended`) may have had its effects, so it is not run again
 * — it is answered `ok:false`, saying it was interrupted — unless its tool is idempotent (the
 * read-only built-ins are) or the local policy says `rerunInterrupted`. When the interrupted call's
 * response was cut off too, the turn is requested again; a call the model then makes with the same
 * tool and arguments is answered the same way. Calls that had not started run under the local
 * policy and approval mode, never with permissions taken from the tape.
 *
 * A run that ended `awaiting_approval` (`approve: "defer"`) resumes inside its last turn: the
 * deferred calls are decided (`decide`, else the local approval mode) once every recorded frame is
 * reproduced, then run or answered as denied, and the run goes on.
 *
 * A run on a thread (`spec.thread`) appends its outcome to the thread's log again when the resumed
 * run ends (`ResumeOptions.thread`): the log keeps a run's last outcome, so the thread's next run
 * continues from what the resumed run did, not from the calls it had left waiting.
 */
import { createThreadStore, type ThreadStore } from "../context/threads.js";
import { finishThreadRun, type ThreadRunRef } from "../context/threads-run.js";
import { EddyError } from "../errors.js";
import type { Frame, RunEndReason, ToolDeferredFrame } from "../frames/frame.js";
import type { ApprovalHandler } from "../loop/approvals.js";
import type { FrameObserver } from "../loop/frame-channel.js";
import { resumedHooks, type ToolHooks } from "../loop/hooks.js";
import type { RunDeps, RunHandle, RunResult, SubRunResumer, ToolExecutor } from "../loop/options.js";
import { assertPolicy, DEFAULT_POLICY, type Policy } from "../loop/policy.js";
import { runAgent } from "../loop/run.js";
import { type BudgetOverrun, type PartialRunSpec, type RunSpec, resolveRunSpec } from "../loop/run-spec.js";
import type { Provider } from "../provider/provider.js";
import { createFrameGate } from "../replay/gate.js";
import {
  askedForApprovals,
  compareFrames,
  deferredSubRuns,
  recordedToolExecutor,
  runFromTape,
} from "../replay/replay.js";
import { createReplayProvider, providerSegments } from "../replay/replay-provider.js";
import type { Tape, TapeHeader, TapeResume } from "../replay/tape.js";
import { executeToolCall, refusedToolOutput } from "../tools/execute.js";
import type { ToolRegistry } from "../tools/registry.js";
import { usableSecrets } from "../util/redact.js";
import { resumeBudgets } from "./resume-budgets.js";

/** End reasons that leave a run worth resuming: it was stopped from outside, not by its model or a limit. */
const RESUMABLE_ENDS: ReadonlySet<RunEndReason> = new Set([
  "cancelled",
  "provider_error",
  "awaiting_approval",
]);
/** `turn_ended` statuses of a turn that did not get its response (it is requested again). */
const UNFINISHED_TURNS: ReadonlySet<string> = new Set(["error", "cancelled"]);
/** Terminal events after which a response is complete (a `failed` one is retried, so it is not). */
const COMPLETE_RESPONSES: ReadonlySet<string> = new Set(["response.completed", "response.incomplete"]);

/** A call that had started when the process died (no `tool_ended` recorded). */
export interface InterruptedCall {
  turn: number;
  callId: string;
  name: string;
  arguments: string;
  /** Its frames are kept (its response had ended): it is answered in place. Else its turn is requested again. */
  kept: boolean;
}

/** Where a tape can be resumed, or why it cannot. */
export type ResumePlan =
  | { status: "resumable"; point: Omit<TapeResume, "ts">; interrupted: InterruptedCall[] }
  | { status: "ended"; reason: RunEndReason };

/**
 * Where the run of `tape` would be resumed: after the last complete turn, or after everything
 * recorded when the unfinished turn's response had ended (inside the last turn for a run awaiting
 * approval). A run that ended by itself (any reason but `cancelled`, `provider_error` or
 * `awaiting_approval`) is not resumable.
 */
export function planResume(tape: Tape): ResumePlan {
  const { frames } = tape;
  const ended = frames.find((f) => f.type === "run_ended");
  if (ended !== undefined && ended.type === "run_ended" && !RESUMABLE_ENDS.has(ended.reason))
    return { status: "ended", reason: ended.reason };
  // Nothing from the cancellation on is reusable: outputs after it say "cancelled". A run awaiting
  // approval is cut before its last turn ended: the deferred calls are answered inside that turn.
  let cut = frames.findIndex((f) => f.type === "cancel_requested" || f.type === "run_ended");
  if (cut === -1) cut = frames.length;
  if (ended?.type === "run_ended" && ended.reason === "awaiting_approval") cut = lastTurnEnd(frames, cut);
  let lastTurn = -1;
  let turns = 0;
  for (let i = 0; i < cut; i++) {
    const f = frames[i] as Frame;
    if (f.type === "turn_ended" && !UNFINISHED_TURNS.has(f.status)) {
      lastTurn = i;
      turns = f.turn + 1;
    }
  }
  const firstRequest = indexAfter(frames, lastTurn, cut, (f) => f.type === "request_started");
  let at = firstRequest === -1 ? cut : firstRequest;
  if (firstRequest !== -1 && responseEnded(frames, lastTurn, cut)) at = cut;
  const count = (from: number, to: number) =>
    frames.slice(from, to).filter((f) => f.type === "tool_ended").length;
  // An agent tool's call whose sub-agent waits (`tool_deferred`) is re-entered, not interrupted.
  const deferred = deferredSubRuns(frames);
  const interrupted = interruptedCalls(frames, cut, at).filter((c) => !deferred.has(`${c.turn}:${c.callId}`));
  return {
    status: "resumable",
    point: {
      at_seq: at,
      turn: turns,
      reused_tool_outputs: count(0, at),
      dropped_frames: frames.length - at,
      dropped_tool_outputs: count(at, cut),
      interrupted_calls: interrupted.length,
    },
    interrupted,
  };
}

/** The index of the last `turn_ended` before `cut` (the turn a deferred run stopped in), else `cut`. */
function lastTurnEnd(frames: readonly Frame[], cut: number): number {
  for (let i = cut - 1; i >= 0; i--) if (frames[i]?.type === "turn_ended") return i;
  return cut;
}

/** Calls started before `cut` without a `tool_ended`: kept when started before `at`. */
function interruptedCalls(frames: readonly Frame[], cut: number, at: number): InterruptedCall[] {
  const calls = new Map<string, { name: string; arguments: string }>();
  const started = new Map<string, InterruptedCall>();
  for (let i = 0; i < cut; i++) {
    const f = frames[i] as Frame;
    const key = `${"turn" in f ? f.turn : -1}:${"call_id" in f ? f.call_id : ""}`;
    if (f.type === "tool_call") calls.set(key, { name: f.name, arguments: f.arguments });
    else if (f.type === "tool_started") {
      const call = calls.get(key);
      started.set(key, {
        turn: f.turn,
        callId: f.call_id,
        name: f.name,
        arguments: call?.arguments ?? "",
        kept: i < at,
      });
    } else if (f.type === "tool_ended") started.delete(key);
  }
  return [...started.values()];
}

/** True when the last attempt after `from` got a complete response before `to`. */
function responseEnded(frames: readonly Frame[], from: number, to: number): boolean {
  let lastAttempt = -1;
  for (let i = from + 1; i < to; i++) if (frames[i]?.type === "request_started") lastAttempt = i;
  if (lastAttempt === -1) return false;
  for (let i = lastAttempt + 1; i < to; i++) {
    const f = frames[i] as Frame;
    // The derived end says it for every wire format (a Chat Completions choice's finish, an AI SDK
    // `finish` part); the provider's own terminal event for tapes made before it was derived.
    if (f.type === "response_ended" && (f.status === "completed" || f.status === "incomplete")) return true;
    if (f.type !== "provider_event" || f.status !== "event") continue;
    const type = (f.data as { type?: unknown } | undefined)?.type;
    if (typeof type === "string" && COMPLETE_RESPONSES.has(type)) return true;
  }
  return false;
}

function indexAfter(frames: readonly Frame[], from: number, to: number, test: (f: Frame) => boolean): number {
  for (let i = from + 1; i < to; i++) if (test(frames[i] as Frame)) return i;
  return -1;
}

/** Options of `resumeRun`. */
export interface ResumeOptions {
  /** The live provider for the requests after the resume point. */
  provider: Provider;
  /** The tools, as the local policy allows them (the same names the recorded run offered). */
  registry: ToolRegistry;
  workspace: string;
  /**
   * What the local invocation allows: the tape's tools must fit it (`policy_denied` otherwise),
   * its `approve` mode decides live calls that need approval, `rerunInterrupted` re-runs calls a
   * crash interrupted. @defaultValue DEFAULT_POLICY (read-only; nothing asked)
   */
  policy?: Policy;
  /** Asks about live calls that need approval when the policy says `ask`. @defaultValue none */
  onApproval?: ApprovalHandler;
  /**
   * Decisions for calls awaiting approval, by call id (`all` for every one not named), given once
   * every recorded frame is reproduced. Calls not decided here go to the approval mode.
   * @defaultValue none
   */
  decide?: Readonly<Record<string, "allow" | "deny">>;
  /** @defaultValue none */
  signal?: AbortSignal;
  /**
   * Steering messages for the live part (`RunDeps.steering`), asked from the resume point's turn
   * on, after those the tape recorded. @defaultValue none
   */
  steering?: RunDeps["steering"];
  /**
   * This invocation's tool-call hooks (`RunDeps.hooks`): they decide every call of the live part,
   * and a call the tape left at the point before its hook; decisions the tape recorded are given
   * back, and calls it settled without a hook stay so (`resumedHooks`). @defaultValue none
   */
  hooks?: ToolHooks;
  /** More values to mask in every frame. @defaultValue none */
  secrets?: readonly string[];
  /**
   * The resuming invocation's own settings, which cap the tape's budgets: each of `max_turns`,
   * `max_tool_calls`, `tool_concurrency`, `tool_timeout_ms`, `tool_output_cap_bytes` the tape asks
   * is at most this one's, or the default where this sets none, and `request.max_output_tokens` at
   * most this one's when it sets one (`withinBudgets`; a tape is input from elsewhere, so it may
   * lower a budget, never raise it). What was lowered is `ResumeHandle.lowered`. A tape whose
   * recorded part already used more of a lowered budget than it now has is refused, naming it.
   * Fields other than budgets are not read. @defaultValue none (the defaults)
   */
  budgets?: PartialRunSpec;
  /** How many agent calls the resumed run is nested in (`RunDeps.agentDepth`). @defaultValue 0 */
  agentDepth?: number;
  /** The agent calls its tree started so far (`RunDeps.agentRuns`). @defaultValue a count of its own */
  agentRuns?: { started: number };
  /** Sees every frame, the reproduced ones included (record them: they are the resumed tape). @defaultValue none */
  onFrame?: FrameObserver;
  /**
   * Called once the run has reproduced every reusable frame of the tape, before anything live:
   * from then on the new tape holds all the old one had worth keeping (replace the old one now).
   * @defaultValue none
   */
  onResumed?: (point: TapeResume) => void;
  /** Awaited between a call's `tool_started` and its run (`RunDeps.beforeToolRun`). @defaultValue none */
  beforeToolRun?: (signal: AbortSignal) => Promise<void>;
  /**
   * For a run on a thread (the tape's `spec.thread`): the store of its thread, and the tape path its
   * outcome record names. When the resumed run ends its outcome is appended to the thread's log,
   * if the log has the run's prompt (a tape naming a thread it never ran on changes nothing).
   * Holding the thread while the run goes on is the caller's (`ThreadStore.hold`).
   * @defaultValue the workspace's threads (`createThreadStore({ workspace })`), no tape path
   */
  thread?: { store?: ThreadStore; tape?: string };
}

/** A resumed run: a run handle, where it resumed, and the header its tape should have. */
export interface ResumeHandle extends RunHandle {
  readonly point: TapeResume;
  /**
   * The tape's header with this resumption added to `resumes`, and its spec's budgets as the
   * resumed run has them (`ResumeOptions.budgets`).
   */
  readonly header: TapeHeader;
  /** Each budget the tape asked above this invocation's: the run has the invocation's (the `limit`). */
  readonly lowered: readonly BudgetOverrun[];
}

/** The local policy (DEFAULT_POLICY when none is given), once it allows every tool and hosted tool of the tape's spec. */
function allowedPolicy(tape: Tape, given: Policy | undefined): Policy {
  const policy = given ?? DEFAULT_POLICY;
  const { tools, hosted_tools } = tape.header.spec;
  assertPolicy(
    tools ?? [],
    policy,
    "the tape's run offers tools this invocation does not allow",
    hosted_tools ?? [],
  );
  return policy;
}

/**
 * Resumes the run of `tape` (see the module comment). Throws a user error when the run already
 * ended by itself, or when its tools need a permission the local policy does not grant (naming
 * the flag). `result` rejects with `replay_mismatch` when the tape does not reproduce (the tools
 * or settings differ from the recorded run's); the old tape is then still the truth.
 *
 * @example
 * ```ts
 * const tape = readTape("run.tape");
 * const run = resumeRun(tape, { provider, registry, workspace: process.cwd(), onFrame: recorder.observer });
 * for await (const frame of run) if (frame.type === "output_text_delta") process.stdout.write(frame.delta);
 * console.log((await run.result).reason, "resumed at frame", run.point.at_seq);
 * ```
 */
export function resumeRun(tape: Tape, options: ResumeOptions): ResumeHandle {
  const plan = planResume(tape);
  if (plan.status === "ended") {
    throw new EddyError(
      "invalid_argument",
      `the run already ended (${plan.reason}); there is nothing to resume`,
      { fault: "user" },
    );
  }
  const policy = allowedPolicy(tape, options.policy);
  checkDecisions(tape, options.decide);
  // The tape's budgets are at most this invocation's: a tape may lower them, never raise them.
  const budgets = resumeBudgets(tape, plan.point.at_seq, options.budgets ?? {});
  const point: TapeResume = { ...plan.point, ts: Date.now() };
  const header: TapeHeader = { ...tape.header, spec: budgets.spec };
  const prefix: Tape = { header, frames: tape.frames.slice(0, point.at_seq) };
  const gate = createFrameGate();
  const controller = new AbortController();
  const onAbort = () => controller.abort(options.signal?.reason);
  if (options.signal?.aborted) onAbort();
  else options.signal?.addEventListener("abort", onAbort, { once: true });

  const { spec, deps } = runFromTape(prefix, {
    provider: resumingProvider(prefix, gate, options.provider),
    gate,
    registry: options.registry,
    workspace: options.workspace,
    signal: controller.signal,
    policy,
    executeTool: recordedToolExecutor(prefix, gate, {
      registry: options.registry,
      onMissing: atMostOnce(plan.interrupted, options.registry, budgets.spec, policy, () =>
        gate.wait(point.at_seq),
      ),
    }),
    ...unrecordedApprovals(tape, options, policy, () => gate.wait(point.at_seq)),
  });
  addLiveDeps(deps, options, point.turn, prefix.frames);
  deps.resumeSubRun = subRunResumer(tape, options, policy);
  if (options.agentDepth !== undefined) deps.agentDepth = options.agentDepth;
  if (options.agentRuns !== undefined) deps.agentRuns = options.agentRuns;
  const reproduction = reproducing(prefix, point, budgets.expected, gate.observer, options, () =>
    controller.abort("the tape does not reproduce, so the run cannot be resumed"),
  );
  deps.onFrame = reproduction.observe;
  const handle = runAgent(spec, deps);
  const onThread = threadRunOfTape(tape, [...(options.provider.secrets ?? []), ...(options.secrets ?? [])]);
  const result = handle.result.then(async (r) => {
    options.signal?.removeEventListener("abort", onAbort);
    const diverged = reproduction.diverged();
    if (diverged !== undefined && !diverged.match) {
      throw new EddyError(
        "replay_mismatch",
        `the tape does not reproduce at frame ${diverged.index} (expected ${diverged.expected?.type ?? "nothing"}, got ${diverged.actual?.type ?? "nothing"}): resume it with the tools and settings it was recorded with`,
        { fault: "user" },
      );
    }
    if (onThread !== undefined) await finishOnThread(onThread, r, options);
    return r;
  });
  // A rejection nobody awaited yet must not crash the process before the caller gets to it.
  result.catch(() => {});
  return {
    runId: handle.runId,
    spec: handle.spec,
    result,
    point,
    header: { ...header, resumes: [...(tape.header.resumes ?? []), point] },
    lowered: budgets.lowered,
    cancel: (reason) => controller.abort(reason ?? "cancelled"),
    [Symbol.asyncIterator]: () => handle[Symbol.asyncIterator](),
  };
}

/**
 * The resumed run's frame observer: each frame below the resume point is compared with the
 * recorded one (as the run under the resumed budgets sends it, `expected`) — the first that
 * differs stops the run (`mismatch`) — and `onResumed` is called once the last is reproduced.
 */
function reproducing(
  prefix: Tape,
  point: TapeResume,
  expected: (frame: Frame) => Frame,
  gateObserver: (frame: Frame) => void,
  options: ResumeOptions,
  mismatch: () => void,
): { observe: FrameObserver; diverged: () => ReturnType<typeof compareFrames> | undefined } {
  let diverged: ReturnType<typeof compareFrames> | undefined;
  const observe: FrameObserver = (frame) => {
    gateObserver(frame);
    let complete = false;
    if (frame.seq < point.at_seq && diverged === undefined) {
      const verdict = compareFrames([expected(prefix.frames[frame.seq] as Frame)], [frame]);
      if (!verdict.match) {
        diverged = { ...verdict, index: frame.seq };
        mismatch();
      } else complete = frame.seq === point.at_seq - 1;
    } else complete = point.at_seq === 0 && frame.seq === 0;
    options.onFrame?.(frame);
    // After the observer: the new tape holds the last reproduced frame before it replaces the old one.
    if (complete) options.onResumed?.(point);
  };
  return { observe, diverged: () => diverged };
}

/** Every call `decide` names must be one the tape's run waits for (`all` aside). */
function checkDecisions(tape: Tape, decide: ResumeOptions["decide"]): void {
  const ended = tape.frames.findLast((f) => f.type === "run_ended");
  const pending = ended?.type === "run_ended" ? (ended.pending_calls ?? []) : [];
  const unknown = Object.keys(decide ?? {}).find((id) => id !== "all" && !pending.includes(id));
  if (unknown === undefined) return;
  throw new EddyError(
    "invalid_argument",
    `decide: the tape's run does not wait for a call ${JSON.stringify(unknown)} (${pending.length === 0 ? "it waits for none" : `it waits for ${pending.join(", ")}`})`,
    { fault: "user" },
  );
}

/**
 * The thread run a tape records (its spec's `thread`), as `finishThreadRun` needs it; undefined for
 * a run on no thread. `secrets` are what the log masks.
 */
export function threadRunOfTape(
  tape: Tape,
  secrets: readonly (string | undefined)[],
): ThreadRunRef | undefined {
  const { spec } = tape.header;
  if (spec.thread === undefined || typeof spec.input !== "string") return undefined;
  return {
    thread: spec.thread,
    runId: spec.run_id ?? tape.header.run_id,
    prompt: spec.input,
    contextItems: spec.context?.items.length ?? 0,
    secrets: usableSecrets(secrets),
  };
}

/** The resumed run's outcome appended to its thread's log, when the log has the run (`ResumeOptions.thread`). */
async function finishOnThread(ref: ThreadRunRef, result: RunResult, options: ResumeOptions): Promise<void> {
  const store = options.thread?.store ?? createThreadStore({ workspace: options.workspace });
  const log = await store.read(ref.thread);
  if (!log.runs.some((run) => run.run_id === ref.runId)) return;
  const tape = options.thread?.tape;
  await finishThreadRun(store, ref, result, tape === undefined ? {} : { tape });
}

/**
 * The secrets to mask, the write-ahead wait before a tool runs, the hooks (`resumedHooks`: the
 * tape's decisions, then this invocation's), and steering: the tape's messages, then, from the
 * resume point's turn on, the live ones.
 */
function addLiveDeps(
  deps: RunDeps,
  options: ResumeOptions,
  from: number,
  tapeFrames: readonly Frame[],
): void {
  if (options.secrets !== undefined) deps.secrets = options.secrets;
  if (options.beforeToolRun !== undefined) deps.beforeToolRun = options.beforeToolRun;
  if (options.hooks !== undefined || deps.hooks !== undefined)
    deps.hooks = resumedHooks(tapeFrames, deps.hooks, options.hooks ?? {});
  const live = options.steering;
  if (live === undefined) return;
  const recorded = deps.steering;
  deps.steering = (ctx) => [...(recorded?.(ctx) ?? []), ...(ctx.turn >= from ? (live(ctx) ?? []) : [])];
}

/** The live approval handler a resume needs: none when nothing is decided or asked under `auto`. */
function unrecordedApprovals(
  tape: Tape,
  options: ResumeOptions,
  policy: Policy,
  reproduced: () => Promise<void>,
): { onUnrecordedApproval?: ApprovalHandler } {
  if (policy.approve === "auto" && options.decide === undefined && !askedForApprovals(tape)) return {};
  return { onUnrecordedApproval: liveApprovals(options, policy, reproduced, askedCalls(tape)) };
}

/** The calls the tape asked about, by call id: the name and arguments the user was shown. */
function askedCalls(tape: Tape): Map<string, { name: string; arguments: string }> {
  const asked = new Map<string, { name: string; arguments: string }>();
  for (const f of tape.frames)
    if (f.type === "approval_requested") asked.set(f.call_id, { name: f.name, arguments: f.arguments });
  return asked;
}

/**
 * Decides live calls that need approval: a `decide` entry (once the recorded frames are all
 * reproduced, so the decision lands after them), else the local approval mode. A decision applies
 * only to the call it was given for — the same id with the name and arguments the tape asked
 * about: a call the model makes anew (a turn the resume had to send again) is another call, and
 * goes to the approval mode, whatever its id.
 */
function liveApprovals(
  options: ResumeOptions,
  policy: Policy,
  reproduced: () => Promise<void>,
  asked: ReadonlyMap<string, { name: string; arguments: string }>,
): ApprovalHandler {
  return async (request) => {
    // Decided only once the tape is reproduced: a decision frame before the recorded ones would
    // not reproduce (the deferred calls of a tape are asked at its last turn, before its end).
    await reproduced();
    const shown = asked.get(request.callId);
    const same = shown !== undefined && shown.name === request.name && shown.arguments === request.arguments;
    const given = same ? (options.decide?.[request.callId] ?? options.decide?.all) : undefined;
    if (given !== undefined) return given;
    switch (policy.approve) {
      case "ask":
        return options.onApproval === undefined ? "deny" : options.onApproval(request);
      case "deny":
        return "deny";
      case "defer":
        return "defer";
      default:
        return "allow";
    }
  };
}

/**
 * Re-enters the sub-runs of agent tool calls that ended awaiting approval (`tool_deferred`): each
 * sub-run is resumed from its recorded frames like a tape of its own — the parent's header with
 * the sub-agent's spec (rebuilt by the agent tool, with the recorded run id) — under the same
 * local policy, the decisions named `CALL_ID/SUB_CALL_ID` (and `all`) given to it by its own ids.
 * A nested sub-run waiting in turn is re-entered the same way (resumeRun gives it a resumer too).
 */
function subRunResumer(tape: Tape, options: ResumeOptions, policy: Policy): SubRunResumer {
  const last = lastTurnDeferrals(tape.frames);
  return (request) => {
    const recorded = last.get(request.callId);
    if (recorded === undefined) return undefined;
    last.delete(request.callId); // once: a later call with the same id starts afresh
    const frames = recorded.subrun.frames;
    const runId = frames[0]?.run_id ?? "";
    const spec = resolveRunSpec({ ...request.spec, run_id: runId }, `the agent ${request.agent}`);
    const { mcp_servers: _s, mcp_tools: _t, agents: _a, resumes: _r, ...header } = tape.header;
    const prefix = `${request.callId}/`;
    const decide: Record<string, "allow" | "deny"> = {};
    for (const [id, decision] of Object.entries(options.decide ?? {}))
      if (id === "all") decide.all = decision;
      else if (id.startsWith(prefix)) decide[id.slice(prefix.length)] = decision;
    return resumeRun(
      { header: { ...header, run_id: runId, spec }, frames },
      {
        provider: options.provider,
        registry: request.tools,
        workspace: request.workspace,
        policy,
        ...(options.onApproval === undefined ? {} : { onApproval: options.onApproval }),
        ...(Object.keys(decide).length === 0 ? {} : { decide }),
        signal: request.signal,
        ...(options.secrets === undefined ? {} : { secrets: options.secrets }),
        // The sub-agent's budgets are its definition's, from this process (not the tape's).
        budgets: spec,
        agentDepth: request.depth,
        agentRuns: request.agentRuns,
      },
    );
  };
}

/** The `tool_deferred` frames the run ended with, by call id. */
function lastTurnDeferrals(frames: readonly Frame[]): Map<string, ToolDeferredFrame> {
  const ended = frames.findLast((f) => f.type === "run_ended");
  const out = new Map<string, ToolDeferredFrame>();
  if (ended?.type !== "run_ended" || ended.reason !== "awaiting_approval") return out;
  for (const f of deferredSubRuns(frames).values()) if (f.seq < ended.seq) out.set(f.call_id, f);
  return out;
}

/**
 * Runs a call the tape has no output for — at most once: a call that had started when the process
 * died (kept in the prefix, or repeated with the same tool and arguments after its turn was
 * requested again) is answered as interrupted unless its tool is idempotent or the policy says
 * `rerunInterrupted`; anything else runs with the recorded run's tool settings.
 */
function atMostOnce(
  interrupted: readonly InterruptedCall[],
  registry: ToolRegistry,
  spec: RunSpec,
  policy: Policy,
  reproduced: () => Promise<void>,
): ToolExecutor {
  const kept = new Set(interrupted.filter((c) => c.kept).map((c) => `${c.turn}:${c.callId}`));
  const repeated = interrupted.filter((c) => !c.kept).map((c) => `${c.name}\u0000${c.arguments}`);
  const live = liveExecutor(spec, registry);
  return async (call, context) => {
    // Live work starts once every recorded frame is reproduced, so it lands after them.
    await reproduced();
    const sameCall = `${call.name}\u0000${call.arguments}`;
    const repeat = repeated.indexOf(sameCall);
    const wasInterrupted = kept.has(`${context.turn}:${call.callId}`) || repeat !== -1;
    if (repeat !== -1) repeated.splice(repeat, 1);
    if (!wasInterrupted || policy.rerunInterrupted || isIdempotent(registry, call.name))
      return live(call, context);
    return refusedToolOutput(
      call.name,
      "interrupted",
      "The process running this call died before it finished, so it may have had some or all of its effects. It was not run again: check its effects before repeating it.",
      spec.tool_output_cap_bytes === undefined ? {} : { outputCapBytes: spec.tool_output_cap_bytes },
    );
  };
}

function isIdempotent(registry: ToolRegistry, name: string): boolean {
  const definition = registry.resolve(name)?.definition;
  return definition?.idempotent ?? definition?.readOnly ?? false;
}

/** The recorded requests of `prefix` first (played from the tape), then `live` ones. */
function resumingProvider(prefix: Tape, gate: ReturnType<typeof createFrameGate>, live: Provider): Provider {
  const capabilities = prefix.header.provider.capabilities;
  const replayed = createReplayProvider(prefix, gate, capabilities);
  const recorded = providerSegments(prefix).length;
  let streams = 0;
  const provider: Provider = {
    name: live.name,
    // The recorded capabilities shape the request bodies, so the live requests are built the same way.
    capabilities,
    stream: (request, options) => (streams++ < recorded ? replayed : live).stream(request, options),
  };
  return live.secrets === undefined ? provider : { ...provider, secrets: live.secrets };
}

/** Runs a call the tape has no output for, with the recorded run's tool settings. */
function liveExecutor(spec: RunSpec, registry: ToolRegistry): ToolExecutor {
  return (call, context) => {
    const options: Parameters<typeof executeToolCall>[2] = {
      signal: context.signal,
      workspace: context.workspace,
    };
    if (spec.tool_timeout_ms !== undefined) options.timeoutMs = spec.tool_timeout_ms;
    if (spec.tool_output_cap_bytes !== undefined) options.outputCapBytes = spec.tool_output_cap_bytes;
    if (context.parent !== undefined) options.parent = context.parent;
    return executeToolCall(registry, call, options);
  };
}
