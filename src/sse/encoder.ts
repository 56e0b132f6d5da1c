/**
 * SSE encoder (the mock server's side of the wire). Refuses values that would break framing: an
 * `event` or `id` containing CR or LF would inject fields into the stream.
 */
import { EddyError } from "../errors.js";

/** The line ending an encoder writes. */
export type SseLineEnding = "\n" | "\r\n" | "\r";

/** An SSE message to encode. */
export interface SseOutgoingMessage {
  event?: string;
  /** The data; a value with line breaks is sent as several `data:` lines. */
  data: string;
  id?: string;
}

/** Encodes one message, terminated by its blank line. */
export function encodeSseMessage(message: SseOutgoingMessage, lineEnding: SseLineEnding = "\n"): string {
  let out = "";
  if (message.event !== undefined) out += `event: ${guardField("event", message.event)}${lineEnding}`;
  if (message.id !== undefined) out += `id: ${guardField("id", message.id)}${lineEnding}`;
  const lines = message.data.split(/\r\n|\r|\n/);
  for (const line of lines) out += `data: ${line}${lineEnding}`;
  return out + lineEnding;
}

/** Encodes a comment line (a keep-alive); line breaks in `text` are refused. */
export function encodeSseComment(text: string, lineEnding: SseLineEnding = "\n"): string {
  return `: ${guardField("comment", text)}${lineEnding}${lineEnding}`;
}

/** The Open Responses stream terminator. */
export function encodeSseDone(lineEnding: SseLineEnding = "\n"): string {
  return `data: [DONE]${lineEnding}${lineEnding}`;
}

function guardField(name: string, value: string): string {
  if (/[\r\n]/.test(value)) {
    throw new EddyError(
      "invalid_argument",
      `SSE ${name} must not contain CR or LF (got ${JSON.stringify(value)})`,
    );
  }
  return value;
}
