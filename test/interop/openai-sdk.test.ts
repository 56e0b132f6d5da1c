/**
 * Interop: the official `openai` SDK (6.x) against the server under test (`target.ts`: the mock
 * with its demo model by default). Every test checks what the client got back — the call the
 * model made and its arguments, the text, the parsed object — through the SDK's own types.
 */
import OpenAI from "openai";
import { zodTextFormat } from "openai/helpers/zod";
import { ResponsesWS } from "openai/resources/responses/ws";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { type InteropTarget, startTarget } from "./target.js";

let target: InteropTarget;
let client: OpenAI;
beforeAll(async () => {
  target = await startTarget();
  client = new OpenAI({ baseURL: target.baseURL, apiKey: "interop", maxRetries: 0 });
});
afterAll(() => target.close());

const MODEL = "demo";
const ASK = "What is the weather in Paris?";
const WEATHER = '{"city":"Paris","temperature_c":21,"sky":"sunny"}';
const weatherTool: OpenAI.Responses.FunctionTool = {
  type: "function",
  name: "get_weather",
  description: "Get the current weather for a city",
  parameters: {
    type: "object",
    properties: { city: { type: "string" } },
    required: ["city"],
    additionalProperties: false,
  },
  strict: true,
};

/** The function calls of a response, as `[name, parsed arguments]`. */
function calls(response: OpenAI.Responses.Response): Array<[string, unknown]> {
  return response.output.flatMap((item) =>
    item.type === "function_call" ? [[item.name, JSON.parse(item.arguments)] as [string, unknown]] : [],
  );
}

/** The answer to every call of `response`: the weather. */
function outputsFor(response: OpenAI.Responses.Response): OpenAI.Responses.ResponseInputItem[] {
  return response.output.flatMap((item) =>
    item.type === "function_call"
      ? [{ type: "function_call_output" as const, call_id: item.call_id, output: WEATHER }]
      : [],
  );
}

describe("openai SDK: responses", () => {
  it("create (not streamed): a tool call with the right arguments, then the answer from its output, chained; retrieve returns it", async () => {
    const first = await client.responses.create({ model: MODEL, input: ASK, tools: [weatherTool] });
    expect(first.status).toBe("completed");
    expect(calls(first)).toEqual([["get_weather", { city: "Paris" }]]);
    const second = await client.responses.create({
      model: MODEL,
      previous_response_id: first.id,
      input: outputsFor(first),
      tools: [weatherTool],
    });
    expect(calls(second)).toEqual([]);
    expect(second.output_text).toContain("sunny");
    expect(second.output_text).toContain("21");
    const stored = await client.responses.retrieve(second.id);
    expect(stored.id).toBe(second.id);
    expect(stored.output_text).toBe(second.output_text);
  });

  it("create (streamed): events in order, arguments and text assembled from the deltas, stateless follow-up", async () => {
    const events: OpenAI.Responses.ResponseStreamEvent[] = [];
    for await (const event of await client.responses.create({
      model: MODEL,
      input: ASK,
      tools: [weatherTool],
      stream: true,
    }))
      events.push(event);
    expect(events[0]?.type).toBe("response.created");
    expect(events.at(-1)?.type).toBe("response.completed");
    const argsDeltas = events.flatMap((e) =>
      e.type === "response.function_call_arguments.delta" ? [e.delta] : [],
    );
    expect(JSON.parse(argsDeltas.join(""))).toEqual({ city: "Paris" });
    const done = events.at(-1);
    if (done?.type !== "response.completed") throw new Error("no response.completed");
    expect(calls(done.response)).toEqual([["get_weather", { city: "Paris" }]]);

    // Stateless: the whole history goes back, with the call items as they came.
    const history: OpenAI.Responses.ResponseInputItem[] = [
      { role: "user", content: ASK },
      ...(done.response.output as OpenAI.Responses.ResponseInputItem[]),
      ...outputsFor(done.response),
    ];
    let text = "";
    let completed: OpenAI.Responses.Response | undefined;
    for await (const event of await client.responses.create({
      model: MODEL,
      input: history,
      tools: [weatherTool],
      store: false,
      stream: true,
    })) {
      if (event.type === "response.output_text.delta") text += event.delta;
      if (event.type === "response.completed") completed = event.response;
    }
    expect(text).toContain("sunny");
    const message = completed?.output.find((i) => i.type === "message");
    expect(
      message?.type === "message" && message.content[0]?.type === "output_text" && message.content[0].text,
    ).toBe(text);
  });

  it("responses.stream: the helper's events and finalResponse agree", async () => {
    const stream = client.responses.stream({ model: MODEL, input: "My favourite colour is teal." });
    let text = "";
    stream.on("response.output_text.delta", (event) => {
      text += event.delta;
    });
    const final = await stream.finalResponse();
    expect(final.status).toBe("completed");
    expect(final.output_text).toBe(text);
    expect(text.toLowerCase()).toContain("teal");
  });

  it("responses.parse with a zod schema: output_parsed is the typed object", async () => {
    const Weather = z.object({
      city: z.enum(["Paris", "Rome"]),
      sky: z.literal("sunny"),
      temperature_c: z.number().min(21),
    });
    const parsed = await client.responses.parse({
      model: MODEL,
      input: "Weather report for Paris as JSON",
      text: { format: zodTextFormat(Weather, "weather") },
    });
    expect(parsed.output_parsed).toEqual({ city: "Paris", sky: "sunny", temperature_c: 21 });
  });

  it("compact: the compacted window plus a new message continues the conversation", async () => {
    const compacted = await client.responses.compact({
      model: MODEL,
      input: [
        { role: "user", content: "My name is Ada." },
        { role: "assistant", content: "Noted." },
        { role: "user", content: "My favourite colour is teal." },
      ],
    });
    expect(compacted.object).toBe("response.compaction");
    expect(compacted.output.at(-1)?.type).toBe("compaction");
    const next = await client.responses.create({
      model: MODEL,
      input: [
        ...(compacted.output as OpenAI.Responses.ResponseInputItem[]),
        { role: "user", content: "What is my name?" },
      ],
    });
    expect(next.output_text).toContain("Ada");
  });

  it("the WebSocket client (ResponsesWS): a tool call, then the answer chained on the same socket", async () => {
    const ws = new ResponsesWS(client);
    const completed: OpenAI.Responses.Response[] = [];
    const errors: unknown[] = [];
    let waiter: (() => void) | undefined;
    ws.on("response.completed", (event) => {
      completed.push(event.response);
      waiter?.();
    });
    ws.on("error", (error) => {
      errors.push(error);
      waiter?.();
    });
    const next = () =>
      new Promise<void>((resolve) => {
        waiter = resolve;
      });
    try {
      let arrived = next();
      ws.send({ type: "response.create", model: MODEL, input: ASK, tools: [weatherTool] });
      await arrived;
      const first = completed[0];
      if (first === undefined) throw new Error(`no response: ${String(errors[0])}`);
      expect(calls(first)).toEqual([["get_weather", { city: "Paris" }]]);
      arrived = next();
      ws.send({
        type: "response.create",
        model: MODEL,
        previous_response_id: first.id,
        input: outputsFor(first),
        tools: [weatherTool],
      });
      await arrived;
      expect(errors).toEqual([]);
      const text = completed[1]?.output.flatMap((i) =>
        i.type === "message" ? i.content.flatMap((c) => (c.type === "output_text" ? [c.text] : [])) : [],
      );
      expect(text?.join("")).toContain("sunny");
    } finally {
      ws.close();
    }
  });
});

