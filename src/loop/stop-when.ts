/**
 * Stop conditions as values (docs/architecture.md, "Composing runs"): after a turn whose calls were
 * answered — when the loop would send a follow-up — each condition is asked in order, and the
 * first that holds ends the run with reason `stop_condition` (its label in `run_ended.stop_condition`).
 * They sit next to the limits (`max_turns`, `max_tool_calls`), which still apply.
 *
 * Conditions built by `turnCountIs` and `hasToolCall` are data: they travel in `RunSpec.stop_when`
 * and a tape replays them. A function is a program's own (`RunDeps.stopWhen`); a replay stops where
 * the tape says it stopped instead of calling it.
 */
import type { Usage } from "../protocol/types.js";

/** A stop condition that is data: it can be written in a spec, a task file or a tape. */
export type StopConditionData =
  | { type: "turn_count_is"; count: number }
  | { type: "has_tool_call"; name: string };

/** What a stop condition sees after a turn. */
export interface StopContext {
  /** Turns (model requests) done so far, this one included. */
  turns: number;
  /** The calls answered in this turn (name, arguments as the model produced them, whether they succeeded). */
  calls: readonly { name: string; arguments: string; ok: boolean }[];
  /** The names of every call answered so far in the run, in order. */
  allCalls: readonly string[];
  /** Text of this turn's response. */
  outputText: string;
  /** Usage summed over the run so far. */
  usage: Usage;
}

/** A program's own stop condition: true (or a label) ends the run. Its label is its function name. */
export type StopConditionFunction = (ctx: StopContext) => boolean | string | Promise<boolean | string>;

/** A stop condition: data (`turnCountIs`, `hasToolCall`) or a function. */
export type StopCondition = StopConditionData | StopConditionFunction;

/**
 * Stops once `count` turns (model requests) are done, before the follow-up.
 *
 * @example
 * ```ts
 * runAgent(spec, { provider, tools, stopWhen: [turnCountIs(3), hasToolCall("submit")] });
 * ```
 */
export function turnCountIs(count: number): StopConditionData {
  return { type: "turn_count_is", count };
}

/** Stops after a turn in which the model called the tool `name` (once its output is in). */
export function hasToolCall(name: string): StopConditionData {
  return { type: "has_tool_call", name };
}

/** Whether a condition is data (goes into `RunSpec.stop_when`). */
export function isStopConditionData(condition: StopCondition): condition is StopConditionData {
  return typeof condition === "object" && condition !== null;
}

/** The label `run_ended.stop_condition` carries for a condition. */
export function stopConditionLabel(condition: StopCondition): string {
  if (typeof condition === "function") return condition.name === "" ? "custom" : condition.name;
  return condition.type === "turn_count_is"
    ? `turn_count_is(${condition.count})`
    : `has_tool_call(${condition.name})`;
}

/** The label of the first condition that holds, or undefined. Data conditions are asked first. */
export async function firstStop(
  conditions: readonly StopCondition[],
  ctx: StopContext,
): Promise<string | undefined> {
  for (const condition of conditions) {
    if (typeof condition !== "function") {
      if (dataHolds(condition, ctx)) return stopConditionLabel(condition);
      continue;
    }
    const held = await condition(ctx);
    if (typeof held === "string" && held !== "") return held;
    if (held === true) return stopConditionLabel(condition);
  }
  return undefined;
}

function dataHolds(condition: StopConditionData, ctx: StopContext): boolean {
  if (condition.type === "turn_count_is") return ctx.turns >= condition.count;
  return ctx.calls.some((c) => c.name === condition.name);
}

/**
 * A condition that stops at `turns` with `label` (replay: the recorded run's own function stopped
 * there; the function is not on the tape).
 */
export function recordedStop(turns: number, label: string): StopConditionFunction {
  return (ctx) => (ctx.turns === turns ? label : false);
}
