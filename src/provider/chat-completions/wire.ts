/**
 * How Chat Completions response bodies become frames. Every SSE message is one `provider_event`
 * whose `data` is the chunk verbatim; `[DONE]`, pings and undecodable JSON are framed exactly as on
 * the Responses path (frames/from-sse.ts). Chunks are not validated against the Open Responses
 * schema (they are not Open Responses events): with validation on, a light shape check
 * (chunk.ts) records what is wrong in `errors`. No frame is derived here: the assembling stream
 * derives `output_text_delta` from the translated events (translator.ts).
 */
import type { ProviderEventFrame } from "../../frames/frame.js";
import { createFrameDecoder } from "../../frames/frame-decoder.js";
import {
  FRAMED,
  providerFrame,
  type SseFrame,
  type SseFrameOptions,
  sseData,
} from "../../frames/from-sse.js";
import type { SseMessage } from "../../sse/decoder.js";
import { isJsonObject } from "../../util/json.js";
import type { WireFormat } from "../http-attempt.js";
import { checkChunk } from "./chunk.js";

/**
 * The mapping of a wire format whose messages are JSON but not Open Responses events: one
 * `provider_event` per message, its data verbatim, `check` (with validation on) saying what is wrong
 * with its shape. No frame is derived (a translator does that).
 */
export function checkedFramesFromSse(
  check: (data: unknown) => string[] | undefined,
): (message: SseMessage, options: SseFrameOptions, emit: (frame: SseFrame) => void) => void {
  return (message, options, emit) => {
    const data = sseData(message, options.turn, emit);
    if (data === FRAMED) return;
    const errors = options.validate === false ? undefined : check(data);
    emit(providerFrame(options.turn, "event", message.event, data, undefined, errors));
  };
}

/** Maps one SSE message of a Chat Completions stream to its frame. */
export const chatFramesFromSse = checkedFramesFromSse(checkChunk);

/** How Chat Completions bodies become frames. */
export const CHAT_COMPLETIONS_WIRE: WireFormat = {
  endpoint: "/v1/chat/completions",
  createDecoder: (options) => createFrameDecoder(options, chatFramesFromSse),
  wholeBody(json, _text, turn, validate) {
    // A `chat.completion` (the server ignored `stream: true`) or a proxy's `{"error": {…}}`.
    if (!isJsonObject(json) || (json.object !== "chat.completion" && json.error === undefined))
      return "got a JSON body that is not a Chat Completions response (chat.completion)";
    const f: ProviderEventFrame = providerFrame(turn, "event", undefined, json, undefined, undefined);
    if (validate)
      f.errors = ["expected an SSE stream (text/event-stream) for a streaming request; got a JSON body"];
    return f;
  },
};
