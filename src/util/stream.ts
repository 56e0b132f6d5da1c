/** Small node stream helpers shared across layers. */
import type { Writable } from "node:stream";

/** Resolves on `'drain'` (or `'close'`), leaving no listener behind either way. */
export function drained(stream: Writable): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      stream.off("drain", done);
      stream.off("close", done);
      resolve();
    };
    stream.on("drain", done);
    stream.on("close", done);
  });
}

/** Reads a body as text, stopping once it holds more than `maxBytes` (the rest is left unread). */
export async function readText(
  body: AsyncIterable<Uint8Array>,
  maxBytes: number,
): Promise<{ text: string; complete: boolean }> {
  const decoder = new TextDecoder();
  let text = "";
  let bytes = 0;
  for await (const chunk of body) {
    bytes += chunk.byteLength;
    text += decoder.decode(chunk, { stream: true });
    if (bytes > maxBytes) return { text: text + decoder.decode(), complete: false };
  }
  return { text: text + decoder.decode(), complete: true };
}
