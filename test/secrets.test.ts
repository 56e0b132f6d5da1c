/**
 * No secret leaves a run: a hostile server echoes the API key (and the password of the base URL)
 * back in every place it can — a request id, an SSE `error` event, an HTTP error body, a streamed
 * answer — and every channel a frame leaves by (the iteration, `onFrame`, the tape, the result)
 * is searched for it.
 */
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { Frame } from "../src/frames/frame.js";

import { runAgent } from "../src/loop/run.js";
import { createOpenResponsesProvider } from "../src/provider/open-responses.js";
import { createTapeHeader } from "../src/replay/header.js";
import { createTapeRecorder, type TapeRecorder } from "../src/replay/recorder.js";
import { toSse } from "./support/captures.js";
import { type RawReply, type RawServer, startRawServer } from "./support/raw-server.js";

const KEY = "sk-test-0123456789abcdefSECRET";
const PASSWORD = "hunter2-very-secret";
const dir = mkdtempSync(join(tmpdir(), "eddy-secrets-"));

let server: RawServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const created = {
  type: "response.created",
  sequence_number: 0,
  response: { id: "resp_1", status: "in_progress", output: [] },
};

/** Replies that echo the key, one failure path each. */
const PATHS: Record<string, RawReply[]> = {
  "request id header": [
    { headers: { "x-request-id": `req_${KEY}` }, body: [toSse([JSON.stringify(created)])] },
  ],
  "SSE error event": [
    {
      body: [
        toSse([
          JSON.stringify(created),
          JSON.stringify({
            type: "error",
            sequence_number: 1,
            error: {
              type: "invalid_request_error",
              code: "bad",
              message: `your key ${KEY} is wrong`,
              param: null,
            },
          }),
        ]),
      ],
    },
  ],
  "HTTP 401 body": [
    {
      status: 401,
      headers: { "content-type": "application/json", "x-request-id": KEY },
      body: [
        JSON.stringify({ error: { message: `Incorrect API key provided: ${KEY}`, code: "invalid_api_key" } }),
      ],
    },
  ],
  "HTML 200": [
    { headers: { "content-type": "text/html" }, body: [`<p>key=${KEY} password=${PASSWORD}</p>`] },
  ],
  "streamed answer": [
    {
      body: [
        toSse([
          JSON.stringify(created),
          JSON.stringify({
            type: "response.output_text.delta",
            sequence_number: 1,
            item_id: "m",
            output_index: 0,
            content_index: 0,
            delta: `here: ${KEY}`,
          }),
          JSON.stringify({
            type: "response.completed",
            sequence_number: 2,
            response: {
              id: "resp_1",
              status: "completed",
              output: [
                {
                  type: "message",
                  id: "m",
                  role: "assistant",
                  status: "completed",
                  content: [{ type: "output_text", text: `here: ${KEY}`, annotations: [] }],
                },
              ],
            },
          }),
        ]),
      ],
    },
  ],
};

describe("no secret in any channel", () => {
  it.each(Object.keys(PATHS))("%s", async (name) => {
    server = await startRawServer(PATHS[name] as RawReply[]);
    const url = new URL(server.url);
    url.username = "me";
    url.password = PASSWORD;
    const provider = createOpenResponsesProvider({
      baseURL: url.toString(),
      apiKey: KEY,
      retry: { maxRetries: 0 },
    });
    const tape = join(dir, `${name.replace(/\W/g, "_")}.tape`);
    let recorder: TapeRecorder | undefined;
    const observed: Frame[] = [];
    const handle = runAgent(
      { model: "m", input: "hi", run_id: "run_secret" },
      {
        provider,
        workspace: dir,
        onFrame: (f) => {
          observed.push(f);
          recorder?.observer(f);
        },
      },
    );
    recorder = createTapeRecorder(tape, createTapeHeader(handle.spec, { provider }));
    const iterated: Frame[] = [];
    for await (const f of handle) iterated.push(f);
    const result = await handle.result;
    recorder.close();
    const channels = {
      iterated: JSON.stringify(iterated),
      onFrame: JSON.stringify(observed),
      tape: readFileSync(tape, "utf8"),
      result: JSON.stringify({ ...result, items: undefined }),
    };
    for (const [channel, text] of Object.entries(channels)) {
      expect(text.includes(KEY), `${channel} leaks the key`).toBe(false);
      expect(text.includes(PASSWORD), `${channel} leaks the password`).toBe(false);
    }
    expect(channels.iterated).toContain("***");
    // The server got the credentials it needs, in headers only.
    expect(server.requests[0]?.headers.authorization).toBe(`Bearer ${KEY}`);
    expect(server.requests[0]?.url).toBe("/v1/responses");
  });

  it("a base URL with user:password and no key authenticates with Basic", async () => {
    server = await startRawServer([{ body: [toSse([JSON.stringify(created)])] }]);
    const url = new URL(server.url);
    url.username = "me";
    url.password = PASSWORD;
    const provider = createOpenResponsesProvider({ baseURL: url.toString(), retry: { maxRetries: 0 } });
    const handle = runAgent({ model: "m", input: "hi" }, { provider, workspace: dir });
    const frames: Frame[] = [];
    for await (const f of handle) frames.push(f);
    expect(server.requests[0]?.headers.authorization).toBe(
      `Basic ${Buffer.from(`me:${PASSWORD}`).toString("base64")}`,
    );
    expect(JSON.stringify(frames).includes(PASSWORD)).toBe(false);
    expect(JSON.stringify(frames).includes(`me:${PASSWORD}`)).toBe(false);
  });
});
