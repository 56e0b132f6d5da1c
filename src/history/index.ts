export { functionCallOutputItem, type InputNormalization, toInputItem, userMessageItem } from "./items.js";
export { type RepairedHistory, repairChainedOutputs, repairHistory } from "./pairing.js";
export {
  type CompactedHistory,
  nativeStrategy,
  strategyFor,
  TOOL_HISTORY_DEFAULTS,
  type ToolHistoryEntry,
  ToolHistoryManager,
  type ToolHistoryOptions,
  type ToolHistoryStrategy,
  textEmbedStrategy,
} from "./tool-history.js";
