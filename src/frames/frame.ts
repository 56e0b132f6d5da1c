/**
 * Frame contract v1 (docs/architecture.md, "The frame contract"). A frame is one flat JSON object: the envelope
 * `{run_id, seq, ts, type}` followed by its payload fields. `seq` is contiguous from 0 within a
 * run and `ts` is unix milliseconds from the run's injected clock.
 *
 * Frames are created *unstamped* (`run_id: ""`, `seq: -1`, `ts: 0`) by whoever observes the fact
 * (the provider, the tool runner, the loop) and stamped exactly once, in place, by the run's
 * `FrameStamper` at the moment they are emitted. Stamping in place keeps the envelope keys first
 * in the JSON and costs no copy per frame; stamping at emission keeps `seq` in emission order even
 * when tool execution and streaming interleave.
 */
import type { CreateResponseBody, ItemParam, JsonObject, ToolChoiceParam, Usage } from "../protocol/types.js";

/** The envelope every frame carries. */
export interface FrameEnvelope {
  run_id: string;
  seq: number;
  ts: number;
}

/** How a run sends follow-ups: `previous_response_id` chaining, or the whole history each time. */
export type ContinuationMode = "chained" | "stateless";

/** What an SSE message turned out to be. `empty`: a message whose data is empty or blank (a ping). */
export type ProviderEventStatus = "event" | "done" | "invalid_json" | "empty";

/** Every reason a run ends with (docs/architecture.md, "The frame contract"): a tape's is one of them. */
export const RUN_END_REASONS = [
  "completed",
  "terminal_tool",
  "max_tool_calls",
  "max_turns",
  "no_progress",
  "incomplete",
  "failed",
  "provider_error",
  "invalid_request",
  "cancelled",
  "awaiting_approval",
  "stop_condition",
  "guardrail",
] as const;

/** Why a run ended (docs/architecture.md, "The frame contract"). */
export type RunEndReason = (typeof RUN_END_REASONS)[number];

/** `{code, message}` as it appears in frames: secret-free, one line. */
export interface FrameError {
  code: string;
  message: string;
}

// ── run lifecycle ───────────────────────────────────────────────────────────────────────────

/**
 * The run started: its model, continuation mode, input and the tools it offers. Always the first frame.
 */
export interface RunStartedFrame extends FrameEnvelope {
  type: "run_started";
  model: string | null;
  mode: ContinuationMode;
  input: string | ItemParam[];
  /** Names of the tools the model is offered, in declaration order. */
  tools: string[];
  /** Types of the hosted tools the provider runs itself (`web_search`, `mcp`, …), when there are any. */
  hosted_tools?: string[];
  instructions?: string;
  /** The AGENTS.md files (paths relative to the workspace) whose text the instructions include, root first. */
  instruction_files?: string[];
  /** The MCP servers the run's tools come from, when there are any (their tools are in `tools`). */
  mcp_servers?: McpServerSummary[];
}

/** An MCP server as `run_started` lists it: where it is in its life and how many tools it offers. */
export interface McpServerSummary {
  name: string;
  transport: "stdio" | "http";
  state: "idle" | "starting" | "ready" | "failed" | "exited" | "closed";
  /** Tools offered from this server (0 unless it started). */
  tools: number;
  /** Why it failed or exited: one line, secrets redacted. */
  error?: string;
}

/** A turn (one request with all its attempts) ended: the response id, status and usage. */
export interface TurnEndedFrame extends FrameEnvelope {
  type: "turn_ended";
  turn: number;
  response_id: string | null;
  /** The response status (`completed`, `incomplete`, `failed`, …) or `error` when no terminal event came. */
  status: string;
  usage: Usage | null;
}

/**
 * The run ended: why, the final text, the summed usage, and the error or result. Always the last frame.
 */
