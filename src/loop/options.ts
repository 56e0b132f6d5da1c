/** The agent loop's public types besides the spec (run-spec.ts): the run's dependencies, handle and result. */
import type { Frame, FrameError, McpServerSummary, RunEndReason } from "../frames/frame.js";
import type { Clock } from "../frames/stamp.js";
import type { Summarizer } from "../history/summarizer.js";
import type { ToolHistoryManager } from "../history/tool-history.js";
import type { ItemParam, Usage } from "../protocol/types.js";
import type { Provider } from "../provider/provider.js";
import type { ToolCall, ToolCallResult } from "../tools/execute.js";
import type { ToolRegistry } from "../tools/registry.js";
import type { ToolDefinition } from "../tools/tool.js";
import type { ApprovalHandler } from "./approvals.js";
import type { FrameObserver } from "./frame-channel.js";
import type { Guardrails } from "./guardrails.js";
import type { ToolHooks } from "./hooks.js";
import type { Policy } from "./policy.js";
import type { PrepareTurn } from "./prepare-turn.js";
import type { RunSpec, RunSpecInput } from "./run-spec.js";
import type { StopCondition } from "./stop-when.js";

/** When a completed call runs: as soon as its item is done, or once the response has ended. */
export type ToolExecutionPolicy = "eager" | "after_response";

/** Whether `tools` goes on every request or only the first (docs/decisions.md #10). */
export type ToolsOnFollowUp = "every_request" | "first_request";

/** Runs one call. The default executes it with the run's tool registry; replay substitutes recorded outputs. */
export type ToolExecutor = (
  call: ToolCall,
  context: {
    signal: AbortSignal;
    workspace: string;
    turn: number;
    /** What the run lends the call's tool (`ToolContext.parent`: an `agentTool` runs its sub-agent with it). */
    parent?: unknown;
  },
) => Promise<ToolCallResult>;

/** What an agent tool asks `RunDeps.resumeSubRun` about: the call, and how its sub-agent runs. */
export interface SubRunRequest {
  /** The agent tool's call. */
  callId: string;
  /** The agent tool's name. */
  agent: string;
  /** The sub-agent's spec, as a fresh run of it would get it (its run id comes from the record). */
  spec: RunSpecInput;
  /** The tools the sub-agent selects among. */
  tools: ToolRegistry;
  workspace: string;
  signal: AbortSignal;
  /** How many agent calls the sub-run is nested in (1 for a sub-agent of a top-level run). */
  depth: number;
  /** The count of agent calls the whole tree shares (`RunDeps.agentRuns`). */
  agentRuns: { started: number };
}

/**
 * Re-enters the recorded sub-run of an agent tool's call that ended awaiting approval (a
 * `tool_deferred` frame): its run resumed from its recorded frames, or undefined when the call has
 * none (the sub-agent then starts afresh). `resumeRun` (src/batch/resume.ts) gives one.
 */
export type SubRunResumer = (request: SubRunRequest) => RunHandle | undefined;

/**
 * The live dependencies of a run — everything that is not data: the provider, the tools, the
 * workspace they work in, cancellation, the clock, observers, the approval handler, test hooks. A
 * run is `runAgent(spec, deps)`: the `RunSpec` says what to run, `RunDeps` what to run it with.
 */
