import { describe, expect, it } from "vitest";
import { post } from "../../test/support/mock-sse.js";
import { createMockHandler } from "./handler.js";
import type { ScenarioItem } from "./scenario.js";

const TOOLS = ["a", "b", "c"].map((name) => ({ type: "function", name }));
const CALLS: ScenarioItem[] = [
  { type: "function_call", name: "a" },
  { type: "function_call", name: "b" },
  { type: "function_call", name: "c" },
];

async function output(items: ScenarioItem[], body: Record<string, unknown>, ignoreToolChoice = false) {
  const handler = createMockHandler({ scenario: { turns: [{ items, ignoreToolChoice }] } });
  const response = await post(handler, { model: "m", input: "x", tools: TOOLS, ...body });
  expect(response.status).toBe(200);
  const json = (await response.json()) as {
    output: Array<{ type: string; name?: string; content?: Array<{ text: string }> }>;
  };
  return json.output.map((i) =>
    i.type === "function_call" ? i.name : `${i.type}: ${i.content?.[0]?.text ?? ""}`,
  );
}

describe("tool policy", () => {
  it.each([
    ["auto keeps every call", {}, ["a", "b", "c"]],
    ["parallel_tool_calls:false keeps the first", { parallel_tool_calls: false }, ["a"]],
    ["max_tool_calls caps the count", { max_tool_calls: 2 }, ["a", "b"]],
    ["a named function keeps only it", { tool_choice: { type: "function", name: "b" } }, ["b"]],
    [
      "allowed_tools keeps only those",
      {
        tool_choice: {
          type: "allowed_tools",
          tools: [
            { type: "function", name: "c" },
            { type: "function", name: "a" },
          ],
        },
      },
      ["a", "c"],
    ],
  ])("%s", async (_name, body, expected) => {
    expect(await output(CALLS, body)).toEqual(expected);
  });

  it("tool_choice none drops calls and says why in text", async () => {
    const out = await output(CALLS, { tool_choice: "none" });
    expect(out).toHaveLength(1);
    expect(out[0]).toMatch(/^message: .*tool_choice is "none"/);
  });

  it("required makes up a call when the model planned none", async () => {
    expect(await output([{ type: "message", text: "hi" }], { tool_choice: "required" })).toEqual([
      "message: hi",
      "a",
    ]);
    expect(await output([], { tool_choice: { type: "function", name: "c" } })).toEqual(["c"]);
    expect(
      await output([], {
        tool_choice: { type: "allowed_tools", mode: "required", tools: [{ type: "function", name: "b" }] },
      }),
    ).toEqual(["b"]);
  });

  it("lets a turn ignore tool_choice (a non-compliant server)", async () => {
    expect(await output(CALLS, { tool_choice: "none", parallel_tool_calls: false }, true)).toEqual([
      "a",
      "b",
      "c",
    ]);
  });

  it("keeps calls to tools the request does not offer under auto (a model may hallucinate one)", async () => {
    expect(await output([{ type: "function_call", name: "zzz" }], {})).toEqual(["zzz"]);
  });
});
