/**
 * Agents as tools: `agentTool` offers a sub-agent to a run as a tool. A call runs the sub-agent on
 * its own RunSpec (instructions, model, tools, limits) through `runAgent`, with the calling run's
 * provider, policy, tools, approval handler, tool-call hooks and cancellation (`ToolContext.parent`,
 * set by the loop). The sub-run's frames go into the call's `tool_ended.subrun`, so the parent's
 * tape holds them and a replay gives the recorded answer back without asking a provider
 * (docs/architecture.md, "Composing runs"). A sub-run that ends awaiting approval (`approve:
 * "defer"`) leaves the call unanswered and the parent run awaiting too (`tool_deferred`); a
 * resumed parent re-enters it from its recorded frames (`RunDeps.resumeSubRun`, docs/decisions.md #32).
 */
import { z } from "zod";
import { EddyError } from "../errors.js";
import type { Frame } from "../frames/frame.js";
import type { Provider } from "../provider/provider.js";
import type { ToolRegistry } from "../tools/registry.js";
import { type ToolContext, type ToolDefinition, type ToolResult, toolResult } from "../tools/tool.js";
import { once } from "../util/lazy-object.js";
import type { ApprovalHandler } from "./approvals.js";
import type { ToolHooks } from "./hooks.js";
import type { SubRunResumer } from "./options.js";
import type { Policy } from "./policy.js";
import { runAgent } from "./run.js";
import type { PartialRunSpec, RunSpecInput } from "./run-spec.js";

/** The settings of `agentTool`. */
export interface AgentToolOptions {
  /** The tool's name (1–64 of `[a-zA-Z0-9_-]`). */
  name: string;
  /** What the parent model reads about when to call it. */
  description: string;
  /**
   * The sub-agent's run: its instructions, model, tools (names among the parent's tools), limits.
   * `input` is the call's `input` argument; `run_id` and `thread` are the sub-run's own.
   * @defaultValue the parent's model; no tools
   */
  spec: Omit<PartialRunSpec, "input" | "run_id" | "thread">;
}

/** What the loop lends a tool call (`ToolContext.parent`): the calling run's live dependencies. */
export interface AgentToolParent {
  provider: Provider;
  /** The parent's model (the sub-agent's when its spec names none). */
  model?: string;
  /** Every tool given to the parent run (before its own selection): the sub-agent's `spec.tools` selects among them. */
  tools: ToolRegistry;
  workspace: string;
  policy?: Policy;
  onApproval?: ApprovalHandler;
  /** The parent's tool-call hooks: they decide on the sub-agent's calls too. */
  hooks?: ToolHooks;
  secrets?: readonly string[];
  /** Re-enters a sub-run that ended awaiting approval (a resumed parent's, `RunDeps.resumeSubRun`). */
  resumeSubRun?: SubRunResumer;
  /** How many agent calls the calling run is nested in (`RunDeps.agentDepth`). @defaultValue 0 */
  depth?: number;
  /** The agent calls started under the top-level run, its whole tree shares the count (`RunDeps.agentRuns`). */
  agentRuns?: { started: number };
}

/**
 * The deepest agent calls nest: a sub-agent's sub-agent's sub-agent. A call that would nest deeper
 * is answered `ok:false` (`agent_depth_exceeded`) without running: an agent offered itself (or two
 * agents offered each other) recursed until memory ran out, tens of thousands of requests a minute,
 * and a cancel then overflowed the stack (docs/pitfalls.md #84).
 */
export const MAX_AGENT_DEPTH = 3;

/**
 * The most agent calls run under one top-level run, at every depth together: past it a call is
 * answered `ok:false` (`agent_budget_spent`) without running. Each sub-run has its own turn and
 * tool-call limits, so without a shared count a model varying its calls (which the no-progress
 * check does not catch) could start 32 + 32² + 32³ sub-runs within the depth limit.
 */
export const MAX_AGENT_RUNS = 64;

/** A sub-agent tool's arguments, built with the first such tool (most runs have none). */
const argumentsSchema = once(() =>
  z.object({
    input: z.string().min(1).describe("The task for the agent, with everything it needs to know"),
  }),
);

