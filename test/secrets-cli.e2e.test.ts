/**
 * No secret leaves `eddy run` by any channel: a hostile server echoes the API key or the password
 * of the `--base-url` back everywhere it can (a request id header, an SSE `error` event, an HTTP
 * error body, an HTML page, a streamed answer), over both APIs (Open Responses and
 * `--api chat-completions`), and stdout (`--json` frames, or the answer), stderr (the human view
 * and its error line) and the tape of each run — and of its replay — are searched for both.
 * test/secrets.test.ts does the same for the library's channels.
 */
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { createMockServer, type Scenario } from "../src/mock/index.js";
import { toSse } from "./support/captures.js";
import { cleanEnv, runCli } from "./support/cli.js";
import { type RawReply, type RawServer, startRawServer } from "./support/raw-server.js";

const KEY = "sk-test-0123456789abcdefSECRET";
const PASSWORD = "hunter2-very-secret";

/** Starts a raw server for one test and closes it when that test ends (the tests run concurrently). */
async function serverFor(
  onTestFinished: (fn: () => Promise<void>) => void,
  replies: Parameters<typeof startRawServer>[0],
): Promise<RawServer> {
  const server = await startRawServer(replies);
  onTestFinished(() => server.close());
  return server;
}

const created = JSON.stringify({
  type: "response.created",
  sequence_number: 0,
  response: { id: "resp_1", status: "in_progress", output: [] },
});
const chatChunk = (delta: object, finish: string | null = null) =>
  JSON.stringify({
    id: "chatcmpl_1",
    object: "chat.completion.chunk",
    created: 1,
    model: "m",
    choices: [{ index: 0, delta, finish_reason: finish }],
  });
const chatSse = (chunks: string[]) => toSse(chunks, { eventLines: false });

type Api = "responses" | "chat-completions";
/** [label, API, the reply echoing a secret, the run's exit code, whether the replay must match] */
const PATHS: [string, Api, (echo: string) => RawReply, number, boolean][] = [
  [
    "x-request-id header",
    "responses",
    // The stream ends without a terminal event: the run fails after recording the header.
    (echo) => ({ headers: { "x-request-id": `req_${echo}` }, body: [toSse([created])] }),
    1,
    true,
  ],
  [
    "SSE error event",
    "responses",
    (echo) => ({
      body: [
        toSse([
          created,
          JSON.stringify({
            type: "error",
            sequence_number: 1,
            error: { type: "invalid_request_error", code: "bad", message: echo, param: null },
          }),
        ]),
      ],
    }),
    1,
    true,
  ],
  [
    "HTTP 400 JSON body",
    "responses",
    (echo) => ({
      status: 400,
      headers: { "content-type": "application/json" },
      body: [JSON.stringify({ error: { message: `Incorrect ${echo}`, code: "invalid_api_key" } })],
    }),
    1,
    true,
  ],
  [
    "200 HTML page",
    "responses",
    (echo) => ({ headers: { "content-type": "text/html" }, body: [`<html><p>${echo}</p></html>`] }),
    1,
    true,
  ],
  [
    "streamed answer",
    "responses",
    (echo) => ({
      body: [
        toSse([
          created,
          JSON.stringify({
            type: "response.completed",
            sequence_number: 1,
            response: {
              id: "resp_1",
              status: "completed",
              output: [
                {
                  type: "message",
                  id: "msg_1",
                  role: "assistant",
                  status: "completed",
                  content: [{ type: "output_text", text: echo, annotations: [] }],
                },
              ],
              usage: { input_tokens: 1, output_tokens: 1, total_tokens: 2 },
            },
          }),
        ]),
      ],
    }),
    0,
    true,
  ],
  [
    "x-request-id header",
    "chat-completions",
    (echo) => ({
      headers: { "x-request-id": `req_${echo}` },
      body: [chatSse([chatChunk({ role: "assistant", content: "hi" }), chatChunk({}, "stop")])],
    }),
    0,
    true,
  ],
  [
    "in-stream error chunk",
    "chat-completions",
    (echo) => ({ body: [chatSse([JSON.stringify({ error: { message: echo, type: "x", code: "bad" } })])] }),
    1,
    true,
  ],
  [
    "HTTP 401 JSON body",
    "chat-completions",
    (echo) => ({
      status: 401,
      headers: { "content-type": "application/json" },
      body: [JSON.stringify({ error: { message: `Incorrect ${echo}`, code: "invalid_api_key" } })],
    }),
    1,
    true,
  ],
  [
    "200 HTML page",
    "chat-completions",
    (echo) => ({ headers: { "content-type": "text/html" }, body: [`<html><p>${echo}</p></html>`] }),
    1,
    true,
  ],
  [
    "streamed answer",
    "chat-completions",
    // The tape holds the answer with the secrets masked, and without reported usage the Chat
    // Completions path estimates it from the text's length (chat-completions/chunk.ts): the replay
    // takes the recorded estimate (replay-provider.ts), not one from the masked text.
    (echo) => ({ body: [chatSse([chatChunk({ role: "assistant", content: echo }), chatChunk({}, "stop")])] }),
    0,
    true,
  ],
];

