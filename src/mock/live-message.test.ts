import { describe, expect, it } from "vitest";
import type { StreamingEvent } from "../protocol/types.js";
import { validateStreamingEvent } from "../protocol/validate.js";
import { createEventWriter } from "./events.js";
import type { MockRequestBody } from "./request.js";

/** A writer for a streamed response, and every event it produced, in order. */
function writer() {
  const w = createEventWriter({
    body: { model: "m", input: "hi", stream: true } as unknown as MockRequestBody,
    responseId: "resp_1",
    createdAt: 1_700_000_000,
  });
  const events: StreamingEvent[] = [...w.open()];
  return { w, events, add: (more: StreamingEvent[]) => events.push(...more) };
}

type Loose = Record<string, unknown> & { type: string };
const loose = (events: StreamingEvent[]) => events as unknown as Loose[];

/** Each event validates, sequence numbers count up, and every part announced is closed in order. */
function wellFormed(events: StreamingEvent[]): void {
  for (const e of events) expect(validateStreamingEvent(e)).toBeUndefined();
  expect(loose(events).map((e) => e.sequence_number)).toEqual(events.map((_, i) => i));
  const parts = (type: string, id: unknown) =>
    loose(events)
      .filter((e) => e.type === type && e.item_id === id)
      .map((e) => e.content_index);
  for (const id of new Set(
    loose(events)
      .map((e) => e.item_id)
      .filter((x) => x !== undefined),
  )) {
    const added = parts("response.content_part.added", id);
    expect(added).toEqual(added.map((_, i) => i));
    expect(parts("response.content_part.done", id)).toEqual(added);
  }
}

/** The event types after the response's opening two (created, in_progress). */
const typesAfterOpen = (events: StreamingEvent[]) =>
  loose(events)
    .map((e) => e.type)
    .slice(2);

const message = (id: string, ...texts: string[]) => ({
  type: "message" as const,
  id,
  parts: texts.map((text) => ({ type: "output_text" as const, text })),
});

describe("LiveMessage: a message streamed as its text comes", () => {
  it("announces the item and its part at the first piece, and closes them with the final text", () => {
    const { w, events, add } = writer();
    const live = w.liveMessage("msg_1");
    add(live.text(0, "Hel"));
    add(live.text(0, "lo"));
    add(live.done(message("msg_1", "Hello")));
    wellFormed(events);
    expect(typesAfterOpen(events)).toEqual([
      "response.output_item.added",
      "response.content_part.added",
      "response.output_text.delta",
      "response.output_text.delta",
      "response.output_text.done",
      "response.content_part.done",
      "response.output_item.done",
    ]);
    expect(w.output).toEqual([expect.objectContaining({ id: "msg_1", status: "completed" })]);
  });

  it("keeps the output index it was announced at while other items finish", () => {
    const { w, events, add } = writer();
    const live = w.liveMessage("msg_1");
    add(live.text(0, "a"));
    add(
      w.finished({
        type: "function_call_output",
        id: "fco_1",
        call_id: "c1",
        output: "ok",
        status: "completed",
      }),
    );
    add(live.done(message("msg_1", "ab")));
    wellFormed(events);
    expect(w.output.map((i) => i.type)).toEqual(["message", "function_call_output"]);
    const itemDone = loose(events).filter((e) => e.type === "response.output_item.done");
    expect(itemDone.map((e) => e.output_index)).toEqual([1, 0]);
  });

  it("numbers parts itself, whatever indexes the upstream sends (negative, huge, fractional, alternating)", () => {
    const { w, events, add } = writer();
    const live = w.liveMessage("msg_1");
    for (const [index, piece] of [
      [-1, "a"],
      [1e9, "b"],
      [1.5, "c"],
      [0, "d"],
      [1.5, "e"],
    ] as const)
      add(live.text(index, piece));
    add(live.done(message("msg_1", "whole")));
    wellFormed(events);
    const parts = loose(events).filter((e) => e.type === "response.content_part.added");
    expect(parts.map((e) => e.content_index)).toEqual([0, 1, 2, 3, 4]);
    // The final form had fewer parts than were streamed: the item keeps what the client saw.
    const final = w.output[0] as { content: Array<{ text: string }> };
    expect(final.content.map((p) => p.text)).toEqual(["a", "b", "c", "d", "e"]);
  });

  it("abandoned mid-text: ends incomplete with what was streamed", () => {
    const { w, events, add } = writer();
    const live = w.liveMessage("msg_1");
    add(live.text(0, "one "));
    add(live.text(1, "two"));
    add(live.abandon());
    add(live.text(1, "late")); // after its end: nothing
    wellFormed(events);
    expect(w.output[0]).toMatchObject({
      status: "incomplete",
      content: [{ text: "one " }, { text: "two" }],
    });
  });

  it("never streamed: the final item goes out whole; a refusal part after streamed text is sent whole", () => {
    const { w, events, add } = writer();
    add(w.liveMessage("msg_0").done(message("msg_0", "all at once")));
    const live = w.liveMessage("msg_1");
    add(live.text(0, "I "));
    add(
      live.done({
        type: "message",
        id: "msg_1",
        parts: [
          { type: "output_text", text: "I won't" },
          { type: "refusal", refusal: "no" },
        ],
      }),
    );
    wellFormed(events);
    expect(loose(events).filter((e) => e.type === "response.refusal.done")).toHaveLength(1);
    expect(w.output.map((i) => (i as { id: string }).id)).toEqual(["msg_0", "msg_1"]);
  });
});

