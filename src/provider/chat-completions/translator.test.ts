import { describe, expect, it } from "vitest";
import type { ProviderEventFrame } from "../../frames/frame.js";
import { providerFrame } from "../../frames/from-sse.js";
import type { CreateResponseBody, JsonObject } from "../../protocol/types.js";
import { createAssembly, finishAssembly, step } from "../assembler/index.js";
import { createChatTranslator } from "./translator.js";

const DONE = "[DONE]";
type Wire = JsonObject | typeof DONE;

/** A chunk with one choice. */
const c = (delta: JsonObject, finish_reason: string | null = null, extra: JsonObject = {}): JsonObject => ({
  id: "chatcmpl-1",
  object: "chat.completion.chunk",
  model: "m1",
  choices: [{ index: 0, delta, finish_reason }],
  ...extra,
});
const usageChunk = (prompt: number, completion: number, extra: JsonObject = {}): JsonObject => ({
  id: "chatcmpl-1",
  object: "chat.completion.chunk",
  choices: [],
  usage: {
    prompt_tokens: prompt,
    completion_tokens: completion,
    total_tokens: prompt + completion,
    ...extra,
  },
});
const frag = (index: number, fn: JsonObject, id?: string): JsonObject => ({
  tool_calls: [{ index, ...(id === undefined ? {} : { id, type: "function" }), function: fn }],
});

function frameOf(wire: Wire): ProviderEventFrame {
  return wire === DONE
    ? providerFrame(0, "done", undefined, undefined, DONE, undefined)
    : providerFrame(0, "event", undefined, wire, undefined, undefined);
}

/**
 * Feeds chunks through a translator into an assembly, as the assembling stream does. `callsAfter[i]`
 * = calls promoted once chunk i was taken; `end` says whether the body's end is signalled.
 */
function run(chunks: readonly Wire[], options: { end?: boolean; body?: Partial<CreateResponseBody> } = {}) {
  const translator = createChatTranslator({
    body: { model: "m", input: "hello there", stream: true, ...options.body } as CreateResponseBody,
    turn: 3,
  });
  const state = createAssembly();
  const events: JsonObject[] = [];
  const callsAfter: number[] = [];
  const feed = (batch: readonly JsonObject[]) => {
    for (const e of batch) {
      events.push(e);
      step(state, e);
    }
  };
  for (const chunk of chunks) {
    feed(translator.translate(frameOf(chunk)));
    callsAfter.push(state.calls.length);
  }
  if (options.end !== false) feed(translator.end());
  return { events, callsAfter, state, response: finishAssembly(state) };
}

const types = (events: JsonObject[]) => events.map((e) => e.type);
const callSummary = (r: ReturnType<typeof run>) =>
  r.response.calls.map((x) => [x.callId, x.name, x.arguments]);

describe("chat translator: text", () => {
  it("streams a message and completes with the reported usage", () => {
    const r = run([
      c({ role: "assistant", content: "" }),
      c({ content: "Hel" }),
      c({ content: "lo!" }),
      c({}, "stop"),
      usageChunk(12, 3, { prompt_tokens_details: { cached_tokens: 4 } }),
      DONE,
    ]);
    expect(types(r.events)).toEqual([
      "response.created",
      "response.output_item.added",
      "response.output_text.delta",
      "response.output_text.delta",
      "response.output_item.done",
      "response.completed",
    ]);
    expect(r.response).toMatchObject({
      id: "chatcmpl-1",
      model: "m1",
      terminal: "completed",
      outputText: "Hello!",
    });
    expect(r.response.usage).toEqual({
      input_tokens: 12,
      output_tokens: 3,
      total_tokens: 15,
      input_tokens_details: { cached_tokens: 4 },
      output_tokens_details: { reasoning_tokens: 0 },
    });
    expect(r.state.outputEmitted).toBe(true);
  });

  it("waits for the usage chunk after the finish chunk; [DONE] ends a finish without usage", () => {
    const waiting = run([c({ content: "x" }), c({}, "stop")], { end: false });
    expect(waiting.state.terminal).toBeNull();
    const done = run([c({ content: "x" }), c({}, "stop"), DONE], { end: false });
    expect(done.state.terminal).toBe("completed");
  });

  it("the end of the body ends a finished choice (no [DONE], no usage)", () => {
    expect(run([c({ content: "x" }), c({}, "stop")]).state.terminal).toBe("completed");
  });

  it("estimates usage, marked so, when the server reports none", () => {
    const r = run([c({ content: "12345678" }), c({}, "stop"), DONE], { body: { input: "abcdefgh" } });
    expect(r.response.usage).toMatchObject({
      input_tokens: 2,
      output_tokens: 2,
      total_tokens: 4,
      estimated: true,
    });
  });

  it("takes usage from the finish chunk itself, and Groq's x_groq.usage", () => {
    const same = run([c({ content: "x" }, "stop", { usage: { prompt_tokens: 5, completion_tokens: 1 } })], {
      end: false,
    });
    expect(same.state.terminal).toBe("completed");
    expect(same.response.usage).toMatchObject({ input_tokens: 5, output_tokens: 1, total_tokens: 6 });
    const groq = run(
      [
        c({ content: "x" }),
        c({}, "stop", { x_groq: { usage: { prompt_tokens: 7, completion_tokens: 2, total_tokens: 9 } } }),
      ],
      {
        end: false,
      },
    );
    expect(groq.response.usage).toMatchObject({ input_tokens: 7, output_tokens: 2, total_tokens: 9 });
  });

  it("reads DeepSeek's cache hits as cached tokens", () => {
    const r = run([c({ content: "x" }), c({}, "stop"), usageChunk(10, 1, { prompt_cache_hit_tokens: 6 })]);
    expect(r.response.usage?.input_tokens_details.cached_tokens).toBe(6);
  });

  it("keeps a refusal as a refusal part", () => {
    const r = run([c({ refusal: "I can't" }), c({ refusal: " help." }), c({}, "stop"), DONE]);
    expect(r.response.items[0]).toMatchObject({
      type: "message",
      content: [{ type: "refusal", refusal: "I can't help." }],
    });
    expect(r.response.outputText).toBe("");
  });
});

