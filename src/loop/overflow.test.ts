import { describe, expect, it } from "vitest";
import { ToolHistoryManager } from "../history/tool-history.js";
import type { JsonObject } from "../protocol/types.js";
import { finishAssembly } from "../provider/assembler/finish.js";
import { createAssembly } from "../provider/assembler/state.js";
import { ProviderError } from "../provider/errors.js";
import type { ProviderOutcome } from "../provider/provider.js";
import {
  compactAfterOverflow,
  isContextOverflow,
  OVERFLOW_WINDOW_SHARE,
  overflowBudget,
  overflowError,
} from "./overflow.js";

function failed(providerCode: string | null, message = "too long"): ProviderOutcome {
  const error = new ProviderError({
    kind: "http",
    code: "provider_http",
    message,
    retryable: false,
    status: 400,
    providerCode,
  });
  return { ok: false, error, response: finishAssembly(createAssembly()) };
}

function incomplete(reason: string): ProviderOutcome {
  const response = {
    ...finishAssembly(createAssembly()),
    terminal: "incomplete" as const,
    incompleteReason: reason,
  };
  return { ok: true, response };
}

describe("isContextOverflow", () => {
  it.each([
    ["HTTP 400 context_length_exceeded", failed("context_length_exceeded"), true],
    ["a context_window_exceeded code", failed("context_window_exceeded"), true],
    ["another 400", failed("invalid_value"), false],
    ["no code", failed(null), false],
    ["incomplete for the context", incomplete("context_length_exceeded"), true],
    ["incomplete for max_input_tokens", incomplete("max_input_tokens"), true],
    ["incomplete for max_output_tokens", incomplete("max_output_tokens"), false],
  ])("%s → %s", (_label, outcome, expected) => {
    expect(isContextOverflow(outcome)).toBe(expected);
  });
});

describe("overflowBudget", () => {
  it.each([
    [
      "OpenAI's message",
      "This model's maximum context length is 128,000 tokens. However, your messages resulted in 130,512 tokens.",
      Math.floor(128_000 * OVERFLOW_WINDOW_SHARE),
    ],
    [
      "the mock's message",
      "Your input exceeds the context window of this model: about 550 input tokens (the mock estimates 4 characters per token) for a window of 400.",
      Math.floor(400 * OVERFLOW_WINDOW_SHARE),
    ],
    [
      "a context window named plainly",
      "context window is 8192 tokens",
      Math.floor(8192 * OVERFLOW_WINDOW_SHARE),
    ],
    ["no window named: half of now", "too long", 5_000],
  ])("%s", (_label, message, expected) => {
    expect(overflowBudget(message, 10_000)).toBe(expected);
  });
});

describe("overflowError", () => {
  it("says what was tried and what the provider said, in one sentence", () => {
    const outcome = failed("context_length_exceeded", "HTTP 400: too long.");
    expect(overflowError(outcome, undefined).message).toBe(
      "the conversation is longer than the model's context window and nothing could be compacted (only the system messages, the latest prompt and the turn in progress are left): HTTP 400: too long. Start a new conversation, or use a model with a larger context window.",
    );
    const after = overflowError(outcome, {
      trigger: "overflow",
      method: "dropped",
      items_removed: 4,
      calls_removed: 2,
      tokens_before: 900,
      tokens_after: 500,
      tokenizer: "estimate",
    });
    expect(after).toMatchObject({ code: "context_length_exceeded" });
    expect(after.message).toContain(
      "it still does not fit after compacting (dropped: 900 → 500 tokens, 4 items removed)",
    );
  });
});

describe("compactAfterOverflow with a server that answers the compaction with nothing", () => {
  it("compacts locally instead of sending no input at all (found by a probe: the prompt was gone, the run went on)", async () => {
    const user = (text: string): JsonObject => ({
      type: "message",
      role: "user",
      content: [{ type: "input_text", text }],
    });
    const answer = (text: string): JsonObject => ({
      type: "message",
      role: "assistant",
      content: [{ type: "output_text", text }],
    });
    const items = [user("x".repeat(4_000)), answer("y".repeat(4_000)), user("the latest prompt")];
    const provider = {
      capabilities: { compaction: true },
      compact: async () => ({ output: [], usage: null }),
    } as unknown as Parameters<typeof compactAfterOverflow>[0]["provider"];
    const result = await compactAfterOverflow({
      provider,
      model: "m",
      instructions: undefined,
      history: new ToolHistoryManager(),
      items,
      outcome: failed("context_length_exceeded", "too long"),
      keepItemIds: false,
      signal: new AbortController().signal,
    });
    expect(result?.compaction.method).not.toBe("server_compact");
    expect(result?.compaction.server_error).toMatch(/answered with no items/);
    expect(JSON.stringify(result?.items)).toContain("the latest prompt");
  });
});
