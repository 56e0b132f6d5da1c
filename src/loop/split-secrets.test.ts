import { describe, expect, it } from "vitest";
import { type Frame, frame } from "../frames/frame.js";
import { FrameChannel } from "./frame-channel.js";

const KEY = "sk-probe-SECRET-123456";

/** The group a provider's `response.output_text.delta` event brings: the event and its delta. */
const textGroup = (text: string, item = "msg_1"): Frame[] => [
  frame("provider_event", {
    turn: 0,
    status: "event",
    event_name: "response.output_text.delta",
    data: {
      type: "response.output_text.delta",
      item_id: item,
      output_index: 0,
      content_index: 0,
      delta: text,
      obfuscation: "pad",
    },
  }),
  frame("output_text_delta", { turn: 0, item_id: item, output_index: 0, content_index: 0, delta: text }),
];

/** Every frame the channel hands out for these groups (then a turn_ended, then closed). */
async function through(groups: Frame[][], secrets: string[] = [KEY]): Promise<Frame[]> {
  const channel = new FrameChannel({ runId: "run_s", clock: () => 0, secrets });
  for (const g of groups) channel.emitGroup(g);
  channel.emit(frame("turn_ended", { turn: 0, response_id: "r", status: "completed", usage: null }));
  channel.close();
  const out: Frame[] = [];
  for await (const f of channel) out.push(f);
  return out;
}

const deltas = (frames: Frame[]) => frames.flatMap((f) => (f.type === "output_text_delta" ? [f.delta] : []));
const eventDeltas = (frames: Frame[]) =>
  frames.flatMap((f) => (f.type === "provider_event" ? [(f.data as { delta: string }).delta] : []));

/** Whether any 6 characters of the key are in `text`. */
const holdsPartOfKey = (text: string) =>
  Array.from({ length: KEY.length - 5 }, (_, i) => KEY.slice(i, i + 6)).some((part) => text.includes(part));