function leaks(channel: string, text: string): string[] {
  return [KEY, PASSWORD].filter((secret) => text.includes(secret)).map((secret) => `${channel}: ${secret}`);
}

// Every case has its own server and folder, and spends its time waiting for CLI processes: the
// cases run concurrently.
describe.concurrent("eddy run: no secret in stdout, stderr, the tape or the replay", () => {
  for (const [label, api, reply, code, replays] of PATHS) {
    it(`${api}: ${label}`, { timeout: 240_000 }, async ({ expect, onTestFinished }) => {
      const cwd = mkdtempSync(join(tmpdir(), "eddy-secrets-cli-"));
      // Each run's server echoes the secret that run was given.
      let secret = KEY;
      const server = await serverFor(onTestFinished, () => reply(secret));

      const withPassword = server.url.replace("http://", `http://bob:${PASSWORD}@`);
      const found: string[] = [];
      // The key and a URL password cannot be given together (both would be the Authorization).
      const credentials = [
        ["--base-url", server.url, "--api-key", KEY],
        ["--base-url", withPassword],
      ];
      for (const [i, auth] of credentials.entries()) {
        secret = i === 0 ? KEY : PASSWORD;
        for (const view of ["--json", "human"]) {
          const tape = join(cwd, `${i}${view}.tape`);
          const args = ["run", ...auth, "--api", api, "--model", "m", "--max-retries", "0", "--record", tape];
          const run = await runCli([...args, ...(view === "--json" ? ["--json"] : []), "hi"], {
            cwd,
            env: cleanEnv(),
          });
          expect(run.code, `${view}: ${run.stderr}`).toBe(code);
          const where = `${auth.length > 2 ? "key" : "password"} ${view}`;
          found.push(...leaks(`${where} stdout`, run.stdout), ...leaks(`${where} stderr`, run.stderr));
          found.push(...leaks(`${where} tape`, readFileSync(tape, "utf8")));
          if (view !== "--json") continue;
          // The tape is the same whatever the view: one replay per credential.
          const replay = await runCli(["replay", "--json", tape], { cwd, env: cleanEnv() });
          found.push(...leaks(`${where} replay`, replay.stdout + replay.stderr));
          if (replays) expect(replay.code, replay.stdout.slice(0, 2000)).toBe(0);
        }
      }
      // The server did get both secrets, so it could echo them.
      const authorizations = server.requests.map((r) => r.headers.authorization);
      expect(authorizations).toContain(`Bearer ${KEY}`);
      expect(authorizations).toContain(`Basic ${Buffer.from(`bob:${PASSWORD}`).toString("base64")}`);
      expect(found).toEqual([]);
    });
  }

  it("the human error line of an HTML page says what to check, without the secrets", {
    timeout: 60_000,
  }, async ({ expect, onTestFinished }) => {
    const cwd = mkdtempSync(join(tmpdir(), "eddy-secrets-cli-"));
    const server = await serverFor(onTestFinished, [
      { headers: { "content-type": "text/html" }, body: [`<html><p>password ${PASSWORD}</p></html>`] },
    ]);
    const baseUrl = server.url.replace("http://", `http://bob:${PASSWORD}@`);
    const run = await runCli(["run", "--base-url", baseUrl, "--model", "m", "hi"], {
      cwd,
      env: cleanEnv(),
    });
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/got text\/html, not an event stream/);
    expect(run.stderr).toContain("--base-url");
    expect(leaks("stderr", run.stderr)).toEqual([]);
    // Not retried: one request.
    expect(server.requests).toHaveLength(1);
  });
});

