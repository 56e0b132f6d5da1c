/** The agent loop's public types: run options, the run handle and the run result. */
import type { ZodType } from "zod";
import type {
  ContextCompilation,
  ContinuationMode,
  Frame,
  FrameError,
  McpServerSummary,
  RunEndReason,
} from "../frames/frame.js";
import type { Clock } from "../frames/stamp.js";
import type { ToolHistoryManager, ToolHistoryManagerOptions } from "../history/tool-history.js";
import type { CreateResponseBody, ItemParam, ToolChoiceParam, Usage } from "../protocol/types.js";
import type { Provider } from "../provider/provider.js";
import type { ToolCall, ToolCallResult } from "../tools/execute.js";
import type { ToolRegistry } from "../tools/registry.js";
import type { JsonSchema, ToolDefinition } from "../tools/tool.js";
import type { ApprovalHandler } from "./approvals.js";
import type { FrameObserver } from "./frame-channel.js";
import type { HostedTool, NativeShell } from "./tool-declarations.js";

/** When a completed call runs: as soon as its item is done, or once the response has ended. */
export type ToolExecutionPolicy = "eager" | "after_response";

/** Whether `tools` goes on every request or only the first (docs/decisions.md #10). */
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
   * Offer OpenAI's native tool types instead of function imitations (`apply_patch`, `shell`,
   * free-form `custom` tools) and run the native call items that come back (`apply_patch_call`,
   * local `shell_call`, `local_shell_call`, `custom_tool_call`) like function calls, answering
   * each with its own output item; an `mcp_approval_request` goes through `onApproval`.
   * @defaultValue the provider's `nativeTools` capability
   */
  nativeTools?: boolean;
  /** Which native type stands for `shell` with `nativeTools`. @defaultValue "shell" */
  nativeShell?: NativeShell;
  /**
   * Tools the provider runs itself, declared on every request after the run's own tools, as
   * given: `{type:"web_search"}`, `{type:"file_search", vector_store_ids:[…]}`,
   * `{type:"code_interpreter", container:{type:"auto"}}`, `{type:"image_generation"}`,
   * `{type:"mcp", server_label, server_url}` (see `hostedTool`). Their items are kept in the
   * history and frames; nothing runs locally. (`request.tools` is ignored: the loop owns `tools`.)
   * @defaultValue none
   */
  hostedTools?: readonly HostedTool[];
  /**
   * A final answer cut off by `max_output_tokens` (`response.incomplete`) is continued once: a
   * follow-up asks the model to go on, and `outputText` is both parts together. Off, the run ends
   * `incomplete`. @defaultValue false
   */
  continueIncomplete?: boolean;
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
  /**
   * How the run's tool history reaches the model: the settings of the run's `ToolHistoryManager`
   * (threshold folding, summaries, strategy), or a manager to use as it is (share one between
   * context compilation and the run). Every request that carries the history — stateless requests,
   * the first request of a run started from a context, the resend after an overflow — renders it
   * through this one manager; with the defaults and a native provider that is a pass-through.
   * @defaultValue HISTORY_DEFAULTS (a manager for the run's provider and model)
   */
  history?: ToolHistoryManager | RunHistoryOptions;
  /**
   * Earlier conversation the run starts from (a rendered context bundle: `prepareThreadRun`,
   * `renderContextBundle`): its items go before `input`, and a `context_compiled` frame with
   * `compiled` follows `run_started`. No `previous_response_id` from earlier runs is sent.
   * @defaultValue none
   */
  context?: RunContext;
}

/** The settings of the run's `ToolHistoryManager` (its provider and model are the run's). */
export type RunHistoryOptions = Omit<ToolHistoryManagerOptions, "provider" | "model" | "capabilities">;

/** A compiled context the run starts from: its input items and the `context_compiled` payload. */
export interface RunContext {
  /** Input items that go before the run's `input` (a bundle rendered by the run's manager). */
  items: readonly ItemParam[];
  /** What the `context_compiled` frame says (bundle id, strategy, item count, token estimate). */
  compiled: ContextCompilation;
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
