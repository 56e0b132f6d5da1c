import { describe, expect, it } from "vitest";
import { validateInputItem, validateOutputItem, validateStreamingEvent } from "./validate.js";

const delta = {
  type: "response.output_text.delta",
  sequence_number: 3,
  item_id: "msg_1",
  output_index: 0,
  content_index: 0,
  delta: "hi",
};

const message = (annotations: unknown[]) => ({
  type: "message",
  id: "msg_1",
  status: "completed",
  role: "assistant",
  content: [{ type: "output_text", text: "hi", annotations }],
});

const urlCitation = { type: "url_citation", url: "https://x", start_index: 0, end_index: 1, title: "x" };

describe("validateStreamingEvent", () => {
  it("accepts a valid event", () => {
    expect(validateStreamingEvent(delta)).toBeUndefined();
    expect(
      validateStreamingEvent({
        type: "response.output_item.done",
        sequence_number: 1,
        output_index: 0,
        item: null,
      }),
    ).toBeUndefined();
    expect(
      validateStreamingEvent({
        type: "response.output_item.done",
        sequence_number: 1,
        output_index: 0,
        item: message([urlCitation]),
      }),
    ).toBeUndefined();
  });

  it("names a type a discriminated union lacks, instead of one error per member", () => {
    const event = {
      type: "response.output_item.added",
      sequence_number: 1,
      output_index: 0,
      item: { type: "web_search_call", id: "ws_1", status: "in_progress" },
    };
    expect(validateStreamingEvent(event)).toEqual([
      '/item has type "web_search_call", which the spec does not define here',
    ]);
  });

  it("reports the problem inside a known item, not 'matches no schema' on the item", () => {
    const event = {
      type: "response.output_item.done",
      sequence_number: 1,
      output_index: 0,
      item: message([{ type: "file_citation", file_id: "f", index: 0 }]),
    };
    expect(validateStreamingEvent(event)).toEqual([
      '/item/content/0/annotations/0 has type "file_citation", which the spec does not define here',
    ]);
  });

  it("reports every deviation, grouping the missing properties of one object", () => {
    const { sequence_number: _s, item_id: _i, ...rest } = delta;
    expect(validateStreamingEvent({ ...rest, delta: 5 })).toEqual([
      '/ is missing required properties "sequence_number", "item_id"',
      "/delta must be string",
    ]);
  });

  it("keeps a message repeated at other array indices once", () => {
    const bad = { type: "url_citation", url: "https://x" };
    const event = {
      type: "response.output_item.done",
      sequence_number: 1,
      output_index: 0,
      item: message([bad, urlCitation, bad, bad]),
    };
    expect(validateStreamingEvent(event)).toEqual([
      '/item/content/0/annotations/0 is missing required properties "start_index", "end_index", "title" (and 2 more at other array indices)',
    ]);
  });

  it("caps the number of messages", () => {
    const item = message([]);
    const event = {
      type: "response.output_item.done",
      sequence_number: 1,
      output_index: 0,
      item: {
        ...item,
        content: Array.from({ length: 12 }, (_, i) => ({ type: "output_text", text: i, annotations: [] })),
      },
    };
    // Every element fails alike: one message (the template repeats).
    expect(validateStreamingEvent(event)).toEqual([
      "/item/content/0/text must be string (and 11 more at other array indices)",
    ]);
    const response = Object.fromEntries(
      [
        "id",
        "created_at",
        "model",
        "status",
        "top_p",
        "temperature",
        "store",
        "background",
        "service_tier",
      ].map((k) => [k, { bad: true }]),
    );
    const messages = validateStreamingEvent({ type: "response.created", sequence_number: 0, response }) ?? [];
    expect(messages.length).toBeLessThanOrEqual(9);
    expect(messages.at(-1)).toMatch(/^… and \d+ more validation errors?$/);
  });

  it("says when the discriminator is not a string", () => {
    const event = {
      type: "response.output_item.added",
      sequence_number: 1,
      output_index: 0,
      item: { type: 5 },
    };
    expect(validateStreamingEvent(event)).toEqual(["/item/type must be a string"]);
  });

  it("handles unknown, extension and non-object events", () => {
    expect(validateStreamingEvent({ type: "keepalive" })?.[0]).toMatch(
      /^unknown event type "keepalive": not in/,
    );
    expect(validateStreamingEvent({ type: "acme:trace_event", sequence_number: 4 })).toBeUndefined();
    expect(validateStreamingEvent({ type: "acme:trace_event" })).toEqual([
      'extension event "acme:trace_event" has no integer sequence_number',
    ]);
    expect(validateStreamingEvent([1])).toEqual(["event data is an array, expected a JSON object"]);
    expect(validateStreamingEvent({ delta: "x" })).toEqual(["event has no string `type`"]);
  });
});

describe("validators of other schemas", () => {
  it("folds a non-discriminated union (ItemParam: four kinds of `message`) into one message", () => {
    const errors = validateInputItem({ type: "message", role: "robot", content: "hi" });
    expect(errors).toHaveLength(1);
    expect(errors?.[0]).toMatch(/^\/ has type "message" but matches no schema of its union \(e\.g\. .+\)$/);
  });

  it("validates output items", () => {
    expect(validateOutputItem(message([]))).toBeUndefined();
    expect(validateOutputItem({ type: "program" })).toEqual([
      '/ has type "program", which the spec does not define here',
    ]);
  });
});
