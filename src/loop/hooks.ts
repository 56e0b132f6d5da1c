/**
 * Tool-call hooks (docs/architecture.md, "Composing runs"): `beforeToolCall` sees each call before
 * it runs — before any approval question — and allows it, denies it with a reason the model reads,
 * or rewrites its arguments (then the approval asks about those); `afterToolCall` sees each output of a call that ran and may rewrite it
 * (e.g. redact). Every decision is a `hook_decided` frame, so a replay gives the recorded decisions
 * back instead of calling the hooks. A hook that throws fails closed: the call is denied (or its
 * output withheld) with a note saying why.
 */
import { frame, type HookDecidedFrame } from "../frames/frame.js";
import type { JsonObject } from "../protocol/types.js";
import { refusedToolOutput, type ToolCallResult } from "../tools/execute.js";
import type { FrameChannel } from "./frame-channel.js";

/** The call a hook sees. */
export interface HookCall {
  turn: number;
  callId: string;
  name: string;
  /** The arguments as the model produced them (or as an earlier hook rewrote them). */
  arguments: string;
}

/** What a `beforeToolCall` hook decides. `note` is recorded in the frame (not shown to the model). */
export type BeforeToolCallDecision =
  | { action: "allow"; note?: string }
  | { action: "deny"; reason: string; note?: string }
  | { action: "rewrite"; arguments: string | JsonObject; note?: string };

/** What an `afterToolCall` hook decides: keep the output, rewrite it, or withhold it (`deny`). */
export type AfterToolCallDecision =
  | { action: "allow"; note?: string }
  | { action: "rewrite"; output: string; note?: string }
  | { action: "deny"; reason: string; note?: string };

/** The run's tool-call hooks (`RunDeps.hooks`). Returning nothing allows. */
export interface ToolHooks {
  beforeToolCall?: (
    call: HookCall,
    context: { signal: AbortSignal },
  ) => BeforeToolCallDecision | undefined | Promise<BeforeToolCallDecision | undefined>;
  afterToolCall?: (
    call: HookCall & { ok: boolean; output: string },
    context: { signal: AbortSignal },
  ) => AfterToolCallDecision | undefined | Promise<AfterToolCallDecision | undefined>;
  /**
   * Whether a hook is asked about a call at all; when not, the call goes on as if that hook did not
   * exist (no `hook_decided` frame). A resumed run uses it: the calls its tape settled without a
   * hook stay so, the live ones are asked (`resumedHooks`). @defaultValue every call is asked
   */
  asks?: (hook: HookDecidedFrame["hook"], call: HookCall) => boolean;
}

/** What the runner does with a call after `beforeToolCall`: run it (maybe with new arguments) or refuse it. */
export type BeforeOutcome = { arguments: string } | { refusal: { code: string; message: string } };

/** Asks `beforeToolCall` about a call and emits its `hook_decided` frame. */
export async function beforeToolCall(
  hooks: ToolHooks,
  call: HookCall,
  channel: FrameChannel,
  signal: AbortSignal,
): Promise<BeforeOutcome> {
  const hook = hooks.beforeToolCall;
  if (hook === undefined || hooks.asks?.("before_tool_call", call) === false)
    return { arguments: call.arguments };
  let decision: BeforeToolCallDecision;
  try {
    decision = withArgumentsText((await hook({ ...call }, { signal })) ?? { action: "allow" });
  } catch (err) {
    const note = `the before_tool_call hook failed (${oneLine(err)}); the call was not run`;
    decision = { action: "deny", reason: note, note };
  }
  const decided = decidedFrame(call, "before_tool_call", decision.action, decision.note);
  if (decision.action === "deny") {
    decided.reason = decision.reason;
    channel.emit(decided);
    return { refusal: { code: "denied_by_hook", message: decision.reason } };
  }
  if (decision.action === "allow") {
    channel.emit(decided);
    return { arguments: call.arguments };
  }
  const args = decision.arguments as string;
  decided.arguments = args;
  channel.emit(decided);
  return { arguments: args };
}

/**
 * A rewrite's arguments as the JSON text the call runs with, made while a failure still fails
 * closed: arguments nested too deep for `JSON.stringify` (a hook command's stdout) or cyclic (a
 * library hook's object) threw past the hook's guard and ended the process with a stack trace.
 */
function withArgumentsText(decision: BeforeToolCallDecision): BeforeToolCallDecision {
  if (decision.action !== "rewrite" || typeof decision.arguments === "string") return decision;
  return { ...decision, arguments: JSON.stringify(decision.arguments) };
}

/** Asks `afterToolCall` about a call's result and emits its `hook_decided` frame; the result the model gets. */
export async function afterToolCall(
  hooks: ToolHooks,
  call: HookCall,
  result: ToolCallResult,
  channel: FrameChannel,
  signal: AbortSignal,
): Promise<ToolCallResult> {
  const hook = hooks.afterToolCall;
  if (hook === undefined || hooks.asks?.("after_tool_call", call) === false) return result;
  let decision: AfterToolCallDecision;
  try {
    decision = (await hook({ ...call, ok: result.ok, output: result.output }, { signal })) ?? {
      action: "allow",
    };
  } catch (err) {
    const note = `the after_tool_call hook failed (${oneLine(err)}); the output was withheld`;
    decision = { action: "deny", reason: note, note };
  }
  const decided = decidedFrame(call, "after_tool_call", decision.action, decision.note);
  if (decision.action === "allow") {
    channel.emit(decided);
    return result;
  }
  if (decision.action === "deny") {
    decided.reason = decision.reason;
    channel.emit(decided);
    const withheld = refusedToolOutput(call.name, "withheld_by_hook", decision.reason);
    return { ...withheld, durationMs: result.durationMs };
  }
  decided.output = decision.output;
  channel.emit(decided);
  const { fullOutput: _full, truncated: _truncated, ...rest } = result;
  return { ...rest, output: decision.output, truncated: false };
}