/**
 * A tool that runs a sub-agent: the model calls it with `{input}`, the sub-agent runs on its own
 * spec with the parent's provider, policy and cancellation, and its final answer is the call's
 * output. A sub-run that does not complete answers `ok:false` with its end reason.
 *
 * @example
 * ```ts
 * const reviewer = agentTool({
 *   name: "reviewer",
 *   description: "Reviews a change and lists its problems",
 *   spec: { instructions: "You review code. Be terse.", max_turns: 4, tools: ["read_file"] },
 * });
 * const run = runAgent({ model: "gpt-5-mini", input: "Write and review a sort" }, { provider, tools: [...builtins, reviewer] });
 * ```
 */
export function agentTool(options: AgentToolOptions): ToolDefinition<{ input: string }> {
  return {
    name: options.name,
    description: options.description,
    parameters: argumentsSchema(),
    readOnly: false,
    execute: (args, context) => runSubAgent(options, args.input, context),
  };
}

async function runSubAgent(
  options: AgentToolOptions,
  input: string,
  context: ToolContext,
): Promise<ToolResult> {
  const parent = context.parent as AgentToolParent | undefined;
  if (parent === undefined)
    throw new EddyError(
      "invalid_argument",
      `agent tool ${options.name} runs only inside a run (runAgent gives it the provider and policy)`,
    );
  const spec: RunSpecInput = {
    ...(parent.model === undefined ? {} : { model: parent.model }),
    tools: [],
    ...options.spec,
    input,
  };
  const depth = (parent.depth ?? 0) + 1;
  const refusal = agentRefusal(options.name, depth, parent.agentRuns);
  if (refusal !== undefined) return refusal;
  const agentRuns = parent.agentRuns ?? { started: 0 };
  agentRuns.started++;
  const { callId, signal } = context;
  const resumed = parent.resumeSubRun?.({
    callId,
    agent: options.name,
    spec,
    tools: parent.tools,
    workspace: parent.workspace,
    signal,
    depth,
    agentRuns,
  });
  const run =
    resumed ??
    runAgent(spec, {
      provider: parent.provider,
      tools: parent.tools,
      workspace: parent.workspace,
      signal,
      ...(parent.policy === undefined ? {} : { policy: parent.policy }),
      ...(parent.onApproval === undefined ? {} : { onApproval: parent.onApproval }),
      ...(parent.hooks === undefined ? {} : { hooks: parent.hooks }),
      ...(parent.secrets === undefined ? {} : { secrets: parent.secrets }),
      agentDepth: depth,
      agentRuns,
    });
  const frames: Frame[] = [];
  for await (const f of run) frames.push(f);
  const result = await run.result;
  const subrun = { agent: options.name, frames };
  if (result.reason === "awaiting_approval" && result.pendingCalls !== undefined)
    // Its calls wait for a decision: the parent run waits too (docs/decisions.md #32).
    return toolResult({
      ok: false,
      error: { code: "awaiting_approval", message: `the agent ${options.name} awaits approval` },
      subrun,
      deferred: result.pendingCalls,
    });
  const ok = result.reason === "completed" || result.reason === "terminal_tool";
  if (ok) return toolResult({ ok, stdout: result.outputText, subrun });
  const detail = result.error === undefined ? "" : `: ${result.error.message}`;
  return toolResult({
    ok,
    stdout: result.outputText,
    error: { code: "subrun_failed", message: `the agent ${options.name} ended ${result.reason}${detail}` },
    subrun,
  });
}

/** Why an agent call may not start (nested too deep, or the tree's budget spent), as its result; undefined when it may. */
function agentRefusal(
  name: string,
  depth: number,
  agentRuns: { started: number } | undefined,
): ToolResult | undefined {
  if (depth > MAX_AGENT_DEPTH)
    return toolResult({
      ok: false,
      error: {
        code: "agent_depth_exceeded",
        message: `the agent ${name} was not run: agents nest at most ${MAX_AGENT_DEPTH} deep; answer from what you have`,
      },
    });
  if ((agentRuns?.started ?? 0) >= MAX_AGENT_RUNS)
    return toolResult({
      ok: false,
      error: {
        code: "agent_budget_spent",
        message: `the agent ${name} was not run: this run has started ${MAX_AGENT_RUNS} agent calls, the most it may; answer from what you have`,
      },
    });
  return undefined;
}
