/**
 * The AI SDK adapter (eddy/ai-sdk) under the real loop, with real AI SDK provider packages talking
 * HTTP on 127.0.0.1: `@ai-sdk/anthropic` against a scripted server that speaks Anthropic's
 * streaming Messages events, and `@ai-sdk/openai-compatible` against the mock's Chat Completions
 * endpoint (the demo model). Each runs a full tool loop through `runAgent`, is recorded to a tape
 * and replayed exactly; an edited stream part is reported as a divergence.
 */

import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createAnthropic } from "@ai-sdk/anthropic";
import { createOpenAICompatible } from "@ai-sdk/openai-compatible";
import { afterEach, describe, expect, it } from "vitest";
import type { Frame } from "../src/frames/frame.js";
import { runAgent } from "../src/loop/run.js";
import { createMockServer, type MockServer, type Scenario } from "../src/mock/index.js";
import { createAiSdkProvider } from "../src/provider/ai-sdk/index.js";
import type { Provider } from "../src/provider/provider.js";
import { createTapeHeader } from "../src/replay/header.js";
import { createTapeRecorder } from "../src/replay/recorder.js";
import { replayTape } from "../src/replay/replay.js";
import { parseTape, readTape } from "../src/replay/tape.js";
import { createToolRegistry } from "../src/tools/registry.js";
import { defineTool } from "../src/tools/tool.js";
import { type AnthropicServer, startAnthropicServer } from "./support/anthropic-server.js";
import { assertFrameInvariants, ended, ofType } from "./support/frames.js";

const dir = mkdtempSync(join(tmpdir(), "eddy-ai-sdk-"));
const KEY = "sk-ant-test-secret-key";
let anthropicServer: AnthropicServer | undefined;
let mock: MockServer | undefined;
afterEach(async () => {
  await anthropicServer?.close();
  await mock?.close();
  anthropicServer = undefined;
  mock = undefined;
});

const weather = defineTool({
  name: "get_weather",
  description: "Get the current weather for a city",
  parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
  execute: async (args) => `{"city":"${(args as { city: string }).city}","temperature_c":21,"sky":"sunny"}`,
});

const LOOP: Scenario = {
  turns: [
    {
      items: [
        { type: "message", text: "Let me check." },
        { type: "function_call", name: "get_weather", arguments: { city: "Paris" }, call_id: "toolu_01" },
      ],
    },
    { items: [{ type: "message", text: "It is sunny and 21 °C in Paris." }] },
  ],
};

/** Runs the weather question through `provider`, recording the tape at `tape`. */
async function record(provider: Provider, model: string, tape: string) {
  const handle = runAgent(
    {
      model,
      instructions: "Answer briefly.",
      input: "What is the weather in Paris?",
      run_id: "run_ai_sdk_1",
    },
    { provider, tools: [weather], workspace: dir },
  );
  const recorder = createTapeRecorder(tape, createTapeHeader(handle.spec, { provider, validate: true }), [
    KEY,
  ]);
  const frames: Frame[] = [];
  for await (const f of handle) {
    recorder.observer(f);
    frames.push(f);
  }
  recorder.close();
  return { frames, result: await handle.result };
}

async function anthropicRun(tape: string) {
  anthropicServer = await startAnthropicServer(LOOP, { apiKey: KEY });
  const anthropic = createAnthropic({ baseURL: anthropicServer.url, apiKey: KEY });
  const provider = createAiSdkProvider({ model: anthropic.languageModel, secrets: [KEY] });
  return { ...(await record(provider, "claude-test", tape)), server: anthropicServer };
}

