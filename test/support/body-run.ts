/**
 * One agent turn over an in-memory HTTP body: the real Open Responses provider (SSE decoding,
 * validation, assembly) reading `chunks` as the response body, exactly as cut. For property and
 * stream tests that need a whole run's frames without a server.
 */
import type { Frame } from "../../src/frames/frame.js";
import { runAgent } from "../../src/loop/run.js";
import { createOpenResponsesProvider } from "../../src/provider/open-responses.js";
import type { Transport } from "../../src/provider/transport.js";

/** Runs one turn (no tools) over a provider whose body is `chunks`; returns its frames. */
export async function runOver(chunks: Uint8Array[], maxMessageSize?: number): Promise<Frame[]> {
  const transport: Transport = async () => ({
    status: 200,
    headers: { get: (name: string) => (name.toLowerCase() === "content-type" ? "text/event-stream" : null) },
    body: (async function* () {
      for (const chunk of chunks) yield chunk;
    })(),
    cancel: () => {},
  });
  const provider = createOpenResponsesProvider({
    baseURL: "http://captures.test/v1",
    transport,
    retry: { maxRetries: 0 },
    sleep: async () => {},
    ...(maxMessageSize === undefined ? {} : { maxMessageSize }),
  });
  const handle = runAgent({ model: "m", input: "hi", run_id: "run_p", max_turns: 1 }, { provider });
  const frames: Frame[] = [];
  for await (const frame of handle) frames.push(frame);
  return frames;
}