describe("chat translator: reasoning", () => {
  it.each(["reasoning_content", "reasoning"])("%s deltas become a reasoning item, never text", (field) => {
    const r = run([
      c({ [field]: "Let me " }),
      c({ [field]: "think." }),
      c({ content: "42" }),
      c({}, "stop"),
      DONE,
    ]);
    expect(r.response.outputText).toBe("42");
    expect(r.response.items.map((i) => i.type)).toEqual(["reasoning", "message"]);
    expect(r.response.items[0]).toMatchObject({
      content: [{ type: "reasoning_text", text: "Let me think." }],
    });
    expect(r.events.filter((e) => e.type === "response.output_text.delta").map((e) => e.delta)).toEqual([
      "42",
    ]);
  });

  it("a delta with both fields (vLLM sends reasoning beside reasoning_content) counts once", () => {
    const r = run([c({ reasoning_content: "a", reasoning: "a" }), c({}, "stop"), DONE]);
    expect(r.response.items[0]).toMatchObject({ content: [{ text: "a" }] });
  });
});

describe("chat translator: tool calls", () => {
  it("assembles a call from fragments: id and name first, arguments concatenated", () => {
    const r = run([
      c(frag(0, { name: "read_file", arguments: "" }, "call_a")),
      c(frag(0, { arguments: '{"pa' })),
      c(frag(0, { arguments: 'th":"x"}' })),
      c({}, "tool_calls"),
      DONE,
    ]);
    expect(callSummary(r)).toEqual([["call_a", "read_file", '{"path":"x"}']]);
    expect(r.response.terminal).toBe("completed");
    expect(r.response.items[0]).toMatchObject({ type: "function_call", status: "completed" });
  });

  it("promotes a call when the next index starts (its arguments are whole), the last when the choice finishes", () => {
    const r = run([
      c(frag(0, { name: "a", arguments: '{"x":1}' }, "call_a")),
      c(frag(1, { name: "b", arguments: "" }, "call_b")),
      c(frag(1, { arguments: '{"y":2}' })),
      c({}, "tool_calls"),
      DONE,
    ]);
    expect(r.callsAfter).toEqual([0, 1, 1, 2, 2]);
    expect(callSummary(r)).toEqual([
      ["call_a", "a", '{"x":1}'],
      ["call_b", "b", '{"y":2}'],
    ]);
  });

  it("keeps interleaved calls apart by index and never cuts one short", () => {
    const r = run([
      c(frag(0, { name: "a", arguments: '{"x":' }, "call_a")),
      c(frag(1, { name: "b", arguments: '{"y":' }, "call_b")),
      c(frag(0, { arguments: "1}" })),
      c(frag(1, { arguments: "2}" })),
      c({}, "tool_calls"),
    ]);
    expect(r.callsAfter).toEqual([0, 0, 0, 0, 2]);
    expect(callSummary(r)).toEqual([
      ["call_a", "a", '{"x":1}'],
      ["call_b", "b", '{"y":2}'],
    ]);
  });

  it("tolerates the id and name repeated on every fragment", () => {
    const r = run([
      c(frag(0, { name: "a", arguments: '{"x"' }, "call_a")),
      c(frag(0, { name: "a", arguments: ":1}" }, "call_a")),
      c({}, "tool_calls"),
    ]);
    expect(callSummary(r)).toEqual([["call_a", "a", '{"x":1}']]);
  });

  it("takes several calls with their arguments in one piece, in one chunk", () => {
    const r = run([
      c({
        tool_calls: [
          { index: 0, id: "call_a", type: "function", function: { name: "a", arguments: "{}" } },
          { index: 1, id: "call_b", type: "function", function: { name: "b", arguments: '{"q":true}' } },
        ],
      }),
      c({}, "tool_calls"),
    ]);
    expect(r.callsAfter).toEqual([1, 2]);
    expect(callSummary(r)).toEqual([
      ["call_a", "a", "{}"],
      ["call_b", "b", '{"q":true}'],
    ]);
  });

  it("makes up call ids (unique per turn) for a server that sends none, and takes one that comes later", () => {
    const none = run([c(frag(0, { name: "a", arguments: "{}" })), c({}, "tool_calls")]);
    expect(none.response.calls[0]?.callId).toBe("call_chatcmpl-1_0");
    const late = run([
      c(frag(0, { name: "a", arguments: "{" })),
      c(frag(0, { arguments: "}" }, "call_real")),
      c({}, "tool_calls"),
    ]);
    expect(late.response.calls[0]?.callId).toBe("call_real");
  });

  it("matches fragments without index by id (servers that leave index out)", () => {
    const r = run([
      c({ tool_calls: [{ id: "call_a", function: { name: "a", arguments: "{}" } }] }),
      c({ tool_calls: [{ id: "call_b", function: { name: "b", arguments: "{}" } }] }),
      c({}, "tool_calls"),
    ]);
    expect(callSummary(r)).toEqual([
      ["call_a", "a", "{}"],
      ["call_b", "b", "{}"],
    ]);
  });

  it("text before the calls stays one message", () => {
    const r = run([
      c({ content: "Reading." }),
      c(frag(0, { name: "a", arguments: "{}" }, "call_a")),
      c({}, "tool_calls"),
    ]);
    expect(r.response.items.map((i) => i.type)).toEqual(["message", "function_call"]);
    expect(r.response.outputText).toBe("Reading.");
  });
});

