import { describe, expect, it } from "vitest";
import { post } from "../../../test/support/mock-sse.js";
import { validateCreateResponseBody } from "../../protocol/validate.js";
import { createMockHandler } from "../handler.js";
import { parseChatBody } from "./request.js";
import { translateChatBody } from "./translate.js";

const user = { role: "user", content: "hi" };
const call = (id: string) => ({ id, type: "function", function: { name: "read_file", arguments: "{}" } });

describe("chat request validation", () => {
  it.each([
    ["no model", { messages: [user] }, "model", "Missing required parameter: 'model'."],
    ["no messages", { model: "m", messages: [] }, "messages", "expected at least one message"],
    [
      "an unknown role",
      { model: "m", messages: [{ role: "bot", content: "x" }] },
      "messages[0].role",
      "expected role",
    ],
    [
      "a tool message without tool_call_id",
      { model: "m", messages: [user, { role: "tool", content: "x" }] },
      "messages[1].tool_call_id",
      "Missing required parameter",
    ],
    [
      "a content part of an unknown type",
      { model: "m", messages: [{ role: "user", content: [{ type: "text", text: "a" }, { type: "video" }] }] },
      "messages[0].content[1].type",
      "Invalid 'messages[0].content[1].type'",
    ],
    [
      "an image part without a URL",
      { model: "m", messages: [{ role: "user", content: [{ type: "image_url", image_url: {} }] }] },
      "messages[0].content[0].image_url.url",
      "Missing required parameter",
    ],
    [
      "content that is a number",
      { model: "m", messages: [{ role: "user", content: 5 }] },
      "messages[0].content",
      "expected a string or an array of content parts",
    ],
    [
      "a bad tool name",
      { model: "m", messages: [user], tools: [{ type: "function", function: { name: "read file" } }] },
      "tools[0].function.name",
      "must be 1-64 characters",
    ],
    [
      "a bad tool_choice",
      { model: "m", messages: [user], tool_choice: "sometimes" },
      "tool_choice",
      "expected 'none', 'auto', 'required'",
    ],
    ["max_tokens 0", { model: "m", messages: [user], max_tokens: 0 }, "max_tokens", "Invalid 'max_tokens'"],
    ["n = 2", { model: "m", messages: [user], n: 2 }, "n", "n must be 1"],
    [
      "stream_options without stream",
      { model: "m", messages: [user], stream_options: { include_usage: true } },
      "stream_options",
      "only allowed when 'stream' is enabled",
    ],
    [
      "both token limits",
      { model: "m", messages: [user], max_tokens: 5, max_completion_tokens: 5 },
      "max_tokens",
      "not both",
    ],
    [
      "a tool message answering no call",
      { model: "m", messages: [user, { role: "tool", tool_call_id: "call_x", content: "out" }] },
      "messages[1].tool_call_id",
      "no tool call with that id",
    ],
    [
      "a tool call left unanswered",
      {
        model: "m",
        messages: [
          user,
          { role: "assistant", tool_calls: [call("call_a"), call("call_b")] },
          { role: "tool", tool_call_id: "call_a", content: "out" },
          user,
        ],
      },
      "messages[1].tool_calls",
      "no answer for 'call_b' before messages[3]",
    ],
    [
      "duplicate call ids",
      { model: "m", messages: [user, { role: "assistant", tool_calls: [call("c"), call("c")] }] },
      "messages[1].tool_calls[1].id",
      "Duplicate tool call id 'c'",
    ],
  ])("refuses %s with 400 naming %s", async (_label, body, param, message) => {
    const h = createMockHandler();
    const res = await post(h, body, { path: "/v1/chat/completions" });
    expect(res.status).toBe(400);
    const { error } = (await res.json()) as { error: { type: string; param: string; message: string } };
    expect(error.type).toBe("invalid_request_error");
    expect(error.param).toBe(param);
    expect(error.message).toContain(message);
    expect(h.requests).toHaveLength(1); // refused before the model: no turn was used
  });

  it.each([
    [
      "audio input",
      { type: "input_audio", input_audio: { data: "AAAA", format: "wav" } },
      "messages[0].content[0].input_audio",
    ],
    ["a file by id", { type: "file", file: { file_id: "file-1" } }, "messages[0].content[0].file.file_data"],
  ])("refuses %s, which the mock cannot serve", async (_label, part, param) => {
    const res = await post(
      createMockHandler(),
      { model: "m", messages: [{ role: "user", content: [part] }] },
      { path: "/v1/chat/completions" },
    );
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: { param: string } }).error.param).toBe(param);
  });

  it("refuses invalid JSON with invalid_json, and answers GET with 405", async () => {
    const h = createMockHandler();
    const bad = await post(h, "{nope", { path: "/v1/chat/completions" });
    expect(((await bad.json()) as { error: { code: string } }).error.code).toBe("invalid_json");
    const get = await h(new Request("http://mock.test/chat/completions"));
    expect(get.status).toBe(405);
  });
});

