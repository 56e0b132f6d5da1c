/**
 * Interop: the AI SDK (`ai` 6.x with `@ai-sdk/openai` 3.x) against the server under test
 * (`target.ts`: the mock with its demo model by default), through both of its OpenAI models —
 * `openai.responses(…)` (Open Responses) and `openai.chat(…)` (Chat Completions). The AI SDK sends
 * every message in the short form (`{role, content}`, no `type`); multi-turn histories go back with
 * `item_reference`s to stored items.
 */
import { createOpenAI } from "@ai-sdk/openai";
import {
  generateText,
  type LanguageModel,
  type ModelMessage,
  Output,
  stepCountIs,
  streamText,
  tool,
} from "ai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { type InteropTarget, startTarget } from "./target.js";

let target: InteropTarget;
let provider: ReturnType<typeof createOpenAI>;
beforeAll(async () => {
  target = await startTarget();
  provider = createOpenAI({ baseURL: target.baseURL, apiKey: "interop" });
});
afterAll(() => target.close());

const ASK = "What is the weather in Paris?";

/** The weather tool, recording the arguments it was called with. */
function weatherTool(seen: unknown[]) {
  return tool({
    description: "Get the current weather for a city",
    inputSchema: z.object({ city: z.string() }),
    execute: async (input) => {
      seen.push(input);
      return { city: input.city, temperature_c: 21, sky: "sunny" };
    },
  });
}

const models: Array<[string, () => LanguageModel]> = [
  ["responses", () => provider.responses("demo")],
  ["chat", () => provider.chat("demo")],
];

describe.each(models)("AI SDK: openai.%s model", (_api, model) => {
  it("streamText runs a two-step tool loop: the tool gets the right arguments, the text uses its result", async () => {
    const seen: unknown[] = [];
    const result = streamText({
      model: model(),
      prompt: ASK,
      tools: { get_weather: weatherTool(seen) },
      stopWhen: stepCountIs(5),
    });
    const parts: string[] = [];
    let streamed = "";
    for await (const part of result.fullStream) {
      parts.push(part.type);
      if (part.type === "text-delta") streamed += part.text;
      if (part.type === "error") throw part.error;
    }
    const steps = await result.steps;
    expect(seen).toEqual([{ city: "Paris" }]);
    expect(steps.map((s) => s.finishReason)).toEqual(["tool-calls", "stop"]);
    expect(steps[0]?.toolCalls.map((c) => [c.toolName, c.input])).toEqual([
      ["get_weather", { city: "Paris" }],
    ]);
    expect(steps[0]?.toolResults.map((r) => r.output)).toEqual([
      { city: "Paris", temperature_c: 21, sky: "sunny" },
    ]);
    const text = await result.text;
    expect(text).toBe(streamed);
    expect(text).toContain("sunny");
    expect(parts.indexOf("tool-call")).toBeLessThan(parts.indexOf("tool-result"));
    expect(parts.indexOf("tool-result")).toBeLessThan(parts.lastIndexOf("text-delta"));
    expect((await result.totalUsage).totalTokens).toBeGreaterThan(0);
  });

  it("generateText runs the same loop without streaming", async () => {
    const seen: unknown[] = [];
    const result = await generateText({
      model: model(),
      prompt: ASK,
      tools: { get_weather: weatherTool(seen) },
      stopWhen: stepCountIs(5),
    });
    expect(seen).toEqual([{ city: "Paris" }]);
    expect(result.steps).toHaveLength(2);
    expect(result.finishReason).toBe("stop");
    expect(result.text).toContain("sunny");
  });

  it("structured output (Output.object): the parsed object", async () => {
    const result = await generateText({
      model: model(),
      prompt: "Weather report for Paris as JSON",
      output: Output.object({
        schema: z.object({
          city: z.enum(["Paris", "Rome"]),
          sky: z.literal("sunny"),
          temperature_c: z.number().min(21),
        }),
      }),
    });
    expect(result.output).toEqual({ city: "Paris", sky: "sunny", temperature_c: 21 });
  });

  it("a second turn sends the first one's messages back, and the model sees them", async () => {
    const first = await generateText({ model: model(), prompt: "My favourite colour is teal." });
    const messages: ModelMessage[] = [
      { role: "user", content: "My favourite colour is teal." },
      ...first.response.messages,
      { role: "user", content: "What is my favourite colour?" },
    ];
    const second = await generateText({ model: model(), messages });
    expect(second.text).toContain("teal");
  });
});