export interface RunDeps {
  provider: Provider;
  /** The tools the run may offer (`RunSpec.tools` selects among them). @defaultValue none */
  tools?: ToolRegistry | readonly ToolDefinition[];
  /**
   * What the local invocation allows (policy.ts): checked against the spec's tools before anything
   * is sent (`policy_denied`), and its `approve` mode decides calls that need approval unless
   * `onApproval` is given (`ask` needs `onApproval`).
   * @defaultValue none (the tools as given; `onApproval` alone decides; a spec's `hosted_tools` are
   * refused, as `DEFAULT_POLICY` declares none: a spec grants nothing)
   */
  policy?: Policy;
  /**
   * Asked at the start of every turn for the tools from then on: a registry replaces the run's
   * (e.g. an MCP server announced `tools/list_changed`), `undefined` keeps it. Calls already made
   * are unaffected. Given the run's signal: a refresh still waiting when the run is cancelled
   * should end then. @defaultValue none (the tools never change)
   */
  refreshTools?: (signal: AbortSignal) => ToolRegistry | undefined | Promise<ToolRegistry | undefined>;
  /**
   * The MCP servers the tools come from, listed in `run_started.mcp_servers` (e.g. `status()` of
   * `createMcpTools`). @defaultValue none
   */
  mcpServers?: readonly McpServerSummary[];
  /** Root for file tools. @defaultValue process.cwd() */
  workspace?: string;
  /**
   * Cancels the run: the request is aborted, running tools are told, every started call gets an output.
   * @defaultValue none (cancel through the handle's `cancel()`)
   */
  signal?: AbortSignal;
  /**
   * Decides on calls to tools that need approval (`needsApproval`). Requests come one at a time;
   * a denied call is answered `ok:false` with a reason the model can read.
   * @defaultValue by `policy.approve`, else none (nothing is asked; every call runs)
   */
  onApproval?: ApprovalHandler;
  /** @defaultValue Date.now */
  clock?: Clock;
  /**
   * More values to mask in every frame (tokens of tool servers, keys a tool might print); the
   * provider's own `secrets` are always masked. @defaultValue none
   */
  secrets?: readonly string[];
  /**
   * Sees every frame as it is emitted (recorders, renderers), in addition to the iteration. It must
   * not throw: one that does sees no frame after, and the run is cancelled with its error as the
   * reason (its consumer still gets every frame up to `run_ended`). @defaultValue none
   */
  onFrame?: FrameObserver;
  /**
   * Substitute tool execution (replay, resume).
   * @defaultValue execution with the run's tool registry
   */
  executeTool?: ToolExecutor;
  /**
   * The run's tool-history manager, to share one between context compilation and the run (its
   * settings then win over `RunSpec.history`). @defaultValue a manager built from `RunSpec.history`
   * for the run's provider and model
   */
  history?: ToolHistoryManager;
  /**
   * Writes the history's summaries instead of the one `RunSpec.history` implies (a replay hands
   * back the recorded ones). @defaultValue the model summarizer with `summarization_model`, else
   * the extractive one
   */
  summarizer?: Summarizer;
  /**
   * Stop conditions, asked in order after every turn whose calls were answered; the first that
   * holds ends the run `stop_condition` (stop-when.ts). Data ones (`turnCountIs`, `hasToolCall`)
   * join `RunSpec.stop_when`, so the spec and a tape carry them; functions stay the program's own.
   * @defaultValue none (the limits alone stop the run)
   */
  stopWhen?: StopCondition | readonly StopCondition[];
  /**
   * Tool-call hooks (hooks.ts): `beforeToolCall` allows a call, denies it with a reason the model
   * reads, or rewrites its arguments, before any approval question; `afterToolCall` may rewrite
   * (or withhold) the output of a call that ran. Each decision is a `hook_decided` frame.
   * @defaultValue none
   */
  hooks?: ToolHooks;
  /**
   * Awaited after a call's `tool_started` is emitted and before the tool runs (not for refused
   * calls): a recorder that must hold the start before the tool can have any effect (a batch
   * worker's tape in Redis, src/batch/run-task.ts) resolves once it is stored. A rejection answers
   * the call as failed without running it; the run's abort answers it `cancelled`.
   * @defaultValue none
   */
  beforeToolRun?: (signal: AbortSignal) => Promise<void>;
  /**
   * Asked before each turn's request (prepare-turn.ts): may change the model, the tools offered,
   * `tool_choice` and the instructions, and lower `max_output_tokens`, for that turn only; a
   * `turn_prepared` frame records it.
   * @defaultValue none
   */
  prepareTurn?: PrepareTurn;
  /**
   * Asked at each turn boundary — after a turn whose calls were answered, and when the run would
   * end with an answer — for messages to add before the next request (steering): each is added as
   * a user message (a `steered` frame), and a run about to complete goes on instead. Not asked
   * once the run is cancelled or at `max_turns`. @defaultValue none
   */
  steering?: (ctx: { turn: number }) => readonly string[] | undefined;
  /**
   * Input checks (on the input, before the first request) and output checks (on the final answer);
   * a tripped one ends the run with reason `guardrail` (guardrails.ts). @defaultValue none
   */
  guardrails?: Guardrails;
  /**
   * Resumes an agent tool's deferred sub-run instead of starting it again (a resumed run's; the
   * sub-agent's calls decided then). @defaultValue none (sub-agents always start afresh)
   */
  resumeSubRun?: SubRunResumer;
  /**
   * How many agent calls (`agentTool`) this run is nested in: an agent tool gives its sub-run one
   * more, and refuses a call that would nest deeper than `MAX_AGENT_DEPTH` (loop/agent-tool.ts).
   * @defaultValue 0 (a top-level run)
   */
  agentDepth?: number;
  /**
   * The agent calls started under the top-level run so far, shared by its whole tree of sub-runs:
   * an agent tool counts each, and refuses one past `MAX_AGENT_RUNS` (loop/agent-tool.ts).
   * @defaultValue a count of the run's own (a top-level run)
   */
  agentRuns?: { started: number };
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
  /** With reason `awaiting_approval`: the ids of the calls waiting for a decision. */
  pendingCalls?: string[];
  /** With reason `stop_condition`: the label of the condition that held. */
  stopCondition?: string;
}

/** A running agent: iterate it for frames (once), await `result` for the outcome. */
export interface RunHandle extends AsyncIterable<Frame> {
  readonly runId: string;
  /**
   * The spec as the run runs it: every default applied, `run_id` set, and `tools` the names it
   * offers — what a tape header records, what `eddy resume` and `eddy replay` rebuild the run from.
   */
  readonly spec: RunSpec;
  readonly result: Promise<RunResult>;
  /** Cancels the run (same as aborting `signal`). */
  cancel(reason?: string): void;
}
