/**
 * `eddy serve`'s Open Responses face end to end: the built CLI in front of a scripted mock, over
 * real HTTP and WebSocket on 127.0.0.1. The official `openai` SDK (`responses.create`,
 * `responses.stream`) and a `ws` client drive an eddy agent that reads a file of the served
 * workspace server-side (its call and output appear in the response output) and hands a
 * client-declared function call back; the client answers with `previous_response_id` and gets the
 * final answer. Every streamed event and every response validates against the vendored spec.
 */
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import WebSocket from "ws";
import { createMockServer, type MockServer } from "../src/mock/index.js";
import type { Scenario, ScenarioTurn } from "../src/mock/scenario.js";
import {
  validateResponseResource,
  validateStreamingEvent,
  validateWebSocketMessage,
} from "../src/protocol/validate.js";
import { type CliProcess, startCli, until } from "./support/cli-process.js";

const TOKEN = "face-test-token-1234";
const NOTE = "the launch code is 4711";
const WEATHER = {
  type: "function" as const,
  name: "get_weather",
  description: "The weather in a city",
  parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
  strict: false,
};

/** One conversation: read the note server-side, ask the client for the weather, answer. */
function conversation(tag: string): ScenarioTurn[] {
  return [
    { items: [{ type: "function_call", name: "read_file", arguments: { path: "notes.txt" } }] },
    { items: [{ type: "function_call", name: "get_weather", arguments: { city: "Paris" } }] },
    { items: [{ type: "message", text: `${tag}: sunny, and ${NOTE}` }] },
  ];
}

let mock: MockServer;
let proc: CliProcess;
let url: string;
let cwd: string;

beforeAll(async () => {
  const scenario: Scenario = {
    turns: [...conversation("create"), ...conversation("stream"), ...conversation("ws")],
  };
  mock = await createMockServer({ scenario });
  cwd = mkdtempSync(join(tmpdir(), "eddy-face-"));
  writeFileSync(join(cwd, "notes.txt"), `${NOTE}\n`);
  proc = startCli(["serve", "--base-url", mock.url, "--model", "m", "--token", TOKEN], {
    cwd,
    env: { OPENAI_API_KEY: "sk-upstream-secret-9876" },
  });
  await until(
    () => /listening on (http:\S+)/.test(proc.stderr) || proc.child.exitCode !== null,
    "eddy serve to listen",
    60_000,
  );
  const found = /listening on (http:\S+)/.exec(proc.stderr)?.[1];
  if (found === undefined) throw new Error(`eddy serve did not start: ${proc.stderr}`);
  url = found;
}, 90_000);

afterAll(async () => {
  if (proc !== undefined && proc.child.exitCode === null) proc.child.kill("SIGTERM");
  await proc?.exited;
  await mock?.close();
});

const client = () => new OpenAI({ apiKey: TOKEN, baseURL: `${url}/v1`, maxRetries: 0 });

/** The output of a first response: the server's read_file call and output, then the client's call. */
function expectFirstOutput(output: { type: string; [k: string]: unknown }[]) {
  expect(output.map((i) => i.type)).toEqual(["function_call", "function_call_output", "function_call"]);
  const [read, readOutput, weather] = output as Record<string, string>[];
  expect(read?.name).toBe("read_file");
  expect(readOutput?.call_id).toBe(read?.call_id);
  expect(readOutput?.output).toContain(NOTE);
  expect(weather?.name).toBe("get_weather");
  return weather?.call_id as string;
}