export interface RunEndedFrame extends FrameEnvelope {
  type: "run_ended";
  reason: RunEndReason;
  /** Text of the last response's message items (partial if that response was cut off). */
  output_text: string;
  response_id: string | null;
  /** Usage summed over every turn that reported one. */
  usage: Usage;
  /** Number of model requests (turns) made. */
  turns: number;
  /** Number of tool calls answered. */
  tool_calls: number;
  /** Present for every reason other than `completed` and `terminal_tool`. */
  error?: FrameError;
  /** The terminal tool's parsed arguments or the parsed structured output. */
  result?: unknown;
  /**
   * With reason `awaiting_approval`: the calls whose approval was deferred (`approve: "defer"`),
   * each named in an `approval_requested` frame; `eddy resume --decide CALL_ID=allow|deny` goes on.
   */
  pending_calls?: string[];
  /** With reason `stop_condition`: the label of the condition that held (`turn_count_is(3)`, `has_tool_call(submit)`, a function's name). */
  stop_condition?: string;
  /**
   * With `on_limit: "answer"`: the run reached a limit and made one last request with no tools
   * (the reason stays the limit; `output_text` is that request's answer).
   */
  limit_answer?: true;
}

/** The run switched continuation mode (e.g. `previous_response_not_found` → stateless). */
export interface ModeChangedFrame extends FrameEnvelope {
  type: "mode_changed";
  turn: number;
  from: ContinuationMode;
  to: ContinuationMode;
  reason: string;
}

/** One repair the pre-send history check made (an unpaired call, an orphan output, a duplicate id). */
export interface HistoryRepair {
  kind: "missing_output" | "orphan_output" | "duplicate_output" | "duplicate_call_id";
  call_id: string;
  detail: string;
}

/** The run was asked to stop (signal aborted, SIGINT/SIGTERM). Everything after it is the wind-down. */
export interface CancelRequestedFrame extends FrameEnvelope {
  type: "cancel_requested";
  turn: number;
  reason: string;
}

/**
 * The pre-send pairing check repaired the history before a request (every call gets exactly one output).
 */
export interface HistoryRepairedFrame extends FrameEnvelope {
  type: "history_repaired";
  turn: number;
  repairs: HistoryRepair[];
}

// ── context ─────────────────────────────────────────────────────────────────────────────────

/** How a history was made smaller: a summary written by a model or extracted by rule, dropped turns, or the server's compaction. */
export type CompactionMethod = "model_summary" | "extractive_summary" | "dropped" | "server_compact";

/**
 * What a compaction did to the conversation (the payload of `context_compacted`, without `turn`).
 * `threshold`: the history passed the configured `truncationThreshold` and older tool calls were
 * folded into a summary; `overflow`: the provider answered that the context is too long and whole
 * oldest turns were dropped or summarized.
 */
export interface ContextCompaction {
  trigger: "threshold" | "overflow";
  method: CompactionMethod;
  /** Input items taken out (the summary or notice put in their place is not counted). */
  items_removed: number;
  /** Tool calls among them (each with its output). */
  calls_removed: number;
  /** Token count of the history before and after (see `tokenizer`). */
  tokens_before: number;
  tokens_after: number;
  /** `o200k_base`, `cl100k_base`, … for a real tokenizer; `estimate` otherwise. */
  tokenizer: string;
  /** The text put in place of the removed items: kept so a replay can reuse it instead of asking a model again. */
  summary?: string;
  /** The model that wrote the summary (`model_summary`). */
  model?: string;
  /** Why a configured summarization model was not used (its call failed): the summary is extractive. */
  fallback_reason?: string;
  /**
   * The server was asked to compact (`POST /responses/compact`) and failed with this error, so the
   * history was compacted locally (overflow only).
   */
  server_error?: string;
  /**
   * `server_compact`: the items the server's `POST /responses/compact` returned, which replace the
   * history; a replay hands them back instead of asking the server again.
   */
  output?: JsonObject[];
}

/** The history sent with the next request was compacted (see `ContextCompaction`). */
export interface ContextCompactedFrame extends FrameEnvelope, ContextCompaction {
  type: "context_compacted";
  turn: number;
}

