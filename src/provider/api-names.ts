/**
 * The names of the HTTP APIs and stream transports eddy speaks, apart from their implementations
 * (wire-api.ts), so option parsing and help texts can list them without loading a provider.
 */

/**
 * The APIs eddy speaks to providers: Open Responses (`POST /responses`) and Chat Completions
 * (`POST /chat/completions`) over HTTP, and an AI SDK language model's stream (`ai-sdk`, through
 * the model object: provider/ai-sdk/).
 */
export type ApiName = "responses" | "chat-completions" | "ai-sdk";

/** Every `ApiName`, for option checks and help texts. */
export const API_NAMES: readonly ApiName[] = ["responses", "chat-completions", "ai-sdk"];

/**
 * How an Open Responses provider's responses stream back: SSE over one HTTP request each, or
 * messages on a WebSocket connection kept across requests (WebSocket mode).
 */
export type StreamTransport = "sse" | "websocket";

/** Every `StreamTransport`, for option checks and help texts. */
export const STREAM_TRANSPORTS: readonly StreamTransport[] = ["sse", "websocket"];
