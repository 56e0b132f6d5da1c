export { type CompactHistoryOptions, type CompactHistoryResult, compactHistory } from "./compact.js";
export { type ForeignChatMessage, type HistoryNote, parseForeignMessages } from "./foreign.js";
export { functionCallOutputItem, type InputNormalization, toInputItem, userMessageItem } from "./items.js";
export {
  HISTORY_DEFAULTS,
  HISTORY_STRATEGIES,
  type HistoryConfig,
  historyConfigSchema,
  historyOptionsFromConfig,
  type ToolHistoryOptions,
} from "./options.js";
export { orderOutputs, type RepairedHistory, repairChainedOutputs, repairHistory } from "./pairing.js";
export {
  type BuiltinStrategy,
  type FormattedToolEntry,
  NativeStrategy,
  nativeStrategy,
  resolveStrategy,
  TextEmbedStrategy,
  type ToolCallRecord,
  type ToolHistoryStrategy,
  type ToolHistoryStrategyName,
  type ToolHistoryStrategySetting,
  textEmbedStrategy,
} from "./strategies.js";
export {
  createModelSummarizer,
  extractiveSummarizer,
  extractiveSummary,
  type ModelSummarizerOptions,
  recordedSummaries,
  recordedSummarizer,
  SUMMARY_INSTRUCTIONS,
  type Summarizer,
  type SummaryResult,
} from "./summarizer.js";
export { type ToResponsesInputOptions, toResponsesInput } from "./to-responses-input.js";
export {
  createTokenCounter,
  estimateCounter,
  estimateTokens,
  type TokenCounter,
  TokenMeter,
} from "./tokens.js";
export {
  type CompactedHistory,
  type HistorySource,
  type RenderedHistory,
  ToolHistoryManager,
  type ToolHistoryManagerOptions,
} from "./tool-history.js";