/** What a compiled context bundle contributes to a run (the payload of `context_compiled`). */
export interface ContextCompilation {
  /** sha256 (hex) of the bundle's canonical JSON; the bundle is stored as `.eddy/bundles/<bundle_id>.json`. */
  bundle_id: string;
  /** The compiler strategy (`recent_messages_v1`, `summaries_recent_messages_v1`). */
  strategy: string;
  /** Input items the bundle rendered to (the new prompt not counted). */
  item_count: number;
  /** Token count of those items (see `tokenizer`). */
  token_estimate: number;
  tokenizer: string;
  /** The thread the bundle was compiled from, when there is one. */
  thread?: string;
  /** Past runs the bundle draws on (verbatim or summarized). */
  runs: number;
  /** Past runs of the thread (or of the `--context` tapes) left out: over the context budget (a run of a 200 KB prompt alone is). */
  runs_left_out?: number;
  /** How older runs were summarized, when some were (`summaries_recent_messages_v1`). */
  summary_method?: CompactionMethod;
}

/** The run's input starts with a context bundle compiled from earlier runs; emitted before the first request. */
export interface ContextCompiledFrame extends FrameEnvelope, ContextCompilation {
  type: "context_compiled";
}

// ── provider I/O ────────────────────────────────────────────────────────────────────────────

/** An attempt of a turn's request starts; `body` is exactly what is sent. */
export interface RequestStartedFrame extends FrameEnvelope {
  type: "request_started";
  turn: number;
  attempt: number;
  /**
   * The Open Responses body of the request, as the loop built it (what replay compares). It is the
   * exact JSON body sent when the provider speaks Open Responses. Never holds secrets: keys travel
   * in headers, which are not recorded.
   */
  body: CreateResponseBody;
  /**
   * The exact JSON body sent, when the provider's API is not Open Responses (the Chat Completions
   * translation of `body`, src/provider/chat-completions/request.ts). Absent on the Responses path.
   */
  wire_body?: JsonObject;
  /**
   * `"websocket"` when the attempt went over a WebSocket connection (WebSocket mode,
   * `x-openresponses-websocket` on `/responses`): `body` was sent as one `response.create` message
   * (`{"type": "response.create", …body}` without `stream`, `stream_options`), each server message
   * is one `provider_event` without `event_name`, and no `response_headers` frame comes (there is
   * no HTTP answer per turn). Absent for HTTP (SSE) attempts.
   */
  transport?: "websocket";
}

/** The provider answered an attempt: HTTP status, request id and content type (errors included). */
export interface ResponseHeadersFrame extends FrameEnvelope {
  type: "response_headers";
  turn: number;
  attempt: number;
  status: number;
  request_id?: string;
  content_type?: string;
}

/**
 * One SSE message of the provider's stream, kept in full (parsed `data`, or `raw` text), with any
 * validation messages. Exactly one per message.
 */
export interface ProviderEventFrame extends FrameEnvelope {
  type: "provider_event";
  turn: number;
  status: ProviderEventStatus;
  /** The SSE `event:` field, when the message had one. */
  event_name?: string;
  /** The parsed JSON (status `event`). */
  data?: unknown;
  /** The message's data text (status `done`, `invalid_json`, `empty`). */
  raw?: string;
  /** Validation messages, when any. Recorded, never fatal. */
  errors?: string[];
}

/** A piece of the answer's text, right after the `provider_event` it came in. */
export interface OutputTextDeltaFrame extends FrameEnvelope {
  type: "output_text_delta";
  turn: number;
  item_id: string;
  output_index: number;
  content_index: number;
  delta: string;
}

/**
 * A piece of a reasoning item's text, right after the `provider_event` it came in (derived like
 * `output_text_delta`): `channel` `summary` for `response.reasoning_summary_text.delta` (keyed by
 * `summary_index`), `text` for the raw reasoning (`response.reasoning.delta`, or
 * `response.reasoning_text.delta` as OpenAI and LM Studio name it; keyed by `content_index`).
 */
export interface ReasoningDeltaFrame extends FrameEnvelope {
  type: "reasoning_delta";
  turn: number;
  item_id: string;
  output_index: number;
  channel: "summary" | "text";
  /** The summary part (`summary_index`) or content part (`content_index`) the text belongs to. */
  index: number;
  delta: string;
}

