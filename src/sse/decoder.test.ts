import { describe, expect, it } from "vitest";
import { STANDARD_CHUNKINGS, seededRandom, utf8 } from "../../test/support/chunking.js";
import { EddyError } from "../errors.js";
import { createSseDecoder, decodeSse, type SseMessage } from "./decoder.js";

interface Decoded {
  messages: SseMessage[];
  comments: string[];
}

function decodeChunks(chunks: (Uint8Array | string)[], maxMessageSize?: number): Decoded {
  const messages: SseMessage[] = [];
  const comments: string[] = [];
  const decoder = createSseDecoder({
    onMessage: (m) => messages.push(m),
    onComment: (c) => comments.push(c),
    ...(maxMessageSize === undefined ? {} : { maxMessageSize }),
  });
  for (const c of chunks) decoder.feed(c);
  decoder.end();
  return { messages, comments };
}

/** Decodes `input` at every standard chunking and asserts they all agree; returns the result. */
function decodeEverywhere(input: string | Uint8Array): Decoded {
  const bytes = typeof input === "string" ? utf8(input) : input;
  const results = STANDARD_CHUNKINGS.map((c) => ({ name: c.name, result: decodeChunks(c.split(bytes)) }));
  const first = results[0];
  if (first === undefined) throw new Error("no chunkings");
  for (const r of results) expect(r.result, `chunking ${r.name}`).toEqual(first.result);
  return first.result;
}

const msg = (data: string, raw: string, event?: string): SseMessage =>
  event === undefined ? { data, raw } : { data, raw, event };

