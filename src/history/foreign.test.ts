/**
 * Foreign chat histories in the shapes of VS Code's `LanguageModelChatMessage` (vscode.d.ts: role
 * enum User = 1, Assistant = 2; part classes with `value` / `callId, name, input` / `callId,
 * content`) and the AI SDK's `ModelMessage` (provider-utils content-part.ts: `tool-call` with
 * `input`, `tool-result` with a typed `output`), translated and validated against the vendored
 * spec's `ItemParam` schema.
 */
import { describe, expect, it } from "vitest";
import type { JsonObject } from "../protocol/types.js";
import { validateInputItem } from "../protocol/validate.js";
import { toResponsesInput } from "./to-responses-input.js";

// Stand-ins with the real classes' names and fields (the classes only exist inside VS Code).
class LanguageModelTextPart {
  constructor(readonly value: string) {}
}
class LanguageModelToolCallPart {
  constructor(
    readonly callId: string,
    readonly name: string,
    readonly input: object,
  ) {}
}
class LanguageModelToolResultPart {
  constructor(
    readonly callId: string,
    readonly content: unknown[],
  ) {}
}
class LanguageModelDataPart {
  constructor(
    readonly data: Uint8Array,
    readonly mimeType: string,
  ) {}
}
const User = 1;
const Assistant = 2;

const kinds = (items: readonly unknown[]) =>
  (items as JsonObject[]).map((i) => `${i.type}${i.call_id ? `:${i.call_id}` : i.role ? `:${i.role}` : ""}`);

function expectValid(items: readonly unknown[]) {
  for (const item of items) expect(validateInputItem(item)).toBeUndefined();
}

describe("toResponsesInput: VS Code LanguageModelChatMessage", () => {
  const messages = [
    { role: User, content: [new LanguageModelTextPart("Read a.txt and b.txt")] },
    {
      role: Assistant,
      content: [
        new LanguageModelTextPart("Reading both."),
        new LanguageModelToolCallPart("t1", "copilot_readFile", { path: "a.txt" }),
        new LanguageModelToolCallPart("t2", "mcp.fs/read", { path: "b.txt" }),
      ],
    },
    {
      role: User,
      content: [
        new LanguageModelToolResultPart("t2", [new LanguageModelTextPart("B")]),
        new LanguageModelToolResultPart("t1", [
          new LanguageModelTextPart("A"),
          new LanguageModelTextPart("A2"),
        ]),
        new LanguageModelToolResultPart("zz", [new LanguageModelTextPart("orphan")]),
      ],
    },
    {
      role: Assistant,
      content: [new LanguageModelToolCallPart("t3", "copilot_readFile", { path: "c.txt" })],
    },
    {
      role: User,
      content: [
        new LanguageModelTextPart("Never mind, what about this image?"),
        new LanguageModelDataPart(new Uint8Array([137, 80, 78, 71]), "image/png"),
      ],
    },
  ];

  it("pairs calls and results by id in call order, drops orphans, answers unanswered calls, validates", async () => {
    const r = await toResponsesInput(messages, { capabilities: { nativeToolHistory: true } });
    expect(kinds(r.items)).toEqual([
      "message:user",
      "message:assistant",
      "function_call:t1",
      "function_call:t2",
      "function_call_output:t1",
      "function_call_output:t2",
      "function_call:t3",
      "function_call_output:t3",
      "message:user",
    ]);
    const items = r.items as JsonObject[];
    expect(items[3]).toMatchObject({ name: "mcp_fs_read", arguments: '{"path":"b.txt"}' });
    expect(items[4]).toMatchObject({ output: "AA2" });
    expect(JSON.parse(String(items[7]?.output))).toMatchObject({
      ok: false,
      error: { code: "missing_output" },
    });
    expect((items[8]?.content as JsonObject[] | undefined)?.[1]).toEqual({
      type: "input_image",
      image_url: "data:image/png;base64,iVBORw==",
    });
    expect(r.repairs.map((x) => `${x.kind}:${x.call_id}`)).toEqual(["orphan_output:zz", "missing_output:t3"]);
    expect(r.notes.map((n) => n.kind)).toEqual(["tool_renamed", "outputs_reordered"]);
    expectValid(r.items);
  });

  it("renders the same history as text for a server without native tool history", async () => {
    const r = await toResponsesInput(messages, { capabilities: { nativeToolHistory: false } });
    expect(r.strategy).toBe("text-embed");
    expect(JSON.stringify(r.items)).not.toContain("function_call");
    expect(JSON.stringify(r.items)).toContain("Context (tool result of copilot_readFile):\\nAA2");
    expectValid(r.items);
  });
});