/**
 * An output item is final: the assembled item, once, right after the `provider_event` that
 * finished it — its `output_item.done` (for a `function_call`, the item with the resolved
 * arguments and `call_id` the loop runs it with), or the terminal event for items the response
 * finished without one (calls promoted at `response.completed`, items only the terminal `output`
 * lists, items a cut-off response leaves `incomplete`). Derived by the assembling stream
 * (src/provider/derive.ts) for every API and every item type.
 */
export interface ItemDoneFrame extends FrameEnvelope {
  type: "item_done";
  turn: number;
  output_index: number;
  item: JsonObject;
}

/**
 * The attempt's response ended: right after the `provider_event` that ended it (a terminal event,
 * or an `error` event), with what the stream told of it. Derived by the assembling stream.
 */
export interface ResponseEndedFrame extends FrameEnvelope {
  type: "response_ended";
  turn: number;
  response_id: string | null;
  /** The model the provider says answered (it may differ from the one requested). */
  model: string | null;
  /** `completed`, `incomplete` or `failed`. */
  status: string;
  usage: Usage | null;
  /** Why the response is incomplete (`max_output_tokens`, `content_filter`, …). */
  incomplete_reason?: string;
  /** The provider's error, for a failed response (`code` is `response_failed` when it sent none). */
  error?: FrameError;
}

/** An attempt ended without a usable response (HTTP error, transport error, timeout, truncation, failure event). */
export interface RequestFailedFrame extends FrameEnvelope {
  type: "request_failed";
  turn: number;
  attempt: number;
  /** The provider's error code when it sent one, else eddy's (`stream_truncated`, `idle_timeout`, …). */
  code: string;
  message: string;
  /** What failed: `http`, `connection`, `timeout`, `truncated`, `stream_failed`, `cancelled`, `decode`. */
  kind: string;
  /** Whether the failure is of a kind that may be retried (whether it *will* be is told by a following `retry`). */
  retryable: boolean;
  status?: number;
  error_type?: string;
  param?: string;
  request_id?: string;
}

/** The request is sent again after a failure (or to the next provider of a fallback chain). */
export interface RetryFrame extends FrameEnvelope {
  type: "retry";
  turn: number;
  /** The attempt about to be made (the failed one was `attempt - 1`). */
  attempt: number;
  delay_ms: number;
  /** The failure code that caused the retry (as in the preceding `request_failed`). */
  reason: string;
}

// ── tools ───────────────────────────────────────────────────────────────────────────────────

/** The loop accepted a complete function call; `tool_started` and `tool_ended` follow. */
export interface ToolCallFrame extends FrameEnvelope {
  type: "tool_call";
  turn: number;
  call_id: string;
  item_id: string;
  name: string;
  /**
   * The arguments string exactly as the model produced it; for a native call item, the arguments
   * of the tool that answers it (an apply-patch operation as `apply_patch {patch}`, a shell
   * call's commands, a custom tool's free-form input as is).
   */
  arguments: string;
  output_index: number;
  /**
   * The output item type the call came from, when it is not a `function_call`: `apply_patch_call`,
   * `shell_call`, `local_shell_call`, `custom_tool_call`, `mcp_approval_request`.
   */
  item_type?: string;
}

/** A call starts running (or is refused right away). */
export interface ToolStartedFrame extends FrameEnvelope {
  type: "tool_started";
  turn: number;
  call_id: string;
  name: string;
}

/** A call ended; `output` is exactly what is sent to the model. */
export interface ToolEndedFrame extends FrameEnvelope {
  type: "tool_ended";
  turn: number;
  call_id: string;
  name: string;
  ok: boolean;
  /** Exactly the string sent to the model as the `function_call_output`. */
  output: string;
  duration_ms: number;
  /** Set when `output` was capped; `full_output` then holds the uncapped output object. */
  truncated?: true;
  full_output?: string;
  /** An image the tool showed the model (a `data:` URL), sent as an `input_image` part after `output`. */
  image_url?: string;
  /**
   * The files the call changed (`write_file`, `apply_patch`), content before and after: what
   * `/undo` and `eddy undo TAPE` restore. Never sent to the model. Absent when nothing changed.
   */
  file_changes?: FileChangeRecord[];
  /**
   * A sub-agent's run (an `agentTool` call, src/loop/agent-tool.ts): its frames, nested whole,
   * labelled with the agent's name. Never sent to the model; a replay gives them back instead of
   * asking a provider.
   */
  subrun?: SubRun;
}