describe("eddy serve: an agent as an Open Responses model", () => {
  it("responses.create: a server-side tool, a client function call, then the answer", async () => {
    const openai = client();
    const first = await openai.responses.create({
      model: "eddy",
      input: "What does my note say?",
      tools: [WEATHER],
    });
    expect(first.status).toBe("completed");
    expect(validateResponseResource(first)).toBeUndefined();
    const callId = expectFirstOutput(first.output as never);
    const second = await openai.responses.create({
      model: "eddy",
      previous_response_id: first.id,
      input: [{ type: "function_call_output", call_id: callId, output: "sunny" }],
      tools: [WEATHER],
    });
    expect(second.status).toBe("completed");
    expect(second.output_text).toBe(`create: sunny, and ${NOTE}`);
    const stored = await openai.responses.retrieve(second.id);
    expect(stored.output_text).toBe(second.output_text);
    // The upstream saw the client's answer after the server's tool output.
    const last = mock.requests.at(-1)?.body as { input: { type: string; output?: string }[] };
    expect(last.input.filter((i) => i.type === "function_call_output").map((i) => i.output)).toContain(
      "sunny",
    );
  }, 60_000);

  it("responses.stream: every event validates; the stream ends with the client's call", async () => {
    const openai = client();
    const stream = openai.responses.stream({
      model: "eddy",
      input: "What does my note say?",
      tools: [WEATHER],
    });
    const types: string[] = [];
    // The SDK's own accumulation: each piece's snapshot is the call's arguments so far.
    const snapshots: string[] = [];
    stream.on("response.function_call_arguments.delta", (event) => snapshots.push(event.snapshot));
    for await (const event of stream) {
      expect(validateStreamingEvent(event)).toBeUndefined();
      types.push(event.type);
    }
    const first = await stream.finalResponse();
    expect(types[0]).toBe("response.created");
    expect(types.at(-1)).toBe("response.completed");
    const callId = expectFirstOutput(first.output as never);
    // The SDK built each call's arguments from the streamed pieces: its last snapshot is the
    // client's call's final arguments.
    expect(snapshots.length).toBeGreaterThan(1);
    expect(snapshots.at(-1)).toBe((first.output.at(-1) as { arguments: string }).arguments);
    const next = openai.responses.stream({
      model: "eddy",
      previous_response_id: first.id,
      input: [{ type: "function_call_output", call_id: callId, output: "sunny" }],
      tools: [WEATHER],
    });
    for await (const event of next) expect(validateStreamingEvent(event)).toBeUndefined();
    expect((await next.finalResponse()).output_text).toBe(`stream: sunny, and ${NOTE}`);
  }, 60_000);

  it("WebSocket mode: a store:false response continued on the same connection", async () => {
    const socket = new WebSocket(`${url.replace("http", "ws")}/v1/responses`, {
      headers: { authorization: `Bearer ${TOKEN}` },
    });
    await new Promise((resolve, reject) => socket.once("open", resolve).once("error", reject));
    const turn = (message: Record<string, unknown>) =>
      new Promise<Record<string, unknown>[]>((resolve) => {
        const got: Record<string, unknown>[] = [];
        const onMessage = (data: WebSocket.RawData) => {
          const event = JSON.parse(String(data)) as Record<string, unknown>;
          got.push(event);
          if (
            event.type === "error" ||
            String(event.type).match(/^response\.(completed|failed|incomplete)$/)
          ) {
            socket.off("message", onMessage);
            resolve(got);
          }
        };
        socket.on("message", onMessage);
        socket.send(
          JSON.stringify({
            type: "response.create",
            model: "eddy",
            store: false,
            tools: [WEATHER],
            ...message,
          }),
        );
      });
    const first = await turn({ input: "What does my note say?" });
    for (const event of first) expect(validateWebSocketMessage(event)).toBeUndefined();
    const done = first.at(-1) as { type: string; response: { id: string; output: never } };
    expect(done.type, JSON.stringify(done)).toBe("response.completed");
    const callId = expectFirstOutput(done.response.output);
    const second = await turn({
      previous_response_id: done.response.id,
      input: [{ type: "function_call_output", call_id: callId, output: "sunny" }],
    });
    for (const event of second) expect(validateWebSocketMessage(event)).toBeUndefined();
    const final = second.at(-1) as {
      type: string;
      response: { output: { content?: { text: string }[] }[] };
    };
    expect(final.type, JSON.stringify(final)).toBe("response.completed");
    expect(final.response.output.at(-1)?.content?.[0]?.text).toBe(`ws: sunny, and ${NOTE}`);
    // store:false: another connection cannot continue it.
    socket.close();
    const retrieved = await fetch(`${url}/v1/responses/${done.response.id}`, {
      headers: { authorization: `Bearer ${TOKEN}` },
    });
    expect(retrieved.status).toBe(404);
  }, 60_000);

  it("every response's run is a tape in the server's data folder, and `eddy replay` reproduces each", async () => {
    const folder = join(cwd, ".eddy", "serve", "responses");
    const names = readdirSync(folder);
    expect(names.length).toBeGreaterThanOrEqual(4); // two conversations so far, two responses each
    for (const name of names) {
      expect(name).toMatch(/^resp_eddy_\d{4}_[0-9a-f]{16}\.tape$/);
      expect(readFileSync(join(folder, name), "utf8")).not.toContain("sk-upstream-secret-9876");
      const replay = startCli(["replay", join(folder, name)], { cwd });
      const { code } = await replay.exited;
      expect({ name, code, stderr: replay.stderr }).toEqual({ name, code: 0, stderr: "" });
      expect(replay.stdout).toMatch(/replay matches/);
    }
  }, 60_000);

  it("no upstream secret in what the face answers", async () => {
    const res = await fetch(`${url}/v1/responses`, {
      method: "POST",
      headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" },
      body: JSON.stringify({ model: "eddy", input: "hi", previous_response_id: "resp_nope" }),
    });
    expect(res.status).toBe(404);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe(
      "previous_response_not_found",
    );
    expect(proc.stderr).not.toContain("sk-upstream-secret-9876");
  });

  it("/openapi.json lists the face's routes, and each is served (not a 404 for the route)", async () => {
    const auth = { authorization: `Bearer ${TOKEN}` };
    const doc = (await (await fetch(`${url}/openapi.json`, { headers: auth })).json()) as {
      paths: Record<string, Record<string, unknown>>;
    };
    expect(Object.keys(doc.paths["/v1/responses"] ?? {})).toEqual(["post"]);
    expect(doc.paths["/v1/responses/{id}"]?.get).toBeDefined();
    expect(doc.paths["/v1/responses/compact"]?.post).toBeDefined();
    const unknown = await fetch(`${url}/v1/responses/resp_unknown`, { headers: auth });
    expect(((await unknown.json()) as { error: { code: string } }).error.code).toBe("response_not_found");
    const compact = await fetch(`${url}/v1/responses/compact`, {
      method: "POST",
      headers: { ...auth, "content-type": "application/json" },
      body: JSON.stringify({ input: "no model" }),
    });
    expect(compact.status).toBe(400);
  });
});
