/**
 * The Chat Completions provider under the real loop: a full tool loop through `runAgent` against a
 * scripted Chat Completions server on 127.0.0.1 (a streamed call in fragments → the tool runs → the
 * follow-up carries the assistant `tool_calls` and the `tool` message with the same id → a streamed
 * answer), recorded to a tape and replayed exactly; a fallback chain from a dead Responses server to
 * a Chat Completions one.
 */
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { Frame } from "../src/frames/frame.js";

import { runAgent } from "../src/loop/run.js";
import type { Scenario } from "../src/mock/index.js";
import { createChatCompletionsProvider } from "../src/provider/chat-completions/provider.js";
import { createFallbackProvider } from "../src/provider/fallback.js";
import { createOpenResponsesProvider } from "../src/provider/open-responses.js";
import type { Provider } from "../src/provider/provider.js";
import { createTapeHeader } from "../src/replay/header.js";
import { createTapeRecorder, type TapeRecorder } from "../src/replay/recorder.js";
import { replayTape } from "../src/replay/replay.js";
import { parseTape, readTape } from "../src/replay/tape.js";
import { createToolRegistry } from "../src/tools/registry.js";
import { defineTool } from "../src/tools/tool.js";
import { type ChatServer, startChatServer } from "./support/chat-server.js";
import { assertFrameInvariants, ended, ofType } from "./support/frames.js";

const dir = mkdtempSync(join(tmpdir(), "eddy-chat-"));
let server: ChatServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const weather = defineTool({
  name: "weather",
  description: "The weather in a city",
  parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
  execute: async (args) => `It is sunny in ${(args as { city: string }).city}.`,
});

const LOOP: Scenario = {
  turns: [
    {
      items: [
        { type: "reasoning", content: "The user wants the weather." },
        { type: "function_call", name: "weather", arguments: { city: "Rome" }, call_id: "call_w1" },
      ],
    },
    { items: [{ type: "message", text: "It is sunny in Rome today, enjoy it." }] },
  ],
};

/** Runs the weather question through `provider`, recording the tape at `tape`. */
async function record(provider: Provider, tape: string) {
  let recorder: TapeRecorder | undefined;
  const handle = runAgent(
    {
      model: "qwen3",
      instructions: "Answer briefly.",
      input: "What is the weather in Rome?",
      run_id: "run_chat_1",
    },
    { provider, tools: [weather], workspace: dir, onFrame: (f) => recorder?.observer(f) },
  );
  recorder = createTapeRecorder(tape, createTapeHeader(handle.spec, { provider }), ["sk-chat-tape-secret"]);
  const frames: Frame[] = [];
  for await (const f of handle) frames.push(f);
  recorder.close();
  return { frames, result: await handle.result };
}

async function recordRun(scenario: Scenario, tape: string) {
  server = await startChatServer(scenario);
  const provider = createChatCompletionsProvider({ baseURL: server.url, apiKey: "sk-chat-tape-secret" });
  return { ...(await record(provider, tape)), requests: server.requests };
}

