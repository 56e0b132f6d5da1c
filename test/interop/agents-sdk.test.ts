/**
 * Interop: the OpenAI Agents SDK (`@openai/agents` 0.14.x) against the server under test
 * (`target.ts`: the mock with its demo model by default). Its Responses model sends every message
 * in the short form (`{role, content}`, no `type`). Tracing is off, so nothing leaves the machine.
 * (Its Responses WebSocket transport needs a global `WebSocket`, which Node 20 lacks; the openai
 * SDK's WebSocket client is exercised in `openai-sdk.test.ts`.)
 */
import { Agent, OpenAIProvider, Runner, setTracingDisabled, tool } from "@openai/agents";
import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { stopAgentsTracingAfterAll } from "../support/agents-tracing.js";
import { type InteropTarget, startTarget } from "./target.js";

// The SDK's trace export loop would outlive this file in its worker (docs/pitfalls.md #118).
stopAgentsTracingAfterAll();

let target: InteropTarget;
let client: OpenAI;
let runner: Runner;
beforeAll(async () => {
  setTracingDisabled(true);
  target = await startTarget();
  client = new OpenAI({ baseURL: target.baseURL, apiKey: "interop", maxRetries: 0 });
  runner = new Runner({ modelProvider: new OpenAIProvider({ openAIClient: client }), tracingDisabled: true });
});
afterAll(() => target.close());

const ASK = "What is the weather in Paris?";

/** The weather tool, recording the arguments it was called with. */
function weatherTool(seen: unknown[]) {
  return tool({
    name: "get_weather",
    description: "Get the current weather for a city",
    parameters: z.object({ city: z.string() }),
    execute: async (input) => {
      seen.push(input);
      return JSON.stringify({ city: input.city, temperature_c: 21, sky: "sunny" });
    },
  });
}

const weatherAgent = (seen: unknown[]) =>
  new Agent({
    name: "weather_agent",
    instructions: "You answer questions about the weather.",
    handoffDescription: "Answers questions about the weather",
    model: "demo",
    tools: [weatherTool(seen)],
  });

describe("Agents SDK: run", () => {
  it("run (not streamed) with a function tool: called with the right arguments, the answer uses its output", async () => {
    const seen: unknown[] = [];
    const result = await runner.run(weatherAgent(seen), ASK);
    expect(seen).toEqual([{ city: "Paris" }]);
    expect(result.newItems.map((i) => i.type)).toEqual([
      "tool_call_item",
      "tool_call_output_item",
      "message_output_item",
    ]);
    expect(result.finalOutput).toContain("sunny");
  });

  it("run (streamed): tool and message events arrive as they happen, and the final output matches the text streamed", async () => {
    const seen: unknown[] = [];
    const result = await runner.run(weatherAgent(seen), ASK, { stream: true });
    const events: string[] = [];
    let text = "";
    for await (const event of result) {
      if (event.type === "run_item_stream_event") events.push(event.name);
      if (event.type === "raw_model_stream_event" && event.data.type === "output_text_delta")
        text += event.data.delta;
    }
    await result.completed;
    expect(seen).toEqual([{ city: "Paris" }]);
    expect(events).toEqual(["tool_called", "tool_output", "message_output_created"]);
    expect(result.finalOutput).toBe(text);
    expect(text).toContain("sunny");
  });

  it("a structured outputType: finalOutput is the parsed object", async () => {
    const agent = new Agent({
      name: "reporter",
      model: "demo",
      outputType: z.object({
        city: z.enum(["Paris", "Rome"]),
        sky: z.literal("sunny"),
        temperature_c: z.number().min(21),
      }),
    });
    const result = await runner.run(agent, "Weather report for Paris as JSON");
    expect(result.finalOutput).toEqual({ city: "Paris", sky: "sunny", temperature_c: 21 });
  });

  it("a handoff: the triage agent transfers to the weather agent, which calls its tool and answers", async () => {
    const seen: unknown[] = [];
    const specialist = weatherAgent(seen);
    const triage = new Agent({
      name: "triage",
      instructions: "Hand weather questions to the weather agent.",
      model: "demo",
      handoffs: [specialist],
    });
    const result = await runner.run(triage, `${ASK} Transfer me to the weather agent.`);
    expect(result.lastAgent?.name).toBe("weather_agent");
    expect(result.newItems.map((i) => i.type)).toEqual([
      "handoff_call_item",
      "handoff_output_item",
      "tool_call_item",
      "tool_call_output_item",
      "message_output_item",
    ]);
    expect(seen).toEqual([{ city: "Paris" }]);
    expect(result.finalOutput).toContain("sunny");
  });

  it("previousResponseId chains a second run on the first: the model sees the earlier turn", async () => {
    const agent = new Agent({ name: "memory", model: "demo" });
    const first = await runner.run(agent, "My favourite colour is teal.");
    expect(first.lastResponseId).toMatch(/^resp_/);
    const second = await runner.run(agent, "What is my favourite colour?", {
      previousResponseId: first.lastResponseId,
    });
    expect(second.finalOutput).toContain("teal");
    const alone = await runner.run(agent, "What is my favourite colour?");
    expect(alone.finalOutput).not.toContain("teal");
  });

  it("the Chat Completions model runs the same tool loop", async () => {
    const chatRunner = new Runner({
      modelProvider: new OpenAIProvider({ openAIClient: client, useResponses: false }),
      tracingDisabled: true,
    });
    const seen: unknown[] = [];
    const result = await chatRunner.run(weatherAgent(seen), ASK);
    expect(seen).toEqual([{ city: "Paris" }]);
    expect(result.finalOutput).toContain("sunny");
  });
});
