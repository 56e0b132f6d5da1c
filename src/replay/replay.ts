/**
 * Replaying a tape: rebuild the run from the header, feed it the recorded provider streams and tool
 * outputs (or run the tools live), and compare the frames it produces with the tape's, ignoring `ts`
 * and `duration_ms` (docs/architecture.md, "The replay guarantee"). The tape's run id is reused, so frames compare 1:1.
 */
import type { ApprovalDecidedFrame, Frame, ToolEndedFrame } from "../frames/frame.js";
import { recordedSummaries, recordedSummarizer } from "../history/summarizer.js";
import type { ApprovalHandler } from "../loop/approvals.js";
import type { RunHistoryOptions, RunOptions, RunResult, ToolExecutor } from "../loop/options.js";
import { runAgent } from "../loop/run.js";
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
  /** Give up waiting for a recorded position after this long without progress. @defaultValue 2000 */
  stallMs?: number;
  /**
   * The tools of each later turn, when the recorded run's tools changed between turns (an MCP
   * server's `tools/list_changed`): passed to the run as `RunOptions.refreshTools`.
   * @defaultValue none (the registry's tools throughout)
   */
  refreshTools?: RunOptions["refreshTools"];
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
  const runOptions = runOptionsFromTape(tape, {
    provider: createReplayProvider(tape, gate, tape.header.provider.capabilities),
    gate,
    registry: options.registry,
    workspace: options.workspace,
    signal: controller.signal,
    executeTool: recordedToolExecutor(tape, gate, options),
    ...(options.refreshTools === undefined ? {} : { refreshTools: options.refreshTools }),
  });
  const run = runAgent(runOptions);
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
  refreshTools?: RunOptions["refreshTools"];
}

/**
 * The run options a tape's header describes (model, input, mode, limits, tool settings, run id),
 * driven by `parts`. Frames get the tape's timestamps while the tape has frames, the clock's after.
 */
export function runOptionsFromTape(tape: Tape, parts: TapeRunParts): RunOptions {
  const { header } = tape;
  const { gate } = parts;
  const runOptions: RunOptions = {
    provider: parts.provider,
    model: header.model,
    input: header.input,
    tools: parts.registry,
    mode: header.mode,
    workspace: parts.workspace,
    signal: parts.signal,
    maxToolCalls: header.limits.max_tool_calls,
    maxTurns: header.limits.max_turns,
    resetToolChoice: header.options.reset_tool_choice,
    toolsOnFollowUp: header.options.tools_on_follow_up,
    toolExecution: header.options.tool_execution,
    parallelToolCalls: header.options.parallel_tool_calls,
    runId: header.run_id,
    // Recorded timestamps, so a replayed frame is the recorded one in every field.
    clock: () => tape.frames[gate.emitted]?.ts ?? Date.now(),
    onFrame: gate.observer,
    executeTool: parts.executeTool,
  };
  if (header.instructions !== undefined) runOptions.instructions = header.instructions;
  if (header.mcp_servers !== undefined) runOptions.mcpServers = header.mcp_servers;
  if (parts.refreshTools !== undefined) runOptions.refreshTools = parts.refreshTools;
  if (header.options.tool_choice !== undefined) runOptions.toolChoice = header.options.tool_choice;
  if (header.options.request !== undefined) runOptions.request = header.options.request;
  if (header.options.output_schema !== undefined) runOptions.outputSchema = header.options.output_schema;
  if (header.options.tool_timeout_ms !== undefined) runOptions.toolTimeoutMs = header.options.tool_timeout_ms;
  if (header.options.tool_concurrency !== undefined)
    runOptions.toolConcurrency = header.options.tool_concurrency;
  if (header.options.approvals === true) runOptions.onApproval = recordedApprovals(tape, gate);
  if (header.options.tool_output_cap_bytes !== undefined)
    runOptions.toolOutputCapBytes = header.options.tool_output_cap_bytes;
  if (header.context !== undefined) runOptions.context = header.context;
  const history = replayHistory(tape);
  if (history !== undefined) runOptions.history = history;
  if (header.options.native_tools !== undefined) runOptions.nativeTools = header.options.native_tools;
  if (header.options.native_shell !== undefined) runOptions.nativeShell = header.options.native_shell;
  if (header.options.hosted_tools !== undefined) runOptions.hostedTools = header.options.hosted_tools;
  if (header.options.continue_incomplete === true) runOptions.continueIncomplete = true;

  return runOptions;
}

/**
 * The recorded run's history settings. A summarization model is never asked again: the summaries
 * come from the tape's `context_compacted` frames, in order.
 */
function replayHistory(tape: Tape): RunHistoryOptions | undefined {
  const recorded = tape.header.options.history;
  if (recorded === undefined) return undefined;
  const options: RunHistoryOptions = {
    recentCallsToKeep: recorded.recent_calls_to_keep,
    truncationThreshold: recorded.truncation_threshold,
    strategy: recorded.strategy,
  };
  if (recorded.summarization_model !== undefined) {
    options.summarizationModel = recorded.summarization_model;
    options.summarizer = recordedSummarizer(recordedSummaries(tape.frames));
  }
  return options;
}

/** The recorded approval decisions, each given where the tape has it (a call the tape never decided is denied). */
function recordedApprovals(tape: Tape, gate: FrameGate): ApprovalHandler {
  const decided = new Map<string, ApprovalDecidedFrame>();
  for (const f of tape.frames) if (f.type === "approval_decided") decided.set(`${f.turn}:${f.call_id}`, f);
  return async (request) => {
    const frame = decided.get(`${request.turn}:${request.callId}`);
    if (frame === undefined) return "deny";
    await gate.wait(frame.seq);
    return frame.decision;
  };
}

/** How `recordedToolExecutor` runs calls. */
export interface RecordedToolOptions {
  registry: ToolRegistry;
  /** Run every call for real, releasing its output where the tape has it. @defaultValue false */
  liveTools?: boolean;
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
  for (const f of tape.frames) {
    if (f.type !== "tool_ended") continue;
    const key = `${f.turn}:${f.call_id}`;
    const list = recorded.get(key) ?? [];
    list.push(f);
    recorded.set(key, list);
  }
  return async (call, context) => {
    const frame = recorded.get(`${context.turn}:${call.callId}`)?.shift();
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
      const live = await executeCall(options.registry, call, {
        signal: context.signal,
        workspace: context.workspace,
      });
      await gate.wait(frame.seq);
      return live;
    }
    await gate.wait(frame.seq);
    return resultFrom(frame);
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
