/**
 * Replaying a tape: rebuild the run from the header, feed it the recorded provider streams and tool
 * outputs (or run the tools live), and compare the frames it produces with the tape's, ignoring `ts`
 * and `duration_ms` (docs/architecture.md, "The replay guarantee"). The tape's run id is reused, so frames compare 1:1.
 */
import type { ApprovalDecidedFrame, Frame, ToolDeferredFrame, ToolEndedFrame } from "../frames/frame.js";
import { recordedSummaries, recordedSummarizer } from "../history/summarizer.js";
import type { ApprovalHandler } from "../loop/approvals.js";
import { recordedGuardrails } from "../loop/guardrails.js";
import { recordedHooks } from "../loop/hooks.js";
import type { RunDeps, RunResult, ToolExecutor } from "../loop/options.js";
import { type Policy, replayPolicy } from "../loop/policy.js";
import { recordedPrepareTurn } from "../loop/prepare-turn.js";
import { runAgent } from "../loop/run.js";
import type { RunSpec } from "../loop/run-spec.js";
import { recordedStop } from "../loop/stop-when.js";
import type { Provider } from "../provider/provider.js";
import { refusedToolOutput, type ToolCallResult } from "../tools/execute.js";
import type { ToolRegistry } from "../tools/registry.js";
import { createFrameGate, type FrameGate } from "./gate.js";
import { createReplayProvider } from "./replay-provider.js";
import type { Tape } from "./tape.js";

/** Options of `replayTape`. */
export interface ReplayOptions {
  /** The tools the recorded run offered (the CLI rebuilds the built-ins from the header's tool_set). */
  registry: ToolRegistry;
  workspace: string;
  /**
   * Run the tools for real instead of returning their recorded outputs.
   * @defaultValue false
   */
  liveTools?: boolean;
  /**
   * The tools a live call runs with (`liveTools`): the permissions of whoever replays, not the
   * tape's (the CLI's `eddy replay --live-tools` builds them from its own flags).
   * @defaultValue `registry`
   */
  liveRegistry?: ToolRegistry;
  /** Give up waiting for a recorded position after this long without progress. @defaultValue 2000 */
  stallMs?: number;
  /**
   * The tools of each later turn, when the recorded run's tools changed between turns (an MCP
   * server's `tools/list_changed`): passed to the run as `RunDeps.refreshTools`.
   * @defaultValue none (the registry's tools throughout)
   */
  refreshTools?: RunDeps["refreshTools"];
}

/** Whether the replayed frames match the tape, and where they first differ when not. */
export type ReplayVerdict =
  | { match: true; frames: number }
  | { match: false; index: number; expected: Frame | undefined; actual: Frame | undefined };

/** A replay: the frames it produced, the run's result and the verdict. */
export interface ReplayOutcome {
  frames: Frame[];
  result: RunResult;
  verdict: ReplayVerdict;
}

/**
 * Re-runs a tape offline: the recorded provider events and tool outputs are fed back through the
 * same loop, released where the tape has them; the frames are compared with the tape's, ignoring
 * `ts` and `duration_ms`.
 *
 * @example
 * ```ts
 * const { verdict } = await replayTape(readTape("run.tape"), { registry, workspace: process.cwd() });
 * if (!verdict.match) console.error(`diverges at frame ${verdict.index}`);
 * ```
 */
export async function replayTape(tape: Tape, options: ReplayOptions): Promise<ReplayOutcome> {
  const gate = createFrameGate(options.stallMs === undefined ? {} : { stallMs: options.stallMs });
  const controller = new AbortController();
  const cancel = tape.frames.find((f) => f.type === "cancel_requested");
  if (cancel !== undefined && cancel.type === "cancel_requested")
    gate.at(cancel.seq, () => controller.abort(cancel.reason));
  const { spec, deps } = runFromTape(tape, {
    provider: createReplayProvider(tape, gate, tape.header.provider.capabilities),
    gate,
    registry: options.registry,
    workspace: options.workspace,
    signal: controller.signal,
    executeTool: recordedToolExecutor(tape, gate, options),
    ...(options.refreshTools === undefined ? {} : { refreshTools: options.refreshTools }),
  });
  const run = runAgent(spec, deps);
  const frames: Frame[] = [];
  for await (const frame of run) frames.push(frame);
  const result = await run.result;
  return { frames, result, verdict: compareFrames(tape.frames, frames) };
}

