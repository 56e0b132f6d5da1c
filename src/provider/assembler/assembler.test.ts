import { afterEach, describe, expect, it, vi } from "vitest";
import type { JsonObject } from "../../protocol/types.js";
import { createAssembly, finishAssembly, step } from "./index.js";

function assemble(events: JsonObject[]) {
  const state = createAssembly();
  for (const e of events) step(state, e);
  return { state, response: finishAssembly(state) };
}

const created = (id = "resp_1"): JsonObject => ({
  type: "response.created",
  response: { id, status: "in_progress", output: [] },
});
const completed = (
  output: JsonObject[] = [],
  usage: JsonObject | null = null,
  id = "resp_1",
): JsonObject => ({
  type: "response.completed",
  response: { id, status: "completed", output, usage },
});
const fcAdded = (index: number, id: string, callId: string | undefined, name: string): JsonObject => ({
  type: "response.output_item.added",
  output_index: index,
  item: {
    type: "function_call",
    id,
    ...(callId === undefined ? {} : { call_id: callId }),
    name,
    arguments: "",
    status: "in_progress",
  },
});
const argsDelta = (index: number, itemId: string, delta: string): JsonObject => ({
  type: "response.function_call_arguments.delta",
  item_id: itemId,
  output_index: index,
  delta,
});
const argsDone = (index: number, itemId: string, args: string): JsonObject => ({
  type: "response.function_call_arguments.done",
  item_id: itemId,
  output_index: index,
  arguments: args,
});
const fcDone = (
  index: number,
  id: string,
  callId: string | undefined,
  name: string,
  args: string,
  status = "completed",
): JsonObject => ({
  type: "response.output_item.done",
  output_index: index,
  item: {
    type: "function_call",
    id,
    ...(callId === undefined ? {} : { call_id: callId }),
    name,
    arguments: args,
    status,
  },
});
const textDelta = (index: number, itemId: string, delta: string): JsonObject => ({
  type: "response.output_text.delta",
  item_id: itemId,
  output_index: index,
  content_index: 0,
  delta,
});
const msgAdded = (index: number, id: string): JsonObject => ({
  type: "response.output_item.added",
  output_index: index,
  item: { type: "message", id, role: "assistant", status: "in_progress", content: [] },
});
const msgDone = (index: number, id: string, text: string): JsonObject => ({
  type: "response.output_item.done",
  output_index: index,
  item: {
    type: "message",
    id,
    role: "assistant",
    status: "completed",
    content: [{ type: "output_text", text, annotations: [] }],
  },
});