describe("eddy run: a secret the model quotes in pieces (split across streamed deltas)", () => {
  /** Whether any 6 characters of the key are in `text`. */
  const partsOfKey = (channel: string, text: string) =>
    Array.from({ length: KEY.length - 5 }, (_, i) => KEY.slice(i, i + 6))
      .filter((part) => text.includes(part))
      .map((part) => `${channel}: ${part}`);

  // The mock cuts a long word into 12-character deltas, and a call's arguments into 8-character
  // fragments: the key arrives in pieces either way.
  const answer: Scenario = {
    turns: [{ items: [{ type: "message", text: `The token is token=${KEY}\nDone.` }] }],
  };
  const call: Scenario = {
    turns: [
      {
        items: [
          {
            type: "function_call",
            name: "read_file",
            arguments: { path: `notes-${KEY}.txt` },
            call_id: "call_1",
          },
        ],
      },
      { items: [{ type: "message", text: "done" }] },
    ],
  };
  // A message whose two content parts split the key (a server may send several parts).
  const part = (ci: number, text: string) => ({ item_id: "msg_1", output_index: 0, content_index: ci, text });
  const message = (texts: string[]) => ({
    type: "message",
    id: "msg_1",
    role: "assistant",
    status: "completed",
    content: texts.map((text) => ({ type: "output_text", text, annotations: [] })),
  });
  const halves = [`a ${KEY.slice(0, 11)}`, `${KEY.slice(11)} b`];
  const resource = (status: string, output: object[]) => ({
    id: "resp_parts",
    object: "response",
    created_at: 1,
    status,
    model: "m",
    output,
  });
  const parts: Scenario = {
    turns: [
      {
        rawEvents: [
          { type: "response.created", response: resource("in_progress", []) },
          {
            type: "response.output_item.added",
            output_index: 0,
            item: { ...message([]), status: "in_progress" },
          },
          ...halves.flatMap((text, ci) => {
            const { text: _t, ...at } = part(ci, text);
            return [
              {
                type: "response.content_part.added",
                ...at,
                part: { type: "output_text", text: "", annotations: [] },
              },
              { type: "response.output_text.delta", ...at, delta: text, logprobs: [] },
              { type: "response.output_text.done", ...part(ci, text), logprobs: [] },
              {
                type: "response.content_part.done",
                ...at,
                part: { type: "output_text", text, annotations: [] },
              },
            ];
          }),
          { type: "response.output_item.done", output_index: 0, item: message(halves) },
          { type: "response.completed", response: resource("completed", [message(halves)]) },
        ].map((e, sequence_number) => ({ ...e, sequence_number })),
      },
    ],
  };
  it.each([
    ["responses", "two content parts of the answer", parts, "a *** b"],
    ["responses", "the answer", answer, "token=***"],
    ["chat-completions", "the answer", answer, "token=***"],
    ["responses", "a call's arguments", call, "notes-***"],
    ["chat-completions", "a call's arguments", call, "notes-***"],
  ] as const)(
    "%s, %s: no piece of it in stdout, stderr, the tape or the replay",
    {
      timeout: 120_000,
    },
    async (api, _what, scenario, shown) => {
      const cwd = mkdtempSync(join(tmpdir(), "eddy-secrets-split-"));
      const found: string[] = [];
      for (const view of ["--json", "human"]) {
        const mock = await createMockServer({ scenario });
        try {
          const tape = join(cwd, `${view}.tape`);
          const args = [
            "run",
            "--base-url",
            mock.url,
            "--api-key",
            KEY,
            "--api",
            api,
            "--model",
            "m",
            "--record",
            tape,
          ];
          const run = await runCli([...args, ...(view === "--json" ? ["--json"] : []), "hi"], {
            cwd,
            env: cleanEnv(),
          });
          expect(run.code, run.stderr).toBe(0);
          found.push(
            ...partsOfKey(`${view} stdout`, run.stdout),
            ...partsOfKey(`${view} stderr`, run.stderr),
          );
          found.push(...partsOfKey(`${view} tape`, readFileSync(tape, "utf8")));
          if (view === "human") expect(run.stdout + run.stderr).toContain(shown);
          const replay = await runCli(["replay", "--json", tape], { cwd, env: cleanEnv() });
          found.push(...partsOfKey(`${view} replay`, replay.stdout + replay.stderr));
          expect(replay.code, replay.stdout.slice(-2000)).toBe(0);
        } finally {
          await mock.close();
        }
      }
      expect(found).toEqual([]);
    },
  );
});
