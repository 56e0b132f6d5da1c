/**
 * Bytes → frames at the byte level: each case is decoded at every standard chunking (whole,
 * 16 KiB, random, 7 B, 1 B) with validation on, and must give the same frames every time.
 */
import { describe, expect, it } from "vitest";
import { type Chunking, STANDARD_CHUNKINGS, utf8 } from "../../test/support/chunking.js";
import { EddyError } from "../errors.js";
import type { OutputTextDeltaFrame, ProviderEventFrame } from "./frame.js";
import { createFrameDecoder, type FrameDecoderOptions } from "./frame-decoder.js";
import type { SseFrame } from "./from-sse.js";

interface Decoded {
  frames: SseFrame[];
  comments: string[];
}

function decode(bytes: Uint8Array, chunking: Chunking, options: Partial<FrameDecoderOptions> = {}): Decoded {
  const frames: SseFrame[] = [];
  const comments: string[] = [];
  const decoder = createFrameDecoder({
    turn: 0,
    ...options,
    onFrame: (f) => frames.push(f),
    onComment: (c) => comments.push(c),
  });
  for (const chunk of chunking.split(bytes)) decoder.feed(chunk);
  decoder.end();
  return { frames, comments };
}

/** Decodes at every standard chunking, asserts they agree, and returns the result. */
function decodeEverywhere(input: string | Uint8Array, options: Partial<FrameDecoderOptions> = {}): Decoded {
  const bytes = typeof input === "string" ? utf8(input) : input;
  const [first, ...rest] = STANDARD_CHUNKINGS.map((c) => ({
    name: c.name,
    result: decode(bytes, c, options),
  }));
  if (first === undefined) throw new Error("no chunkings");
  for (const r of rest) expect(r.result, `chunking ${r.name}`).toEqual(first.result);
  return first.result;
}

type ProviderEventFields = Omit<ProviderEventFrame, "run_id" | "seq" | "ts" | "type" | "turn">;

const providerEvent = (fields: ProviderEventFields): ProviderEventFrame => ({
  run_id: "",
  seq: -1,
  ts: 0,
  type: "provider_event",
  turn: 0,
  ...fields,
});

const textDelta = (delta: string, itemId = "msg_1"): OutputTextDeltaFrame => ({
  run_id: "",
  seq: -1,
  ts: 0,
  type: "output_text_delta",
  turn: 0,
  item_id: itemId,
  output_index: 0,
  content_index: 0,
  delta,
});

const DELTA_TYPE = "response.output_text.delta";
const deltaEvent = (delta: string) => ({
  type: DELTA_TYPE,
  sequence_number: 3,
  item_id: "msg_1",
  output_index: 0,
  content_index: 0,
  delta,
});
const DELTA = deltaEvent("Hi");
const DELTA_JSON = JSON.stringify(DELTA);
/** The frames of one well-formed `response.output_text.delta` message with its `event:` line. */
const DELTA_FRAMES = [
  providerEvent({ status: "event", event_name: DELTA_TYPE, data: DELTA }),
  textDelta("Hi"),
];
const lf = `event: ${DELTA_TYPE}\ndata: ${DELTA_JSON}\n\n`;

const UNKNOWN = (type: string) =>
  `unknown event type "${type}": not in Open Responses 2026-04-24 (extension events must be prefixed with an implementor slug, e.g. "acme:${type}")`;