describe("response assembler: function calls (docs/decisions.md #3)", () => {
  it("assembles a streamed call and promotes it at output_item.done", () => {
    const state = createAssembly();
    for (const e of [
      created(),
      fcAdded(0, "fc_1", "call_1", "get_weather"),
      argsDelta(0, "fc_1", '{"location":'),
      argsDelta(0, "fc_1", '"SF"}'),
    ])
      step(state, e);
    expect(state.calls).toHaveLength(0); // not complete before its done event
    step(state, fcDone(0, "fc_1", "call_1", "get_weather", '{"location":"SF"}'));
    expect(state.calls).toEqual([
      expect.objectContaining({
        callId: "call_1",
        itemId: "fc_1",
        name: "get_weather",
        arguments: '{"location":"SF"}',
        outputIndex: 0,
      }),
    ]);
  });

  it.each([
    [
      "done item wins",
      [argsDelta(0, "fc_1", '{"a":'), argsDone(0, "fc_1", '{"a":2}'), fcDone(0, "fc_1", "c", "f", '{"a":3}')],
      '{"a":3}',
    ],
    [
      "arguments.done when the done item has none",
      [argsDelta(0, "fc_1", '{"a":'), argsDone(0, "fc_1", '{"a":2}'), fcDone(0, "fc_1", "c", "f", "")],
      '{"a":2}',
    ],
    [
      "deltas when nothing else (provider sends less in done)",
      [argsDelta(0, "fc_1", '{"a":'), argsDelta(0, "fc_1", "1}"), fcDone(0, "fc_1", "c", "f", "")],
      '{"a":1}',
    ],
    [
      "args only in arguments.done, no deltas (docs/pitfalls.md S8)",
      [argsDone(0, "fc_1", '{"q":"x"}'), fcDone(0, "fc_1", "c", "f", "")],
      '{"q":"x"}',
    ],
    ["args only in the done item", [fcDone(0, "fc_1", "c", "f", '{"q":"y"}')], '{"q":"y"}'],
    ["empty arguments (zero-arg tool, docs/pitfalls.md S12)", [fcDone(0, "fc_1", "c", "get_time", "")], ""],
  ])("arguments precedence: %s", (_label, events, expected) => {
    const { state } = assemble([created(), fcAdded(0, "fc_1", "c", "f"), ...events]);
    expect(state.calls[0]?.arguments).toBe(expected);
  });

  it("falls back to the item id when there is no call_id", () => {
    const { state } = assemble([
      created(),
      fcAdded(0, "fc_9", undefined, "f"),
      fcDone(0, "fc_9", undefined, "f", "{}"),
    ]);
    expect(state.calls[0]?.callId).toBe("fc_9");
    expect(state.calls[0]?.item.call_id).toBe("fc_9");
  });

  it("takes call_id from the added item when done lacks it", () => {
    const { state } = assemble([
      created(),
      fcAdded(0, "fc_1", "call_x", "f"),
      fcDone(0, "fc_1", undefined, "f", "{}"),
    ]);
    expect(state.calls[0]?.callId).toBe("call_x");
  });

  it("keys concurrent calls by item_id / output_index (docs/pitfalls.md S11)", () => {
    const { state } = assemble([
      created(),
      fcAdded(0, "fc_a", "call_a", "weather"),
      fcAdded(1, "fc_b", "call_b", "time"),
      argsDelta(1, "fc_b", '{"tz":'),
      argsDelta(0, "fc_a", '{"city":'),
      argsDelta(0, "fc_a", '"Rome"}'),
      argsDelta(1, "fc_b", '"UTC"}'),
      fcDone(1, "fc_b", "call_b", "time", ""),
      fcDone(0, "fc_a", "call_a", "weather", ""),
      completed(),
    ]);
    expect(state.calls.map((c) => [c.callId, c.name, c.arguments])).toEqual([
      ["call_b", "time", '{"tz":"UTC"}'],
      ["call_a", "weather", '{"city":"Rome"}'],
    ]);
  });

  it("accepts deltas that arrive before output_item.added (docs/pitfalls.md #27)", () => {
    const { state } = assemble([
      created(),
      argsDelta(0, "fc_1", '{"a"'),
      fcAdded(0, "fc_1", "call_1", "f"),
      argsDelta(0, "fc_1", ":1}"),
      fcDone(0, "fc_1", "call_1", "f", ""),
    ]);
    expect(state.calls[0]).toMatchObject({ name: "f", callId: "call_1", arguments: '{"a":1}' });
  });

  it("ignores deltas after the item closed (docs/pitfalls.md #30)", () => {
    const { state, response } = assemble([
      created(),
      msgAdded(0, "m"),
      textDelta(0, "m", "ab"),
      msgDone(0, "m", "ab"),
      textDelta(0, "m", "b"),
      completed(),
    ]);
    expect(response.outputText).toBe("ab");
    expect(state.items.get(0)?.parts.get(0)?.streamed).toBe("ab");
  });

  it("interleaves text and calls", () => {
    const { state, response } = assemble([
      created(),
      msgAdded(0, "m"),
      textDelta(0, "m", "Let me check. "),
      fcAdded(1, "fc_1", "call_1", "f"),
      textDelta(0, "m", "One moment."),
      argsDelta(1, "fc_1", "{}"),
      msgDone(0, "m", "Let me check. One moment."),
      fcDone(1, "fc_1", "call_1", "f", "{}"),
      completed(),
    ]);
    expect(response.outputText).toBe("Let me check. One moment.");
    expect(state.calls).toHaveLength(1);
    expect(response.items.map((i) => i.type)).toEqual(["message", "function_call"]);
  });

  it("never promotes a call whose item ended incomplete", () => {
    const { state, response } = assemble([
      created(),
      fcAdded(0, "fc_1", "call_1", "write"),
      argsDelta(0, "fc_1", '{"content":"abc'),
      fcDone(0, "fc_1", "call_1", "write", '{"content":"abc', "incomplete"),
      {
        type: "response.incomplete",
        response: {
          id: "resp_1",
          status: "incomplete",
          incomplete_details: { reason: "max_output_tokens" },
          output: [],
        },
      },
    ]);
    expect(state.calls).toEqual([]);
    expect(response.terminal).toBe("incomplete");
    expect(response.incompleteReason).toBe("max_output_tokens");
  });

  it("never promotes a call cut off by the end of the stream", () => {
    const { state, response } = assemble([
      created(),
      fcAdded(0, "fc_1", "call_1", "f"),
      argsDelta(0, "fc_1", '{"a":'),
    ]);
    expect(state.calls).toEqual([]);
    expect(response.terminal).toBeNull();
    expect(response.items[0]).toMatchObject({
      type: "function_call",
      status: "incomplete",
      arguments: '{"a":',
    });
  });

  it("promotes at response.completed a call whose output_item.done never came (docs/pitfalls.md #26, #28)", () => {
    const { state } = assemble([
      created(),
      fcAdded(0, "fc_1", "call_1", "get_time"),
      argsDone(0, "fc_1", "{}"),
      completed([
        {
          type: "function_call",
          id: "fc_1",
          call_id: "call_1",
          name: "get_time",
          arguments: "{}",
          status: "completed",
        },
      ]),
    ]);
    expect(state.calls.map((c) => c.callId)).toEqual(["call_1"]);
  });

  it("adopts a call that only the terminal output reports", () => {
    const { state } = assemble([
      created(),
      completed([
        {
          type: "function_call",
          id: "fc_7",
          call_id: "call_7",
          name: "ls",
          arguments: '{"path":"."}',
          status: "completed",
        },
      ]),
    ]);
    expect(state.calls).toEqual([
      expect.objectContaining({ callId: "call_7", name: "ls", arguments: '{"path":"."}' }),
    ]);
  });
});