function decidedFrame(
  call: HookCall,
  hook: HookDecidedFrame["hook"],
  decision: HookDecidedFrame["decision"],
  note: string | undefined,
): HookDecidedFrame {
  const f = frame("hook_decided", { turn: call.turn, call_id: call.callId, name: call.name, hook, decision });
  if (note !== undefined) f.note = note;
  return f;
}

function oneLine(err: unknown): string {
  const message = err instanceof Error ? err.message : String(err);
  return message.split("\n")[0] ?? "";
}

/**
 * The hooks a tape's `hook_decided` frames stand for: each decision given back where the tape has
 * it (`wait` is the replay gate's), without calling any hook.
 */
export function recordedHooks(
  frames: readonly { type: string }[],
  wait: (seq: number) => Promise<void>,
): ToolHooks {
  const decided = new Map<string, HookDecidedFrame>();
  for (const f of frames)
    if (f.type === "hook_decided") {
      const h = f as HookDecidedFrame;
      decided.set(`${h.hook}:${h.turn}:${h.call_id}`, h);
    }
  const lookup = async (hook: string, call: HookCall) => {
    const f = decided.get(`${hook}:${call.turn}:${call.callId}`);
    if (f !== undefined) await wait(f.seq);
    return f;
  };
  const hooks: ToolHooks = {
    async beforeToolCall(call) {
      const f = await lookup("before_tool_call", call);
      if (f === undefined) return undefined;
      const note = f.note === undefined ? {} : { note: f.note };
      if (f.decision === "deny") return { action: "deny", reason: f.reason ?? "", ...note };
      if (f.decision === "rewrite") return { action: "rewrite", arguments: f.arguments ?? "", ...note };
      return { action: "allow", ...note };
    },
    async afterToolCall(call) {
      const f = await lookup("after_tool_call", call);
      if (f === undefined) return undefined;
      const note = f.note === undefined ? {} : { note: f.note };
      if (f.decision === "deny") return { action: "deny", reason: f.reason ?? "", ...note };
      if (f.decision === "rewrite") return { action: "rewrite", output: f.output ?? "", ...note };
      return { action: "allow", ...note };
    },
  };
  // Only the hooks the recorded run had: a hook that is absent decides nothing (and writes no frame).
  const kinds = new Set([...decided.values()].map((f) => f.hook));
  if (!kinds.has("before_tool_call")) delete hooks.beforeToolCall;
  if (!kinds.has("after_tool_call")) delete hooks.afterToolCall;
  return hooks;
}

/** Frames of a call that come after its `before_tool_call` decision (approvals, the run, its end). */
const AFTER_BEFORE_HOOK = new Set([
  "approval_requested",
  "approval_decided",
  "tool_deferred",
  "tool_started",
  "tool_ended",
]);

/**
 * The hooks of a run resumed from `frames` (the tape up to the resume point) under this
 * invocation's `live` hooks: a decision the tape recorded is given back (`recorded`, from
 * `recordedHooks`); a call the tape settled without that hook — its run started or ended before
 * the point, so the recorded run had no such hook then — is not asked, so the reproduced frames
 * still match; every other call is asked live, when that hook is configured now (a hook absent
 * now writes no frame). A call the tape took past its `before_tool_call` stage (one deferred for
 * approval) is not asked by a `before_tool_call` configured only now; its output still goes
 * through `after_tool_call`. A hook configured now therefore guards every call
 * the resumed run makes, and a tape recorded without hooks still resumes.
 */
export function resumedHooks(
  frames: readonly { type: string }[],
  recorded: ToolHooks | undefined,
  live: ToolHooks,
): ToolHooks {
  const decided = new Set<string>();
  const pastBefore = new Set<string>();
  const ended = new Set<string>();
  for (const f of frames) {
    const { call_id: id, turn } = f as { call_id?: unknown; turn?: unknown };
    if (typeof id !== "string" || typeof turn !== "number") continue;
    const call = `${turn}:${id}`;
    if (f.type === "hook_decided") decided.add(`${(f as HookDecidedFrame).hook}:${call}`);
    if (AFTER_BEFORE_HOOK.has(f.type)) pastBefore.add(call);
    if (f.type === "tool_ended") ended.add(call);
  }
  const key = (call: HookCall) => `${call.turn}:${call.callId}`;
  const isRecorded = (hook: HookDecidedFrame["hook"], call: HookCall) => decided.has(`${hook}:${key(call)}`);
  const hooks: ToolHooks = {
    asks: (hook, call) => {
      if (isRecorded(hook, call)) return true;
      const before = hook === "before_tool_call";
      // A hook nobody configured now decides nothing and writes no frame.
      if ((before ? live.beforeToolCall : live.afterToolCall) === undefined) return false;
      return !(before ? pastBefore : ended).has(key(call));
    },
  };
  const recordedBefore = recorded?.beforeToolCall;
  const liveBefore = live.beforeToolCall;
  if (recordedBefore !== undefined || liveBefore !== undefined)
    hooks.beforeToolCall = async (call, context) =>
      isRecorded("before_tool_call", call) ? recordedBefore?.(call, context) : liveBefore?.(call, context);
  const recordedAfter = recorded?.afterToolCall;
  const liveAfter = live.afterToolCall;
  if (recordedAfter !== undefined || liveAfter !== undefined)
    hooks.afterToolCall = async (call, context) =>
      isRecorded("after_tool_call", call) ? recordedAfter?.(call, context) : liveAfter?.(call, context);
  return hooks;
}