describe("createFrameDecoder: bytes → frames", () => {
  it.each<[string, string | Uint8Array, SseFrame[]]>([
    ["LF line endings", lf, DELTA_FRAMES],
    ["CRLF line endings", lf.replaceAll("\n", "\r\n"), DELTA_FRAMES],
    ["CR-only line endings", lf.replaceAll("\n", "\r"), DELTA_FRAMES],
    ["comment lines give no frame", `: keep-alive\n\n:\n\n: mid\n${lf}: bye\n\n`, DELTA_FRAMES],
    ["a leading BOM is stripped", `\uFEFF${lf}`, DELTA_FRAMES],
    [
      "empty data: one provider_event with status empty, nothing else",
      "event: ping\ndata:\n\n",
      [providerEvent({ status: "empty", event_name: "ping", raw: "" })],
    ],
    ["empty data without event line", "data\n\n", [providerEvent({ status: "empty", raw: "" })]],
    [
      "a block without a data line (event: ping keep-alive) is recorded like a ping",
      `event: ping\n\n${lf}`,
      [providerEvent({ status: "empty", event_name: "ping", raw: "" }), ...DELTA_FRAMES],
    ],
    ...["event:", "event: ", "event"].map((line): [string, string, SseFrame[]] => [
      `an empty event name (${JSON.stringify(line)}) is absent: no false name mismatch`,
      `${line}\ndata: ${DELTA_JSON}\n\n`,
      [providerEvent({ status: "event", data: DELTA }), textDelta("Hi")],
    ]),
    [
      "whitespace-only data: status empty, raw kept",
      "data:   \t \n\n",
      [providerEvent({ status: "empty", raw: "  \t " })],
    ],
    [
      "multi-line whitespace data: status empty",
      "data: \ndata: \n\n",
      [providerEvent({ status: "empty", raw: "\n" })],
    ],
    [
      "no event: line: no event_name and no error",
      `data: ${DELTA_JSON}\n\n`,
      [providerEvent({ status: "event", data: DELTA }), textDelta("Hi")],
    ],
    [
      "event/type mismatch: error recorded, dispatch on data.type",
      `event: response.created\ndata: ${DELTA_JSON}\n\n`,
      [
        providerEvent({
          status: "event",
          event_name: "response.created",
          data: DELTA,
          errors: [`SSE event name "response.created" differs from data.type "${DELTA_TYPE}"`],
        }),
        textDelta("Hi"),
      ],
    ],
    [
      "[DONE]: status done with raw",
      `${lf}data: [DONE]\n\n`,
      [...DELTA_FRAMES, providerEvent({ status: "done", raw: "[DONE]" })],
    ],
    ["final message without its blank line", lf.slice(0, -1), DELTA_FRAMES],
    ["final line without its line ending", lf.slice(0, -2), DELTA_FRAMES],
    [
      "unknown event type `keepalive`: passed through with an error",
      'event: keepalive\ndata: {"type":"keepalive"}\n\n',
      [
        providerEvent({
          status: "event",
          event_name: "keepalive",
          data: { type: "keepalive" },
          errors: [UNKNOWN("keepalive")],
        }),
      ],
    ],
    [
      "unknown `response.foo.delta`: passed through with an error, no derived frame",
      `event: response.foo.delta\ndata: ${JSON.stringify({ ...DELTA, type: "response.foo.delta" })}\n\n`,
      [
        providerEvent({
          status: "event",
          event_name: "response.foo.delta",
          data: { ...DELTA, type: "response.foo.delta" },
          errors: [UNKNOWN("response.foo.delta")],
        }),
      ],
    ],
    [
      "extension event with a sequence_number: passed through, no error",
      'event: acme:trace_event\ndata: {"type":"acme:trace_event","sequence_number":7,"span":"s1"}\n\n',
      [
        providerEvent({
          status: "event",
          event_name: "acme:trace_event",
          data: { type: "acme:trace_event", sequence_number: 7, span: "s1" },
        }),
      ],
    ],
    [
      "a schema violation is recorded, never fatal",
      `data: ${JSON.stringify({ ...DELTA, delta: 5 })}\n\n${lf}`,
      [
        providerEvent({ status: "event", data: { ...DELTA, delta: 5 }, errors: ["/delta must be string"] }),
        ...DELTA_FRAMES,
      ],
    ],
  ])("%s", (_label, input, expected) => {
    expect(decodeEverywhere(input).frames).toEqual(expected);
  });

  it("reports comments to onComment, never as frames", () => {
    expect(decodeEverywhere(`: keep-alive\n\n${lf}:bye\n\n`).comments).toEqual(["keep-alive", "bye"]);
  });

  const nested = (depth: number) => `${"[".repeat(depth)}${"]".repeat(depth)}`;

  it.each([
    ["data that is not JSON", '{"type":"response.output_text.delta","delta":', /^data is not valid JSON: /],
    [
      "data nesting deeper than JSON_MAX_DEPTH",
      `{"type":"${DELTA_TYPE}","delta":"x","logprobs":${nested(20_000)}}`,
      /^data nests deeper than 1000 levels of arrays and objects$/,
    ],
  ])("%s: status invalid_json with raw, and the stream goes on", (_label, bad, error) => {
    const { frames } = decodeEverywhere(`event: ${DELTA_TYPE}\ndata: ${bad}\n\n${lf}`);
    expect(frames).toEqual([
      providerEvent({
        status: "invalid_json",
        event_name: DELTA_TYPE,
        raw: bad,
        errors: [expect.stringMatching(error)],
      }),
      ...DELTA_FRAMES,
    ]);
    // Every frame can be written to a tape, and the event derived no text delta.
    for (const f of frames) expect(() => JSON.stringify(f)).not.toThrow();
  });

  it("the depth bound is exact: 999 arrays inside the event object are 1,000 levels, and are parsed", () => {
    const atBound = { type: "x.y", v: JSON.parse(nested(999)) };
    const [kept] = decodeEverywhere(`data: ${JSON.stringify(atBound)}\n\n`).frames;
    expect(kept).toMatchObject({ status: "event", data: atBound });
  });

  it("a message larger than maxMessageSize fails with sse_message_too_large", () => {
    const input = utf8(`${lf}data: ${JSON.stringify(deltaEvent("x".repeat(300)))}\n\n`);
    for (const chunking of STANDARD_CHUNKINGS) {
      let error: unknown;
      try {
        decode(input, chunking, { maxMessageSize: 200 });
      } catch (err) {
        error = err;
      }
      expect(EddyError.isInstance(error), chunking.name).toBe(true);
      expect((error as EddyError).code).toBe("sse_message_too_large");
      expect((error as EddyError).message).toMatch(
        /exceeds maxMessageSize \(200\): the stream is not read further\. If the provider really sends messages this large, a program can raise the provider.s maxMessageSize/,
      );
    }
  });

  it("reassembles a text delta split inside every UTF-8 sequence (北京, 🌍)", () => {
    const text = "北京 🌍!";
    const bytes = utf8(`event: ${DELTA_TYPE}\ndata: ${JSON.stringify(deltaEvent(text))}\n\n`);
    const expected = [
      providerEvent({ status: "event", event_name: DELTA_TYPE, data: deltaEvent(text) }),
      textDelta(text),
    ];
    expect(decodeEverywhere(bytes).frames).toEqual(expected);
    // Every cut point, so each multi-byte sequence is split after each of its bytes.
    const start = bytes.indexOf(0xe5); // first byte of 北
    for (let cut = start; cut <= start + 12; cut++) {
      const chunking: Chunking = {
        name: `cut at ${cut}`,
        split: (b) => [b.subarray(0, cut), b.subarray(cut)],
      };
      expect(decode(bytes, chunking).frames, chunking.name).toEqual(expected);
    }
  });

  it("with validation off, records no schema errors (the event-name check stays)", () => {
    const input = `event: keepalive\ndata: {"type":"keepalive"}\n\nevent: x\ndata: {"type":"y"}\n\n`;
    expect(decodeEverywhere(input, { validate: false }).frames).toEqual([
      providerEvent({ status: "event", event_name: "keepalive", data: { type: "keepalive" } }),
      providerEvent({
        status: "event",
        event_name: "x",
        data: { type: "y" },
        errors: ['SSE event name "x" differs from data.type "y"'],
      }),
    ]);
  });

  it("stamps the turn it was given on every frame", () => {
    const { frames } = decodeEverywhere(lf, { turn: 4 });
    expect(frames.map((f) => f.turn)).toEqual([4, 4]);
  });
});
