/**
 * `previous_response_not_found` through `eddy run`, in each form a server sends it: HTTP 404 and
 * HTTP 400 with the code in the JSON error body, and an in-stream `error` event (then
 * `response.failed`) before any output. Each run switches to stateless once (`mode_changed`),
 * resends the turn with the whole history (the call and its output, no `previous_response_id`),
 * completes, and its tape replays.
 */
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { createMockServer, type MockFaults, type MockServer } from "../src/mock/index.js";
import type { JsonObject } from "../src/protocol/types.js";
import { cleanEnv, runCli } from "./support/cli.js";
import { assertFrameInvariants, ofType } from "./support/frames.js";

let server: MockServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const notFoundBody = {
  error: {
    type: "invalid_request_error",
    code: "previous_response_not_found",
    message: "Previous response with id 'resp_x' not found.",
    param: "previous_response_id",
  },
};

const FORMS: [string, MockFaults][] = [
  ["HTTP 404", { httpError: { status: 404, body: notFoundBody } }],
  ["HTTP 400", { httpError: { status: 400, body: notFoundBody } }],
  [
    "an in-stream error event",
    {
      errorEvent: {
        afterEvents: 0,
        type: "invalid_request_error",
        code: "previous_response_not_found",
        message: "Previous response with id 'resp_x' not found.",
        param: "previous_response_id",
      },
    },
  ],
];

describe("eddy run: previous_response_not_found falls back to stateless", () => {
  for (const [label, faults] of FORMS) {
    it(label, { timeout: 60_000 }, async () => {
      const cwd = mkdtempSync(join(tmpdir(), "eddy-fallback-"));
      writeFileSync(join(cwd, "notes.txt"), "the notes\n");
      server = await createMockServer({
        scenario: {
          turns: [
            {
              items: [
                { type: "function_call", name: "read_file", arguments: { path: "notes.txt" }, call_id: "c1" },
              ],
            },
            { faults },
            {
              expect: { previousResponseId: false, functionCallOutputs: "c1", inputContains: "the notes" },
              items: [{ type: "message", text: "Read it." }],
            },
          ],
        },
      });
      const tape = join(cwd, "run.tape");
      const args = [
        "run",
        "--base-url",
        server.url,
        "--model",
        "m",
        "--json",
        "--record",
        tape,
        "read notes.txt",
      ];
      const r = await runCli(args, { cwd, env: cleanEnv() });
      expect(r.code, r.stderr).toBe(0);
      const frames = r.stdout
        .trim()
        .split("\n")
        .map((l) => JSON.parse(l));
      assertFrameInvariants(frames);
      expect(ofType(frames, "mode_changed")).toEqual([
        expect.objectContaining({ from: "chained", to: "stateless", reason: "previous_response_not_found" }),
      ]);
      expect(frames.at(-1)).toMatchObject({ reason: "completed", output_text: "Read it." });
      const bodies = server.requests.map((q) => q.body as JsonObject);
      expect(bodies).toHaveLength(3);
      expect(bodies[1]?.previous_response_id).toEqual(expect.any(String));
      expect(bodies[2]?.previous_response_id).toBeUndefined();
      const replay = await runCli(["replay", tape], { cwd, env: cleanEnv() });
      expect(replay.stdout).toMatch(/^replay matches/);
      expect(replay.code).toBe(0);
    });
  }
});
