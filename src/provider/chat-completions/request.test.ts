import { describe, expect, it } from "vitest";
import type { CreateResponseBody, JsonObject } from "../../protocol/types.js";
import { ProviderError } from "../errors.js";
import { chatDialect } from "./dialect.js";
import { toChatRequest } from "./request.js";

const user = (text: string) => ({ type: "message", role: "user", content: [{ type: "input_text", text }] });
const assistant = (text: string) => ({
  type: "message",
  role: "assistant",
  id: "msg_1",
  status: "completed",
  content: [{ type: "output_text", text, annotations: [] }],
});
const call = (call_id: string, name: string, args: string) => ({
  type: "function_call",
  id: `fc_${call_id}`,
  call_id,
  name,
  arguments: args,
  status: "completed",
});
const output = (call_id: string, text: string) => ({ type: "function_call_output", call_id, output: text });
const TOOL = {
  type: "function",
  name: "read_file",
  description: "Reads a file",
  parameters: { type: "object", properties: { path: { type: "string" } } },
  strict: false,
};

const translate = (body: JsonObject, dialect = chatDialect()) =>
  toChatRequest({ model: "m", stream: true, ...body } as CreateResponseBody, dialect);

describe("toChatRequest: messages", () => {
  it.each<[string, JsonObject, JsonObject[]]>([
    ["a prompt string is one user message", { input: "hi" }, [{ role: "user", content: "hi" }]],
    [
      "instructions come first, as a system message",
      { instructions: "Be brief.", input: "hi" },
      [
        { role: "system", content: "Be brief." },
        { role: "user", content: "hi" },
      ],
    ],
    [
      "a single text part is sent as a string",
      { input: [user("hello")] },
      [{ role: "user", content: "hello" }],
    ],
    [
      "several parts, an image among them, are content parts",
      {
        input: [
          {
            type: "message",
            role: "user",
            content: [
              { type: "input_text", text: "what is this?" },
              { type: "input_image", image_url: "data:image/png;base64,AAA", detail: "low" },
            ],
          },
        ],
      },
      [
        {
          role: "user",
          content: [
            { type: "text", text: "what is this?" },
            { type: "image_url", image_url: { url: "data:image/png;base64,AAA", detail: "low" } },
          ],
        },
      ],
    ],
    [
      "a file is sent inline",
      {
        input: [
          {
            type: "message",
            role: "user",
            content: [{ type: "input_file", filename: "a.pdf", file_data: "data:application/pdf;base64,AA" }],
          },
        ],
      },
      [
        {
          role: "user",
          content: [
            { type: "file", file: { file_data: "data:application/pdf;base64,AA", filename: "a.pdf" } },
          ],
        },
      ],
    ],
    [
      "an assistant message keeps its text; reasoning is never resent",
      {
        input: [
          user("hi"),
          { type: "reasoning", id: "rs_1", summary: [], encrypted_content: "enc" },
          assistant("Hello!"),
        ],
      },
      [
        { role: "user", content: "hi" },
        { role: "assistant", content: "Hello!" },
      ],
    ],
    [
      "consecutive calls are one assistant message, joined to the text before them; outputs are tool messages",
      {
        input: [
          user("read both"),
          assistant("Reading."),
          call("call_1", "read_file", '{"path":"a"}'),
          call("call_2", "read_file", '{"path":"b"}'),
          output("call_1", "A"),
          output("call_2", "B"),
        ],
      },
      [
        { role: "user", content: "read both" },
        {
          role: "assistant",
          content: "Reading.",
          tool_calls: [
            { id: "call_1", type: "function", function: { name: "read_file", arguments: '{"path":"a"}' } },
            { id: "call_2", type: "function", function: { name: "read_file", arguments: '{"path":"b"}' } },
          ],
        },
        { role: "tool", tool_call_id: "call_1", content: "A" },
        { role: "tool", tool_call_id: "call_2", content: "B" },
      ],
    ],
    [
      "a call without text before it starts an assistant message with null content; empty arguments are {}",
      { input: [user("go"), call("call_1", "list_dir", ""), output("call_1", "[]")] },
      [
        { role: "user", content: "go" },
        {
          role: "assistant",
          content: null,
          tool_calls: [{ id: "call_1", type: "function", function: { name: "list_dir", arguments: "{}" } }],
        },
        { role: "tool", tool_call_id: "call_1", content: "[]" },
      ],
    ],
    [
      "calls of two turns are two assistant messages",
      {
        input: [
          call("call_1", "a", "{}"),
          output("call_1", "1"),
          call("call_2", "b", "{}"),
          output("call_2", "2"),
        ],
      },
      [
        {
          role: "assistant",
          content: null,
          tool_calls: [{ id: "call_1", type: "function", function: { name: "a", arguments: "{}" } }],
        },
        { role: "tool", tool_call_id: "call_1", content: "1" },
        {
          role: "assistant",
          content: null,
          tool_calls: [{ id: "call_2", type: "function", function: { name: "b", arguments: "{}" } }],
        },
        { role: "tool", tool_call_id: "call_2", content: "2" },
      ],
    ],
    [
      "system and developer items take the dialect's role",
      { input: [{ type: "message", role: "developer", content: "rules" }, user("hi")] },
      [
        { role: "system", content: "rules" },
        { role: "user", content: "hi" },
      ],
    ],
    [
      "a tool output in text parts is joined",
      {
        input: [
          call("c", "a", "{}"),
          {
            type: "function_call_output",
            call_id: "c",
            output: [
              { type: "input_text", text: "x" },
              { type: "input_text", text: "y" },
            ],
          },
        ],
      },
      [
        {
          role: "assistant",
          content: null,
          tool_calls: [{ id: "c", type: "function", function: { name: "a", arguments: "{}" } }],
        },
        { role: "tool", tool_call_id: "c", content: "xy" },
      ],
    ],
  ])("%s", (_name, body, messages) => {
    expect(translate(body).messages).toEqual(messages);
  });

  it("uses the developer role where the dialect says so", () => {
    const out = translate(
      { instructions: "Be brief.", input: [{ type: "message", role: "system", content: "x" }] },
      chatDialect({ instructionsRole: "developer" }),
    );
    expect(out.messages).toEqual([
      { role: "developer", content: "Be brief." },
      { role: "developer", content: "x" },
    ]);
  });
});