describe("SSE decoder (WHATWG rules)", () => {
  it.each<[string, string, SseMessage[]]>([
    ["LF", "event: a\ndata: 1\n\ndata: 2\n\n", [msg("1", "event: a\ndata: 1\n", "a"), msg("2", "data: 2\n")]],
    [
      "CRLF",
      "event: a\r\ndata: 1\r\n\r\ndata: 2\r\n\r\n",
      [msg("1", "event: a\r\ndata: 1\r\n", "a"), msg("2", "data: 2\r\n")],
    ],
    [
      "CR only",
      "event: a\rdata: 1\r\rdata: 2\r\r",
      [msg("1", "event: a\rdata: 1\r", "a"), msg("2", "data: 2\r")],
    ],
    [
      "mixed line endings",
      "data: 1\r\n\ndata: 2\r\r\ndata: 3\n\r",
      [msg("1", "data: 1\r\n"), msg("2", "data: 2\r"), msg("3", "data: 3\n")],
    ],
    [
      "multi-line data joined with LF",
      "data: a\ndata: b\ndata:\ndata: c\n\n",
      [msg("a\nb\n\nc", "data: a\ndata: b\ndata:\ndata: c\n")],
    ],
    ["no space after colon", 'data:{"a":1}\n\n', [msg('{"a":1}', 'data:{"a":1}\n')]],
    ["only one space is stripped", "data:  two\n\n", [msg(" two", "data:  two\n")]],
    ["field without colon is a field with empty value", "data\n\n", [msg("", "data\n")]],
    [
      "empty data is dispatched (a ping)",
      "event: ping\ndata:\n\n",
      [msg("", "event: ping\ndata:\n", "ping")],
    ],
    ["a block with no data field dispatches nothing", "event: ping\n\ndata: x\n\n", [msg("x", "data: x\n")]],
    ["an empty event name is no event name (event:)", "event:\ndata: 1\n\n", [msg("1", "event:\ndata: 1\n")]],
    [
      "an empty event name is no event name (event: )",
      "event: \ndata: 1\n\n",
      [msg("1", "event: \ndata: 1\n")],
    ],
    ["an empty event name is no event name (event)", "event\ndata: 1\n\n", [msg("1", "event\ndata: 1\n")]],
    [
      "a later empty event name clears an earlier one",
      "event: a\nevent:\ndata: 1\n\n",
      [msg("1", "event: a\nevent:\ndata: 1\n")],
    ],
    ["a one-character event name is kept", "event: x\ndata: 1\n\n", [msg("1", "event: x\ndata: 1\n", "x")]],
    ["unknown fields are ignored", "foo: bar\ndata: x\n\n", [msg("x", "foo: bar\ndata: x\n")]],
    ["[DONE] is an ordinary message", "data: [DONE]\n\n", [msg("[DONE]", "data: [DONE]\n")]],
    [
      "final message without its blank line",
      "data: 1\n\ndata: 2\n",
      [msg("1", "data: 1\n"), msg("2", "data: 2\n")],
    ],
    [
      "final line without its line ending",
      "data: 1\n\nevent: e\ndata: 2",
      [msg("1", "data: 1\n"), msg("2", "event: e\ndata: 2", "e")],
    ],
    ["leading blank lines", "\n\n\ndata: 1\n\n", [msg("1", "data: 1\n")]],
    [
      "event name with spaces kept",
      "event:  odd name \ndata: 1\n\n",
      [msg("1", "event:  odd name \ndata: 1\n", " odd name ")],
    ],
  ])("%s", (_label, input, expected) => {
    expect(decodeEverywhere(input).messages).toEqual(expected);
  });

  it("dispatches blocks without a data line on request (datalessBlocks)", () => {
    const input = "event: ping\n\nid: 3\n\n: comment only\n\ndata: x\n\nevent: tail";
    for (const chunking of STANDARD_CHUNKINGS) {
      const messages: SseMessage[] = [];
      const decoder = createSseDecoder({ onMessage: (m) => messages.push(m), datalessBlocks: "dispatch" });
      for (const chunk of chunking.split(utf8(input))) decoder.feed(chunk);
      decoder.end();
      expect(messages, chunking.name).toEqual([
        msg("", "event: ping\n", "ping"),
        { data: "", raw: "id: 3\n", id: "3" },
        msg("x", "data: x\n"),
        msg("", "event: tail", "tail"),
      ]);
    }
  });

  it("reports comments separately and never as messages", () => {
    const out = decodeEverywhere(": OPENROUTER PROCESSING\n\n:\n\ndata: 1\n: mid-message\n\n:keep-alive\n\n");
    expect(out.messages).toEqual([msg("1", "data: 1\n: mid-message\n")]);
    expect(out.comments).toEqual(["OPENROUTER PROCESSING", "", "mid-message", "keep-alive"]);
  });

  it("strips a leading BOM (bytes and text input)", () => {
    const input = "\uFEFFdata: 1\n\n";
    expect(decodeEverywhere(input).messages).toEqual([msg("1", "data: 1\n")]);
    expect(decodeChunks(["\uFEFF", "data: 1\n\n"]).messages).toEqual([msg("1", "data: 1\n")]);
  });

  it("keeps a BOM that is not at the start", () => {
    expect(decodeEverywhere("data: a\uFEFFb\n\n").messages[0]?.data).toBe("a\uFEFFb");
  });

  it("reassembles UTF-8 sequences split across chunks", () => {
    const out = decodeEverywhere('data: {"delta":"北京 🌍 café"}\n\n');
    expect(out.messages[0]?.data).toBe('{"delta":"北京 🌍 café"}');
    expect(out.messages[0]?.data).not.toContain("\uFFFD");
  });

  it("turns invalid UTF-8 into U+FFFD instead of failing", () => {
    const bytes = new Uint8Array([...utf8("data: a"), 0xff, ...utf8("b\n\n")]);
    expect(decodeEverywhere(bytes).messages[0]?.data).toBe("a\uFFFDb");
  });

  it("reads id and retry fields", () => {
    const out = decodeEverywhere("id: 7\nretry: 1500\nretry: x\ndata: 1\n\nid: a\0b\ndata: 2\n\n");
    expect(out.messages[0]).toMatchObject({ id: "7", retry: 1500, data: "1" });
    expect(out.messages[1]?.id).toBeUndefined();
  });

  it("does not carry an id forward to later messages (docs/decisions.md #12)", () => {
    const out = decodeEverywhere("id: 7\ndata: 1\n\ndata: 2\n\n");
    expect(out.messages).toEqual([{ data: "1", raw: "id: 7\ndata: 1\n", id: "7" }, msg("2", "data: 2\n")]);
  });

  it("splits a CRLF pair across chunks without counting two line ends", () => {
    const out = decodeChunks(["data: 1\r", "\n\r", "\ndata: 2\r", "\n", "\r\n"]);
    expect(out.messages).toEqual([msg("1", "data: 1\r\n"), msg("2", "data: 2\r\n")]);
  });

  it("bounds message size", () => {
    const big = `data: ${"x".repeat(200)}\n\n`;
    expect(() => decodeChunks([utf8(big)], 100)).toThrowError(EddyError);
    try {
      decodeChunks([utf8(big)], 100);
    } catch (err) {
      expect((err as EddyError).code).toBe("sse_message_too_large");
      expect((err as EddyError).message).toMatch(/exceeds maxMessageSize \(100\)/);
    }
  });

  it("bounds an endless line that never ends", () => {
    const chunks = Array.from({ length: 50 }, () => utf8("y".repeat(10)));
    expect(() => decodeChunks([utf8("data: "), ...chunks], 100)).toThrowError(/exceeds maxMessageSize/);
  });

  it("bounds a message made of many data lines", () => {
    const chunks = Array.from({ length: 50 }, () => utf8("data: 0123456789\n"));
    expect(() => decodeChunks(chunks, 100)).toThrowError(/exceeds maxMessageSize/);
  });

  it("joins a long line split over many chunks in linear time", () => {
    // 2 MB of data in 16-byte chunks: re-concatenating the partial line on every feed would copy
    // ~130 GB; kept in pieces it is one join.
    const value = "0123456789abcdef".repeat(128 * 1024);
    const bytes = utf8(`event: big\ndata: ${value}\n\ndata: 2\n\n`);
    const chunks: Uint8Array[] = [];
    for (let i = 0; i < bytes.length; i += 16) chunks.push(bytes.subarray(i, i + 16));
    const started = Date.now();
    const out = decodeChunks(chunks);
    expect(Date.now() - started).toBeLessThan(2_000);
    expect(out.messages.map((m) => [m.event, m.data.length])).toEqual([
      ["big", value.length],
      [undefined, 1],
    ]);
    expect(out.messages[0]?.data).toBe(value);
    expect(out.messages[0]?.raw).toBe(`event: big\ndata: ${value}\n`);
  });

  it.each([
    ["LF", "\n"],
    ["CRLF", "\r\n"],
    ["CR", "\r"],
  ])("decodes large chunks (dispatched from their first blank line on) alike: %s", (_label, nl) => {
    // Chunks over 2 KiB are decoded in two steps, cut after their first blank line.
    const body = Array.from(
      { length: 40 },
      (_, i) => `event: e${i}${nl}data: {"i":${i},"t":"北京 🌍 ${"x".repeat(i * 7)}"}${nl}${nl}`,
    ).join("");
    const out = decodeEverywhere(body);
    expect(out.messages).toHaveLength(40);
    expect(out.messages[39]).toEqual(
      msg(
        `{"i":39,"t":"北京 🌍 ${"x".repeat(273)}"}`,
        `event: e39${nl}data: {"i":39,"t":"北京 🌍 ${"x".repeat(273)}"}${nl}`,
        "e39",
      ),
    );
    const bytes = utf8(body);
    const big = decodeChunks([bytes.subarray(0, 3000), bytes.subarray(3000)]);
    expect(big.messages).toEqual(out.messages);
  });

  it("keeps the field fast paths exact", () => {
    const out = decodeEverywhere("data:x\ndata:\ndata: \nevent:\nevent:e2\ndatax: y\neventx: z\n\n");
    expect(out.messages).toEqual([
      msg("x\n\n", "data:x\ndata:\ndata: \nevent:\nevent:e2\ndatax: y\neventx: z\n", "e2"),
    ]);
  });

  it("is deterministic at any chunking (randomized streams)", () => {
    const rnd = seededRandom(42);
    const pieces = [
      'data: {"a":1}',
      "event: x",
      ": c",
      "",
      "data: 北京🌍",
      "id: 1",
      "data:",
      "retry: 5",
      "data: [DONE]",
    ];
    const endings = ["\n", "\r\n", "\r"];
    for (let round = 0; round < 40; round++) {
      let text = "";
      for (let i = 0; i < 30; i++) {
        text +=
          pieces[Math.floor(rnd() * pieces.length)] + (endings[Math.floor(rnd() * endings.length)] ?? "\n");
      }
      decodeEverywhere(text);
    }
  });
});

describe("decodeSse (async adapter)", () => {
  it("reads a web ReadableStream and an async iterable alike", async () => {
    const bytes = utf8(": hi\n\nevent: a\ndata: 1\n\ndata: 2");
    const stream = new ReadableStream<Uint8Array>({
      start(c) {
        c.enqueue(bytes.subarray(0, 5));
        c.enqueue(bytes.subarray(5));
        c.close();
      },
    });
    const comments: string[] = [];
    const fromStream: SseMessage[] = [];
    for await (const m of decodeSse(stream, { onComment: (c) => comments.push(c) })) fromStream.push(m);
    async function* gen() {
      yield bytes.subarray(0, 3);
      yield bytes.subarray(3);
    }
    const fromIterable: SseMessage[] = [];
    for await (const m of decodeSse(gen())) fromIterable.push(m);
    expect(fromStream).toEqual([msg("1", "event: a\ndata: 1\n", "a"), msg("2", "data: 2")]);
    expect(fromIterable).toEqual(fromStream);
    expect(comments).toEqual(["hi"]);
  });
});
