/**
 * The budgets of a resumed run. A tape is input from elsewhere (a file anyone could have written
 * or edited), so each budget its spec asks — `max_turns`, `max_tool_calls`, `tool_concurrency`,
 * `tool_timeout_ms`, `tool_output_cap_bytes`, `request.max_output_tokens` — is at most the
 * resuming invocation's, or the default where it sets none (`withinBudgets`, as for a batch task,
 * a queue job or a `POST /v1/runs` body; docs/architecture.md, "One home for a run's settings").
 *
 * The resumed run runs under the lowered budgets from its first frame, so its tape (the
 * reproduced frames, then the live ones) replays under its header's spec. Two things follow
 * (docs/decisions.md #39):
 * - the recorded part must fit under them: a tape whose run already made more model requests or
 *   tool calls, or ran more calls at once, than a lowered budget allows is refused, naming the
 *   setting to raise (reproducing it would stop or reorder it);
 * - recorded request bodies carry budgets (`max_tool_calls` is the budget left, and
 *   `max_output_tokens`), so they are compared as the lowered run sends them (`expected`).
 */
import { EddyError } from "../errors.js";
import type { Frame, RequestStartedFrame } from "../frames/frame.js";
import {
  type BudgetOverrun,
  budgetOverruns,
  budgetsOf,
  checkPartialRunSpec,
  type PartialRunSpec,
  type RunSpec,
  withinBudgets,
} from "../loop/run-spec.js";
import type { JsonObject } from "../protocol/types.js";
import type { Tape } from "../replay/tape.js";

/** A resumed run's budgets: its spec, what was lowered, and how its recorded frames are reproduced. */
export interface ResumeBudgets {
  /** The tape's spec with every budget above the invocation's brought down to it. */
  spec: RunSpec;
  /** Each budget the tape asked above the invocation's (empty when nothing was lowered). */
  lowered: BudgetOverrun[];
  /** A recorded frame as the run under `spec` reproduces it (itself when nothing was lowered). */
  expected: (frame: Frame) => Frame;
}

/** What the recorded part of a tape used of a budget the resumed run may lower. */
interface RecordedUse {
  /** How much of it the frames before the resume point (and a request started there) used. */
  used: (frames: readonly Frame[], at: number) => number;
  what: (n: number) => string;
}

const RECORDED_USE: Readonly<Record<string, RecordedUse>> = {
  max_turns: {
    used: requestsMade,
    what: (n) => `already made ${n} model request${n === 1 ? "" : "s"}`,
  },
  max_tool_calls: {
    used: (frames, at) => frames.slice(0, at).filter((f) => f.type === "tool_call").length,
    what: (n) => `already made ${n} tool call${n === 1 ? "" : "s"}`,
  },
  tool_concurrency: {
    used: mostAtOnce,
    what: (n) => `ran ${n} tool calls at once`,
  },
};

/** The `eddy resume` flag that raises each budget (README, "Crashes"). */
const FLAGS: Readonly<Record<string, string>> = {
  max_turns: "--max-turns",
  max_tool_calls: "--max-tool-calls",
  tool_concurrency: "--tool-concurrency",
};

/** The fields of a provider's wire body that carry `max_output_tokens` (Chat Completions dialects, AI SDK). */
const WIRE_TOKEN_FIELDS = ["max_tokens", "max_completion_tokens", "maxOutputTokens"] as const;

/**
 * The budgets the run of `tape`, resumed at frame `at`, runs with under `local` (the resuming
 * invocation's settings; the defaults where it sets none). Throws a user error when `local` is
 * not a valid partial spec, or when the recorded part already used more of a lowered budget than
 * it now has (naming the setting to raise).
 */
export function resumeBudgets(tape: Tape, at: number, local: PartialRunSpec): ResumeBudgets {
  const limits = checkPartialRunSpec(budgetsOf(local), "the resuming invocation's budgets");
  const asked = tape.header.spec;
  const lowered = budgetOverruns(asked, limits);
  if (lowered.length === 0) return { spec: asked, lowered, expected: (frame) => frame };
  const spec = withinBudgets(asked, limits) as RunSpec;
  for (const { field, asked: wanted, limit } of lowered) {
    const use = RECORDED_USE[field];
    const used = use?.used(tape.frames, at) ?? 0;
    if (use === undefined || used <= limit) continue;
    const flag = FLAGS[field] as string;
    throw new EddyError(
      "invalid_argument",
      `the tape's run ${use.what(used)}, more than the ${limit} this invocation allows (${field}; the tape asks ${wanted}): resume it with ${flag} ${used} or more`,
      { fault: "user", details: { field } },
    );
  }
  return { spec, lowered, expected: (frame) => asLowered(frame, asked, spec) };
}

/** Model requests the recorded part made: the turns with a `request_started` up to and at `at`. */
function requestsMade(frames: readonly Frame[], at: number): number {
  const turns = new Set<number>();
  for (const f of frames.slice(0, at + 1)) if (f.type === "request_started") turns.add(f.turn);
  return turns.size;
}

/** The most calls that ran at once before `at` (started, not yet ended). */
function mostAtOnce(frames: readonly Frame[], at: number): number {
  const running = new Set<string>();
  let most = 0;
  for (const f of frames.slice(0, at)) {
    if (f.type === "tool_started") running.add(`${f.turn}:${f.call_id}`);
    else if (f.type === "tool_ended") running.delete(`${f.turn}:${f.call_id}`);
    most = Math.max(most, running.size);
  }
  return most;
}

/**
 * A recorded `request_started` as the run under the lowered `spec` sends it: the budget left is
 * lower by what `max_tool_calls` was lowered by (never below 1, as the loop sends it), and
 * `max_output_tokens` at most the lowered one, in the wire body too.
 */
function asLowered(frame: Frame, asked: RunSpec, spec: RunSpec): Frame {
  if (frame.type !== "request_started") return frame;
  const body = { ...frame.body };
  const cut = asked.max_tool_calls - spec.max_tool_calls;
  if (cut > 0 && typeof body.max_tool_calls === "number")
    body.max_tool_calls = Math.max(1, body.max_tool_calls - cut);
  const tokens = spec.request?.max_output_tokens;
  const out: RequestStartedFrame = { ...frame, body };
  if (typeof tokens !== "number" || tokens === asked.request?.max_output_tokens) return out;
  if (typeof body.max_output_tokens === "number")
    body.max_output_tokens = Math.min(body.max_output_tokens, tokens);
  if (frame.wire_body !== undefined) out.wire_body = lowerWireTokens(frame.wire_body, tokens);
  return out;
}

function lowerWireTokens(wire: JsonObject, tokens: number): JsonObject {
  const out: JsonObject = { ...wire };
  for (const field of WIRE_TOKEN_FIELDS) {
    const value = out[field];
    if (typeof value === "number") out[field] = Math.min(value, tokens);
  }
  return out;
}