/**
 * An agent tool's call whose sub-agent ended `awaiting_approval` (a call of its own needs approval
 * and the policy says `defer`): the call is not answered, and the parent run ends
 * `awaiting_approval` too, right after this frame (emitted after the turn's `turn_ended`).
 * `pending_calls` are the sub-run's waiting calls as the parent names them, `CALL_ID/SUB_CALL_ID`
 * (what `eddy resume --decide` takes); `subrun` holds the sub-run's frames so far, from which a
 * resume re-enters it (src/batch/resume.ts, docs/decisions.md #32).
 */
export interface ToolDeferredFrame extends FrameEnvelope {
  type: "tool_deferred";
  turn: number;
  call_id: string;
  name: string;
  pending_calls: string[];
  subrun: SubRun;
}

/** A sub-agent's run inside its parent's `tool_ended` frame: the agent tool's name and the sub-run's frames. */
export interface SubRun {
  agent: string;
  frames: Frame[];
}

/**
 * One file a call changed, as the workspace-relative `path`: its content `before` and `after`
 * (`null`: the file did not exist), both in `encoding` (`utf8` text, or `base64` for bytes that
 * are not UTF-8). `omitted: "too_large"` (no contents) when either side is over 1 MiB: such a
 * change cannot be undone.
 */
export interface FileChangeRecord {
  path: string;
  encoding: "utf8" | "base64";
  before?: string | null;
  after?: string | null;
  omitted?: "too_large";
}

/** A call needs approval before it runs; the run waits for the decision. */
export interface ApprovalRequestedFrame extends FrameEnvelope {
  type: "approval_requested";
  turn: number;
  call_id: string;
  name: string;
  /** The arguments exactly as the model produced them. */
  arguments: string;
}

/** The decision on a call: it runs (`allow`, `allow_always`) or is answered as denied. */
export interface ApprovalDecidedFrame extends FrameEnvelope {
  type: "approval_decided";
  turn: number;
  call_id: string;
  name: string;
  decision: "allow" | "deny" | "allow_always";
}

/**
 * A tool-call hook decided on a call (`RunDeps.hooks`, config `hooks`): `before_tool_call` comes
 * after `tool_call` and before any approval question; `after_tool_call` right before `tool_ended`.
 * A replay gives the recorded decision back instead of calling the hook.
 */
export interface HookDecidedFrame extends FrameEnvelope {
  type: "hook_decided";
  turn: number;
  call_id: string;
  name: string;
  hook: "before_tool_call" | "after_tool_call";
  /** `allow`; `deny` (before: the call is not run; after: its output is withheld); `rewrite`. */
  decision: "allow" | "deny" | "rewrite";
  /** With `deny`: the reason, as the model reads it in the call's output. */
  reason?: string;
  /** With a `before_tool_call` `rewrite`: the arguments the call runs with. */
  arguments?: string;
  /** With an `after_tool_call` `rewrite`: the output the model gets (also `tool_ended.output`). */
  output?: string;
  /** How the decision came about when the hook itself failed (a timeout, a crash: fail closed). */
  note?: string;
}

/** `RunDeps.prepareTurn` changed this turn's settings (only what it changed is present). */
export interface TurnPreparedFrame extends FrameEnvelope {
  type: "turn_prepared";
  turn: number;
  model?: string;
  /** The tools offered in this turn (calls to others are refused). */
  tools?: string[];
  tool_choice?: ToolChoiceParam;
  instructions?: string;
  /** The turn's `max_output_tokens`, lowered; below 16 the request was not sent (prepare-turn.ts). */
  max_output_tokens?: number;
}

