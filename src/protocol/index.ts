export {
  OPENRESPONSES_SPEC_SHA256,
  OPENRESPONSES_SPEC_VERSION,
  STREAMING_EVENT_SCHEMA_NAMES,
  STREAMING_EVENT_TYPES,
  type StreamingEventType,
} from "./generated/event-types.js";
export { type CanonicalBody, canonicalCreateBody, type Departure } from "./shorthands.js";
export type * from "./types.js";
export {
  isExtensionType,
  isStreamingEventType,
  type ValidationErrors,
  validateCreateResponseBody,
  validateErrorPayload,
  validateInputItem,
  validateOutputItem,
  validateResponseResource,
  validateStreamingEvent,
} from "./validate.js";
