import { describe, expect, it } from "vitest";
import { canonicalCreateBody } from "./shorthands.js";
import { validateCreateResponseBody } from "./validate.js";

const tool = { type: "function", name: "read_file", parameters: { type: "object" } };

describe("canonicalCreateBody", () => {
  it.each([
    [
      "a user message without type",
      { model: "m", input: [{ role: "user", content: "hi" }] },
      { model: "m", input: [{ type: "message", role: "user", content: "hi" }] },
      ["input[0].type is required"],
    ],
    [
      "system, developer and assistant messages without type, among canonical items",
      {
        model: "m",
        input: [
          { role: "system", content: "s" },
          { type: "message", role: "user", content: "u" },
          { role: "developer", content: [{ type: "input_text", text: "d" }] },
          { role: "assistant", content: [{ type: "output_text", text: "a" }], id: "msg_1" },
        ],
      },
      {
        model: "m",
        input: [
          { type: "message", role: "system", content: "s" },
          { type: "message", role: "user", content: "u" },
          { type: "message", role: "developer", content: [{ type: "input_text", text: "d" }] },
          { type: "message", role: "assistant", content: [{ type: "output_text", text: "a" }], id: "msg_1" },
        ],
      },
      ["input[0].type is required", "input[2].type is required", "input[3].type is required"],
    ],
    [
      "null for request fields the spec does not make nullable",
      {
        model: "m",
        input: "hi",
        include: null,
        stream: null,
        store: null,
        truncation: null,
        service_tier: null,
        background: null,
      },
      { model: "m", input: "hi" },
      [
        "include must not be null (leave it out)",
        "stream must not be null (leave it out)",
        "background must not be null (leave it out)",
        "store must not be null (leave it out)",
        "service_tier must not be null (leave it out)",
        "truncation must not be null (leave it out)",
      ],
    ],
    [
      "a function tool with strict: null",
      {
        model: "m",
        tools: [
          { ...tool, strict: null },
          { ...tool, name: "b", strict: false },
        ],
      },
      { model: "m", tools: [tool, { ...tool, name: "b", strict: false }] },
      ["tools[0].strict must not be null (leave it out)"],
    ],
    [
      "an assistant message with phase: null",
      { model: "m", input: [{ role: "assistant", content: "a", phase: null }] },
      { model: "m", input: [{ type: "message", role: "assistant", content: "a" }] },
      ["input[0].type is required", "input[0].phase must not be null (leave it out)"],
    ],
  ])("rewrites %s to the spec's form", (_label, raw, canonical, problems) => {
    const { body, departures } = canonicalCreateBody(raw);
    expect(body).toEqual(canonical);
    expect(departures.map((d) => d.problem)).toEqual(problems);
    expect(departures.every((d) => d.problem.startsWith(d.param))).toBe(true);
    expect(validateCreateResponseBody(raw)).toBeDefined();
    expect(validateCreateResponseBody(body)).toBeUndefined();
  });

  it.each([
    ["a string input", { model: "m", input: "hi" }],
    [
      "canonical items, item references with and without type, and a function call round",
      {
        model: "m",
        input: [
          { type: "message", role: "user", content: "hi" },
          { id: "msg_1" },
          { type: "item_reference", id: "msg_2" },
          { type: "function_call", call_id: "c", name: "f", arguments: "{}" },
          { type: "function_call_output", call_id: "c", output: "ok" },
        ],
        tools: [{ ...tool, strict: true }],
        store: false,
        include: ["reasoning.encrypted_content"],
      },
    ],
  ])("leaves %s as it is (the same object, no departures)", (_label, raw) => {
    const { body, departures } = canonicalCreateBody(raw);
    expect(body).toBe(raw);
    expect(departures).toEqual([]);
  });

  it("never changes the object it is given, and leaves what it does not know to the schema check", () => {
    const raw = {
      model: "m",
      input: [{ role: "user", content: "hi" }, "not an item", { type: "mystery" }],
      store: null,
    };
    const copy = structuredClone(raw);
    const { body } = canonicalCreateBody(raw);
    expect(raw).toEqual(copy);
    expect((body.input as unknown[]).slice(1)).toEqual(["not an item", { type: "mystery" }]);
  });
});