describe("response assembler: responses", () => {
  it("rebuilds the output from streamed items when response.completed has an empty output (docs/pitfalls.md #29)", () => {
    const { response } = assemble([
      created(),
      msgAdded(0, "m1"),
      textDelta(0, "m1", "Hello"),
      msgDone(0, "m1", "Hello"),
      fcAdded(1, "fc_1", "call_1", "f"),
      fcDone(1, "fc_1", "call_1", "f", '{"x":1}'),
      completed([], { input_tokens: 3, output_tokens: 4, total_tokens: 7 }),
    ]);
    expect(response.items).toHaveLength(2);
    expect(response.items[1]).toMatchObject({
      type: "function_call",
      call_id: "call_1",
      arguments: '{"x":1}',
    });
    expect(response.outputText).toBe("Hello");
    expect(response.usage?.total_tokens).toBe(7);
    expect(response.status).toBe("completed");
    expect(response.id).toBe("resp_1");
  });

  it("a second item at a done item's output_index is an item of its own: its call is not lost", () => {
    const message = msgDone(0, "msg_1", "pre");
    const call = fcDone(0, "fc_1", "call_1", "list_dir", "{}");
    for (const inCompleted of [[message.item, call.item], [call.item], []] as JsonObject[][]) {
      const state = createAssembly();
      for (const e of [
        created(),
        msgAdded(0, "msg_1"),
        textDelta(0, "msg_1", "pre"),
        message,
        fcAdded(0, "fc_1", "call_1", "list_dir"),
        argsDelta(0, "fc_1", "{"),
        argsDelta(0, "fc_1", "}"),
        call,
        completed(inCompleted),
      ])
        step(state, e);
      expect(state.calls.map((c) => [c.name, c.callId, c.arguments])).toEqual([["list_dir", "call_1", "{}"]]);
      expect(finishAssembly(state).outputText).toBe("pre");
    }
  });

  it("keys items by output_index when item ids rotate (GitHub Copilot)", () => {
    const { response } = assemble([
      created("id-1"),
      msgAdded(0, "id-3"),
      textDelta(0, "id-4", "Hel"),
      textDelta(0, "id-5", "lo"),
      {
        type: "response.output_text.done",
        item_id: "id-6",
        output_index: 0,
        content_index: 0,
        text: "Hello",
      },
      {
        type: "response.output_item.done",
        output_index: 0,
        item: {
          type: "message",
          id: "id-8",
          role: "assistant",
          status: "completed",
          content: [{ type: "output_text", text: "Hello", annotations: [] }],
        },
      },
      completed([], null, "id-9"),
    ]);
    expect(response.outputText).toBe("Hello");
    expect(response.items).toHaveLength(1);
    expect(response.id).toBe("id-9");
  });

  it("reports response.failed with its error (docs/pitfalls.md S15)", () => {
    const { response } = assemble([
      created(),
      msgAdded(0, "m"),
      textDelta(0, "m", "partial"),
      {
        type: "response.failed",
        response: {
          id: "resp_1",
          status: "failed",
          error: { code: "server_error", message: "boom" },
          output: [],
          usage: { input_tokens: 1, output_tokens: 2, total_tokens: 3 },
        },
      },
    ]);
    expect(response.terminal).toBe("failed");
    expect(response.error).toEqual({ code: "server_error", message: "boom" });
    expect(response.outputText).toBe("partial");
    expect(response.usage?.total_tokens).toBe(3); // usage recorded on failure too (docs/pitfalls.md #41)
  });

  it.each([
    [
      "spec shape",
      {
        type: "error",
        sequence_number: 2,
        error: { type: "rate_limit_error", code: "rate_limit_exceeded", message: "slow down", param: null },
      },
    ],
    [
      "flat shape (docs/pitfalls.md S16)",
      { type: "error", code: "rate_limit_exceeded", message: "slow down" },
    ],
  ])("reads an error event in the %s", (_label, event) => {
    const { response } = assemble([created(), event as JsonObject]);
    expect(response.terminal).toBe("error");
    expect(response.status).toBe("failed");
    expect(response.error).toMatchObject({ code: "rate_limit_exceeded", message: "slow down" });
  });

  it("keeps the error event's details when response.failed follows", () => {
    const { response } = assemble([
      created(),
      {
        type: "error",
        error: { type: "insufficient_quota", code: "insufficient_quota", message: "quota", param: null },
      },
      {
        type: "response.failed",
        response: { id: "resp_1", status: "failed", error: { code: "other", message: "x" }, output: [] },
      },
    ]);
    expect(response.terminal).toBe("failed");
    expect(response.error?.code).toBe("insufficient_quota");
  });

  it("reports an incomplete, reasoning-only response (docs/pitfalls.md S19)", () => {
    const { state, response } = assemble([
      created(),
      {
        type: "response.output_item.added",
        output_index: 0,
        item: { type: "reasoning", id: "rs_1", summary: [] },
      },
      {
        type: "response.output_item.done",
        output_index: 0,
        item: { type: "reasoning", id: "rs_1", summary: [], encrypted_content: "enc" },
      },
      {
        type: "response.incomplete",
        response: {
          id: "resp_1",
          status: "incomplete",
          incomplete_details: { reason: "max_output_tokens" },
          output: [{ type: "reasoning", id: "rs_1", summary: [] }],
        },
      },
    ]);
    expect(response.terminal).toBe("incomplete");
    expect(response.incompleteReason).toBe("max_output_tokens");
    expect(state.calls).toEqual([]);
  });

  it("takes encrypted_content from output_item.done, not from added (docs/pitfalls.md #11)", () => {
    const { response } = assemble([
      created(),
      {
        type: "response.output_item.added",
        output_index: 0,
        item: { type: "reasoning", id: "rs_1", summary: [], encrypted_content: "stale" },
      },
      {
        type: "response.output_item.done",
        output_index: 0,
        item: { type: "reasoning", id: "rs_1", summary: [], encrypted_content: "final" },
      },
      completed(),
    ]);
    expect(response.items[0]?.encrypted_content).toBe("final");
  });

  it("keeps reasoning summary and raw reasoning text apart (docs/pitfalls.md #33)", () => {
    const state = createAssembly();
    for (const e of [
      created(),
      {
        type: "response.output_item.added",
        output_index: 0,
        item: { type: "reasoning", id: "rs", summary: [] },
      },
      {
        type: "response.reasoning_summary_text.delta",
        item_id: "rs",
        output_index: 0,
        summary_index: 0,
        delta: "sum",
      },
      {
        type: "response.reasoning_text.delta",
        item_id: "rs",
        output_index: 0,
        content_index: 0,
        delta: "raw",
      },
    ] as JsonObject[])
      step(state, e);
    const item = state.items.get(0);
    expect(item?.summary.get(0)?.streamed).toBe("sum");
    expect(item?.reasoningText.get(0)?.streamed).toBe("raw");
    expect(finishAssembly(state).items[0]).toMatchObject({
      summary: [{ type: "summary_text", text: "sum" }],
      content: [{ type: "reasoning_text", text: "raw" }],
    });
  });

  it("passes unknown events and unknown item types through without executing them (docs/pitfalls.md S6)", () => {
    const { state, response } = assemble([
      created(),
      { type: "keepalive", sequence_number: 7 },
      { type: "response.foo.delta", delta: "x" },
      {
        type: "response.output_item.added",
        output_index: 0,
        item: { type: "x_call", id: "x1", status: "in_progress" },
      },
      {
        type: "response.output_item.done",
        output_index: 0,
        item: { type: "x_call", id: "x1", status: "completed" },
      },
      completed(),
    ]);
    expect(state.calls).toEqual([]);
    expect(response.items).toEqual([{ type: "x_call", id: "x1", status: "completed" }]);
  });

  it("counts visible output only from non-empty text or refusal deltas", () => {
    const { state } = assemble([created(), msgAdded(0, "m"), textDelta(0, "m", "")]);
    expect(state.outputEmitted).toBe(false);
    step(state, {
      type: "response.refusal.delta",
      item_id: "m",
      output_index: 0,
      content_index: 1,
      delta: "no",
    });
    expect(state.outputEmitted).toBe(true);
  });

  it("ignores non-object data", () => {
    const state = createAssembly();
    step(state, null);
    step(state, [1, 2]);
    step(state, "x");
    expect(state.events).toBe(0);
  });

  it("prefers each done item over the terminal output's copy, matched by id (re-encrypted reasoning)", () => {
    const { response } = assemble([
      created(),
      {
        type: "response.output_item.done",
        output_index: 0,
        item: { type: "reasoning", id: "rs_1", summary: [], encrypted_content: "from-done" },
      },
      msgDone(2, "m2", "answer"),
      completed([
        { type: "reasoning", id: "rs_1", summary: [], encrypted_content: "re-encrypted" },
        { type: "web_search_call", id: "ws_1", status: "completed" },
        {
          type: "message",
          id: "m2",
          role: "assistant",
          status: "completed",
          content: [{ type: "output_text", text: "answer", annotations: [] }],
        },
      ]),
    ]);
    expect(response.items.map((i) => i.id)).toEqual(["rs_1", "ws_1", "m2"]);
    expect(response.items[0]?.encrypted_content).toBe("from-done");
    expect(response.outputText).toBe("answer");
  });

  it("treats a chat-style {error} frame without a type as a failure (docs/pitfalls.md #35)", () => {
    const { response } = assemble([
      created(),
      { error: { message: "upstream exploded", code: "bad_gateway" } },
    ]);
    expect(response.terminal).toBe("error");
    expect(response.error).toMatchObject({ code: "bad_gateway", message: "upstream exploded" });
  });

  it("accepts a non-spec response.done as the terminal event, by its status", () => {
    const { response } = assemble([
      created(),
      msgAdded(0, "m"),
      msgDone(0, "m", "hi"),
      { type: "response.done", response: { id: "resp_1", status: "completed", output: [] } },
    ]);
    expect(response).toMatchObject({ terminal: "completed", outputText: "hi" });
  });
});

