/**
 * The names of the HTTP APIs and stream transports eddy speaks, apart from their implementations
 * (wire-api.ts), so option parsing and help texts can list them without loading a provider.
 */

/** The HTTP APIs eddy speaks: Open Responses (`POST /responses`) and Chat Completions (`POST /chat/completions`). */
export type ApiName = "responses" | "chat-completions";

/** Every `ApiName`, for option checks and help texts. */
export const API_NAMES: readonly ApiName[] = ["responses", "chat-completions"];

/**
 * How an Open Responses provider's responses stream back: SSE over one HTTP request each, or
 * messages on a WebSocket connection kept across requests (WebSocket mode).
 */
export type StreamTransport = "sse" | "websocket";

/** Every `StreamTransport`, for option checks and help texts. */
export const STREAM_TRANSPORTS: readonly StreamTransport[] = ["sse", "websocket"];