describe("a tool loop over Chat Completions", () => {
  it("streams a call in fragments, runs the tool, sends the follow-up with tool_calls and the tool message, streams the answer", async () => {
    const { frames, result, requests } = await recordRun(LOOP, join(dir, "loop.tape"));
    assertFrameInvariants(frames);
    expect(result).toMatchObject({
      reason: "completed",
      outputText: "It is sunny in Rome today, enjoy it.",
      turns: 2,
      toolCalls: 1,
    });
    expect(ofType(frames, "run_started")[0]?.mode).toBe("stateless");
    expect(ofType(frames, "tool_call")).toMatchObject([
      { call_id: "call_w1", name: "weather", arguments: '{"city":"Rome"}' },
    ]);
    const output = ofType(frames, "tool_ended")[0]?.output;
    expect(JSON.parse(output ?? "{}")).toMatchObject({ ok: true, stdout: "It is sunny in Rome." });
    // The tool ran before the first response's stream ended (eager promotion at the finish chunk).
    const toolStarted = frames.findIndex((f) => f.type === "tool_started");
    const firstTurnEnded = frames.findIndex((f) => f.type === "turn_ended");
    expect(toolStarted).toBeLessThan(firstTurnEnded);

    expect(requests).toHaveLength(2);
    expect(requests[0]).toMatchObject({
      model: "qwen3",
      stream: true,
      stream_options: { include_usage: true },
      messages: [
        { role: "system", content: "Answer briefly." },
        { role: "user", content: "What is the weather in Rome?" },
      ],
      tools: [{ type: "function", function: { name: "weather" } }],
    });
    // No Responses-only field reaches the server.
    for (const key of ["store", "include", "previous_response_id", "max_tool_calls", "input"])
      expect(requests[1]).not.toHaveProperty(key);
    expect(requests[1]?.messages).toEqual([
      { role: "system", content: "Answer briefly." },
      { role: "user", content: "What is the weather in Rome?" },
      {
        role: "assistant",
        content: null,
        tool_calls: [
          { id: "call_w1", type: "function", function: { name: "weather", arguments: '{"city":"Rome"}' } },
        ],
      },
      { role: "tool", tool_call_id: "call_w1", content: output },
    ]);
    // request_started keeps the Open Responses body; wire_body is what the server got.
    const started = ofType(frames, "request_started");
    expect(started[1]?.body).toMatchObject({ store: false, input: expect.any(Array) });
    expect(started.map((f) => f.wire_body)).toEqual(requests);
    expect(ofType(frames, "turn_ended").map((f) => f.usage)).toEqual([
      expect.objectContaining({ input_tokens: 10, output_tokens: 5 }),
      expect.objectContaining({ input_tokens: 10, output_tokens: 5 }),
    ]);
    expect(ended(frames).usage.total_tokens).toBe(30);
  });

  it("records a tape that names the API and replays it exactly", async () => {
    const path = join(dir, "replay.tape");
    const { frames } = await recordRun(LOOP, path);
    const tape = readTape(path);
    expect(tape.header.provider.wire).toEqual({
      api: "chat-completions",
      chat: { instructionsRole: "system", maxTokensField: "max_tokens", streamUsage: true },
    });
    expect(readFileSync(path, "utf8")).not.toContain("sk-chat-tape-secret");
    const outcome = await replayTape(tape, { registry: createToolRegistry([weather]), workspace: dir });
    expect(outcome.verdict, JSON.stringify(outcome.verdict).slice(0, 1500)).toEqual({
      match: true,
      frames: frames.length,
    });
    expect(outcome.result.outputText).toBe("It is sunny in Rome today, enjoy it.");
  });

  it("a replay reports an edited chunk (the text it derives no longer matches the recorded delta)", async () => {
    const path = join(dir, "edited.tape");
    await recordRun(LOOP, path);
    const edited = readFileSync(path, "utf8").replace('"content":"njoy"', '"content":"NJOY"');
    expect(edited).not.toBe(readFileSync(path, "utf8"));
    writeFileSync(path, edited);
    const outcome = await replayTape(parseTape(edited), {
      registry: createToolRegistry([weather]),
      workspace: dir,
    });
    expect(outcome.verdict.match).toBe(false);
    if (outcome.verdict.match) return;
    expect(outcome.verdict.expected).toMatchObject({ type: "output_text_delta", delta: "njoy" });
    expect(outcome.verdict.actual).toMatchObject({ type: "output_text_delta", delta: "NJOY" });
  });

  it("a replay without the API in the header reads the chunks as Responses events and diverges", async () => {
    const path = join(dir, "no-wire.tape");
    await recordRun(LOOP, path);
    const tape = readTape(path);
    delete tape.header.provider.wire;
    const outcome = await replayTape(tape, {
      registry: createToolRegistry([weather]),
      workspace: dir,
      stallMs: 200,
    });
    expect(outcome.verdict.match).toBe(false);
  });

  it("falls back from a dead Responses server to a Chat Completions server, text derived once", async () => {
    server = await startChatServer({ turns: [{ items: [{ type: "message", text: "From the fallback." }] }] });
    const dead = createOpenResponsesProvider({
      baseURL: "http://127.0.0.1:1/v1",
      retry: { maxRetries: 0 },
      name: "dead",
    });
    const chat = createChatCompletionsProvider({ baseURL: server.url, name: "chat" });
    const handle = runAgent(
      { model: "m", input: "hi", mode: "stateless" },
      {
        provider: createFallbackProvider([{ provider: dead }, { provider: chat, model: "fallback-model" }]),
        workspace: dir,
      },
    );
    const frames: Frame[] = [];
    for await (const f of handle) frames.push(f);
    assertFrameInvariants(frames);
    const result = await handle.result;
    expect(result.reason).toBe("completed");
    expect(result.outputText).toBe("From the fallback.");
    expect(
      ofType(frames, "output_text_delta")
        .map((f) => f.delta)
        .join(""),
    ).toBe("From the fallback.");
    expect(ofType(frames, "retry")).toMatchObject([{ reason: "fallback:chat" }]);
    expect(server.requests[0]?.model).toBe("fallback-model");
  });

  it("a run forced into chained mode switches to stateless at its first follow-up (previous_response_not_found)", async () => {
    server = await startChatServer(LOOP);
    const handle = runAgent(
      { model: "qwen3", input: "What is the weather in Rome?", mode: "chained" },
      { provider: createChatCompletionsProvider({ baseURL: server.url }), tools: [weather], workspace: dir },
    );
    const frames: Frame[] = [];
    for await (const f of handle) frames.push(f);
    assertFrameInvariants(frames);
    expect((await handle.result).reason).toBe("completed");
    expect(ofType(frames, "mode_changed")).toMatchObject([
      { from: "chained", to: "stateless", reason: "previous_response_not_found" },
    ]);
    // The refused chained follow-up never reached the server.
    expect(server.requests).toHaveLength(2);
    expect(server.requests[1]?.messages).toHaveLength(3);
  });

  it("replays a fallback chain whose candidates speak different APIs", async () => {
    server = await startChatServer(LOOP);
    const dead = createOpenResponsesProvider({
      baseURL: "http://127.0.0.1:1/v1",
      retry: { maxRetries: 0 },
      name: "dead",
    });
    const chat = createChatCompletionsProvider({ baseURL: server.url, name: "chat" });
    const path = join(dir, "fallback.tape");
    const { frames, result } = await record(
      createFallbackProvider([{ provider: dead }, { provider: chat }]),
      path,
    );
    expect(result.reason).toBe("completed");
    const tape = readTape(path);
    expect(tape.header.provider.wire).toMatchObject({
      api: "responses",
      fallbacks: [{ api: "chat-completions" }],
    });
    const outcome = await replayTape(tape, { registry: createToolRegistry([weather]), workspace: dir });
    expect(outcome.verdict, JSON.stringify(outcome.verdict).slice(0, 1500)).toEqual({
      match: true,
      frames: frames.length,
    });
  });
});