/** A guardrail checked the run's input (before the first request) or its final answer. */
export interface GuardrailCheckedFrame extends FrameEnvelope {
  type: "guardrail_checked";
  stage: "input" | "output";
  name: string;
  /** A tripped guardrail ends the run with reason `guardrail`. */
  tripped: boolean;
  reason?: string;
}

/**
 * A message added to the conversation while the run goes on (`RunDeps.steering`, e.g. `POST
 * /v1/runs/ID/steer`): it goes with turn `turn`'s request, after the calls of the turn before.
 */
export interface SteeredFrame extends FrameEnvelope {
  type: "steered";
  turn: number;
  message: string;
}

/** Every frame type. */
export type Frame =
  | RunStartedFrame
  | RequestStartedFrame
  | ResponseHeadersFrame
  | ProviderEventFrame
  | OutputTextDeltaFrame
  | ReasoningDeltaFrame
  | ItemDoneFrame
  | ResponseEndedFrame
  | RequestFailedFrame
  | RetryFrame
  | ModeChangedFrame
  | HistoryRepairedFrame
  | CancelRequestedFrame
  | ContextCompiledFrame
  | ContextCompactedFrame
  | ToolCallFrame
  | ApprovalRequestedFrame
  | ApprovalDecidedFrame
  | HookDecidedFrame
  | TurnPreparedFrame
  | GuardrailCheckedFrame
  | SteeredFrame
  | ToolStartedFrame
  | ToolEndedFrame
  | ToolDeferredFrame
  | TurnEndedFrame
  | RunEndedFrame;

/** The `type` of any frame. */
export type FrameType = Frame["type"];

/** The frame of a given type. */
export type FrameOf<T extends FrameType> = Extract<Frame, { type: T }>;

/** The frames a provider produces for one request (all its attempts). */
export type ProviderFrame =
  | RequestStartedFrame
  | ResponseHeadersFrame
  | ProviderEventFrame
  | OutputTextDeltaFrame
  | ReasoningDeltaFrame
  | ItemDoneFrame
  | ResponseEndedFrame
  | RequestFailedFrame
  | RetryFrame;

/**
 * The frames the assembling stream derives from provider events (src/provider/derive.ts), right
 * after the event they come from. A stream drops any its source yields and derives them itself,
 * so a fallback candidate's, a tape's or an older eddy's are never passed on twice.
 */
export const DERIVED_FRAME_TYPES = [
  "reasoning_delta",
  "item_done",
  "response_ended",
] as const satisfies readonly ProviderFrame["type"][];

/** The types of `ProviderFrame`, for runtime checks. */
export const PROVIDER_FRAME_TYPES = [
  "request_started",
  "response_headers",
  "provider_event",
  "output_text_delta",
  ...DERIVED_FRAME_TYPES,
  "request_failed",
  "retry",
] as const satisfies readonly ProviderFrame["type"][];

/** All frame types, for runtime checks. */
export const FRAME_TYPES = [
  "run_started",
  ...PROVIDER_FRAME_TYPES,
  "mode_changed",
  "history_repaired",
  "cancel_requested",
  "context_compiled",
  "context_compacted",
  "tool_call",
  "approval_requested",
  "approval_decided",
  "hook_decided",
  "turn_prepared",
  "guardrail_checked",
  "steered",
  "tool_started",
  "tool_ended",
  "tool_deferred",
  "turn_ended",
  "run_ended",
] as const satisfies readonly FrameType[];

/**
 * Builds an unstamped frame (`run_id: ""`, `seq: -1`, `ts: 0`) of `type` from its payload, envelope
 * keys first so the JSON stays envelope-first. (The per-event hot path in from-sse.ts writes its
 * literal by hand, to skip the spread.)
 */
export function frame<T extends FrameType>(
  type: T,
  payload: Omit<FrameOf<T>, keyof FrameEnvelope | "type">,
): FrameOf<T> {
  return { run_id: "", seq: -1, ts: 0, type, ...payload } as unknown as FrameOf<T>;
}
