import { describe, expect, it } from "vitest";
import {
  eventObjects,
  post,
  readSse,
  streamProblems,
  terminalResponse,
} from "../../test/support/mock-sse.js";
import { validateResponseResource } from "../protocol/validate.js";
import { createMockHandler } from "./handler.js";
import type { ScenarioTurn } from "./scenario.js";

const TOOLS = [
  {
    type: "function",
    name: "read_file",
    parameters: { type: "object", properties: { path: { type: "string" } } },
  },
  { type: "function", name: "grep", description: "search", strict: false },
];

async function stream(turn: ScenarioTurn, body: Record<string, unknown> = {}) {
  const handler = createMockHandler({ scenario: { turns: [turn] }, clock: () => 1_700_000_000_000 });
  const response = await post(handler, { model: "m", input: "hi", stream: true, tools: TOOLS, ...body });
  expect(response.status).toBe(200);
  expect(response.headers.get("content-type")).toMatch(/^text\/event-stream/);
  return readSse(response.body);
}

const FEATURES: Array<[string, ScenarioTurn, Record<string, unknown>?]> = [
  ["plain text", { items: [{ type: "message", text: "Hello, wörld — ✓ 🚀 done." }] }],
  [
    "text parts, refusal and phase",
    { items: [{ type: "message", text: ["one ", "two"], refusal: "no.", phase: "commentary" }] },
  ],
  ["empty text", { items: [{ type: "message", text: "" }] }],
  [
    "function call (object arguments)",
    { items: [{ type: "function_call", name: "read_file", arguments: { path: "package.json" } }] },
  ],
  [
    "function call (raw, invalid arguments)",
    { items: [{ type: "function_call", name: "grep", arguments: '{"pattern": "x"' }] },
  ],
  [
    "two calls",
    {
      items: [
        { type: "function_call", name: "grep" },
        { type: "function_call", name: "read_file", call_id: "call_x" },
      ],
    },
  ],
  [
    "reasoning summary",
    {
      items: [
        { type: "reasoning", summary: ["First, think.", "Then act."] },
        { type: "message", text: "ok" },
      ],
    },
  ],
  [
    "reasoning with raw content",
    { items: [{ type: "reasoning", content: "raw thoughts here", summary: "s" }] },
  ],
  [
    "reasoning with encrypted content",
    { items: [{ type: "reasoning", summary: "s", encrypted_content: "enc_abc" }] },
    { include: ["reasoning.encrypted_content"] },
  ],
  ["incomplete", { items: [{ type: "message", text: "cut off mid" }], status: "incomplete" }],
  [
    "incomplete call",
    {
      items: [{ type: "function_call", name: "grep", arguments: '{"pat' }],
      status: "incomplete",
      incompleteReason: "max_output_tokens",
    },
  ],
  [
    "failed",
    {
      items: [{ type: "message", text: "partial" }],
      status: "failed",
      error: { code: "server_error", message: "boom" },
    },
  ],
  ["no items", { items: [] }],
  [
    "usage override",
    {
      items: [{ type: "message", text: "x" }],
      usage: { input_tokens: 10, output_tokens: 3, reasoning_tokens: 1 },
    },
  ],
  [
    "settings echo",
    { items: [{ type: "message", text: "x" }] },
    {
      instructions: "be brief",
      tool_choice: { type: "allowed_tools", tools: [{ type: "function", name: "grep" }] },
      text: { format: { type: "json_schema", name: "out", schema: { type: "object" } }, verbosity: "low" },
      temperature: 0.2,
      top_p: 0.9,
      parallel_tool_calls: false,
      max_tool_calls: 2,
      max_output_tokens: 100,
      metadata: { a: "b" },
      reasoning: { effort: "low" },
      store: false,
      truncation: "auto",
      service_tier: "flex",
      stream_options: { include_obfuscation: false },
      prompt_cache_key: "k",
      safety_identifier: "u1",
    },
  ],
];