describe("chat request → the mock's model input", () => {
  const chat = parseChatBody({
    model: "m",
    messages: [
      { role: "system", content: "Be terse." },
      { role: "developer", content: [{ type: "text", text: "Use tools." }] },
      {
        role: "user",
        content: [
          { type: "text", text: "What is this?" },
          { type: "image_url", image_url: { url: "data:image/png;base64,iVBORw0KGgo=", detail: "low" } },
          { type: "file", file: { file_data: "data:application/pdf;base64,JVBERi0=", filename: "a.pdf" } },
        ],
      },
      { role: "assistant", content: "Let me look.", tool_calls: [call("call_1")] },
      { role: "tool", tool_call_id: "call_1", content: "out" },
      { role: "assistant", content: [{ type: "refusal", refusal: "No." }] },
      { role: "user", content: "Please?" },
    ],
    tools: [
      { type: "function", function: { name: "read_file", parameters: { type: "object" }, strict: true } },
    ],
    tool_choice: {
      type: "allowed_tools",
      allowed_tools: { mode: "required", tools: [{ type: "function", function: { name: "read_file" } }] },
    },
    parallel_tool_calls: false,
    max_completion_tokens: 100,
    response_format: {
      type: "json_schema",
      json_schema: { name: "out", schema: { type: "object" }, strict: true },
    },
    reasoning_effort: "minimal",
    stream: true,
    stream_options: { include_usage: true },
    seed: 7,
  });
  const body = translateChatBody(chat);

  it("is a schema-valid Open Responses request body", () => {
    expect(validateCreateResponseBody(body)).toBeUndefined();
  });

  it("maps messages, tools and options to their Responses counterparts", () => {
    expect(body.instructions).toBe("Be terse.\n\nUse tools.");
    expect(body.input).toEqual([
      {
        type: "message",
        role: "user",
        content: [
          { type: "input_text", text: "What is this?" },
          { type: "input_image", image_url: "data:image/png;base64,iVBORw0KGgo=", detail: "low" },
          { type: "input_file", file_data: "data:application/pdf;base64,JVBERi0=", filename: "a.pdf" },
        ],
      },
      { type: "message", role: "assistant", content: [{ type: "output_text", text: "Let me look." }] },
      { type: "function_call", call_id: "call_1", name: "read_file", arguments: "{}" },
      { type: "function_call_output", call_id: "call_1", output: "out" },
      { type: "message", role: "assistant", content: [{ type: "refusal", refusal: "No." }] },
      { type: "message", role: "user", content: "Please?" },
    ]);
    expect(body).toMatchObject({
      store: false,
      stream: true,
      tools: [{ type: "function", name: "read_file", parameters: { type: "object" }, strict: true }],
      tool_choice: {
        type: "allowed_tools",
        mode: "required",
        tools: [{ type: "function", name: "read_file" }],
      },
      parallel_tool_calls: false,
      max_output_tokens: 100,
      text: { format: { type: "json_schema", name: "out", schema: { type: "object" }, strict: true } },
      reasoning: { effort: "low", summary: "auto" },
    });
  });
});
