/** The provider layer: the contract, the Open Responses HTTP provider, the assembler, profiles, LLMProvider. */
export {
  type AssembledCall,
  type AssembledResponse,
  type Assembly,
  createAssembly,
  finishAssembly,
  type StreamError,
  step,
  type TerminalKind,
} from "./assembler/index.js";
export { GENERIC_CAPABILITIES, type ProviderCapabilities, withCapabilities } from "./capabilities.js";
export { PROVIDER_DEFAULTS } from "./defaults.js";
export { cancelledError, ProviderError, type ProviderErrorKind } from "./errors.js";
export { createFallbackProvider, type FallbackCandidate } from "./fallback.js";
export {
  type CallOptions,
  createLLMProvider,
  type LLMProvider,
  type LLMProviderOptions,
  type LLMTool,
  type LLMToolCall,
  type TurnReply,
  type TurnRequest,
} from "./llm-provider.js";
export {
  createOpenResponsesProvider,
  type OpenResponsesProviderOptions,
  resolveResponsesUrl,
} from "./open-responses.js";
export {
  createProfileProvider,
  KNOWN_PROFILES,
  type ProviderProfile,
  profileApiKey,
  profileBaseURL,
  type Route,
  resolveRoute,
} from "./profiles.js";
export type {
  Provider,
  ProviderOutcome,
  ProviderRequest,
  ProviderStream,
  ProviderStreamOptions,
} from "./provider.js";
export { DEFAULT_RETRY_POLICY, type RetryPolicy } from "./retry.js";
export {
  fetchTransport,
  nodeHttpTransport,
  type Transport,
  type TransportRequest,
  type TransportResponse,
} from "./transport.js";