describe("event sequence", () => {
  it.each(FEATURES)(
    "%s: every event and the terminal response validate, in spec order",
    async (_name, turn, body) => {
      const read = await stream(turn, body);
      expect(streamProblems(read)).toEqual([]);
    },
  );

  it("streams text in small deltas that add up to the text", async () => {
    const text = "The quick brown fox jumps over the lazy dog; supercalifragilisticexpialidocious ✓.";
    const read = await stream({ items: [{ type: "message", text }] });
    const deltas = eventObjects(read).filter((e) => e.type === "response.output_text.delta");
    expect(deltas.length).toBeGreaterThan(10);
    expect(deltas.every((d) => Array.from(String(d.delta)).length <= 12)).toBe(true);
    expect(deltas.map((d) => d.delta).join("")).toBe(text);
  });

  it("streams function-call arguments in fragments; ids are deterministic", async () => {
    const read = await stream({
      items: [{ type: "function_call", name: "read_file", arguments: { path: "src/a/b/c.ts" } }],
    });
    const events = eventObjects(read);
    const fragments = events.filter((e) => e.type === "response.function_call_arguments.delta");
    expect(fragments.length).toBeGreaterThan(2);
    expect(fragments.map((f) => f.delta).join("")).toBe('{"path":"src/a/b/c.ts"}');
    const done = events.find((e) => e.type === "response.output_item.done")?.item;
    expect(done).toEqual({
      type: "function_call",
      id: "fc_mock_0001",
      call_id: "call_mock_0001",
      name: "read_file",
      arguments: '{"path":"src/a/b/c.ts"}',
      status: "completed",
    });
    expect(terminalResponse(read).id).toBe("resp_mock_0001");
  });

  it("sends encrypted_content (in output_item.done and the terminal output) only when included", async () => {
    const turn: ScenarioTurn = { items: [{ type: "reasoning", summary: "s", encrypted_content: "enc_1" }] };
    const withInclude = await stream(turn, { include: ["reasoning.encrypted_content"] });
    const done = eventObjects(withInclude).find((e) => e.type === "response.output_item.done");
    expect(done?.item).toMatchObject({ type: "reasoning", encrypted_content: "enc_1" });
    expect((terminalResponse(withInclude).output as unknown[])[0]).toMatchObject({
      encrypted_content: "enc_1",
    });
    const without = await stream(turn);
    expect(without.text).not.toContain("enc_1");
  });

  it("ends an incomplete response with its last item incomplete and a reason", async () => {
    const read = await stream({
      items: [
        { type: "message", text: "a" },
        { type: "message", text: "b" },
      ],
      status: "incomplete",
    });
    const response = terminalResponse(read);
    expect(eventObjects(read).at(-1)?.type).toBe("response.incomplete");
    expect(response.incomplete_details).toEqual({ reason: "max_output_tokens" });
    const output = response.output as Array<{ status: string }>;
    expect(output.map((i) => i.status)).toEqual(["completed", "incomplete"]);
  });

  it("fails a failed turn with its error", async () => {
    const read = await stream({
      items: [],
      status: "failed",
      error: { code: "model_error", message: "nope" },
    });
    expect(eventObjects(read).at(-1)?.type).toBe("response.failed");
    expect(terminalResponse(read).error).toEqual({ code: "model_error", message: "nope" });
  });

  it("echoes the request's settings in a schema-valid resource with all 31 keys", async () => {
    const body = FEATURES.find(([name]) => name === "settings echo")?.[2] ?? {};
    const read = await stream({ items: [{ type: "message", text: "x" }] }, body);
    const r = terminalResponse(read);
    expect(validateResponseResource(r)).toBeUndefined();
    expect(Object.keys(r)).toHaveLength(31);
    expect(r).toMatchObject({
      created_at: 1_700_000_000,
      completed_at: 1_700_000_000,
      instructions: "be brief",
      tool_choice: { type: "allowed_tools", tools: [{ type: "function", name: "grep" }], mode: "auto" },
      text: {
        format: { type: "json_schema", name: "out", description: null, schema: null, strict: false },
        verbosity: "low",
      },
      temperature: 0.2,
      top_p: 0.9,
      parallel_tool_calls: false,
      max_tool_calls: 2,
      max_output_tokens: 100,
      metadata: { a: "b" },
      reasoning: { effort: "low", summary: null },
      store: false,
      truncation: "auto",
      service_tier: "flex",
      prompt_cache_key: "k",
      safety_identifier: "u1",
    });
    expect(r.tools).toEqual([
      {
        type: "function",
        name: "read_file",
        description: null,
        parameters: TOOLS[0]?.parameters,
        strict: true,
      },
      { type: "function", name: "grep", description: "search", parameters: null, strict: false },
    ]);
    expect(read.text).not.toContain("obfuscation");
  });

  it("pads deltas with obfuscation unless the request turns it off", async () => {
    const read = await stream({ items: [{ type: "message", text: "hello there" }] });
    const delta = eventObjects(read).find((e) => e.type === "response.output_text.delta");
    expect(typeof delta?.obfuscation).toBe("string");
  });

  it("reports usage, estimated or scripted", async () => {
    const estimated = terminalResponse(await stream({ items: [{ type: "message", text: "12345678" }] }));
    expect(estimated.usage).toMatchObject({
      output_tokens: 2,
      total_tokens: (estimated.usage as { input_tokens: number }).input_tokens + 2,
    });
    const scripted = terminalResponse(
      await stream({ items: [], usage: { input_tokens: 7, cached_tokens: 5, output_tokens: 1 } }),
    );
    expect(scripted.usage).toEqual({
      input_tokens: 7,
      input_tokens_details: { cached_tokens: 5 },
      output_tokens: 1,
      output_tokens_details: { reasoning_tokens: 0 },
      total_tokens: 8,
    });
  });

  it("answers a non-streaming request with the terminal resource", async () => {
    const handler = createMockHandler({
      scenario: { turns: [{ items: [{ type: "message", text: "hi" }] }] },
    });
    const response = await post(handler, { model: "m", input: "x" });
    expect(response.headers.get("content-type")).toBe("application/json");
    const body = (await response.json()) as Record<string, unknown>;
    expect(validateResponseResource(body)).toBeUndefined();
    expect(body).toMatchObject({
      status: "completed",
      output: [{ type: "message", content: [{ text: "hi" }] }],
    });
  });
});