describe("a final text that differs from the streamed deltas", () => {
  const delta = (text: string): JsonObject => ({
    type: "response.output_text.delta",
    item_id: "msg_1",
    output_index: 0,
    content_index: 0,
    delta: text,
  });
  const added: JsonObject = {
    type: "response.output_item.added",
    output_index: 0,
    item: { type: "message", id: "msg_1", role: "assistant", status: "in_progress", content: [] },
  };
  const message = (text: string): JsonObject => ({
    type: "message",
    id: "msg_1",
    role: "assistant",
    status: "completed",
    content: [{ type: "output_text", text, annotations: [] }],
  });

  it("is noted once, on the event that brought it, and the history keeps the final text", () => {
    const state = createAssembly();
    for (const e of [created(), added, delta("Hel"), delta("lo")]) step(state, e);
    expect(state.notes).toEqual([]);
    step(state, {
      type: "response.output_text.done",
      item_id: "msg_1",
      output_index: 0,
      content_index: 0,
      text: "Hello world",
    });
    expect(state.notes).toEqual([
      "the final text of msg_1 differs from its streamed deltas (11 vs 5 characters); the history keeps the final text",
    ]);
    state.notes.length = 0;
    step(state, { type: "response.output_item.done", output_index: 0, item: message("Hello world") });
    step(state, completed([message("Hello world")]));
    expect(state.notes).toEqual([]);
    expect(finishAssembly(state).outputText).toBe("Hello world");
  });

  it("is noted at output_item.done when no text done event came; agreeing texts are not noted", () => {
    const differs = assemble([
      created(),
      added,
      delta("Hi"),
      { type: "response.output_item.done", output_index: 0, item: message("Bye") },
    ]);
    expect(differs.state.notes).toHaveLength(1);
    const agrees = assemble([
      created(),
      added,
      delta("Hi"),
      { type: "response.output_item.done", output_index: 0, item: message("Hi") },
    ]);
    expect(agrees.state.notes).toEqual([]);
  });
});

describe("assembler: linear in the number of items (docs/pitfalls.md #64)", () => {
  afterEach(() => {
    vi.restoreAllMocks();
  });

  it("an event with neither output_index nor item_id opens the next item without scanning the others", () => {
    const keys = vi.spyOn(Map.prototype, "keys");
    const state = createAssembly();
    const n = 3000;
    for (let i = 0; i < n; i++) step(state, { type: "response.function_call_arguments.delta", delta: "{}" });
    expect(state.items.size).toBe(n);
    expect([...state.items.keys()].at(-1)).toBe(n - 1);
    // Scanning every key for each event made it quadratic: n calls of keys() at least.
    expect(keys.mock.calls.length).toBeLessThan(10);
  });
});
