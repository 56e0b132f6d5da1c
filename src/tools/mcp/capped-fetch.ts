/**
 * A `fetch` for the Streamable HTTP transport whose response bodies are capped, as stdio messages
 * are (`STDIO_DEFAULT_MAX_BUFFER_SIZE`, 10 MiB): the SDK reads a JSON body whole and buffers an
 * event stream's line until its end, so a server that sends an endless `data:` line or a 3 GB body
 * would fill the heap. An event stream may carry any number of messages: each event (up to its
 * blank line) is capped. Any other body is capped as a whole.
 */
import { STDIO_DEFAULT_MAX_BUFFER_SIZE } from "@modelcontextprotocol/sdk/shared/stdio.js";
import type { FetchLike } from "@modelcontextprotocol/sdk/shared/transport.js";

/** The most bytes one message (an event, or a whole non-stream body) may have. */
export const MAX_HTTP_MESSAGE_BYTES = STDIO_DEFAULT_MAX_BUFFER_SIZE;

/** Statuses whose response cannot have a body (`new Response` refuses one). */
const NULL_BODY = new Set([101, 204, 205, 304]);

/**
 * `base` with every response body capped at `limit` bytes a message. Past it the body fails with
 * an error saying so, after `onOversized` was told (once per body).
 */
export function cappedFetch(
  onOversized: (reason: string) => void,
  limit: number = MAX_HTTP_MESSAGE_BYTES,
  base: FetchLike = fetch,
): FetchLike {
  return async (url, init) => {
    const response = await base(url, init);
    // A redirect's body is dropped unread; the SDK looks at its type and location.
    if (response.body === null || NULL_BODY.has(response.status) || isRedirect(response)) return response;
    const stream = (response.headers.get("content-type") ?? "").toLowerCase().includes("text/event-stream");
    const reason = `sent a message over the ${limit}-byte limit and was stopped`;
    const capped = response.body.pipeThrough(
      byteCap(limit, stream, () => {
        onOversized(reason);
        return new Error(`the server ${reason}`);
      }),
    );
    const wrapped = new Response(capped, {
      status: response.status,
      statusText: response.statusText,
      headers: response.headers,
    });
    // The SDK names the URL a response came from in its messages.
    Object.defineProperty(wrapped, "url", { value: response.url });
    return wrapped;
  };
}

function isRedirect(response: Response): boolean {
  return response.type === "opaqueredirect" || (response.status >= 300 && response.status < 400);
}

const LF = 0x0a;
const CR = 0x0d;

/**
 * Passes bytes on until more than `limit` come without an event boundary (`perEvent`: a blank
 * line, whatever the line ends — LF, CRLF or CR) or in all; then fails with `over()`.
 */
function byteCap(
  limit: number,
  perEvent: boolean,
  over: () => Error,
): TransformStream<Uint8Array, Uint8Array> {
  let count = 0;
  let atLineStart = true;
  let afterCR = false;
  return new TransformStream({
    transform(chunk, controller) {
      if (!perEvent) {
        count += chunk.length;
      } else {
        for (let i = 0; i < chunk.length && count <= limit; i++) {
          count++;
          const byte = chunk[i];
          if (byte === LF && afterCR) {
            afterCR = false; // the LF of a CRLF: the line ended at its CR
          } else if (byte === LF || byte === CR) {
            if (atLineStart) count = 0; // a blank line: the event ended
            atLineStart = true;
            afterCR = byte === CR;
          } else {
            atLineStart = false;
            afterCR = false;
          }
        }
      }
      if (count > limit) controller.error(over());
      else controller.enqueue(chunk);
    },
  });
}