describe("chat translator: how a response ends", () => {
  it("length: incomplete, and a call it cut short never runs", () => {
    const r = run([
      c({ content: "partial" }),
      c(frag(0, { name: "a", arguments: '{"x":' }, "call_a")),
      c({}, "length"),
      DONE,
    ]);
    expect(r.response.terminal).toBe("incomplete");
    expect(r.response.incompleteReason).toBe("max_output_tokens");
    expect(r.response.calls).toEqual([]);
    expect(r.state.incompleteCalls).toEqual([1]);
    expect(r.response.outputText).toBe("partial");
  });

  it("content_filter: failed with that code", () => {
    const r = run([c({ content: "so" }), c({}, "content_filter"), DONE]);
    expect(r.response.terminal).toBe("failed");
    expect(r.response.error).toMatchObject({ code: "content_filter" });
  });

  it("an error chunk fails the response like an error event", () => {
    const r = run([
      c({ content: "so far" }),
      { error: { message: "upstream overloaded", type: "server_error", code: "overloaded", param: null } },
    ]);
    expect(r.state.terminal).toBe("error");
    expect(r.response.error).toEqual({
      code: "overloaded",
      message: "upstream overloaded",
      type: "server_error",
      param: null,
    });
    expect(r.response.outputText).toBe("so far");
  });

  it("an error chunk with a string error or a numeric code", () => {
    expect(run([{ error: "model not loaded" }]).response.error).toMatchObject({
      message: "model not loaded",
    });
    expect(run([{ error: { message: "busy", code: 503 } }]).response.error).toMatchObject({ code: "503" });
  });

  it("a stream that ends without finish_reason has no terminal event (truncated)", () => {
    const r = run([c({ content: "cut" }), c(frag(0, { name: "a", arguments: "{}" }, "call_a")), DONE]);
    expect(r.state.terminal).toBeNull();
    expect(r.response.calls).toEqual([]);
    expect(r.response.outputText).toBe("cut");
  });

  it("chunks after the finish are ignored; [DONE] after the terminal adds nothing", () => {
    const r = run([
      c({ content: "a" }, "stop", { usage: { prompt_tokens: 1, completion_tokens: 1 } }),
      c({ content: "b" }),
      DONE,
    ]);
    expect(r.response.outputText).toBe("a");
    expect(types(r.events).filter((t) => t === "response.completed")).toHaveLength(1);
  });

  it("ignores pings, invalid JSON and choices other than the first", () => {
    const translator = createChatTranslator({
      body: { model: "m", input: "x" } as CreateResponseBody,
      turn: 0,
    });
    expect(translator.translate(providerFrame(0, "empty", undefined, undefined, "", undefined))).toEqual([]);
    expect(
      translator.translate(providerFrame(0, "invalid_json", undefined, undefined, "{", undefined)),
    ).toEqual([]);
    const r = run([
      { id: "x", choices: [{ index: 1, delta: { content: "other" } }] },
      c({ content: "mine" }, "stop"),
      DONE,
    ]);
    expect(r.response.outputText).toBe("mine");
  });
});