/** What drives a run rebuilt from a tape: where its requests and tool outputs come from. */
export interface TapeRunParts {
  provider: Provider;
  /** Fed every frame (`onFrame`); its position picks the recorded timestamps. */
  gate: FrameGate;
  registry: ToolRegistry;
  workspace: string;
  signal: AbortSignal;
  executeTool: ToolExecutor;
  /** The tools of each later turn (`ReplayOptions.refreshTools`). @defaultValue none */
  refreshTools?: RunDeps["refreshTools"];
  /**
   * Decides calls the tape has no decision for (a resumed run's live part). @defaultValue such a
   * call is denied
   */
  onUnrecordedApproval?: ApprovalHandler;
  /**
   * What the run is checked against (`RunDeps.policy`): a resumed run's local policy.
   * @defaultValue `replayPolicy(spec)` (a replay runs nothing live)
   */
  policy?: Policy;
}

/**
 * The run a tape records: its spec, as the header carries it, and dependencies driven by `parts`.
 * Frames get the tape's timestamps while the tape has frames, the clock's after; recorded approval
 * decisions are given where the tape has them.
 */
export function runFromTape(tape: Tape, parts: TapeRunParts): { spec: RunSpec; deps: RunDeps } {
  const { header } = tape;
  const { gate } = parts;
  const deps: RunDeps = {
    provider: parts.provider,
    tools: parts.registry,
    workspace: parts.workspace,
    signal: parts.signal,
    // Recorded timestamps, so a replayed frame is the recorded one in every field.
    clock: () => tape.frames[gate.emitted]?.ts ?? Date.now(),
    onFrame: gate.observer,
    executeTool: parts.executeTool,
    policy: parts.policy ?? replayPolicy(header.spec),
  };
  if (header.mcp_servers !== undefined) deps.mcpServers = header.mcp_servers;
  // Hook decisions come from the tape: no hook (no command) runs again.
  if (tape.frames.some((f) => f.type === "hook_decided")) deps.hooks = recordedHooks(tape.frames, gate.wait);
  // Per-turn settings and guardrail verdicts come from the tape: the program's functions are not on it.
  const prepareTurn = recordedPrepareTurn(tape.frames);
  if (prepareTurn !== undefined) deps.prepareTurn = prepareTurn;
  const steering = recordedSteering(tape.frames);
  if (steering !== undefined) deps.steering = steering;
  const guardrails = recordedGuardrails(tape.frames);
  if (guardrails !== undefined) deps.guardrails = guardrails;
  // A program's own stop condition is not on the tape: the run stops where the tape says it stopped.
  const ended = tape.frames[tape.frames.length - 1];
  if (ended?.type === "run_ended" && ended.stop_condition !== undefined)
    deps.stopWhen = recordedStop(ended.turns, ended.stop_condition);
  if (parts.refreshTools !== undefined) deps.refreshTools = parts.refreshTools;
  if (askedForApprovals(tape)) deps.onApproval = recordedApprovals(tape, gate, parts.onUnrecordedApproval);
  else if (parts.onUnrecordedApproval !== undefined) deps.onApproval = parts.onUnrecordedApproval;
  // A summarization model is never asked again: the summaries come from the tape's frames, in order.
  if (header.spec.history.summarization_model !== undefined)
    deps.summarizer = recordedSummarizer(recordedSummaries(tape.frames));
  return { spec: header.spec, deps };
}

