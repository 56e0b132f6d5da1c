import { describe, expect, it } from "vitest";
import type { CreateResponseBody, JsonObject } from "../../protocol/types.js";
import { ProviderError } from "../errors.js";
import { liveCallOptions, toCallOptions } from "./call-options.js";

const body = (fields: JsonObject) => ({ model: "m", ...fields }) as CreateResponseBody;

describe("toCallOptions", () => {
  it("turns a stateless tool history into one assistant turn of calls and one tool message of results", () => {
    const options = toCallOptions(
      body({
        instructions: "Be brief.",
        input: [
          { type: "message", role: "developer", content: [{ type: "input_text", text: "Use tools." }] },
          { type: "message", role: "user", content: "Weather in Paris and Rome?" },
          { type: "reasoning", id: "rs_1", summary: [{ type: "summary_text", text: "thinking" }] },
          { type: "message", role: "assistant", content: [{ type: "output_text", text: "Checking." }] },
          { type: "function_call", call_id: "c1", name: "get_weather", arguments: '{"city":"Paris"}' },
          { type: "function_call", call_id: "c2", name: "get_weather", arguments: "" },
          { type: "function_call_output", call_id: "c1", output: '{"sky":"sunny"}' },
          { type: "function_call_output", call_id: "c2", output: "not json" },
          { type: "message", role: "assistant", content: [] },
          { type: "message", role: "user", content: "Thanks" },
        ],
      }),
    );
    expect(options.prompt).toEqual([
      { role: "system", content: "Be brief." },
      { role: "system", content: "Use tools." },
      { role: "user", content: [{ type: "text", text: "Weather in Paris and Rome?" }] },
      {
        role: "assistant",
        content: [
          { type: "text", text: "Checking." },
          { type: "tool-call", toolCallId: "c1", toolName: "get_weather", input: { city: "Paris" } },
          { type: "tool-call", toolCallId: "c2", toolName: "get_weather", input: {} },
        ],
      },
      {
        role: "tool",
        content: [
          {
            type: "tool-result",
            toolCallId: "c1",
            toolName: "get_weather",
            output: { type: "text", value: '{"sky":"sunny"}' },
          },
          {
            type: "tool-result",
            toolCallId: "c2",
            toolName: "get_weather",
            output: { type: "text", value: "not json" },
          },
        ],
      },
      { role: "user", content: [{ type: "text", text: "Thanks" }] },
    ]);
  });

  it("sends images and files as file parts: data URLs as base64 with their type, other URLs as URLs", () => {
    const options = toCallOptions(
      body({
        input: [
          {
            type: "message",
            role: "user",
            content: [
              { type: "input_image", image_url: "data:image/png;base64,iVBORw0KGgo=" },
              { type: "input_image", image_url: "https://example.test/cat.jpg" },
              { type: "input_file", file_data: "data:application/pdf;base64,JVBERi0=", filename: "a.pdf" },
            ],
          },
          { type: "function_call", call_id: "c1", name: "read_file", arguments: "{}" },
          {
            type: "function_call_output",
            call_id: "c1",
            output: [
              { type: "input_text", text: "an image:" },
              { type: "input_image", image_url: "data:image/png;base64,iVBORw0KGgo=" },
            ],
          },
        ],
      }),
    );
    const prompt = options.prompt as JsonObject[];
    expect(prompt[0]?.content).toEqual([
      { type: "file", mediaType: "image/png", data: "iVBORw0KGgo=" },
      { type: "file", mediaType: "image/*", data: "https://example.test/cat.jpg" },
      { type: "file", mediaType: "application/pdf", data: "JVBERi0=", filename: "a.pdf" },
    ]);
    expect(((prompt[2]?.content ?? []) as JsonObject[])[0]?.output).toEqual({
      type: "content",
      value: [
        { type: "text", text: "an image:" },
        { type: "image-data", data: "iVBORw0KGgo=", mediaType: "image/png" },
      ],
    });
    const live = liveCallOptions(options, new AbortController().signal);
    const parts = (live.prompt as JsonObject[])[0]?.content as JsonObject[];
    expect(parts[1]?.data).toEqual(new URL("https://example.test/cat.jpg"));
    expect(parts[0]?.data).toBe("iVBORw0KGgo=");
  });

  it("maps tool choices, sampling, structured output and the common extensions; leaves out what has no AI SDK name", () => {
    const tool = {
      type: "function",
      name: "a",
      description: "A",
      parameters: { type: "object" },
      strict: true,
    };
    const options = toCallOptions(
      body({
        input: "hi",
        tools: [tool, { ...tool, name: "b", strict: false }],
        tool_choice: { type: "allowed_tools", mode: "required", tools: [{ type: "function", name: "b" }] },
        top_p: 0.9,
        presence_penalty: 0.1,
        frequency_penalty: 0.2,
        seed: 7,
        top_k: 40,
        stop: "END",
        text: { format: { type: "json_schema", name: "out", schema: { type: "object" }, strict: true } },
        reasoning: { effort: "high" },
        metadata: { a: "b" },
        include: ["reasoning.encrypted_content"],
      }),
      { includeRawChunks: false },
    );
    expect(options).toEqual({
      prompt: [{ role: "user", content: [{ type: "text", text: "hi" }] }],
      tools: [{ type: "function", name: "b", description: "A", inputSchema: { type: "object" } }],
      toolChoice: { type: "required" },
      topP: 0.9,
      presencePenalty: 0.1,
      frequencyPenalty: 0.2,
      seed: 7,
      topK: 40,
      stopSequences: ["END"],
      responseFormat: { type: "json", schema: { type: "object" }, name: "out" },
      includeRawChunks: false,
    });
    expect(
      toCallOptions(body({ input: "x", tool_choice: { type: "function", name: "a" } })).toolChoice,
    ).toEqual({
      type: "tool",
      toolName: "a",
    });
  });

  it.each([
    ["an item reference", body({ input: [{ id: "msg_1" }] }), /an input item of type null/],
    ["a compaction item", body({ input: [{ type: "compaction", encrypted_content: "x" }] }), /"compaction"/],
    ["a hosted tool", body({ input: "x", tools: [{ type: "web_search" }] }), /"web_search" tool/],
    ["previous_response_id", body({ input: "x", previous_response_id: "resp_1" }), /keeps no responses/],
  ])("refuses %s before anything is sent", (_label, request, message) => {
    let error: unknown;
    try {
      toCallOptions(request);
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(ProviderError);
    expect((error as ProviderError).kind).toBe("unsupported");
    expect((error as ProviderError).message).toMatch(message);
  });
});
