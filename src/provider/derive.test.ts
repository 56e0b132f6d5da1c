import { describe, expect, it } from "vitest";
import { frame, type ProviderFrame } from "../frames/frame.js";
import type { JsonObject } from "../protocol/types.js";
import { AttemptAssembly } from "./derive.js";

/** The frames derived from each event, in order (one list per event). */
function derive(events: JsonObject[]): (readonly ProviderFrame[])[] {
  const attempt = new AttemptAssembly({ nativeCalls: false });
  return events.map((data) => attempt.event(frame("provider_event", { turn: 3, status: "event", data })));
}

const short = (frames: readonly ProviderFrame[]) =>
  frames.map((f) =>
    f.type === "item_done"
      ? `item_done ${f.output_index} ${String(f.item.type)}`
      : f.type === "response_ended"
        ? `response_ended ${f.status}`
        : f.type,
  );

const response = (status: string, output: JsonObject[] = [], extra: JsonObject = {}): JsonObject => ({
  id: "resp_1",
  object: "response",
  model: "m-2026",
  status,
  output,
  usage: { input_tokens: 3, output_tokens: 2 },
  ...extra,
});

describe("derived frames", () => {
  it("reasoning deltas by channel and part, like output_text_delta", () => {
    const [summary, text, other] = derive([
      {
        type: "response.reasoning_summary_text.delta",
        item_id: "rs",
        output_index: 0,
        summary_index: 1,
        delta: "a",
      },
      { type: "response.reasoning_text.delta", item_id: "rs", output_index: 0, content_index: 0, delta: "b" },
      { type: "response.output_text.delta", item_id: "m", output_index: 1, content_index: 0, delta: "c" },
    ]);
    expect(summary).toEqual([
      frame("reasoning_delta", {
        turn: 3,
        item_id: "rs",
        output_index: 0,
        channel: "summary",
        index: 1,
        delta: "a",
      }),
    ]);
    expect(text?.[0]).toMatchObject({ type: "reasoning_delta", channel: "text", index: 0, delta: "b" });
    // Open Responses text deltas come from the SSE mapping, not from here.
    expect(other).toEqual([]);
  });

  it("each item once at its output_item.done: a call with its resolved arguments and call_id", () => {
    const out = derive([
      {
        type: "response.output_item.added",
        output_index: 0,
        item: { type: "function_call", id: "fc_1", name: "f" },
      },
      { type: "response.function_call_arguments.delta", output_index: 0, delta: '{"a":1}' },
      {
        type: "response.output_item.done",
        output_index: 0,
        item: { type: "function_call", id: "fc_1", name: "f" },
      },
      {
        type: "response.output_item.done",
        output_index: 0,
        item: { type: "function_call", id: "fc_1", name: "f" },
      },
      { type: "response.completed", response: response("completed") },
    ]);
    expect(out[2]).toEqual([
      frame("item_done", {
        turn: 3,
        output_index: 0,
        item: { type: "function_call", id: "fc_1", name: "f", call_id: "fc_1", arguments: '{"a":1}' },
      }),
    ]);
    expect(out[3]).toEqual([]);
    expect(out[4]).toEqual([
      frame("response_ended", {
        turn: 3,
        response_id: "resp_1",
        model: "m-2026",
        status: "completed",
        usage: { input_tokens: 3, output_tokens: 2 } as never,
      }),
    ]);
  });

  it("a response that arrives whole: its items at the terminal event, in output order", () => {
    const out = derive([
      {
        type: "response.completed",
        response: response("completed", [
          { type: "reasoning", id: "rs_1", summary: [] },
          { type: "message", id: "msg_1", content: [{ type: "output_text", text: "hi" }] },
        ]),
      },
    ]);
    expect(short(out[0] ?? [])).toEqual([
      "item_done 0 reasoning",
      "item_done 1 message",
      "response_ended completed",
    ]);
  });

  it("calls that only response.completed finishes (no output_item.done) are finished there", () => {
    const out = derive([
      {
        type: "response.output_item.added",
        output_index: 0,
        item: { type: "function_call", id: "fc_1", name: "f", call_id: "c1" },
      },
      { type: "response.function_call_arguments.delta", output_index: 0, delta: "{}" },
      { type: "response.completed", response: response("completed") },
    ]);
    expect(short(out[2] ?? [])).toEqual(["item_done 0 function_call", "response_ended completed"]);
    expect(out[2]?.[0]).toMatchObject({ item: { call_id: "c1", arguments: "{}" } });
  });

  it("an incomplete response: unfinished items as streamed, marked incomplete, and the reason", () => {
    const out = derive([
      {
        type: "response.output_item.added",
        output_index: 0,
        item: { type: "message", id: "msg_1", role: "assistant" },
      },
      { type: "response.output_text.delta", output_index: 0, content_index: 0, delta: "par" },
      {
        type: "response.incomplete",
        response: response("incomplete", [], { incomplete_details: { reason: "max_output_tokens" } }),
      },
    ]);
    expect(short(out[2] ?? [])).toEqual(["item_done 0 message", "response_ended incomplete"]);
    expect(out[2]?.[0]).toMatchObject({ item: { status: "incomplete", content: [{ text: "par" }] } });
    expect(out[2]?.[1]).toMatchObject({ incomplete_reason: "max_output_tokens" });
  });

  it("an error event ends the response as failed, with the provider's error", () => {
    const out = derive([
      { type: "error", error: { type: "server_error", code: "overloaded", message: "try later" } },
      { type: "response.failed", response: response("failed") },
    ]);
    expect(out[0]).toEqual([
      frame("response_ended", {
        turn: 3,
        response_id: null,
        model: null,
        status: "failed",
        usage: null,
        error: { code: "overloaded", message: "try later" },
      }),
    ]);
    expect(out[1]).toEqual([]);
  });
});