/** The recorded run had an approval handler: its policy asked, denied or deferred, or a decision is on the tape. */
export function askedForApprovals(tape: Tape): boolean {
  const approve = tape.header.policy?.approve;
  if (approve !== undefined && approve !== "auto") return true;
  return tape.frames.some((f) => f.type === "approval_requested");
}

/**
 * The recorded approval decisions, each given where the tape has it. A call the tape never decided
 * goes to `unrecorded` (a resumed run's live calls), else it is denied.
 */
function recordedApprovals(tape: Tape, gate: FrameGate, unrecorded?: ApprovalHandler): ApprovalHandler {
  const decided = new Map<string, ApprovalDecidedFrame>();
  const deferred = new Set<string>();
  for (const f of tape.frames) {
    if (f.type === "approval_decided") decided.set(`${f.turn}:${f.call_id}`, f);
    else if (f.type === "run_ended") for (const id of f.pending_calls ?? []) deferred.add(id);
  }
  return async (request) => {
    const frame = decided.get(`${request.turn}:${request.callId}`);
    if (frame === undefined && deferred.has(request.callId)) return "defer";
    if (frame === undefined) return unrecorded === undefined ? "deny" : unrecorded(request);
    await gate.wait(frame.seq);
    return frame.decision;
  };
}

/** How `recordedToolExecutor` runs calls. */
export interface RecordedToolOptions {
  registry: ToolRegistry;
  /** Run every call for real, releasing its output where the tape has it. @defaultValue false */
  liveTools?: boolean;
  /** The tools a live call runs with. @defaultValue `registry` */
  liveRegistry?: ToolRegistry;
  /** Runs a call the tape has no output for. @defaultValue the call is refused (`replay_missing`) */
  onMissing?: ToolExecutor;
}

/** Recorded tool outputs, released where the tape has them; or live execution, released at the same point. */
export function recordedToolExecutor(
  tape: Tape,
  gate: FrameGate,
  options: RecordedToolOptions,
): ToolExecutor {
  const recorded = new Map<string, ToolEndedFrame[]>();
  // A call's output is released where the first frame after its execution is: its after-hook's
  // decision, else its tool_ended.
  const releaseAt = new Map<string, number>();
  for (const f of tape.frames) {
    if (f.type === "hook_decided" && f.hook === "after_tool_call")
      releaseAt.set(`${f.turn}:${f.call_id}`, f.seq);
    if (f.type !== "tool_ended") continue;
    const key = `${f.turn}:${f.call_id}`;
    const list = recorded.get(key) ?? [];
    list.push(f);
    recorded.set(key, list);
  }
  const deferred = deferredSubRuns(tape.frames);
  return async (call, context) => {
    const key = `${context.turn}:${call.callId}`;
    const frame = recorded.get(key)?.shift();
    const waiting = frame === undefined ? deferred.get(key) : undefined;
    // An agent tool whose sub-agent waited for approval: it waits again, with the recorded sub-run.
    if (waiting !== undefined) return deferredResult(waiting);
    if (frame === undefined) {
      if (options.onMissing !== undefined) return options.onMissing(call, context);
      return refusedToolOutput(
        call.name,
        "replay_missing",
        `the tape has no output for call ${call.callId} in turn ${context.turn}`,
      );
    }
    if (options.liveTools) {
      const { executeCall } = await import("../tools/native-calls.js");
      const live = await executeCall(options.liveRegistry ?? options.registry, call, {
        signal: context.signal,
        workspace: context.workspace,
      });
      await gate.wait(releaseAt.get(key) ?? frame.seq);
      return live;
    }
    await gate.wait(releaseAt.get(key) ?? frame.seq);
    return resultFrom(frame);
  };
}

