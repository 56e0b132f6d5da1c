/**
 * `eddy/sse`: server-sent events. The WHATWG-conformant SSE decoder eddy's providers use (bytes in
 * any chunking → messages; CR/LF/CRLF, split UTF-8, a size bound), its encoder, and the frame
 * decoder that maps each message to eddy's frames (one `provider_event` per message, plus the
 * derived text deltas).
 *
 * @example
 * ```ts
 * import { createSseDecoder } from "eddy/sse";
 *
 * const decoder = createSseDecoder({ onMessage: (m) => console.log(m.event, m.data) });
 * for await (const chunk of response.body) decoder.feed(chunk);
 * decoder.end();
 * ```
 *
 * @packageDocumentation
 */
export { createFrameDecoder, type FrameDecoder, type FrameDecoderOptions } from "../frames/frame-decoder.js";
export { framesFromSse, type SseFrame, type SseFrameOptions } from "../frames/from-sse.js";
export * from "../sse/index.js";