describe("chat translator: a whole chat.completion (a server that ignored stream: true)", () => {
  it("is one chunk that ends at once", () => {
    const r = run(
      [
        {
          id: "chatcmpl-9",
          object: "chat.completion",
          model: "m9",
          choices: [
            {
              index: 0,
              message: {
                role: "assistant",
                content: "Let me look.",
                reasoning_content: "hmm",
                tool_calls: [
                  {
                    id: "call_1",
                    type: "function",
                    function: { name: "read_file", arguments: '{"path":"a"}' },
                  },
                ],
              },
              finish_reason: "tool_calls",
            },
          ],
          usage: { prompt_tokens: 20, completion_tokens: 8, total_tokens: 28 },
        },
      ],
      { end: false },
    );
    expect(r.response).toMatchObject({ id: "chatcmpl-9", terminal: "completed", outputText: "Let me look." });
    expect(r.response.items.map((i) => i.type)).toEqual(["reasoning", "message", "function_call"]);
    expect(callSummary(r)).toEqual([["call_1", "read_file", '{"path":"a"}']]);
    expect(r.response.usage).toMatchObject({ input_tokens: 20, output_tokens: 8 });
  });

  it("without finish_reason or usage it still completes, with estimated usage", () => {
    const r = run(
      [
        {
          id: "c",
          object: "chat.completion",
          choices: [{ index: 0, message: { role: "assistant", content: "hi" } }],
        },
      ],
      {
        end: false,
      },
    );
    expect(r.response.terminal).toBe("completed");
    expect(r.response.usage).toMatchObject({ estimated: true });
  });
});

describe("chat translator: linear in the number of fragments (docs/pitfalls.md #64)", () => {
  /** Runs `chunks`, counting the JSON.parse calls made meanwhile (a counter, not a spy: no call kept). */
  function parsesDuring(chunks: readonly Wire[]): { parses: number; r: ReturnType<typeof run> } {
    const parse = JSON.parse;
    let parses = 0;
    JSON.parse = (...args: Parameters<typeof JSON.parse>) => {
      parses++;
      return parse(...args);
    };
    try {
      return { r: run(chunks), parses };
    } finally {
      JSON.parse = parse;
    }
  }

  // Each call's arguments stay open ("{"), so each stays a candidate for closing when a later call
  // starts. Checking them all again at every new call parsed N²/2 times (100k fragments: minutes).
  const N = 1000;
  it.each([
    ["with index", (i: number) => frag(i, { name: "a", arguments: "{" }, `call_${i}`)],
    [
      "without index, matched by id",
      (i: number) => ({ tool_calls: [{ id: `call_${i}`, function: { name: "a", arguments: "{" } }] }),
    ],
  ])("%s: N open calls cost a bounded number of JSON.parse calls", (_label, fragment) => {
    const chunks: Wire[] = [];
    for (let i = 0; i < N; i++) chunks.push(c(fragment(i)));
    chunks.push(c({}, "tool_calls"));
    const { r, parses } = parsesDuring(chunks);
    expect(r.response.calls).toHaveLength(N);
    expect(r.response.calls.at(-1)?.callId).toBe(`call_${N - 1}`);
    expect(parses).toBeLessThan(2 * N);
  });

  it("a call whose arguments are a bare scalar is closed when the choice finishes, not when the next call starts", () => {
    // "1" could still become "12": only a whole object or array closes a call early.
    const r = run([
      c(frag(0, { name: "a", arguments: "1" }, "call_a")),
      c(frag(1, { name: "b", arguments: "{}" }, "call_b")),
      c({}, "tool_calls"),
    ]);
    expect(r.callsAfter).toEqual([0, 0, 2]);
    expect(callSummary(r)).toEqual([
      ["call_a", "a", "1"],
      ["call_b", "b", "{}"],
    ]);
  });
});