describe("@ai-sdk/anthropic through eddy/ai-sdk, against Anthropic's streaming events", () => {
  it("runs the tool loop: the call assembled from input_json_delta fragments, the result sent back as tool_result", async () => {
    const { frames, result, server } = await anthropicRun(join(dir, "anthropic.tape"));
    assertFrameInvariants(frames);
    expect(result).toMatchObject({
      reason: "completed",
      outputText: "It is sunny and 21 °C in Paris.",
      turns: 2,
      toolCalls: 1,
    });
    expect(ofType(frames, "run_started")[0]?.mode).toBe("stateless");
    expect(ofType(frames, "tool_call")).toMatchObject([
      { call_id: "toolu_01", name: "get_weather", arguments: '{"city":"Paris"}' },
    ]);
    const output = ofType(frames, "tool_ended")[0]?.output ?? "";
    expect(JSON.parse(output)).toMatchObject({ ok: true, stdout: expect.stringContaining("sunny") });
    // The provider's own wire events are kept too (raw chunks), beside the AI SDK's parts.
    const parts = ofType(frames, "provider_event").map((f) => (f.data as { type: string }).type);
    expect(parts).toContain("raw");
    expect(parts).toContain("tool-input-delta");
    expect(server.keys).toEqual([KEY, KEY]);
    expect(server.requests[0]).toMatchObject({
      model: "claude-test",
      system: [{ type: "text", text: "Answer briefly." }],
      messages: [{ role: "user", content: [{ type: "text", text: "What is the weather in Paris?" }] }],
      tools: [{ name: "get_weather", input_schema: { properties: { city: { type: "string" } } } }],
      stream: true,
    });
    expect(server.requests[1]?.messages).toEqual([
      { role: "user", content: [{ type: "text", text: "What is the weather in Paris?" }] },
      {
        role: "assistant",
        content: [
          { type: "text", text: "Let me check." },
          { type: "tool_use", id: "toolu_01", name: "get_weather", input: { city: "Paris" } },
        ],
      },
      { role: "user", content: [{ type: "tool_result", tool_use_id: "toolu_01", content: output }] },
    ]);
    expect(ofType(frames, "request_started")[1]?.wire_body).toMatchObject({ includeRawChunks: true });
    expect(ended(frames).usage.total_tokens).toBeGreaterThan(0);
  });

  it("records a tape that names the API, without the key, and replays it exactly; an edited part diverges", async () => {
    const path = join(dir, "anthropic-replay.tape");
    const { frames } = await anthropicRun(path);
    const tape = readTape(path);
    expect(tape.header.provider.wire).toEqual({ api: "ai-sdk", aiSdk: { includeRawChunks: true } });
    expect(readFileSync(path, "utf8")).not.toContain(KEY);
    const registry = createToolRegistry([weather]);
    const outcome = await replayTape(tape, { registry, workspace: dir });
    expect(outcome.verdict, JSON.stringify(outcome.verdict).slice(0, 1500)).toEqual({
      match: true,
      frames: frames.length,
    });

    const edited = readFileSync(path, "utf8").replace('"delta":"It is sunny "', '"delta":"It is rainy "');
    expect(edited).not.toBe(readFileSync(path, "utf8"));
    writeFileSync(path, edited);
    const diverged = await replayTape(parseTape(edited), { registry, workspace: dir });
    expect(diverged.verdict.match).toBe(false);
    if (diverged.verdict.match) return;
    expect(diverged.verdict.expected).toMatchObject({ type: "output_text_delta", delta: "It is sunny " });
  });
});

describe("@ai-sdk/openai-compatible through eddy/ai-sdk, against the mock's Chat Completions endpoint", () => {
  it("runs the demo model's tool loop and replays it exactly", async () => {
    mock = await createMockServer();
    const compatible = createOpenAICompatible({ name: "mock", baseURL: mock.url, apiKey: KEY });
    const provider = createAiSdkProvider({
      model: compatible.languageModel,
      name: "mock-compatible",
      secrets: [KEY],
    });
    const path = join(dir, "compatible.tape");
    const { frames, result } = await record(provider, "eddy-demo", path);
    assertFrameInvariants(frames);
    expect(result.reason).toBe("completed");
    expect(ofType(frames, "tool_call")).toMatchObject([
      { name: "get_weather", arguments: '{"city":"Paris"}' },
    ]);
    expect(result.outputText).toContain("sunny");
    expect(mock.requests.map((r) => r.path)).toEqual(["/v1/chat/completions", "/v1/chat/completions"]);
    const outcome = await replayTape(readTape(path), {
      registry: createToolRegistry([weather]),
      workspace: dir,
    });
    expect(outcome.verdict, JSON.stringify(outcome.verdict).slice(0, 1500)).toEqual({
      match: true,
      frames: frames.length,
    });
  });
});