describe("openai SDK: chat.completions", () => {
  const chatTool: OpenAI.Chat.ChatCompletionTool = {
    type: "function",
    function: {
      name: weatherTool.name,
      description: weatherTool.description ?? "",
      parameters: weatherTool.parameters ?? {},
    },
  };

  it("create (not streamed): a tool call with the right arguments, then the answer", async () => {
    const messages: OpenAI.Chat.ChatCompletionMessageParam[] = [{ role: "user", content: ASK }];
    const first = await client.chat.completions.create({ model: MODEL, messages, tools: [chatTool] });
    const message = first.choices[0]?.message;
    const call = message?.tool_calls?.[0];
    expect(first.choices[0]?.finish_reason).toBe("tool_calls");
    if (message === undefined || call?.type !== "function") throw new Error("no function call");
    expect([call.function.name, JSON.parse(call.function.arguments)]).toEqual([
      "get_weather",
      { city: "Paris" },
    ]);
    messages.push(message, { role: "tool", tool_call_id: call.id, content: WEATHER });
    const second = await client.chat.completions.create({ model: MODEL, messages, tools: [chatTool] });
    expect(second.choices[0]?.finish_reason).toBe("stop");
    expect(second.choices[0]?.message.content).toContain("sunny");
  });

  it("create (streamed): the tool call assembled from the chunks, then the text", async () => {
    const messages: OpenAI.Chat.ChatCompletionMessageParam[] = [{ role: "user", content: ASK }];
    const stream = await client.chat.completions.create({
      model: MODEL,
      messages,
      tools: [chatTool],
      stream: true,
      stream_options: { include_usage: true },
    });
    let id = "";
    let name = "";
    let args = "";
    let usage: OpenAI.CompletionUsage | null | undefined;
    for await (const chunk of stream) {
      for (const call of chunk.choices[0]?.delta.tool_calls ?? []) {
        id += call.id ?? "";
        name += call.function?.name ?? "";
        args += call.function?.arguments ?? "";
      }
      usage ??= chunk.usage;
    }
    expect([name, JSON.parse(args)]).toEqual(["get_weather", { city: "Paris" }]);
    expect(usage?.total_tokens).toBeGreaterThan(0);
    messages.push(
      { role: "assistant", tool_calls: [{ id, type: "function", function: { name, arguments: args } }] },
      { role: "tool", tool_call_id: id, content: WEATHER },
    );
    let text = "";
    for await (const chunk of await client.chat.completions.create({
      model: MODEL,
      messages,
      tools: [chatTool],
      stream: true,
    }))
      text += chunk.choices[0]?.delta.content ?? "";
    expect(text).toContain("sunny");
  });
});
