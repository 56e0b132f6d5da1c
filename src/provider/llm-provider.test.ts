import { describe, expect, it } from "vitest";
import { z } from "zod";
import { createScriptedProvider } from "../../test/support/scripted.js";
import { EddyError } from "../errors.js";
import type { JsonObject } from "../protocol/types.js";
import { createLLMProvider } from "./llm-provider.js";

describe("LLMProvider (docs/decisions.md #16)", () => {
  it("generateResponse: instructions + message → text, no tools", async () => {
    const provider = createScriptedProvider([{ items: [{ type: "message", text: "Paris." }] }]);
    const llm = createLLMProvider({ provider, model: "m" });
    expect(await llm.generateResponse("Be terse.", "Capital of France?")).toBe("Paris.");
    expect(provider.requests[0]).toMatchObject({
      model: "m",
      instructions: "Be terse.",
      // A user message, never a bare string (a server splits string input per character).
      input: [
        { type: "message", role: "user", content: [{ type: "input_text", text: "Capital of France?" }] },
      ],
      stream: true,
    });
    expect(provider.requests[0]?.tools).toBeUndefined();
  });

  it("generateResponsesTurn: start with tools, then continue with outputs only", async () => {
    const provider = createScriptedProvider([
      { items: [{ type: "function_call", name: "lookup", arguments: '{"q":"x"}', call_id: "call_1" }] },
      { items: [{ type: "message", text: "It is x." }] },
    ]);
    const llm = createLLMProvider({ provider, model: "m" });
    const tools = [
      {
        name: "lookup",
        description: "Look up",
        parameters: { type: "object", properties: { q: { type: "string" } } },
      },
    ];
    const first = await llm.generateResponsesTurn({ userInput: "find x", tools });
    expect(first.toolCalls).toEqual([{ id: "call_1", name: "lookup", arguments: '{"q":"x"}' }]);
    expect(first.responseId).toBe("resp_1");
    expect(provider.requests[0]?.input).toEqual([
      { type: "message", role: "user", content: [{ type: "input_text", text: "find x" }] },
    ]);
    const second = await llm.generateResponsesTurn({
      previousResponseId: first.responseId,
      functionOutputs: { call_1: "x=1" },
    });
    expect(second).toEqual({ assistantText: "It is x.", toolCalls: [], responseId: "resp_2" });
    const follow = provider.requests[1] as JsonObject;
    expect(follow.previous_response_id).toBe("resp_1");
    expect(follow.input).toEqual([{ type: "function_call_output", call_id: "call_1", output: "x=1" }]);
    expect(follow.tools).toBeUndefined(); // the turn shape of docs/decisions.md #16: tools at conversation start only
  });

  it("generateObject: parsed and validated structured output", async () => {
    const provider = createScriptedProvider([
      { items: [{ type: "message", text: '{"approved":true,"reason":"ok"}' }] },
    ]);
    const llm = createLLMProvider({ provider, model: "m" });
    const schema = z.object({ approved: z.boolean(), reason: z.string() });
    const decision = await llm.generateObject({ input: "decide", name: "Decision", schema });
    expect(decision).toEqual({ approved: true, reason: "ok" });
    expect((provider.requests[0] as JsonObject).text).toMatchObject({
      format: { type: "json_schema", name: "Decision", strict: true },
    });
  });

  it("generateObject: a mismatch is a typed error naming the problem", async () => {
    const provider = createScriptedProvider([{ items: [{ type: "message", text: '{"approved":"yes"}' }] }]);
    const llm = createLLMProvider({ provider, model: "m" });
    const schema = { type: "object", properties: { approved: { type: "boolean" } }, required: ["approved"] };
    const error = await llm
      .generateObject({ input: "decide", name: "Decision", schema })
      .catch((e: unknown) => e);
    expect(EddyError.isInstance(error) && error.code).toBe("output_schema_mismatch");
    expect((error as Error).message).toMatch(/approved/);
  });

  it("throws the provider's typed error on failure", async () => {
    const provider = createScriptedProvider([
      { http: { status: 400, body: { error: { message: "bad", code: "bad_request" } } } },
    ]);
    const llm = createLLMProvider({ provider, model: "m" });
    const error = await llm.generateResponse("i", "m").catch((e: unknown) => e);
    expect((error as { frameCode?: string }).frameCode).toBe("bad_request");
  });
});
