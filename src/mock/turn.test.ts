import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { post } from "../../test/support/mock-sse.js";
import { createMockHandler } from "./handler.js";
import type { Scenario } from "./scenario.js";
import { loadScenario, parseScenario } from "./scenario-load.js";
import { estimateInputTokens } from "./usage.js";

const answer = { items: [{ type: "message" as const, text: "done" }] };
const long = "x".repeat(400); // 100 tokens at 4 characters per token
const CHAT = { path: "/v1/chat/completions" };

async function error(res: Response) {
  return ((await res.json()) as { error: Record<string, unknown> }).error;
}

describe("contextWindow: context_length_exceeded past N input tokens", () => {
  it.each([
    ["/responses", (input: string) => post(handlerFor(), { model: "m", input }), "input"],
    [
      "/chat/completions",
      (input: string) =>
        post(handlerFor(), { model: "m", messages: [{ role: "user", content: input }] }, CHAT),
      "messages",
    ],
  ])("refuses an oversized request on %s with OpenAI's error shape", async (_api, send, param) => {
    const res = await send(long);
    expect(res.status).toBe(400);
    expect(await error(res)).toEqual({
      type: "invalid_request_error",
      code: "context_length_exceeded",
      param,
      message: expect.stringContaining("about 100 input tokens"),
    });
  });

  it("does not use up the turn: the compacted retry gets it, and its usage is the same estimate", async () => {
    const h = createMockHandler({ scenario: { contextWindow: 50, turns: [answer, { items: [] }] } });
    const big = await post(h, { model: "m", input: long });
    expect(big.status).toBe(400);
    const small = await post(h, { model: "m", input: "x".repeat(200) }); // 50 tokens: at the window
    expect(small.status).toBe(200);
    const body = (await small.json()) as {
      output: Array<{ content: Array<{ text: string }> }>;
      usage: { input_tokens: number };
    };
    expect(body.output[0]?.content[0]?.text).toBe("done");
    expect(body.usage.input_tokens).toBe(50);
    expect(h.requests.map((r) => r.turn)).toEqual([undefined, 0]);
  });

  it("counts the whole chain behind previous_response_id and the instructions", async () => {
    const h = createMockHandler({ scenario: { contextWindow: 30, turns: [{ ...answer, repeat: true }] } });
    const first = (await (await post(h, { model: "m", input: "y".repeat(100) })).json()) as { id: string };
    const next = await post(h, { model: "m", input: "z".repeat(20), previous_response_id: first.id });
    expect(next.status).toBe(400); // 100 + 4 ("done") + 20 characters = 31 tokens
    const instructed = await post(h, { model: "m", input: "z", instructions: "i".repeat(200) });
    expect(instructed.status).toBe(400);
  });

  it("takes a turn's own contextWindow over the scenario's", async () => {
    const h = createMockHandler({
      scenario: { contextWindow: 1000, turns: [{ ...answer, contextWindow: 10 }, answer] },
    });
    const refused = await post(h, { model: "m", messages: [{ role: "user", content: long }] }, CHAT);
    expect(refused.status).toBe(400);
    const ok = await post(h, { model: "m", messages: [{ role: "user", content: "short" }] }, CHAT);
    expect(ok.status).toBe(200);
    const next = await post(h, { model: "m", messages: [{ role: "user", content: long }] }, CHAT);
    expect(next.status).toBe(200); // turn 1 has the scenario's window of 1000
  });

  it("examples/context-overflow.yaml refuses a long chat history and answers the compacted one", async () => {
    const h = createMockHandler({
      scenario: await loadScenario(join(import.meta.dirname, "examples", "context-overflow.yaml")),
    });
    const history = Array.from({ length: 20 }, (_, i) => ({
      role: i % 2 === 0 ? "user" : "assistant",
      content: `turn ${i} ${"word ".repeat(10)}`,
    }));
    const full = await post(
      h,
      { model: "m", messages: [...history, { role: "user", content: "go on" }] },
      CHAT,
    );
    expect(await error(full)).toMatchObject({ code: "context_length_exceeded", param: "messages" });
    const compacted = await post(
      h,
      { model: "m", messages: [{ role: "user", content: "summary of 20 turns; go on" }] },
      CHAT,
    );
    const body = (await compacted.json()) as { choices: Array<{ message: { content: string } }> };
    expect(body.choices[0]?.message.content).toBe("Done: the compacted history fits.");
  });

  it("is validated: a window must be a positive integer", () => {
    expect(() => parseScenario({ contextWindow: 0, turns: [answer] })).toThrow(/contextWindow/);
    expect(() => parseScenario({ turns: [{ ...answer, contextWindow: 1.5 }] })).toThrow(
      /turns\[0\]\.contextWindow/,
    );
  });

  it("estimates 4 characters per token over instructions and item texts", () => {
    const context = [
      { type: "message", role: "user", content: [{ type: "input_text", text: "abcd" }] },
      { type: "function_call", call_id: "c", name: "read", arguments: "{}" },
      { type: "function_call_output", call_id: "c", output: "12345678" },
    ];
    expect(estimateInputTokens(context, "wxyz")).toBe(Math.ceil((4 + 4 + 2 + 8 + 4) / 4));
  });
});

function handlerFor() {
  const scenario: Scenario = { contextWindow: 99, turns: [answer] };
  return createMockHandler({ scenario });
}
