export { LOOP_DEFAULTS } from "./defaults.js";
export { FrameChannel, type FrameObserver } from "./frame-channel.js";
export type {
  OutputSchema,
  RunHandle,
  RunOptions,
  RunResult,
  ToolExecutionPolicy,
  ToolExecutor,
  ToolsOnFollowUp,
} from "./options.js";
export { runAgent } from "./run.js";