describe("a secret split across streamed deltas (split-secrets.ts)", () => {
  it.each([
    ["three pieces", ["token=sk-pro", "be-SECRET-12", "3456\n"]],
    ["one character at a time", [..."say token=sk-probe-SECRET-123456 ok"]],
    [
      "twice, the second starting where the first ends",
      ["a sk-probe-SECR", `ET-123456${KEY.slice(0, 3)}`, `${KEY.slice(3)}!`],
    ],
  ])(
    "%s: masked in the deltas and the provider events alike; no frame is added or moved",
    async (_what, pieces) => {
      const frames = await through(pieces.map((p) => textGroup(p)));
      expect(frames).toHaveLength(pieces.length * 2 + 1);
      expect(frames.map((f) => f.seq)).toEqual(frames.map((_, i) => i));
      const text = deltas(frames).join("");
      expect(text).toBe(pieces.join("").split(KEY).join("***"));
      expect(eventDeltas(frames)).toEqual(deltas(frames));
      expect(holdsPartOfKey(JSON.stringify(frames))).toBe(false);
      // Each event still pairs with its delta, in order.
      expect(frames.slice(0, -1).map((f) => f.type)).toEqual(
        pieces.flatMap(() => ["provider_event", "output_text_delta"]),
      );
    },
  );

  it("text that only begins like the secret goes out unchanged once the next delta says so", async () => {
    const pieces = ["the sk-pro", "gress bar", " is at sk-p"];
    const frames = await through(pieces.map((p) => textGroup(p)));
    expect(deltas(frames)).toEqual(pieces);
    expect(eventDeltas(frames)).toEqual(pieces);
  });

  it("a held delta goes out before a frame of another kind, and before another stream's delta", async () => {
    const channel = new FrameChannel({ runId: "run_o", clock: () => 0, secrets: [KEY] });
    const seen: string[] = [];
    channel.observe((f) => seen.push(f.type === "output_text_delta" ? `${f.item_id}:${f.delta}` : f.type));
    channel.emitGroup(textGroup("x sk-pr"));
    expect(seen).toEqual([]);
    channel.emitGroup(textGroup("other", "msg_2"));
    expect(seen).toEqual(["provider_event", "msg_1:x sk-pr", "provider_event", "msg_2:other"]);
    channel.emitGroup(textGroup("y sk"));
    channel.emit(frame("turn_ended", { turn: 0, response_id: "r", status: "completed", usage: null }));
    expect(seen.slice(4)).toEqual(["provider_event", "msg_1:y sk", "turn_ended"]);
  });

  it("a group emitted after the channel closed throws, held back or not (it would be lost silently)", () => {
    const channel = new FrameChannel({ runId: "run_c", clock: () => 0, secrets: [KEY] });
    channel.close();
    expect(() => channel.emitGroup(textGroup("x sk-pr"))).toThrow(/emitted after run_ended/);
    expect(() => channel.emitGroup(textGroup("plain."))).toThrow(/emitted after run_ended/);
  });

  it("without secrets nothing is held; a reasoning delta is guarded as an answer's is", async () => {
    const plain = new FrameChannel({ runId: "run_p", clock: () => 0 });
    const seen: Frame[] = [];
    plain.observe((f) => seen.push(f));
    plain.emitGroup(textGroup("sk-pro"));
    expect(seen).toHaveLength(2);
    const reasoning = (text: string): Frame[] => [
      frame("provider_event", {
        turn: 0,
        status: "event",
        data: { type: "response.reasoning_summary_text.delta", delta: text },
      }),
      frame("reasoning_delta", {
        turn: 0,
        item_id: "rs_1",
        output_index: 0,
        channel: "summary",
        index: 0,
        delta: text,
      }),
    ];
    const frames = await through([reasoning("key sk-probe-S"), reasoning("ECRET-123456.")]);
    expect(frames.flatMap((f) => (f.type === "reasoning_delta" ? [f.delta] : []))).toEqual(["key ***", "."]);
  });

  it("from a translated wire (Chat Completions), a delta left empty goes, as the translator makes none of empty text", async () => {
    const chunk = (text: string): Frame[] => [
      frame("provider_event", {
        turn: 0,
        status: "event",
        data: { object: "chat.completion.chunk", choices: [{ index: 0, delta: { content: text } }] },
      }),
      frame("output_text_delta", { turn: 0, item_id: "m", output_index: 0, content_index: 0, delta: text }),
    ];
    const frames = await through([chunk("token=sk-pro"), chunk("be-SECRET-12"), chunk("3456\n")]);
    expect(deltas(frames)).toEqual(["token=***", "\n"]);
    const contents = frames.flatMap((f) =>
      f.type === "provider_event"
        ? [(f.data as { choices: { delta: { content: string } }[] }).choices[0]?.delta.content]
        : [],
    );
    expect(contents).toEqual(["token=***", "", "\n"]);
  });

  it("split between two content parts of a message: masked in the deltas and in every event that holds a part's text", async () => {
    const parts = ["a sk-probe-SEC", "RET-123456 b"];
    const item = (texts: string[]) => ({
      type: "message",
      id: "msg_1",
      role: "assistant",
      status: "completed",
      content: texts.map((text) => ({ type: "output_text", text, annotations: [] })),
    });
    const event = (data: Record<string, unknown>): Frame =>
      frame("provider_event", { turn: 0, status: "event", event_name: String(data.type), data });
    const where = (ci: number) => ({ item_id: "msg_1", output_index: 0, content_index: ci });
    const groups: Frame[][] = [
      [event({ type: "response.output_item.added", output_index: 0, item: item([]) })],
    ];
    for (const [ci, text] of parts.entries()) {
      groups.push([
        event({ type: "response.content_part.added", ...where(ci), part: { type: "output_text", text: "" } }),
      ]);
      groups.push([
        event({ type: "response.output_text.delta", ...where(ci), delta: text }),
        frame("output_text_delta", { turn: 0, ...where(ci), delta: text }),
      ]);
      groups.push([event({ type: "response.output_text.done", ...where(ci), text })]);
      groups.push([
        event({ type: "response.content_part.done", ...where(ci), part: { type: "output_text", text } }),
      ]);
    }
    groups.push([
      event({ type: "response.output_item.done", output_index: 0, item: item(parts) }),
      frame("item_done", { turn: 0, output_index: 0, item: item(parts) }),
    ]);
    groups.push([
      event({
        type: "response.completed",
        response: { id: "r", status: "completed", output: [item(parts)] },
      }),
    ]);
    const frames = await through(groups);
    // Nothing added, moved or dropped.
    expect(frames.map((f) => f.type)).toEqual([...groups.flat().map((f) => f.type), "turn_ended"]);
    expect(deltas(frames)).toEqual(["a ***", " b"]);
    expect(holdsPartOfKey(JSON.stringify(frames))).toBe(false);
    // Every copy of a part's text is the part as its deltas went out.
    const texts = JSON.stringify(
      frames.map((f) => (f.type === "provider_event" ? f.data : f.type === "item_done" ? f.item : null)),
    );
    expect(texts).not.toContain("RET-123456 b");
    expect(texts.match(/"text":"a \*\*\*"/g)?.length).toBe(5);
    expect(texts.match(/"text":" b"/g)?.length).toBe(5);
  });

  it("a Chat Completions tool call's argument fragments are guarded in the chunks, each at its own place", async () => {
    const fragment = (text: string, call = 0, id = "chatcmpl_1"): Frame[] => [
      frame("provider_event", {
        turn: 0,
        status: "event",
        data: {
          id,
          object: "chat.completion.chunk",
          model: "m",
          choices: [{ index: 0, delta: { tool_calls: [{ index: call, function: { arguments: text } }] } }],
        },
      }),
    ];
    const argsOf = (frames: Frame[]) =>
      frames.flatMap((f) => {
        if (f.type !== "provider_event") return [];
        const data = f.data as {
          choices: { delta: { tool_calls: { function: { arguments: string } }[] } }[];
        };
        return [data.choices[0]?.delta.tool_calls[0]?.function.arguments];
      });
    // The last chunk's id equals its fragment: only the arguments change.
    const frames = await through([
      fragment('{"path":"notes-sk-pro'),
      fragment("be-SECRET-12"),
      fragment('3456.txt"}', 0, '3456.txt"}'),
    ]);
    expect(argsOf(frames)).toEqual(['{"path":"notes-***', "", '.txt"}']);
    const ids = frames.flatMap((f) => (f.type === "provider_event" ? [(f.data as { id: string }).id] : []));
    expect(ids).toEqual(["chatcmpl_1", "chatcmpl_1", '3456.txt"}']);
    expect(holdsPartOfKey(JSON.stringify(frames.slice(0, 2)))).toBe(false);
    // Fragments of two calls are two streams: a key split between them is not one secret.
    const two = await through([fragment('{"a":"sk-probe-'), fragment('SECRET-123456"}', 1)]);
    expect(argsOf(two)).toEqual(['{"a":"sk-probe-', 'SECRET-123456"}']);
  });

  it("an AI SDK model's tool input deltas are guarded in its stream parts", async () => {
    const part = (delta: string): Frame[] => [
      frame("provider_event", {
        turn: 0,
        status: "event",
        data: { type: "tool-input-delta", id: "call_1", delta },
      }),
    ];
    const frames = await through([part('{"q":"sk-probe-SE'), part('CRET-123456"}')]);
    expect(eventDeltas(frames)).toEqual(['{"q":"***', '"}']);
  });

  it("a call's argument deltas (no frame derived from them) are guarded in the provider events", async () => {
    const args = (text: string): Frame[] => [
      frame("provider_event", {
        turn: 0,
        status: "event",
        data: {
          type: "response.function_call_arguments.delta",
          item_id: "fc_1",
          output_index: 1,
          delta: text,
        },
      }),
    ];
    const frames = await through([args('{"content":"sk-probe-'), args('SECRET-123456"}')]);
    expect(eventDeltas(frames)).toEqual(['{"content":"***', '"}']);
  });

  it("a refusal's deltas are guarded: Open Responses events and Chat Completions chunks alike", async () => {
    const native = (delta: string): Frame[] => [
      frame("provider_event", {
        turn: 0,
        status: "event",
        data: { type: "response.refusal.delta", item_id: "msg_1", output_index: 0, content_index: 0, delta },
      }),
    ];
    const nativeFrames = await through([native("no, sk-probe-SE"), native("CRET-123456 stays")]);
    expect(eventDeltas(nativeFrames)).toEqual(["no, ***", " stays"]);
    const chunk = (refusal: string): Frame[] => [
      frame("provider_event", {
        turn: 0,
        status: "event",
        data: { id: "c1", object: "chat.completion.chunk", choices: [{ index: 0, delta: { refusal } }] },
      }),
    ];
    const frames = await through([chunk("no, sk-probe-SE"), chunk("CRET-123456 stays")]);
    const refusals = frames.flatMap((f) =>
      f.type === "provider_event"
        ? [(f.data as { choices: { delta: { refusal: string } }[] }).choices[0]?.delta.refusal]
        : [],
    );
    expect(refusals).toEqual(["no, ***", " stays"]);
    expect(holdsPartOfKey(JSON.stringify(frames))).toBe(false);
  });

  it("a reasoning summary's deltas from a Chat Completions chunk or an AI SDK part are guarded too", async () => {
    const chat = (text: string): Frame[] => [
      frame("provider_event", {
        turn: 0,
        status: "event",
        data: {
          object: "chat.completion.chunk",
          choices: [{ index: 0, delta: { reasoning_content: text } }],
        },
      }),
      frame("reasoning_delta", {
        turn: 0,
        item_id: "rs_1",
        output_index: 0,
        channel: "text",
        index: 0,
        delta: text,
      }),
    ];
    const ai = (text: string): Frame[] => [
      frame("provider_event", {
        turn: 0,
        status: "event",
        data: { type: "reasoning-delta", id: "r", delta: text },
      }),
      frame("reasoning_delta", {
        turn: 0,
        item_id: "rs_2",
        output_index: 0,
        channel: "summary",
        index: 0,
        delta: text,
      }),
    ];
    for (const group of [chat, ai]) {
      const frames = await through([group("key sk-probe-S"), group("ECRET-123456.")]);
      expect(holdsPartOfKey(JSON.stringify(frames))).toBe(false);
    }
  });

  it("held deltas that spell a whole secret and end like the start of one are masked when another frame ends the hold", async () => {
    const summary = (text: string): Frame[] => [
      frame("provider_event", {
        turn: 0,
        status: "event",
        data: {
          type: "response.reasoning_summary_text.delta",
          item_id: "rs_1",
          summary_index: 0,
          delta: text,
        },
      }),
      frame("reasoning_delta", {
        turn: 0,
        item_id: "rs_1",
        output_index: 0,
        channel: "summary",
        index: 0,
        delta: text,
      }),
    ];
    // "stays" ends in "s", the first character of the key: the hold lasts until turn_ended.
    const pieces = ["the key sk-probe-SE", "CRET-123456 stays"];
    const reasoning = await through(pieces.map(summary));
    expect(reasoning.flatMap((f) => (f.type === "reasoning_delta" ? [f.delta] : []))).toEqual([
      "the key ***",
      " stays",
    ]);
    expect(holdsPartOfKey(JSON.stringify(reasoning))).toBe(false);
    const text = await through(pieces.map((p) => textGroup(p)));
    expect(deltas(text)).toEqual(["the key ***", " stays"]);
    expect(holdsPartOfKey(JSON.stringify(text))).toBe(false);
  });
});