describe("toChatRequest: request fields", () => {
  it.each<[string, JsonObject, JsonObject]>([
    [
      "function tools; strict only when true",
      { input: "hi", tools: [TOOL, { ...TOOL, name: "grep", strict: true }] },
      {
        tools: [
          {
            type: "function",
            function: { name: "read_file", description: "Reads a file", parameters: TOOL.parameters },
          },
          {
            type: "function",
            function: {
              name: "grep",
              description: "Reads a file",
              parameters: TOOL.parameters,
              strict: true,
            },
          },
        ],
      },
    ],
    ["tool_choice auto", { input: "hi", tools: [TOOL], tool_choice: "auto" }, { tool_choice: "auto" }],
    [
      "tool_choice required",
      { input: "hi", tools: [TOOL], tool_choice: "required" },
      { tool_choice: "required" },
    ],
    [
      "tool_choice naming a function",
      { input: "hi", tools: [TOOL], tool_choice: { type: "function", name: "read_file" } },
      { tool_choice: { type: "function", function: { name: "read_file" } } },
    ],
    [
      "allowed_tools narrows tools and keeps its mode",
      {
        input: "hi",
        tools: [TOOL, { ...TOOL, name: "grep" }],
        tool_choice: { type: "allowed_tools", mode: "required", tools: [{ type: "function", name: "grep" }] },
      },
      {
        tools: [
          {
            type: "function",
            function: { name: "grep", description: "Reads a file", parameters: TOOL.parameters },
          },
        ],
        tool_choice: "required",
      },
    ],
    [
      "parallel_tool_calls",
      { input: "hi", tools: [TOOL], parallel_tool_calls: false },
      { parallel_tool_calls: false },
    ],
    ["max_output_tokens → max_tokens", { input: "hi", max_output_tokens: 100 }, { max_tokens: 100 }],
    [
      "text.format json_schema → response_format",
      {
        input: "hi",
        text: { format: { type: "json_schema", name: "answer", schema: { type: "object" }, strict: true } },
      },
      {
        response_format: {
          type: "json_schema",
          json_schema: { name: "answer", schema: { type: "object" }, strict: true },
        },
      },
    ],
    [
      "text.format json_object",
      { input: "hi", text: { format: { type: "json_object" } } },
      { response_format: { type: "json_object" } },
    ],
    ["text.verbosity", { input: "hi", text: { verbosity: "low" } }, { verbosity: "low" }],
    ["sampling", { input: "hi", temperature: 0.2, top_p: 0.9 }, { temperature: 0.2, top_p: 0.9 }],
    [
      "reasoning effort",
      { input: "hi", reasoning: { effort: "high", summary: "auto" } },
      { reasoning_effort: "high" },
    ],
    ["top_logprobs", { input: "hi", top_logprobs: 3 }, { logprobs: true, top_logprobs: 3 }],
    ["a server's own fields pass through", { input: "hi", seed: 7, top_k: 20 }, { seed: 7, top_k: 20 }],
  ])("%s", (_name, body, expected) => {
    expect(translate(body)).toMatchObject(expected);
  });

  it("leaves out what only the Responses API has, and always streams with usage", () => {
    const out = translate({
      input: "hi",
      tools: [TOOL],
      store: false,
      include: ["reasoning.encrypted_content"],
      max_tool_calls: 3,
      truncation: "auto",
      metadata: { a: "b" },
      reasoning: { summary: "auto" },
      stream: true,
    });
    expect(Object.keys(out).sort()).toEqual(["messages", "model", "stream", "stream_options", "tools"]);
    expect(out.stream).toBe(true);
    expect(out.stream_options).toEqual({ include_usage: true });
  });

  it("follows the dialect: max_completion_tokens, no stream_options", () => {
    const out = translate(
      { input: "hi", max_output_tokens: 50 },
      chatDialect({ maxTokensField: "max_completion_tokens", streamUsage: false }),
    );
    expect(out.max_completion_tokens).toBe(50);
    expect(out.max_tokens).toBeUndefined();
    expect(out.stream_options).toBeUndefined();
  });

  it("refuses a chained follow-up as previous_response_not_found (the loop then resends the history)", () => {
    let error: unknown;
    try {
      translate({ input: [], previous_response_id: "resp_1" });
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(ProviderError);
    expect(error).toMatchObject({ kind: "unsupported", retryable: false, isPreviousResponseNotFound: true });
    expect((error as Error).message).toMatch(/previous_response_id.*stateless/);
  });

  it.each<[string, JsonObject, RegExp]>([
    ["a hosted tool", { input: "hi", tools: [{ type: "web_search" }] }, /"web_search" tool/],
    ["an item reference", { input: [{ type: "item_reference", id: "msg_1" }] }, /"item_reference"/],
    [
      "a file by URL",
      {
        input: [
          { type: "message", role: "user", content: [{ type: "input_file", file_url: "https://x/a.pdf" }] },
        ],
      },
      /input_file without file_data/,
    ],
    [
      "a hosted tool choice",
      { input: "hi", tools: [TOOL], tool_choice: { type: "web_search" } },
      /tool_choice/,
    ],
  ])("refuses %s before anything is sent", (_name, body, message) => {
    let error: unknown;
    try {
      translate(body);
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(ProviderError);
    expect(error).toMatchObject({ kind: "unsupported", code: "unsupported_request", retryable: false });
    expect((error as ProviderError).runEndReason).toBe("invalid_request");
    expect((error as Error).message).toMatch(message);
  });
});
