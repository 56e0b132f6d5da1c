/**
 * Bytes → frames in one pass: the SSE decoder wired to the pure SSE→frame mapping. This is the
 * hot path of every provider (and what `npm run bench` measures); it holds no I/O of its own.
 */
import { createSseDecoder, type SseDecoderOptions } from "../sse/decoder.js";
import { framesFromSse, type SseFrame } from "./from-sse.js";

/** Options of `createFrameDecoder`. */
export interface FrameDecoderOptions {
  turn: number;
  /** @defaultValue true */
  validate?: boolean;
  /** Receives each frame (unstamped), in order. */
  onFrame: (frame: SseFrame) => void;
  /**
   * Receives each SSE comment (keep-alives). Comments never become frames (docs/decisions.md #12).
   * @defaultValue none
   */
  onComment?: (comment: string) => void;
  /** @defaultValue SSE_DEFAULTS.maxMessageSize */
  maxMessageSize?: number;
}

/**
 * Bytes (or text) in, frames out through `onFrame`; `end()` flushes a last message without its blank line.
 */
export interface FrameDecoder {
  feed(chunk: Uint8Array | string): void;
  end(): void;
}

/** How one SSE message becomes frames: `framesFromSse` for Open Responses; other wire formats bring their own. */
export type SseFrameMapping = typeof framesFromSse;

/** A decoder of an event stream into frames, in one pass (`mapping`: Open Responses by default). */
export function createFrameDecoder(
  options: FrameDecoderOptions,
  mapping: SseFrameMapping = framesFromSse,
): FrameDecoder {
  const mapOptions = { turn: options.turn, validate: options.validate !== false };
  const { onFrame } = options;
  // A block without a data line (an `event: ping` keep-alive) is what the provider sent too: it
  // becomes a provider_event with status "empty", like a ping with empty data (docs/decisions.md #12).
  const sseOptions: SseDecoderOptions = {
    onMessage: (m) => mapping(m, mapOptions, onFrame),
    datalessBlocks: "dispatch",
  };
  if (options.onComment) sseOptions.onComment = options.onComment;
  if (options.maxMessageSize !== undefined) sseOptions.maxMessageSize = options.maxMessageSize;
  return createSseDecoder(sseOptions);
}
