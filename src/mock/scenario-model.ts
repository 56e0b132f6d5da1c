/**
 * A scenario turn → a `TurnPlan` (the scripted items, normalized), and the turn selection rule:
 * turn i answers the i-th `POST /responses` that reaches the model; past the end, a last turn with
 * `repeat: true` answers forever, otherwise the request gets HTTP 400 `scenario_exhausted`.
 */
import { invalidRequest } from "./http-error.js";
import type {
  PlannedFunctionCall,
  PlannedItem,
  PlannedMessage,
  PlannedPart,
  PlannedReasoning,
  TurnPlan,
} from "./plan.js";
import type { Scenario, ScenarioItem, ScenarioTurn } from "./scenario.js";

/** The turn that answers request number `index` (0-based); throws `scenario_exhausted` past the end. */
export function selectTurn(scenario: Scenario, index: number): ScenarioTurn {
  const turn = scenario.turns[index];
  if (turn !== undefined) return turn;
  const last = scenario.turns[scenario.turns.length - 1];
  if (last?.repeat === true) return last;
  const name = scenario.name === undefined ? "the scenario" : `scenario '${scenario.name}'`;
  throw invalidRequest(
    `${name} has ${scenario.turns.length} turn(s) and this is request ${index + 1}: the script is exhausted (add turns, or \`repeat: true\` on the last one).`,
    null,
    "scenario_exhausted",
  );
}

/** The plan of a scripted turn. */
export function scenarioPlan(turn: ScenarioTurn): TurnPlan {
  const plan: TurnPlan = { items: (turn.items ?? []).map(planItem), status: turn.status ?? "completed" };
  if (turn.incompleteReason !== undefined) plan.incompleteReason = turn.incompleteReason;
  if (turn.error !== undefined) plan.error = turn.error;
  if (turn.usage !== undefined) plan.usage = turn.usage;
  return plan;
}

function planItem(item: ScenarioItem): PlannedItem {
  switch (item.type) {
    case "message": {
      const texts = item.text === undefined ? [] : Array.isArray(item.text) ? item.text : [item.text];
      const parts: PlannedPart[] = texts.map((text) => ({ type: "output_text", text }));
      if (item.refusal !== undefined) parts.push({ type: "refusal", refusal: item.refusal });
      const message: PlannedMessage = { type: "message", parts };
      return withOptional(message, { id: item.id, phase: item.phase });
    }
    case "function_call": {
      const args = item.arguments ?? "{}";
      const call: PlannedFunctionCall = {
        type: "function_call",
        name: item.name,
        arguments: typeof args === "string" ? args : JSON.stringify(args),
      };
      return withOptional(call, { id: item.id, call_id: item.call_id });
    }
    case "reasoning": {
      const reasoning: PlannedReasoning = {
        type: "reasoning",
        summary: list(item.summary),
        content: list(item.content),
      };
      return withOptional(reasoning, { id: item.id, encrypted_content: item.encrypted_content });
    }
  }
}

function list(value: string | string[] | undefined): string[] {
  return value === undefined ? [] : Array.isArray(value) ? value : [value];
}

/** Copies the defined fields of `extra` onto `target` (no `undefined` keys in planned items). */
function withOptional<T extends object>(target: T, extra: Partial<T>): T {
  for (const [key, value] of Object.entries(extra)) {
    if (value !== undefined) (target as Record<string, unknown>)[key] = value;
  }
  return target;
}
