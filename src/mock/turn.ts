/**
 * What answers one model request, whichever API it came through (`/responses` over HTTP or
 * WebSocket, or `/chat/completions`): the context-window check, the turn counter, the scenario
 * turn's faults that act before any answer (`stallBeforeHeadersMs`, `httpError`), its `expect`
 * checks, a replayed capture (`rawEvents` for Responses, `rawChunks` for Chat Completions), or else
 * a plan from the scenario's items or the demo model, trimmed by the request's tool policy.
 */
import { setTimeout as sleep } from "node:timers/promises";
import type { JsonObject } from "../protocol/types.js";
import type { CreateContext, CreateInfo } from "./create-response.js";
import { demoModel } from "./demo-model.js";
import { checkExpect, type ExpectRequest } from "./expect.js";
import { faultNames, type HttpErrorFault, type MockFaults } from "./faults.js";
import { httpProblem, invalidRequest } from "./http-error.js";
import type { TurnPlan } from "./plan.js";
import type { Scenario, ScenarioTurn } from "./scenario.js";
import { scenarioPlan, selectTurn } from "./scenario-model.js";
import { applyToolPolicy, type ToolPolicy } from "./tool-policy.js";
import { estimateInputTokens } from "./usage.js";

/** Which API a request came through. */
export type MockApi = "responses" | "chat";

/** One model request, in the mock's own terms. */
export interface TurnRequest extends ExpectRequest {
  api: MockApi;
  policy: ToolPolicy;
}

/**
 * How the turn answers: with a plan, with a replayed capture, or with its `httpError` fault (each
 * transport renders that: an HTTP answer, or a WebSocket error message).
 */
export type TurnDecision =
  | { kind: "plan"; plan: TurnPlan; faults: MockFaults }
  | { kind: "raw"; raw: Array<JsonObject | string>; faults: MockFaults }
  | { kind: "http_error"; fault: HttpErrorFault };

/** Decides the answer to one request (see the module comment); refusals are thrown as HTTP problems. */
export async function decideTurn(
  request: TurnRequest,
  ctx: CreateContext,
  info: CreateInfo,
): Promise<TurnDecision> {
  const { api, body, conversation, policy } = request;
  checkContextWindow(request, ctx);
  const turnIndex = ctx.nextTurn();
  info.turn = turnIndex;
  if (ctx.scenario === undefined) {
    return {
      kind: "plan",
      plan: applyToolPolicy(demoModel({ body, conversation, policy }), policy),
      faults: {},
    };
  }
  const turn = selectTurn(ctx.scenario, turnIndex);
  const faults = turn.faults ?? {};
  info.faults = faultNames(faults);
  if (faults.stallBeforeHeadersMs !== undefined)
    await sleep(faults.stallBeforeHeadersMs, undefined, { signal: ctx.signal });
  if (faults.httpError !== undefined) {
    return { kind: "http_error", fault: faults.httpError };
  }
  const name = `turn ${turnIndex}${turn.label === undefined ? "" : ` (${turn.label})`}`;
  const mismatches = checkExpect(turn.expect ?? {}, request);
  if (mismatches.length > 0) {
    throw invalidRequest(`Scenario ${name}: ${mismatches.join("; ")}.`, null, "scenario_mismatch");
  }
  const [own, other] = api === "chat" ? ["rawChunks", "rawEvents"] : ["rawEvents", "rawChunks"];
  const raw = api === "chat" ? turn.rawChunks : turn.rawEvents;
  if (raw !== undefined) return { kind: "raw", raw, faults };
  if (turn[other as "rawEvents" | "rawChunks"] !== undefined) {
    const endpoint = api === "chat" ? "/chat/completions" : "/responses";
    throw invalidRequest(
      `Scenario ${name} replays ${other}, which a ${endpoint} request cannot be answered with (give this turn items, or ${own}).`,
      null,
      "scenario_mismatch",
    );
  }
  const plan = scenarioPlan(turn);
  return {
    kind: "plan",
    plan: turn.ignoreToolChoice === true ? plan : applyToolPolicy(plan, policy),
    faults,
  };
}

/**
 * A scenario's `contextWindow` (the turn's, else the scenario's) refuses a request whose input
 * estimate exceeds it, as OpenAI does, before the turn is used up.
 */
function checkContextWindow(request: TurnRequest, ctx: CreateContext): void {
  if (ctx.scenario === undefined) return;
  const window = turnAt(ctx.scenario, ctx.peekTurn())?.contextWindow ?? ctx.scenario.contextWindow;
  if (window === undefined) return;
  const { conversation, body, api } = request;
  const tokens = estimateInputTokens(conversation.context, body.instructions);
  if (tokens <= window) return;
  throw httpProblem({
    status: 400,
    error: {
      type: "invalid_request_error",
      code: "context_length_exceeded",
      message: `Your input exceeds the context window of this model: about ${tokens} input tokens (the mock estimates 4 characters per token) for a window of ${window}. Please reduce the length of the ${api === "chat" ? "messages" : "input"} and try again.`,
      param: api === "chat" ? "messages" : "input",
    },
  });
}

/** The turn that would answer request `index`, without the exhausted-script error. */
function turnAt(scenario: Scenario, index: number): ScenarioTurn | undefined {
  const last = scenario.turns[scenario.turns.length - 1];
  return scenario.turns[index] ?? (last?.repeat === true ? last : undefined);
}
