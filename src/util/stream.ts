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
