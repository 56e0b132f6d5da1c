/**
 * eddy: a tool-calling agent loop on any Open Responses provider — correct, fast and replayable.
 *
 * This entry holds what a program needs to run agents: `runAgent` and its options, result and
 * frames; the providers; tools. The rest lives on subpaths: `eddy/mock` (the offline mock
 * server), `eddy/replay` (tapes), `eddy/protocol` (spec types and validators), `eddy/sse` (the SSE
 * and frame decoders).
 *
 * @example
 * ```ts
 * import { createBuiltinTools, createOpenResponsesProvider, createToolRegistry, runAgent } from "eddy";
 *
 * const provider = createOpenResponsesProvider({ baseURL: "https://api.openai.com/v1", apiKey: process.env.OPENAI_API_KEY });
 * const { tools, disabled } = createBuiltinTools();
 * const run = runAgent(
 *   { model: "gpt-5-mini", input: "What is in package.json?" },
 *   { provider, tools: createToolRegistry(tools, { disabled }) },
 * );
 * for await (const frame of run) if (frame.type === "output_text_delta") process.stdout.write(frame.delta);
 * console.log((await run.result).reason);
 * ```
 *
 * @packageDocumentation
 */

// ── memory: tool history, context across runs ───────────────────────────────────────────────
export {
  CONTEXT_DEFAULTS,
  type CompileOptions,
  type ContextBundle,
  type ContextStrategy,
  compileContextBundle,
  type PastRun,
  renderContextBundle,
} from "./context/bundle.js";
export {
  createThreadStore,
  type ThreadStore,
  type ThreadStoreOptions,
  type ThreadSummary,
} from "./context/threads.js";
// ── errors and version ────────────────────────────────────────────────────────────────────
export { EddyError, type EddyErrorCode, type ErrorFault } from "./errors.js";
// ── frames ────────────────────────────────────────────────────────────────────────────────
export type {
  CancelRequestedFrame,
  CompactionMethod,
  ContextCompactedFrame,
  ContextCompaction,
  ContextCompilation,
  ContextCompiledFrame,
  ContinuationMode,
  FileChangeRecord,
  Frame,
  FrameEnvelope,
  FrameError,
  FrameOf,
  FrameType,
  HistoryRepair,
  HistoryRepairedFrame,
  McpServerSummary,
  ModeChangedFrame,
  OutputTextDeltaFrame,
  ProviderEventFrame,
  ProviderEventStatus,
  ProviderFrame,
  RequestFailedFrame,
  RequestStartedFrame,
  ResponseHeadersFrame,
  RetryFrame,
  RunEndedFrame,
  RunEndReason,
  RunStartedFrame,
  SubRun,
  ToolCallFrame,
  ToolDeferredFrame,
  ToolEndedFrame,
  ToolStartedFrame,
  TurnEndedFrame,
} from "./frames/frame.js";
export { FRAME_TYPES } from "./frames/frame.js";
export type { Clock } from "./frames/stamp.js";
export {
  type Attachment,
  attachmentPart,
  MAX_INLINE_FILE_BYTES,
  MAX_INLINE_IMAGE_BYTES,
  mimeTypeOf,
  userMessageWithAttachments,
} from "./history/attachments.js";
export { type CompactHistoryOptions, type CompactHistoryResult, compactHistory } from "./history/compact.js";
export type { ForeignChatMessage, HistoryNote } from "./history/foreign.js";
export { HISTORY_DEFAULTS, type ToolHistoryOptions } from "./history/options.js";
export {
  type BuiltinStrategy,
  type FormattedToolEntry,
  NativeStrategy,
  nativeStrategy,
  TextEmbedStrategy,
  type ToolCallRecord,
  type ToolHistoryStrategy,
  type ToolHistoryStrategyName,
  type ToolHistoryStrategySetting,
  textEmbedStrategy,
} from "./history/strategies.js";
export {
  createModelSummarizer,
  type ModelSummarizerOptions,
  type Summarizer,
  type SummaryResult,
} from "./history/summarizer.js";
export { type ToResponsesInputOptions, toResponsesInput } from "./history/to-responses-input.js";
export { createTokenCounter, type TokenCounter } from "./history/tokens.js";
export {
  type CompactedHistory,
  type HistorySource,
  type RenderedHistory,
  ToolHistoryManager,
  type ToolHistoryManagerOptions,
} from "./history/tool-history.js";
// ── the loop ──────────────────────────────────────────────────────────────────────────────
export { type AgentToolOptions, type AgentToolParent, agentTool } from "./loop/agent-tool.js";
export { LOOP_DEFAULTS } from "./loop/defaults.js";
export type { FrameObserver } from "./loop/frame-channel.js";
export type {
  AfterToolCallDecision,
  BeforeToolCallDecision,
  HookCall,
  ToolHooks,
} from "./loop/hooks.js";
export { HOSTED_TOOL_NAMES, hostedTool } from "./loop/hosted-tools.js";
export {
  findInstructionFiles,
  INSTRUCTION_FILE_NAME,
  type InstructionFile,
  withInstructionFiles,
} from "./loop/instruction-files.js";
export type {
  RunDeps,
  RunHandle,
  RunResult,
  ToolExecutionPolicy,
  ToolExecutor,
  ToolsOnFollowUp,
} from "./loop/options.js";
export {
  APPROVE_MODES,
  type ApproveMode,
  assertPolicy,
  checkHostedTools,
  checkPolicy,
  createPolicy,
  DEFAULT_POLICY,
  type Policy,
  type PolicyProblem,
  type ToolPermission,
  toolPermission,
} from "./loop/policy.js";
export type { PrepareTurn, TurnContext, TurnSettings } from "./loop/prepare-turn.js";
export {
  allowedValues,
  REQUEST_OPTION_NAMES,
  type RequestOptions,
  requestFields,
} from "./loop/request-options.js";
export { runAgent } from "./loop/run.js";
export {
  checkPartialRunSpec,
  mergeRunSpecs,
  type PartialRunSpec,
  RUN_SPEC_VERSION,
  type RunSpec,
  type RunSpecHistory,
  type RunSpecInput,
  type RunSpecMode,
  type RunSpecOutputSchema,
  resolveRunSpec,
  runSpecSchema,
} from "./loop/run-spec.js";
export {
  hasToolCall,
  type StopCondition,
  type StopConditionData,
  type StopConditionFunction,
  type StopContext,
  turnCountIs,
} from "./loop/stop-when.js";
export { runAgentOnThread, type ThreadRunHandle, type ThreadRunSettings } from "./loop/thread-run.js";
export type { HostedTool, NativeShell } from "./loop/tool-declarations.js";
export type { CreateResponseBody, ItemParam, JsonObject, ToolChoiceParam, Usage } from "./protocol/types.js";
// ── providers ─────────────────────────────────────────────────────────────────────────────
export type {
  AssembledCall,
  AssembledResponse,
  StreamError,
  TerminalKind,
} from "./provider/assembler/index.js";
export { GENERIC_CAPABILITIES, type ProviderCapabilities } from "./provider/capabilities.js";
export type { ChatDialect } from "./provider/chat-completions/dialect.js";
export {
  type ChatCompletionsProviderOptions,
  createChatCompletionsProvider,
} from "./provider/chat-completions/provider.js";
export { PROVIDER_DEFAULTS } from "./provider/defaults.js";
export { ProviderError, type ProviderErrorKind } from "./provider/errors.js";
export { createFallbackProvider, type FallbackCandidate } from "./provider/fallback.js";
export {
  createHttpProvider,
  createProfileProvider,
  type HttpProviderOptions,
} from "./provider/http-provider.js";
export {
  type CallOptions,
  createLLMProvider,
  type LLMCompactRequest,
  type LLMProvider,
  type LLMProviderOptions,
  type LLMTool,
  type LLMToolCall,
  type TurnReply,
  type TurnRequest,
} from "./provider/llm-provider.js";
export { createOpenResponsesProvider, type OpenResponsesProviderOptions } from "./provider/open-responses.js";
export {
  capabilitiesWithEvidence,
  type DoctorReport,
  type EvidenceChange,
  evidenceChanges,
  evidenceOf,
  PROBE_DEFAULTS,
  PROBE_NAMES,
  type ProbeName,
  type ProbeResult,
  type ProbeStatus,
  type ProbeTarget,
  type ProbeToolRecord,
  parseDoctorReport,
  type RenderToolResult,
  type RunProbesOptions,
  runProbes,
  type ToolFollowUp,
} from "./provider/probe/index.js";
export { KNOWN_PROFILES, type ProviderProfile, type Route, resolveRoute } from "./provider/profiles.js";
export type {
  CompactRequest,
  CompactResult,
  Provider,
  ProviderOutcome,
  ProviderRequest,
  ProviderStream,
  ProviderStreamOptions,
} from "./provider/provider.js";
export { DEFAULT_RETRY_POLICY, type RetryPolicy } from "./provider/retry.js";
export {
  fetchTransport,
  nodeHttpTransport,
  type Transport,
  type TransportRequest,
  type TransportResponse,
} from "./provider/transport.js";
export type { WatchdogLimits } from "./provider/watchdog.js";
export { WEBSOCKET_DEFAULTS, type WebSocketOptions } from "./provider/websocket/mode.js";
export type { ApiName, StreamTransport } from "./provider/wire-api.js";
// ── sessions: turns on one thread (eddy chat) ─────────────────────────────────────────────
export {
  createSession,
  newThreadName,
  Session,
  type SessionEvent,
  type SessionOptions,
  type SessionSpec,
  type TurnResult,
  type TurnUsage,
} from "./session/session.js";
export { fileChangesOf, undoTape } from "./session/undo.js";
export type { PendingCall, WaitingRun } from "./session/waiting-run.js";
// ── tools ─────────────────────────────────────────────────────────────────────────────────
export {
  BUILTIN_TOOL_NAMES,
  type BuiltinTools,
  type BuiltinToolsOptions,
  createBuiltinTools,
} from "./tools/builtin/index.js";
export { TOOL_DEFAULTS } from "./tools/defaults.js";
export type { ToolCall, ToolCallResult } from "./tools/execute.js";
export { checkFileChanges, undoFileChanges } from "./tools/file-undo.js";
export {
  createToolRegistry,
  type DisabledTool,
  type RegisteredTool,
  type ToolRegistry,
  type ToolRegistryOptions,
} from "./tools/registry.js";
export {
  defineTool,
  type FreeformGrammar,
  type JsonSchema,
  type SubRunRecord,
  type ToolContext,
  type ToolDefinition,
  type ToolError,
  type ToolErrorCode,
  type ToolResult,
  type ToolReturn,
  toolResult,
} from "./tools/tool.js";
export { EDDY_VERSION } from "./version.js";