describe("LiveReasoning: a reasoning item streamed as its summary and text come", () => {
  const reasoning = (id: string, summary: string[], content: string[] = []) => ({
    type: "reasoning" as const,
    id,
    summary,
    content,
  });

  it("streams summary and raw text parts as they come, interleaved, and closes each", () => {
    const { w, events, add } = writer();
    const live = w.liveReasoning("rs_1");
    add(live.text("summary", 0, "Plan"));
    add(live.text("text", 0, "raw "));
    add(live.text("summary", 0, "ning"));
    add(live.text("summary", 1, "Done"));
    add(live.done(reasoning("rs_1", ["Planning", "Done."], ["raw thought"])));
    for (const e of events) expect(validateStreamingEvent(e)).toBeUndefined();
    const summaryParts = loose(events).filter((e) => e.type === "response.reasoning_summary_part.done");
    expect(summaryParts.map((e) => [e.summary_index, (e.part as { text: string }).text])).toEqual([
      [0, "Planning"],
      [1, "Done."],
    ]);
    const textParts = loose(events).filter(
      (e) => e.type === "response.content_part.done" && e.item_id === "rs_1",
    );
    expect(textParts.map((e) => (e.part as { text: string }).text)).toEqual(["raw thought"]);
    expect(w.output[0]).toMatchObject({
      type: "reasoning",
      summary: [{ text: "Planning" }, { text: "Done." }],
    });
  });

  it("hostile indexes are renumbered; abandoned, it keeps what was streamed; a second end does nothing", () => {
    const { w, events, add } = writer();
    const live = w.liveReasoning("rs_1");
    add(live.text("summary", -3, "a"));
    add(live.text("summary", 1e12, "b"));
    add(live.abandon());
    expect(live.done(reasoning("rs_1", ["x"]))).toEqual([]);
    for (const e of events) expect(validateStreamingEvent(e)).toBeUndefined();
    const added = loose(events).filter((e) => e.type === "response.reasoning_summary_part.added");
    expect(added.map((e) => e.summary_index)).toEqual([0, 1]);
    expect(w.output[0]).toMatchObject({ summary: [{ text: "a" }, { text: "b" }] });
  });

  it("never streamed: the item goes out whole", () => {
    const { w, events, add } = writer();
    add(w.liveReasoning("rs_1").done(reasoning("rs_1", ["short"])));
    for (const e of events) expect(validateStreamingEvent(e)).toBeUndefined();
    expect(loose(events).map((e) => e.type)).toContain("response.reasoning_summary_text.done");
  });
});

