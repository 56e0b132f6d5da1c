import { describe, expect, it } from "vitest";
import type { ProviderEventFrame } from "../../frames/frame.js";
import { providerFrame } from "../../frames/from-sse.js";
import type { CreateResponseBody, JsonObject } from "../../protocol/types.js";
import { createAssembly, finishAssembly, step } from "../assembler/index.js";
import { createAiSdkTranslator } from "./translator.js";

const request = { body: { model: "m", input: "hello there" } as CreateResponseBody, turn: 2 };
const frameOf = (part: JsonObject): ProviderEventFrame =>
  providerFrame(2, "event", undefined, part, undefined, undefined);

/** The events the parts translate to, and the response the assembler makes of them. */
function translate(parts: JsonObject[]) {
  const translator = createAiSdkTranslator(request);
  const events = [...parts.flatMap((p) => translator.translate(frameOf(p))), ...translator.end()];
  const assembly = createAssembly();
  for (const event of events) step(assembly, event);
  return { events, response: finishAssembly(assembly) };
}

const finish = (unified: string, usage: JsonObject | undefined = undefined): JsonObject => ({
  type: "finish",
  finishReason: { unified, raw: "end_turn" },
  usage: usage ?? {
    inputTokens: { total: 10, noCache: 8, cacheRead: 2 },
    outputTokens: { total: 4, text: 2, reasoning: 2 },
  },
});

describe("the AI SDK translator", () => {
  it("makes a reasoning item (never text), then the message, with usage from the finish part", () => {
    const { response } = translate([
      { type: "stream-start", warnings: [] },
      { type: "reasoning-start", id: "r" },
      { type: "reasoning-delta", id: "r", delta: "Let me think." },
      { type: "reasoning-end", id: "r", providerMetadata: { anthropic: { signature: "sig" } } },
      { type: "text-start", id: "t" },
      { type: "text-delta", id: "t", delta: "Hi." },
      { type: "text-end", id: "t" },
      finish("stop"),
    ]);
    expect(response.items.map((i) => i.type)).toEqual(["reasoning", "message"]);
    expect(response.items[0]).toMatchObject({ content: [{ type: "reasoning_text", text: "Let me think." }] });
    expect(response.outputText).toBe("Hi.");
    expect(response.usage).toEqual({
      input_tokens: 10,
      output_tokens: 4,
      total_tokens: 14,
      input_tokens_details: { cached_tokens: 2 },
      output_tokens_details: { reasoning_tokens: 2 },
    });
    expect(response.items[1]?.id).toBe("msg_t2_1"); // no response-metadata: ids from the turn
  });

  it("opens and closes a call given whole (no tool-input parts), and skips calls the provider executed", () => {
    const { response, events } = translate([
      { type: "response-metadata", id: "msg_9" },
      { type: "tool-input-start", id: "srv_1", toolName: "web_search", providerExecuted: true },
      { type: "tool-input-delta", id: "srv_1", delta: '{"q":1}' },
      {
        type: "tool-call",
        toolCallId: "srv_1",
        toolName: "web_search",
        input: '{"q":1}',
        providerExecuted: true,
      },
      { type: "tool-result", toolCallId: "srv_1", toolName: "web_search", result: [] },
      { type: "tool-call", toolCallId: "call_1", toolName: "get_time", input: "{}" },
      { type: "raw", rawValue: { type: "message_delta" } },
      finish("tool-calls"),
    ]);
    expect(response.calls.map((c) => [c.callId, c.itemId, c.name, c.arguments])).toEqual([
      ["call_1", "fc_msg_9_0", "get_time", "{}"],
    ]);
    expect(events.filter((e) => e.type === "response.function_call_arguments.delta")).toEqual([]);
  });

  it("a finish without counts gets an estimated usage; a stream without finish has no terminal event", () => {
    const estimated = translate([{ type: "text-delta", id: "t", delta: "Hello" }, finish("other", {})]);
    expect(estimated.response.status).toBe("completed");
    expect(estimated.response.usage).toMatchObject({ estimated: true });
    const cut = translate([{ type: "text-delta", id: "t", delta: "Hel" }]);
    expect(cut.response.terminal).toBeNull();
    expect(cut.response.outputText).toBe("Hel");
  });

  it("an error part (an APICallError's fields) fails the response with the provider's error", () => {
    const { response } = translate([
      {
        type: "error",
        error: {
          name: "AI_APICallError",
          message: "Too many requests",
          statusCode: 429,
          data: { error: { type: "rate_limit_error", message: "Slow down" } },
        },
      },
    ]);
    expect(response.status).toBe("failed");
    expect(response.error).toMatchObject({ code: "rate_limit_error", message: "Slow down" });
  });
});