describe("toResponsesInput: AI SDK ModelMessage", () => {
  const reasoning = (text: string, enc: string) => ({
    type: "reasoning",
    text,
    providerOptions: { openai: { itemId: "rs_x", reasoningEncryptedContent: enc } },
  });

  it("translates v5 parts and outputs, renames duplicate ids in lockstep, keeps reasoning with what follows", async () => {
    const messages = [
      { role: "system", content: "Be brief." },
      { role: "user", content: [{ type: "text", text: "Weather and time?" }] },
      {
        role: "assistant",
        content: [
          reasoning("need tools", "ENC"),
          { type: "tool-call", toolCallId: "call_0", toolName: "weather", input: { city: "Oslo" } },
          { type: "tool-call", toolCallId: "call_1", toolName: "time", input: {} },
        ],
      },
      {
        role: "tool",
        content: [
          {
            type: "tool-result",
            toolCallId: "call_1",
            toolName: "time",
            output: { type: "json", value: { h: 9 } },
          },
          {
            type: "tool-result",
            toolCallId: "call_0",
            toolName: "weather",
            output: { type: "text", value: "rain" },
          },
        ],
      },
      { role: "assistant", content: [{ type: "text", text: "Rain; 9 o'clock." }] },
      { role: "user", content: "Again for Bergen" },
      {
        role: "assistant",
        content: [
          { type: "tool-call", toolCallId: "call_0", toolName: "weather", input: { city: "Bergen" } },
        ],
      },
      {
        role: "tool",
        content: [
          {
            type: "tool-result",
            toolCallId: "call_0",
            toolName: "weather",
            output: { type: "error-text", value: "timeout" },
          },
        ],
      },
      {
        role: "assistant",
        content: [
          { type: "tool-call", toolCallId: "c_img", toolName: "shot", input: {} },
          { type: "tool-call", toolCallId: "c_no", toolName: "rm", input: {} },
        ],
      },
      {
        role: "tool",
        content: [
          {
            type: "tool-result",
            toolCallId: "c_img",
            toolName: "shot",
            output: {
              type: "content",
              value: [
                { type: "text", text: "see" },
                { type: "image-data", data: "AAAA", mediaType: "image/png" },
              ],
            },
          },
          {
            type: "tool-result",
            toolCallId: "c_no",
            toolName: "rm",
            output: { type: "execution-denied", reason: "unsafe" },
          },
        ],
      },
    ];
    const r = await toResponsesInput(messages, { model: "gpt-5", sourceModel: "gpt-5" });
    const items = r.items as JsonObject[];
    expect(kinds(items)).toEqual([
      "message:system",
      "message:user",
      "reasoning",
      "function_call:call_0",
      "function_call:call_1",
      "function_call_output:call_0",
      "function_call_output:call_1",
      "message:assistant",
      "message:user",
      "function_call:call_0__2",
      "function_call_output:call_0__2",
      "function_call:c_img",
      "function_call:c_no",
      "function_call_output:c_img",
      "function_call_output:c_no",
    ]);
    expect(items[2]).toEqual({
      type: "reasoning",
      summary: [{ type: "summary_text", text: "need tools" }],
      encrypted_content: "ENC",
    });
    expect(items[3]).toMatchObject({ arguments: '{"city":"Oslo"}' });
    expect(items[5]).toMatchObject({ output: "rain" });
    expect(items[6]).toMatchObject({ output: '{"h":9}' });
    expect(items[10]).toMatchObject({ output: "Error: timeout" });
    expect(items[13]?.output).toEqual([
      { type: "input_text", text: "see" },
      { type: "input_image", image_url: "data:image/png;base64,AAAA" },
    ]);
    expect(items[14]).toMatchObject({ output: "Error: the user denied this tool call (unsafe)." });
    expect(r.repairs).toEqual([expect.objectContaining({ kind: "duplicate_call_id", call_id: "call_0" })]);
    expectValid(items);
  });

  it("drops reasoning (and nothing else) when the model changed, or when it cannot be replayed", async () => {
    const messages = [
      { role: "user", content: "q" },
      { role: "assistant", content: [reasoning("r", "ENC"), { type: "text", text: "a" }] },
      { role: "user", content: "q2" },
      {
        role: "assistant",
        content: [
          { type: "reasoning", text: "no blob" },
          { type: "text", text: "b" },
        ],
        model: "gpt-5",
      },
    ];
    const changed = await toResponsesInput(messages, { model: "gpt-5", sourceModel: "o3" });
    expect(kinds(changed.items)).toEqual([
      "message:user",
      "message:assistant",
      "message:user",
      "message:assistant",
    ]);
    expect(changed.notes.map((n) => n.kind)).toEqual(["reasoning_dropped", "reasoning_dropped"]);
    expect(changed.notes[0]?.detail).toContain("came from o3, not gpt-5");
    expect(changed.notes[1]?.detail).toContain("no encrypted content");
    const same = await toResponsesInput(messages, { model: "o3", sourceModel: "o3" });
    expect(kinds(same.items)).toEqual([
      "message:user",
      "reasoning",
      "message:assistant",
      "message:user",
      "message:assistant",
    ]);
    expectValid(same.items);
  });

  it("accepts v4 CoreMessage fields (args, result) and reports parts with no input form", async () => {
    const r = await toResponsesInput([
      {
        role: "user",
        content: [
          { type: "text", text: "go" },
          { type: "custom", kind: "x" },
        ],
      },
      { role: "assistant", content: [{ type: "tool-call", toolCallId: "a", toolName: "f", args: { x: 1 } }] },
      { role: "tool", content: [{ type: "tool-result", toolCallId: "a", toolName: "f", result: { y: 2 } }] },
    ]);
    expect((r.items as JsonObject[]).map((i) => i.arguments ?? i.output ?? i.role)).toEqual([
      "user",
      '{"x":1}',
      '{"y":2}',
    ]);
    expect(r.notes).toEqual([expect.objectContaining({ kind: "part_ignored", message: 0 })]);
  });

  it("gives long and missing call ids valid ones, the same for a call and its result", async () => {
    const long = "toolu_".padEnd(90, "z");
    const r = await toResponsesInput([
      { role: "user", content: "go" },
      { role: "assistant", content: [{ type: "tool-call", toolCallId: long, toolName: "f", input: {} }] },
      {
        role: "tool",
        content: [
          { type: "tool-result", toolCallId: long, toolName: "f", output: { type: "text", value: "ok" } },
        ],
      },
    ]);
    const [, c, o] = r.items as JsonObject[];
    expect(String(c?.call_id).length).toBeLessThanOrEqual(64);
    expect(o?.call_id).toBe(c?.call_id);
    expect(r.repairs).toEqual([]);
    expect(r.notes.map((n) => n.kind)).toEqual(["call_id_renamed"]);
    expectValid(r.items);
  });
});
