import { describe, expect, it } from "vitest";
import { post } from "../../test/support/mock-sse.js";
import type { FunctionToolParam } from "../protocol/types.js";
import { BUILTIN_TOOL_NAMES } from "../tools/builtin/index.js";
import { argumentsFromSchema, bestForeignTool, EDDY_TOOLS } from "./demo-tools.js";
import { createMockHandler, type MockHandler } from "./handler.js";
import type { ToolPolicy } from "./tool-policy.js";

type Json = Record<string, unknown>;
/** A function tool as a client sends it (the generated type has no room for a JSON Schema in `parameters`). */
type Tool = Omit<FunctionToolParam, "parameters"> & { parameters: Json };
const asParams = (tools: Tool[]) => tools as unknown as FunctionToolParam[];

const WEATHER: Tool = {
  type: "function",
  name: "get_weather",
  description: "Get the current weather for a location",
  parameters: {
    type: "object",
    properties: { location: { type: "string", description: "The city and state, e.g. San Francisco, CA" } },
    required: ["location"],
  },
};
const STOCK: Tool = {
  type: "function",
  name: "lookupStockPrice",
  description: "Look up the latest price of a stock by its ticker symbol",
  parameters: { type: "object", properties: { ticker: { type: "string" } }, required: ["ticker"] },
};
const READ_FILE: Tool = {
  type: "function",
  name: "read_file",
  description: "Read a file",
  parameters: { type: "object", properties: { path: { type: "string" } }, required: ["path"] },
  strict: false,
};
const auto = (tools: Tool[]): ToolPolicy => ({
  mode: "auto",
  maxCalls: Number.POSITIVE_INFINITY,
  tools: tools.map((t) => t.name),
});

describe("bestForeignTool", () => {
  it.each([
    ["What's the weather like in San Francisco?", "get_weather"],
    ["What is the stock price of ACME?", "lookupStockPrice"],
    ["Will it rain? Check the weather.", "get_weather"],
    ["Tell me a joke", undefined],
    ["What is in package.json?", undefined], // read_file is eddy's own: never matched by words
  ])("%s → %s", (text, expected) => {
    expect(
      bestForeignTool(text, asParams([READ_FILE, STOCK, WEATHER]), auto([READ_FILE, STOCK, WEATHER]))?.name,
    ).toBe(expected);
  });

  it("honours the policy: none, or allowed_tools without the tool, means no match", () => {
    const text = "What's the weather in Paris?";
    expect(bestForeignTool(text, asParams([WEATHER]), { ...auto([WEATHER]), mode: "none" })).toBeUndefined();
    expect(
      bestForeignTool(text, asParams([WEATHER, STOCK]), {
        ...auto([WEATHER, STOCK]),
        allowed: ["lookupStockPrice"],
      }),
    ).toBe(undefined);
  });
});

describe("argumentsFromSchema", () => {
  it.each<[string, unknown, string, Json]>([
    [
      "a place after 'in'",
      WEATHER.parameters,
      "What's the weather like in San Francisco?",
      { location: "San Francisco" },
    ],
    [
      "a place with its state",
      WEATHER.parameters,
      "Weather for Portland, OR please",
      { location: "Portland, OR" },
    ],
    [
      "no place in the message: the description's example",
      WEATHER.parameters,
      "how is the weather today?",
      { location: "San Francisco, CA" },
    ],
    [
      "an enum value the message names, else the first; a count from the message",
      {
        type: "object",
        properties: {
          unit: { type: "string", enum: ["celsius", "fahrenheit"] },
          scale: { type: "string", enum: ["low", "high"] },
          days: { type: "integer", minimum: 1, maximum: 7 },
        },
        required: ["unit", "scale", "days"],
      },
      "Forecast in fahrenheit for the next 3 days",
      { unit: "fahrenheit", scale: "low", days: 3 },
    ],
    [
      "numbers bounded by minimum/maximum, booleans from the message, const and default",
      {
        type: "object",
        properties: {
          limit: { type: "integer", maximum: 10 },
          ratio: { type: "number", minimum: 0.5 },
          verbose: { type: "boolean" },
          include_archived: { type: "boolean" },
          kind: { const: "search" },
          page: { type: "integer", default: 4 },
        },
        required: ["limit", "ratio", "verbose", "include_archived", "kind", "page"],
      },
      "list the top 50 results, verbose please",
      { limit: 10, ratio: 0.5, verbose: true, include_archived: false, kind: "search", page: 4 },
    ],
    [
      "files, URLs, e-mails, quoted text, name: value pairs",
      {
        type: "object",
        properties: {
          path: { type: "string" },
          url: { type: "string", format: "uri" },
          email: { type: "string" },
          query: { type: "string" },
          ticker: { type: "string" },
        },
        required: ["path", "url", "email", "query", "ticker"],
      },
      'Check src/app.ts against https://example.org/x, mail bob@example.com about "flaky test", ticker: ACME',
      {
        path: "src/app.ts",
        url: "https://example.org/x",
        email: "bob@example.com",
        query: "flaky test",
        ticker: "ACME",
      },
    ],
    [
      "nested objects and arrays (one element, or minItems), $ref into $defs, only required fields",
      {
        type: "object",
        $defs: { Point: { type: "object", properties: { x: { type: "number" } }, required: ["x"] } },
        properties: {
          origin: { $ref: "#/$defs/Point" },
          tags: { type: "array", items: { type: "string" } },
          pair: { type: "array", minItems: 2, items: { type: "integer" } },
          note: { type: "string" },
          when: { type: "string", format: "date" },
        },
        required: ["origin", "tags", "pair", "when"],
      },
      "plot it",
      { origin: { x: 1 }, tags: ["example tag"], pair: [1, 1], when: "2026-01-01" },
    ],
    [
      "anyOf with null, a type list with null, maxLength",
      {
        type: "object",
        properties: {
          city: { anyOf: [{ type: "null" }, { type: "string", maxLength: 5 }] },
          zone: { type: ["null", "string"] },
        },
        required: ["city", "zone"],
      },
      "Weather in Amsterdam",
      { city: "Amste", zone: "example zone" },
    ],
    ["no schema", undefined, "anything", {}],
  ])("%s", (_label, schema, text, expected) => {
    expect(argumentsFromSchema(schema, text)).toEqual(expected);
  });
});

