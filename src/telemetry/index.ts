/**
 * OpenTelemetry GenAI spans from frames: `invoke_agent`, `chat {model}`, `execute_tool {name}`.
 */
export { finishReason, GENAI, type GenAiMessage, inputMessages } from "./genai.js";
export {
  createOtelObserver,
  createOtelObserverFromApi,
  type OtelApi,
  type OtelFrameObserver,
  type OtelObserverOptions,
} from "./otel-observer.js";