describe("LiveFunctionCall: a function call streamed as its arguments come", () => {
  const ARGS = '{"path":"notes.txt"}';
  const call = (args: string) => ({
    type: "function_call" as const,
    id: "fc_1",
    call_id: "call_1",
    name: "read_file",
    arguments: args,
  });

  it("announces the call at start, streams each piece, and ends with the final arguments", () => {
    const { w, events, add } = writer();
    const live = w.liveFunctionCall({ id: "fc_1", call_id: "call_1", name: "read_file" });
    add(live.start());
    add(live.args('{"path"'));
    add(live.args(':"notes.txt"}'));
    add(live.done(call(ARGS)));
    wellFormed(events);
    expect(typesAfterOpen(events)).toEqual([
      "response.output_item.added",
      "response.function_call_arguments.delta",
      "response.function_call_arguments.delta",
      "response.function_call_arguments.done",
      "response.output_item.done",
    ]);
    expect(loose(events)[2]?.item).toMatchObject({ name: "read_file", call_id: "call_1", arguments: "" });
    expect(loose(events).find((e) => e.type === "response.function_call_arguments.done")?.arguments).toBe(
      ARGS,
    );
    expect(w.output).toEqual([expect.objectContaining({ id: "fc_1", arguments: ARGS, status: "completed" })]);
  });

  it("keeps the output index it was announced at while another item finishes meanwhile", () => {
    const { w, events, add } = writer();
    const live = w.liveFunctionCall({ id: "fc_1", call_id: "call_1", name: "read_file" });
    add(live.start());
    add(
      w.finished({
        type: "function_call_output",
        id: "fco_0",
        call_id: "c0",
        output: "ok",
        status: "completed",
      }),
    );
    add(live.args(ARGS));
    add(live.done(call(ARGS)));
    wellFormed(events);
    const own = loose(events).filter(
      (e) => e.item_id === "fc_1" || (e.item as { id?: string })?.id === "fc_1",
    );
    expect(new Set(own.map((e) => e.output_index))).toEqual(new Set([0]));
    expect(w.output.map((i) => (i as { id: string }).id)).toEqual(["fc_1", "fco_0"]);
  });

  it("abandoned, it ends incomplete with the arguments streamed; a second end does nothing", () => {
    const { w, events, add } = writer();
    const live = w.liveFunctionCall({ id: "fc_1", call_id: "call_1", name: "read_file" });
    add(live.args('{"pa'));
    add(live.abandon());
    expect(live.done(call(ARGS))).toEqual([]);
    expect(live.args("more")).toEqual([]);
    wellFormed(events);
    expect(loose(events).find((e) => e.type === "response.function_call_arguments.done")?.arguments).toBe(
      '{"pa',
    );
    expect(w.output[0]).toMatchObject({ arguments: '{"pa', status: "incomplete" });
  });

  it("never announced: the call goes out whole; announced with no piece, it still ends with its arguments", () => {
    const whole = writer();
    whole.add(
      whole.w.liveFunctionCall({ id: "fc_1", call_id: "call_1", name: "read_file" }).done(call(ARGS)),
    );
    wellFormed(whole.events);
    expect(loose(whole.events).map((e) => e.type)).toContain("response.function_call_arguments.done");
    expect(whole.w.output[0]).toMatchObject({ arguments: ARGS, status: "completed" });

    const bare = writer();
    const live = bare.w.liveFunctionCall({ id: "fc_1", call_id: "call_1", name: "read_file" });
    bare.add(live.start());
    bare.add(live.start()); // announced once
    bare.add(live.done(call(ARGS)));
    wellFormed(bare.events);
    expect(loose(bare.events).filter((e) => e.type === "response.output_item.added")).toHaveLength(1);
    expect(bare.w.output[0]).toMatchObject({ arguments: ARGS, status: "completed" });
  });
});
