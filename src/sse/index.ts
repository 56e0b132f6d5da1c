export {
  type ByteSource,
  createSseDecoder,
  type DecodeSseOptions,
  decodeSse,
  iterateBytes,
  SSE_DEFAULTS,
  type SseDecoder,
  type SseDecoderOptions,
  type SseMessage,
} from "./decoder.js";
export {
  encodeSseComment,
  encodeSseDone,
  encodeSseMessage,
  type SseLineEnding,
  type SseOutgoingMessage,
} from "./encoder.js";
