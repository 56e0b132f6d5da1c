import OpenAI from "openai";
import { afterEach, describe, expect, it } from "vitest";
import { createMockServer, type MockServer } from "../listener.js";

let server: MockServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const tools: OpenAI.Chat.ChatCompletionTool[] = [
  {
    type: "function",
    function: {
      name: "read_file",
      parameters: { type: "object", properties: { path: { type: "string" } }, required: ["path"] },
    },
  },
];

describe("the official openai client's chat.completions against the mock", () => {
  it("create (non-streaming) runs a two-turn tool loop over HTTP", async () => {
    server = await createMockServer();
    const client = new OpenAI({ baseURL: server.url, apiKey: "test", maxRetries: 0 });
    const messages: OpenAI.Chat.ChatCompletionMessageParam[] = [
      { role: "user", content: "What is in package.json?" },
    ];
    const first = await client.chat.completions.create({ model: "demo", messages, tools });
    const message = first.choices[0]?.message;
    const call = message?.tool_calls?.[0];
    expect(call?.type === "function" && call.function.name).toBe("read_file");
    if (message === undefined || call === undefined) throw new Error("no call");
    messages.push(message, {
      role: "tool",
      tool_call_id: call.id,
      content: JSON.stringify({
        tool: "read_file",
        ok: true,
        exit_code: 0,
        stdout: '{"name":"eddy"}',
        stderr: "",
      }),
    });
    const second = await client.chat.completions.create({ model: "demo", messages, tools });
    expect(second.choices[0]?.finish_reason).toBe("stop");
    expect(second.choices[0]?.message.content).toContain('name: "eddy"');
    expect(second.usage?.prompt_tokens).toBeGreaterThan(first.usage?.prompt_tokens ?? 0);
    expect(server.requests.map((r) => r.path)).toEqual(["/v1/chat/completions", "/v1/chat/completions"]);
  });

  it("create with stream: true yields chunks the SDK's stream helper assembles", async () => {
    server = await createMockServer();
    const client = new OpenAI({ baseURL: server.url, apiKey: "test", maxRetries: 0 });
    const stream = client.chat.completions.stream({
      model: "demo",
      messages: [{ role: "user", content: "What is in package.json and README.md?" }],
      tools,
      stream_options: { include_usage: true },
    });
    let chunks = 0;
    for await (const _ of stream) chunks++;
    const final = await stream.finalChatCompletion();
    expect(chunks).toBeGreaterThan(5);
    expect(final.choices[0]?.finish_reason).toBe("tool_calls");
    const calls = final.choices[0]?.message.tool_calls ?? [];
    expect(calls.map((c) => (c.type === "function" ? [c.id, c.function.arguments] : []))).toEqual([
      ["call_mock_0001", '{"path":"package.json"}'],
      ["call_mock_0002", '{"path":"README.md"}'],
    ]);
    expect(final.usage?.total_tokens).toBeGreaterThan(0);

    const plain = await client.chat.completions.create({
      model: "demo",
      messages: [{ role: "user", content: "hello" }],
      stream: true,
    });
    let text = "";
    for await (const chunk of plain) text += chunk.choices[0]?.delta.content ?? "";
    expect(text).toContain("offline demo model");
  });

  it("surfaces a 400 as the SDK's BadRequestError with the param", async () => {
    server = await createMockServer();
    const client = new OpenAI({ baseURL: server.url, apiKey: "test", maxRetries: 0 });
    const error = await client.chat.completions
      .create({ model: "demo", messages: [{ role: "tool", tool_call_id: "call_x", content: "x" }] })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OpenAI.BadRequestError);
    expect((error as InstanceType<typeof OpenAI.BadRequestError>).param).toBe("messages[0].tool_call_id");
  });
});
