/** Building a tape header from run options (never secrets: keys and headers are not run options). */

import { LOOP_DEFAULTS } from "../loop/defaults.js";
import type { RunOptions } from "../loop/options.js";
import { isDefaultHistory, runHistorySettings } from "../loop/run-history.js";
import { chainWire } from "../provider/wire-api.js";
import type { McpToolInfo } from "../tools/mcp/index.js";
import { createToolRegistry, type ToolRegistry } from "../tools/registry.js";
import { compileSchema } from "../util/schema.js";
import { EDDY_VERSION } from "../version.js";
import { TAPE_FORMAT, type TapeHeader } from "./tape.js";

/** What a tape header needs besides the run options. */
export interface TapeHeaderExtras {
  runId: string;
  /** Schema validation of provider events was on. */
  validate: boolean;
  /** The built-in tool set's switches, when the run used the built-ins. */
  toolSet?: { allow_write: boolean; allow_shell: boolean; sandbox?: boolean };
  /** The MCP tools offered (`McpTools.toolInfo()`), so a replay can declare them without the servers. */
  mcpTools?: readonly McpToolInfo[];
}

/** The tape header of a run with these options. */
export function createTapeHeader(options: RunOptions, extras: TapeHeaderExtras): TapeHeader {
  const registry: ToolRegistry =
    options.tools === undefined
      ? createToolRegistry([])
      : Array.isArray(options.tools)
        ? createToolRegistry(options.tools)
        : (options.tools as ToolRegistry);
  const header: TapeHeader = {
    type: "tape_header",
    format: TAPE_FORMAT,
    eddy_version: EDDY_VERSION,
    run_id: extras.runId,
    model: options.model,
    mode: options.mode ?? (options.provider.capabilities.previousResponseId ? "chained" : "stateless"),
    input: typeof options.input === "string" ? options.input : [...options.input],
    tools: registry.names(),
    limits: {
      max_tool_calls: options.maxToolCalls ?? LOOP_DEFAULTS.maxToolCalls,
      max_turns: options.maxTurns ?? LOOP_DEFAULTS.maxTurns,
    },
    provider: { name: options.provider.name, capabilities: options.provider.capabilities },
    options: {
      reset_tool_choice: options.resetToolChoice ?? LOOP_DEFAULTS.resetToolChoice,
      tools_on_follow_up: options.toolsOnFollowUp ?? LOOP_DEFAULTS.toolsOnFollowUp,
      tool_execution: options.toolExecution ?? LOOP_DEFAULTS.toolExecution,
      parallel_tool_calls: options.parallelToolCalls ?? LOOP_DEFAULTS.parallelToolCalls,
      validate: extras.validate,
    },
    workspace: ".",
  };
  const wire = chainWire([options.provider.wire]);
  if (wire !== undefined) header.provider.wire = wire;
  if (options.instructions !== undefined) header.instructions = options.instructions;
  if (options.context !== undefined)
    header.context = { items: [...options.context.items], compiled: { ...options.context.compiled } };
  const history = runHistorySettings(options);
  if (!isDefaultHistory(history)) {
    header.options.history = {
      recent_calls_to_keep: history.recentCallsToKeep,
      truncation_threshold: history.truncationThreshold,
      strategy: history.strategy,
    };
    if (history.summarizationModel !== undefined)
      header.options.history.summarization_model = history.summarizationModel;
  }
  if (extras.toolSet !== undefined) header.tool_set = extras.toolSet;
  if (options.mcpServers !== undefined && options.mcpServers.length > 0)
    header.mcp_servers = options.mcpServers.map((s) => ({ ...s }));
  if (extras.mcpTools !== undefined && extras.mcpTools.length > 0) header.mcp_tools = [...extras.mcpTools];
  if (options.toolChoice !== undefined) header.options.tool_choice = options.toolChoice;
  if (options.request !== undefined) header.options.request = options.request;
  if (options.toolTimeoutMs !== undefined) header.options.tool_timeout_ms = options.toolTimeoutMs;
  if (options.toolConcurrency !== undefined) header.options.tool_concurrency = options.toolConcurrency;
  if (options.onApproval !== undefined) header.options.approvals = true;
  if (options.toolOutputCapBytes !== undefined)
    header.options.tool_output_cap_bytes = options.toolOutputCapBytes;
  if (options.nativeTools !== undefined) header.options.native_tools = options.nativeTools;
  if (options.nativeShell !== undefined) header.options.native_shell = options.nativeShell;
  if (options.hostedTools !== undefined && options.hostedTools.length > 0)
    header.options.hosted_tools = [...options.hostedTools];
  if (options.continueIncomplete === true) header.options.continue_incomplete = true;
  if (options.outputSchema !== undefined) {
    const schema = compileSchema(
      `output schema "${options.outputSchema.name}"`,
      options.outputSchema.schema,
    ).jsonSchema;
    header.options.output_schema = {
      name: options.outputSchema.name,
      schema,
      strict: options.outputSchema.strict ?? true,
    };
    if (options.outputSchema.description !== undefined)
      header.options.output_schema.description = options.outputSchema.description;
  }
  return header;
}