/** The `tool_deferred` frames of a tape, by `TURN:CALL_ID` (the last one of each call). */
export function deferredSubRuns(frames: readonly Frame[]): Map<string, ToolDeferredFrame> {
  const deferred = new Map<string, ToolDeferredFrame>();
  for (const f of frames) if (f.type === "tool_deferred") deferred.set(`${f.turn}:${f.call_id}`, f);
  return deferred;
}

/** The agent tool's result a `tool_deferred` frame stands for: its sub-run, still waiting. */
function deferredResult(frame: ToolDeferredFrame): ToolCallResult {
  const prefix = `${frame.call_id}/`;
  return {
    tool: frame.name,
    ok: false,
    output: "",
    truncated: false,
    exitCode: 1,
    durationMs: 0,
    subrun: frame.subrun,
    deferred: frame.pending_calls.map((id) => (id.startsWith(prefix) ? id.slice(prefix.length) : id)),
  };
}

/** The tool result a recorded `tool_ended` frame stands for. */
function resultFrom(frame: ToolEndedFrame): ToolCallResult {
  let exitCode = frame.ok ? 0 : 1;
  try {
    const parsed = JSON.parse(frame.output) as { exit_code?: unknown };
    if (typeof parsed.exit_code === "number") exitCode = parsed.exit_code;
  } catch {}
  const result: ToolCallResult = {
    tool: frame.name,
    ok: frame.ok,
    output: frame.output,
    truncated: frame.truncated === true,
    exitCode,
    durationMs: frame.duration_ms,
  };
  if (frame.full_output !== undefined) result.fullOutput = frame.full_output;
  if (frame.image_url !== undefined) result.imageUrl = frame.image_url;
  if (frame.file_changes !== undefined) result.fileChanges = frame.file_changes;
  if (frame.subrun !== undefined) result.subrun = frame.subrun;
  return result;
}

const IGNORED_KEYS: ReadonlySet<string> = new Set(["ts", "duration_ms"]);

/** The first frame where `actual` differs from `expected` (ignoring `ts` and `duration_ms`), if any. */
export function compareFrames(expected: readonly Frame[], actual: readonly Frame[]): ReplayVerdict {
  const n = Math.max(expected.length, actual.length);
  for (let i = 0; i < n; i++) {
    const e = expected[i];
    const a = actual[i];
    if (e === undefined || a === undefined || !sameFrame(e, a))
      return { match: false, index: i, expected: e, actual: a };
  }
  return { match: true, frames: expected.length };
}

function sameFrame(a: Frame, b: Frame): boolean {
  const ka = Object.keys(a).filter((k) => !IGNORED_KEYS.has(k));
  const kb = Object.keys(b).filter((k) => !IGNORED_KEYS.has(k));
  if (ka.length !== kb.length) return false;
  for (const k of ka) {
    if (
      !deepEqual((a as unknown as Record<string, unknown>)[k], (b as unknown as Record<string, unknown>)[k])
    )
      return false;
  }
  return true;
}

function deepEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (a === null || b === null || typeof a !== "object" || typeof b !== "object") return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a) && Array.isArray(b))
    return a.length === b.length && a.every((v, i) => deepEqual(v, b[i]));
  const ra = a as Record<string, unknown>;
  const rb = b as Record<string, unknown>;
  const ka = Object.keys(ra).filter((k) => ra[k] !== undefined);
  const kb = Object.keys(rb).filter((k) => rb[k] !== undefined);
  return ka.length === kb.length && ka.every((k) => deepEqual(ra[k], rb[k]));
}

/** The steering messages a tape recorded (`steered` frames), given back at the same turns. */
export function recordedSteering(frames: readonly Frame[]): RunDeps["steering"] | undefined {
  const byTurn = new Map<number, string[]>();
  for (const f of frames)
    if (f.type === "steered") byTurn.set(f.turn, [...(byTurn.get(f.turn) ?? []), f.message]);
  if (byTurn.size === 0) return undefined;
  return (ctx) => byTurn.get(ctx.turn);
}
