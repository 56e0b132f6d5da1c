/**
 * The request's tool constraints, enforced on what the model planned, as a compliant provider
 * does (spec §8.7, §8.10): `tool_choice` (`none` → no calls; `required` → at least one; a named
 * function → only that one, at least once; `allowed_tools` → only those, with its `mode`),
 * `parallel_tool_calls: false` → at most one call, `max_tool_calls` → at most that many.
 *
 * Planned calls that break a rule are dropped; when a call is required and none is left, one is
 * made up (the forced or first allowed tool, arguments `{}`); when dropping leaves no item the
 * client could act on, a short message says why. A scenario turn with `ignoreToolChoice` skips
 * all of this (a non-compliant server, so the client's own enforcement can be tested).
 */
import type { ToolChoiceParam } from "../protocol/types.js";
import { invalidRequest } from "./http-error.js";
import type { PlannedItem, TurnPlan } from "./plan.js";
import type { MockRequestBody } from "./request.js";

/** What the request allows. */
export interface ToolPolicy {
  /** `none`: no calls; `auto`: calls allowed; `required`: at least one call. */
  mode: "none" | "auto" | "required";
  /** Names that may be called; `undefined` = no restriction (even names outside `tools`). */
  allowed?: string[];
  /** Most calls in one response. */
  maxCalls: number;
  /** The offered tool names, in order. */
  tools: string[];
}

/** Reads (and checks) the request's tool settings; an inconsistent `tool_choice` is a 400. */
export function toolPolicy(body: MockRequestBody): ToolPolicy {
  const tools = (body.tools ?? []).map((t) => t.name);
  const maxCalls = Math.min(
    body.max_tool_calls ?? Number.POSITIVE_INFINITY,
    body.parallel_tool_calls === false ? 1 : Number.POSITIVE_INFINITY,
  );
  const choice: ToolChoiceParam = body.tool_choice ?? "auto";
  if (typeof choice === "string") {
    if (choice === "required" && tools.length === 0) {
      throw invalidRequest("Tool choice 'required' must be specified with 'tools' parameter.", "tool_choice");
    }
    return { mode: choice, maxCalls, tools };
  }
  if (choice.type === "function") {
    requireOffered(tools, choice.name, "tool_choice.name");
    return { mode: "required", allowed: [choice.name], maxCalls, tools };
  }
  for (const [i, t] of choice.tools.entries()) requireOffered(tools, t.name, `tool_choice.tools[${i}].name`);
  return { mode: choice.mode ?? "auto", allowed: choice.tools.map((t) => t.name), maxCalls, tools };
}

/** True when the policy lets the model call `name`. */
export function mayCall(policy: ToolPolicy, name: string): boolean {
  return policy.mode !== "none" && (policy.allowed === undefined || policy.allowed.includes(name));
}

/** The tools the model may call, in `tools` order. */
export function callableTools(policy: ToolPolicy): string[] {
  return policy.mode === "none" ? [] : policy.tools.filter((name) => mayCall(policy, name));
}

/** Enforces the policy on a plan (see the module comment). */
export function applyToolPolicy(plan: TurnPlan, policy: ToolPolicy): TurnPlan {
  const kept: PlannedItem[] = [];
  let calls = 0;
  let dropped = 0;
  for (const item of plan.items) {
    if (item.type !== "function_call") {
      kept.push(item);
    } else if (mayCall(policy, item.name) && calls < policy.maxCalls) {
      kept.push(item);
      calls++;
    } else {
      dropped++;
    }
  }
  if (calls === 0 && policy.mode === "required") {
    const name = callableTools(policy)[0];
    if (name !== undefined) kept.push({ type: "function_call", name, arguments: "{}" });
  } else if (dropped > 0 && !kept.some((i) => i.type !== "reasoning")) {
    const why =
      policy.mode === "none" ? 'tool_choice is "none"' : "the request's tool settings do not allow it";
    kept.push({
      type: "message",
      parts: [{ type: "output_text", text: `I would call a tool here, but ${why}, so I answer without it.` }],
    });
  }
  return { ...plan, items: kept };
}

function requireOffered(tools: string[], name: string, param: string): void {
  if (!tools.includes(name)) {
    throw invalidRequest(
      `Tool choice names '${name}', which is not in the 'tools' parameter (offered: ${tools.join(", ") || "none"}).`,
      param,
    );
  }
}
