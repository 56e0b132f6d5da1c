/**
 * Fuzzing WebSocket mode's messages (fast-check): a real WebSocket server on 127.0.0.1 answers each
 * `response.create` with fuzzed messages — events of the right and wrong types with fields of any
 * type, text that is not JSON, binary frames — then maybe closes. The property: the run ends with
 * `run_ended` last, and never as an `internal_error`. `EDDY_FUZZ_RUNS` / `EDDY_FUZZ_SEED`
 * (test/support/fuzz.ts) make it the long form.
 */
import { mkdtempSync, rmSync } from "node:fs";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { WebSocketServer } from "ws";
import type { Frame } from "../src/frames/frame.js";
import { runAgent } from "../src/loop/run.js";
import { createOpenResponsesProvider } from "../src/provider/open-responses.js";
import { createToolRegistry } from "../src/tools/registry.js";
import { fuzzParams, fuzzTimeout, nastyJson, nastyString, objectWith } from "./support/fuzz.js";

const dir = mkdtempSync(join(tmpdir(), "eddy-fuzz-ws-"));
let server: WebSocketServer;
let url = "";
/** What the server sends for the next `response.create`, then whether it closes. */
let script: { messages: (string | Buffer)[]; close: boolean } = { messages: [], close: true };

beforeAll(async () => {
  server = new WebSocketServer({ host: "127.0.0.1", port: 0 });
  await new Promise<void>((resolve) => server.once("listening", () => resolve()));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
  server.on("connection", (socket) => {
    socket.on("message", () => {
      for (const m of script.messages) socket.send(m);
      if (script.close) socket.close();
    });
  });
});
afterAll(async () => {
  for (const client of server.clients) client.terminate();
  await new Promise((resolve) => server.close(resolve));
  rmSync(dir, { recursive: true, force: true });
});

const eventType = fc.constantFrom(
  "response.created",
  "response.in_progress",
  "response.output_item.added",
  "response.output_text.delta",
  "response.function_call_arguments.delta",
  "response.output_item.done",
  "response.completed",
  "response.failed",
  "response.incomplete",
  "error",
  "weird",
);
const response = objectWith({
  id: nastyString,
  object: fc.constant("response"),
  status: fc.constantFrom("completed", "in_progress", "failed", "incomplete"),
  output: fc.array(
    objectWith({
      type: fc.constantFrom("message", "function_call", "reasoning"),
      id: nastyString,
      call_id: nastyString,
      name: fc.constantFrom("read_file", "nope", ""),
      arguments: nastyJson,
      content: nastyJson,
    }),
    { maxLength: 2 },
  ),
  usage: nastyJson,
  error: nastyJson,
});
const event = objectWith({
  type: eventType,
  sequence_number: fc.nat(),
  response,
  item: nastyJson,
  output_index: fc.oneof(fc.nat({ max: 3 }), fc.constant(1e9)),
  delta: nastyString,
  item_id: nastyString,
  error: nastyJson,
  code: nastyString,
  message: nastyString,
});
const message = fc.oneof(
  { weight: 6, arbitrary: event.map((e) => JSON.stringify(e)) },
  { weight: 1, arbitrary: nastyString },
  { weight: 1, arbitrary: fc.uint8Array({ maxLength: 20 }).map((b) => Buffer.from(b)) },
);
const scripts = fc.record({ messages: fc.array(message, { maxLength: 8 }), close: fc.boolean() });

describe("fuzz: WebSocket messages", () => {
  it(
    "whatever the server sends, the run ends with run_ended last and never as an internal error",
    async () => {
      await fc.assert(
        fc.asyncProperty(scripts, async (s) => {
          script = s;
          const provider = createOpenResponsesProvider({
            baseURL: url,
            name: "fuzz",
            streamTransport: "websocket",
            retry: { maxRetries: 1, initialBackoffMs: 1, maxBackoffMs: 2 },
            timeouts: { idleMs: 200, firstByteMs: 500 },
          });
          try {
            const handle = runAgent(
              { model: "m", input: "hi", max_turns: 2 },
              { provider, tools: createToolRegistry([]), workspace: dir },
            );
            const frames: Frame[] = [];
            for await (const f of handle) frames.push(f);
            const result = await handle.result;
            expect(frames.at(-1)?.type).toBe("run_ended");
            expect(result.error?.code, JSON.stringify(result.error)).not.toBe("internal_error");
          } finally {
            await provider.close?.();
          }
        }),
        fuzzParams(40),
      );
    },
    fuzzTimeout(40, 120_000),
  );
});
