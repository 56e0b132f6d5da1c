export {
  type CancelRequestedFrame,
  type ContinuationMode,
  FRAME_TYPES,
  type Frame,
  type FrameEnvelope,
  type FrameError,
  type FrameOf,
  type FrameType,
  frame,
  type HistoryRepair,
  type HistoryRepairedFrame,
  type ModeChangedFrame,
  type OutputTextDeltaFrame,
  PROVIDER_FRAME_TYPES,
  type ProviderEventFrame,
  type ProviderEventStatus,
  type ProviderFrame,
  type RequestFailedFrame,
  type RequestStartedFrame,
  type ResponseHeadersFrame,
  type RetryFrame,
  type RunEndedFrame,
  type RunEndReason,
  type RunStartedFrame,
  type ToolCallFrame,
  type ToolEndedFrame,
  type ToolStartedFrame,
  type TurnEndedFrame,
} from "./frame.js";
export { createFrameDecoder, type FrameDecoder, type FrameDecoderOptions } from "./frame-decoder.js";
export { framesFromSse, type SseFrame, type SseFrameOptions, sseMessageToFrames } from "./from-sse.js";
export { asFrame, encodeFrameLine, type JsonlRecord, parseFrames, parseJsonl } from "./jsonl.js";
export { type Clock, createFrameStamper, type FrameStamper, systemClock } from "./stamp.js";
