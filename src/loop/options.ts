/** The agent loop's public types: run options, the run handle and the run result. */
import type { ZodType } from "zod";
import type { ContinuationMode, Frame, FrameError, McpServerSummary, RunEndReason } from "../frames/frame.js";
import type { Clock } from "../frames/stamp.js";
import type { CreateResponseBody, ItemParam, JsonObject, ToolChoiceParam, Usage } from "../protocol/types.js";
import type { Provider } from "../provider/provider.js";
import type { ToolCall, ToolCallResult } from "../tools/execute.js";
import type { ToolRegistry } from "../tools/registry.js";
import type { JsonSchema, ToolDefinition } from "../tools/tool.js";
import type { ApprovalHandler } from "./approvals.js";
import type { FrameObserver } from "./frame-channel.js";

/** When a completed call runs: as soon as its item is done, or once the response has ended. */
export type ToolExecutionPolicy = "eager" | "after_response";

/** Whether `tools` goes on every request or only the first (the migration seed's preference). */
export type ToolsOnFollowUp = "every_request" | "first_request";

/** Structured output: the final answer must be JSON matching `schema` (sent as `text.format` json_schema). */
export interface OutputSchema {
  name: string;
  schema: JsonSchema | ZodType;
  description?: string;
  /** @defaultValue true */
  strict?: boolean;
}

/** Runs one call. The default executes it with the run's tool registry; replay substitutes recorded outputs. */
export type ToolExecutor = (
  call: ToolCall,
  context: { signal: AbortSignal; workspace: string; turn: number },
) => Promise<ToolCallResult>;

/**
 * Options of `runAgent`: the provider and model, the input, the tools, and every loop setting
 * (defaults in `LOOP_DEFAULTS`).
 */
export interface RunOptions {
  provider: Provider;
  /** The model, or null to let the server choose. */
  model: string | null;
  /** The user prompt, or input items (e.g. a rendered history, or an earlier run's `items`). */
  input: string | readonly ItemParam[];
  /**
   * Sent on every request (the spec does not carry instructions over `previous_response_id`).
   * @defaultValue none
   */
  instructions?: string;
  /** The tools the model may call. @defaultValue none */
  tools?: ToolRegistry | readonly ToolDefinition[];
  /**
   * Asked at the start of every turn for the tools from then on: a registry replaces the run's
   * (e.g. an MCP server announced `tools/list_changed`), `undefined` keeps it. Calls already made
   * are unaffected. @defaultValue none (the tools never change)
   */
  refreshTools?: () => ToolRegistry | undefined | Promise<ToolRegistry | undefined>;
  /**
   * The MCP servers the tools come from, listed in `run_started.mcp_servers` (e.g. `status()` of
   * `createMcpTools`). @defaultValue none
   */
  mcpServers?: readonly McpServerSummary[];
  /** @defaultValue "chained", or "stateless" when the provider cannot chain */
  mode?: ContinuationMode;
  /** Root for file tools. @defaultValue process.cwd() */
  workspace?: string;
  /**
   * Cancels the run: the request is aborted, running tools are told, every started call gets an output.
   * @defaultValue none (cancel through the handle's `cancel()`)
   */
  signal?: AbortSignal;
  /** @defaultValue LOOP_DEFAULTS.maxToolCalls (32) */
  maxToolCalls?: number;
  /** @defaultValue LOOP_DEFAULTS.maxTurns (20) */
  maxTurns?: number;
  /** @defaultValue none (the server's default, `auto`) */
  toolChoice?: ToolChoiceParam;
  /** @defaultValue LOOP_DEFAULTS.resetToolChoice (true) */
  resetToolChoice?: boolean;
  /** @defaultValue LOOP_DEFAULTS.toolsOnFollowUp ("every_request") */
  toolsOnFollowUp?: ToolsOnFollowUp;
  /** @defaultValue LOOP_DEFAULTS.toolExecution ("eager") */
  toolExecution?: ToolExecutionPolicy;
  /**
   * Let the model make several calls per response (`parallel_tool_calls: true`) and run them at
   * the same time, up to `toolConcurrency`; tools that are not parallel-safe still run alone.
   * Outputs go back in output order either way.
   * @defaultValue LOOP_DEFAULTS.parallelToolCalls (false)
   */
  parallelToolCalls?: boolean;
  /** Calls that run at once with `parallelToolCalls`. @defaultValue LOOP_DEFAULTS.toolConcurrency (4) */
  toolConcurrency?: number;
  /**
   * Decides on calls to tools that need approval (`needsApproval`). Requests come one at a time;
   * a denied call is answered `ok:false` with a reason the model can read.
   * @defaultValue none (nothing is asked; every call runs)
   */
  onApproval?: ApprovalHandler;
  /** @defaultValue none (a plain-text answer) */
  outputSchema?: OutputSchema;
  /**
   * Extra request fields for every request (temperature, reasoning, max_output_tokens, metadata, …).
   * @defaultValue none
   */
  request?: Partial<CreateResponseBody>;
  /** Timeout for tools without their own. @defaultValue TOOL_DEFAULTS.timeoutMs */
  toolTimeoutMs?: number;
  /** @defaultValue TOOL_DEFAULTS.outputCapBytes */
  toolOutputCapBytes?: number;
  /** @defaultValue a random `run_…` id */
  runId?: string;
  /** @defaultValue Date.now */
  clock?: Clock;
  /**
   * More values to mask in every frame (tokens of tool servers, keys a tool might print); the
   * provider's own `secrets` are always masked. @defaultValue none
   */
  secrets?: readonly string[];
  /**
   * Sees every frame as it is emitted (recorders, renderers), in addition to the iteration.
   * @defaultValue none
   */
  onFrame?: FrameObserver;
  /**
   * Substitute tool execution (replay).
   * @defaultValue execution with the run's tool registry
   */
  executeTool?: ToolExecutor;
}

/** How a run ended (the `run_ended` frame's facts), with the conversation to continue from. */
export interface RunResult {
  runId: string;
  reason: RunEndReason;
  /** Text of the last response's message items. */
  outputText: string;
  /** The terminal tool's arguments or the parsed structured output. */
  result?: unknown;
  responseId: string | null;
  usage: Usage;
  /**
   * The conversation as input items (the initial input, every output item as the input schema
   * takes it, the tool outputs): pass it as a later run's `input` to continue the conversation.
   */
  items: ItemParam[];
  error?: FrameError;
  turns: number;
  toolCalls: number;
}

/** A running agent: iterate it for frames (once), await `result` for the outcome. */
export interface RunHandle extends AsyncIterable<Frame> {
  readonly runId: string;
  readonly result: Promise<RunResult>;
  /** Cancels the run (same as aborting `signal`). */
  cancel(reason?: string): void;
}