describe("the demo model with tools it does not know", () => {
  async function ask(handler: MockHandler, body: Json): Promise<Json> {
    const response = await post(handler, { model: "eddy-demo", ...body });
    expect(response.status).toBe(200);
    return (await response.json()) as Json;
  }
  const items = (out: Json) => out.output as Json[];

  it("calls the best match with schema arguments, then answers from its output", async () => {
    const handler = createMockHandler();
    const tools = [READ_FILE, STOCK, WEATHER];
    const first = await ask(handler, { input: "What's the weather like in San Francisco?", tools });
    expect(items(first)).toEqual([
      expect.objectContaining({
        type: "function_call",
        name: "get_weather",
        arguments: '{"location":"San Francisco"}',
      }),
    ]);
    const call = items(first)[0] as Json;
    const output = JSON.stringify({ temperature: 64, unit: "F", conditions: "fog" });
    const second = await ask(handler, {
      previous_response_id: first.id,
      input: [{ type: "function_call_output", call_id: call.call_id, output }],
      tools,
    });
    const text = JSON.stringify(second.output);
    expect(items(second).map((i) => i.type)).toEqual(["message"]);
    expect(text).toContain("get_weather");
    expect(text).toContain("San Francisco");
    expect(text).toContain("temperature 64");
    expect(text).toContain('conditions \\"fog\\"');
  });

  it("answers from a plain-text or array output too, and does not call the tool again", async () => {
    for (const [output, expected] of [
      ["Sunny, 21°C", "Sunny, 21°C"],
      ['[{"day":"Mon"},{"day":"Tue"}]', "2 results"],
    ] as const) {
      const handler = createMockHandler();
      const first = await ask(handler, { input: "Weather in Oslo?", tools: [WEATHER], store: false });
      const call = items(first)[0] as Json;
      const second = await ask(handler, {
        input: [
          { type: "message", role: "user", content: "Weather in Oslo?" },
          call,
          { type: "function_call_output", call_id: call.call_id, output },
        ],
        tools: [WEATHER],
      });
      expect(items(second).map((i) => i.type)).toEqual(["message"]);
      expect(JSON.stringify(second.output)).toContain(expected);
    }
  });

  it("eddy's own tools keep their rules: a file question still calls read_file, a joke calls nothing", async () => {
    const handler = createMockHandler();
    const tools = [READ_FILE, WEATHER];
    const file = await ask(handler, { input: "What is in package.json?", tools });
    expect(items(file)).toEqual([
      expect.objectContaining({ name: "read_file", arguments: '{"path":"package.json"}' }),
    ]);
    const joke = await ask(handler, { input: "Tell me a joke", tools });
    expect(items(joke).map((i) => i.type)).toEqual(["message"]);
  });

  it("tool_choice required with no match: the first callable tool, with schema arguments (not {})", async () => {
    const out = await ask(createMockHandler(), { input: "hello", tools: [STOCK], tool_choice: "required" });
    expect(items(out)).toEqual([
      expect.objectContaining({ name: "lookupStockPrice", arguments: '{"ticker":"example ticker"}' }),
    ]);
  });

  it('tool_choice "none": no call, an answer in text', async () => {
    const out = await ask(createMockHandler(), {
      input: "Weather in Oslo?",
      tools: [WEATHER],
      tool_choice: "none",
    });
    expect(items(out).map((i) => i.type)).toEqual(["message"]);
  });
});

describe("EDDY_TOOLS", () => {
  it("names exactly eddy's built-in tools", () => {
    expect([...EDDY_TOOLS]).toEqual([...BUILTIN_TOOL_NAMES]);
  });
});
