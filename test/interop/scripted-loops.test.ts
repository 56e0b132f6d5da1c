/**
 * Interop: tool loops of three steps whose calls a scenario scripts exactly, so each request's
 * `expect` checks what the client sent back (the outputs of the calls it made, the values it
 * computed from them) and a mismatch fails the run with the mock's `scenario_mismatch` message.
 * One scripted server per client (the turns are consumed in order).
 */
import { createOpenAI } from "@ai-sdk/openai";
import { Agent, tool as agentTool, OpenAIProvider, Runner, setTracingDisabled } from "@openai/agents";
import { stepCountIs, streamText, tool } from "ai";
import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import type { Scenario } from "../../src/mock/index.js";
import { stopAgentsTracingAfterAll } from "../support/agents-tracing.js";
import { type InteropTarget, scenariosSupported, startTarget } from "./target.js";

// The SDK's trace export loop would outlive this file in its worker (docs/pitfalls.md #118).
stopAgentsTracingAfterAll();

const ASK = "What is the weather in Paris, in Fahrenheit?";

/** get_weather(Paris) → convert(21 °C to °F) → the answer; each request checked. */
const scenario: Scenario = {
  name: "weather in fahrenheit",
  turns: [
    {
      expect: { tools: ["get_weather", "convert_temperature"], inputContains: "Paris" },
      items: [
        { type: "function_call", name: "get_weather", arguments: { city: "Paris" }, call_id: "call_weather" },
      ],
    },
    {
      expect: { functionCallOutputs: "call_weather", inputContains: '"temperature_c":21' },
      items: [
        {
          type: "function_call",
          name: "convert_temperature",
          arguments: { celsius: 21, to: "fahrenheit" },
          call_id: "call_convert",
        },
      ],
    },
    {
      expect: { functionCallOutputs: "call_convert", contextContains: "69.8" },
      items: [{ type: "message", text: "It is sunny and 69.8 °F in Paris." }],
    },
  ],
};

const weather = async ({ city }: { city: string }) => ({ city, temperature_c: 21, sky: "sunny" });
const convert = async ({ celsius }: { celsius: number; to: "fahrenheit" }) => ({
  fahrenheit: Math.round(((celsius * 9) / 5 + 32) * 10) / 10,
});

describe.skipIf(!scenariosSupported)("scripted three-step loops", () => {
  describe("AI SDK streamText (openai.responses)", () => {
    let target: InteropTarget;
    beforeAll(async () => {
      target = await startTarget({ scenario });
    });
    afterAll(() => target.close());

    it("calls both tools with the scripted arguments and streams the final text", async () => {
      const calls: unknown[] = [];
      const provider = createOpenAI({ baseURL: target.baseURL, apiKey: "interop" });
      const result = streamText({
        model: provider.responses("demo"),
        prompt: ASK,
        tools: {
          get_weather: tool({
            description: "Get the current weather for a city",
            inputSchema: z.object({ city: z.string() }),
            execute: async (input) => {
              calls.push(["get_weather", input]);
              return weather(input);
            },
          }),
          convert_temperature: tool({
            description: "Convert a temperature from Celsius",
            inputSchema: z.object({ celsius: z.number(), to: z.literal("fahrenheit") }),
            execute: async (input) => {
              calls.push(["convert_temperature", input]);
              return convert(input);
            },
          }),
        },
        stopWhen: stepCountIs(5),
      });
      expect(await result.text).toBe("It is sunny and 69.8 °F in Paris.");
      expect(calls).toEqual([
        ["get_weather", { city: "Paris" }],
        ["convert_temperature", { celsius: 21, to: "fahrenheit" }],
      ]);
      expect((await result.steps).map((s) => s.finishReason)).toEqual(["tool-calls", "tool-calls", "stop"]);
    });
  });

  describe("Agents SDK run (streamed)", () => {
    let target: InteropTarget;
    beforeAll(async () => {
      setTracingDisabled(true);
      target = await startTarget({ scenario });
    });
    afterAll(() => target.close());

    it("calls both tools with the scripted arguments and streams the final text", async () => {
      const calls: unknown[] = [];
      const client = new OpenAI({ baseURL: target.baseURL, apiKey: "interop", maxRetries: 0 });
      const runner = new Runner({
        modelProvider: new OpenAIProvider({ openAIClient: client }),
        tracingDisabled: true,
      });
      const agent = new Agent({
        name: "weather",
        model: "demo",
        tools: [
          agentTool({
            name: "get_weather",
            description: "Get the current weather for a city",
            parameters: z.object({ city: z.string() }),
            execute: async (input) => {
              calls.push(["get_weather", input]);
              return JSON.stringify(await weather(input));
            },
          }),
          agentTool({
            name: "convert_temperature",
            description: "Convert a temperature from Celsius",
            parameters: z.object({ celsius: z.number(), to: z.literal("fahrenheit") }),
            execute: async (input) => {
              calls.push(["convert_temperature", input]);
              return JSON.stringify(await convert(input));
            },
          }),
        ],
      });
      const result = await runner.run(agent, ASK, { stream: true });
      for await (const _ of result) {
        // drain: the run advances as its events are read
      }
      await result.completed;
      expect(result.finalOutput).toBe("It is sunny and 69.8 °F in Paris.");
      expect(calls).toEqual([
        ["get_weather", { city: "Paris" }],
        ["convert_temperature", { celsius: 21, to: "fahrenheit" }],
      ]);
    });
  });
});
