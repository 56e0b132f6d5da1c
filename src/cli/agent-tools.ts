/**
 * The config file's `agents` as tools of `eddy run` (`agentTool`, src/loop/agent-tool.ts): each
 * entry is a sub-agent with its own instructions, model, tools and turn limit, run with the
 * parent's provider, policy and cancellation. The tape header lists them (`agents`) so `eddy
 * replay` rebuilds the same tools; their recorded runs come from the tape's frames.
 */
import { agentTool } from "../loop/agent-tool.js";
import type { PartialRunSpec } from "../loop/run-spec.js";
import type { TapeAgent } from "../replay/tape-header.js";
import type { ToolDefinition } from "../tools/tool.js";
import type { AgentConfig } from "./config-compose.js";

/** The sub-agents of the config file's `agents`, in its order: each one's name and description. */
export function agentSummaries(agents: Readonly<Record<string, AgentConfig>>): TapeAgent[] {
  return Object.entries(agents).map(([name, agent]) => ({
    name,
    description: agent.description ?? `Asks the ${name} agent; give it the whole task as input.`,
  }));
}

/** The config file's `agents` as tools. */
export function agentToolsOf(agents: Readonly<Record<string, AgentConfig>>): ToolDefinition[] {
  return agentSummaries(agents).map(({ name, description }) => {
    const agent = agents[name] as AgentConfig;
    const spec: PartialRunSpec = { instructions: agent.instructions };
    if (agent.model !== undefined) spec.model = agent.model;
    if (agent.tools !== undefined) spec.tools = agent.tools;
    if (agent.max_turns !== undefined) spec.max_turns = agent.max_turns;
    return agentTool({ name, description, spec }) as ToolDefinition;
  });
}

/** The tools a replay rebuilds from the header's `agents` (they are never run: the tape answers). */
export function recordedAgentTools(agents: readonly TapeAgent[] | undefined): ToolDefinition[] {
  return (agents ?? []).map(
    ({ name, description }) => agentTool({ name, description, spec: {} }) as ToolDefinition,
  );
}
