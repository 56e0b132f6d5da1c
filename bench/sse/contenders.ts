/**
 * The contenders of the SSE benchmark: each turns the same in-memory chunks into parsed events
 * (or, for eddy, stamped frames) and hands each to a sink.
 */
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { createParser } from "eventsource-parser";
import { Stream } from "openai/core/streaming";
import type * as FrameDecoderModule from "../../src/frames/frame-decoder.js";
import type { SseFrame } from "../../src/frames/from-sse.js";
import type * as StampModule from "../../src/frames/stamp.js";
import type * as SseDecoderModule from "../../src/sse/decoder.js";
import { importBuilt } from "../built.js";

// eddy from its build, as users run it (bench/built.ts), typed by its sources.
const { createFrameDecoder } = await importBuilt<typeof FrameDecoderModule>("frames/frame-decoder.js");
const { createFrameStamper, systemClock } = await importBuilt<typeof StampModule>("frames/stamp.js");
const { createSseDecoder } = await importBuilt<typeof SseDecoderModule>("sse/decoder.js");

export interface SseContender {
  name: string;
  /** Package version, or "-" for code of this repo. */
  version: string;
  /** What it does, in one line (printed with the results). */
  what: string;
  /** Timed only in cells of at most this many deltas (a side measurement, kept off the costly cells). */
  maxDeltas?: number;
  /** Decodes `chunks`, handing each delivered item (event or frame) to `sink`. */
  decode: (chunks: readonly Uint8Array[], sink: (item: unknown) => void) => void | Promise<void>;
}

const DONE = "[DONE]";

/**
 * The floor: the least a correct client of *this* stream must do. Streaming UTF-8 decode, split on
 * the blank line, take the `data: ` text, JSON.parse. LF only, no comments, no multi-line data.
 * Text without a blank line waits in pieces (joined once one arrives), so that a long event in
 * small chunks costs linear time, not a re-scan and re-copy of the whole buffer per chunk.
 */
function floor(chunks: readonly Uint8Array[], sink: (item: unknown) => void): void {
  const decoder = new TextDecoder();
  let pending: string[] = [];
  let pendingEndsWithLF = false;
  for (const chunk of chunks) {
    const text = decoder.decode(chunk, { stream: true });
    if (text.length === 0) continue;
    pending.push(text);
    if (text.indexOf("\n\n") === -1 && !(pendingEndsWithLF && text.charCodeAt(0) === 10)) {
      pendingEndsWithLF = text.charCodeAt(text.length - 1) === 10;
      continue;
    }
    const buffer = pending.length === 1 ? text : pending.join("");
    let start = 0;
    for (let end = buffer.indexOf("\n\n"); end !== -1; end = buffer.indexOf("\n\n", start)) {
      const dataAt = buffer.indexOf("data: ", start);
      const data = buffer.slice(dataAt + 6, end);
      if (data !== DONE) sink(JSON.parse(data));
      start = end + 2;
    }
    pending = start < buffer.length ? [buffer.slice(start)] : [];
    pendingEndsWithLF = buffer.charCodeAt(buffer.length - 1) === 10;
  }
}

function eventsourceParser(chunks: readonly Uint8Array[], sink: (item: unknown) => void): void {
  const decoder = new TextDecoder();
  const parser = createParser({
    onEvent: (event) => {
      if (event.data !== DONE) sink(JSON.parse(event.data));
    },
  });
  for (const chunk of chunks) parser.feed(decoder.decode(chunk, { stream: true }));
}

/** eddy's SSE decoder alone, used exactly like eventsource-parser above: the decoder-vs-decoder row. */
function eddySseDecoder(chunks: readonly Uint8Array[], sink: (item: unknown) => void): void {
  const decoder = createSseDecoder({
    onMessage: (message) => {
      if (message.data !== DONE) sink(JSON.parse(message.data));
    },
  });
  for (const chunk of chunks) decoder.feed(chunk);
  decoder.end();
}

async function openaiStream(chunks: readonly Uint8Array[], sink: (item: unknown) => void): Promise<void> {
  let i = 0;
  const body = new ReadableStream<Uint8Array>({
    pull(controller) {
      const chunk = chunks[i++];
      if (chunk === undefined) controller.close();
      else controller.enqueue(chunk);
    },
  });
  const stream = Stream.fromSSEResponse<unknown>(
    new Response(body, { headers: { "content-type": "text/event-stream" } }),
    new AbortController(),
  );
  for await (const event of stream) sink(event);
}

/**
 * eddy's frame decoder, every frame stamped. `clock: "per-chunk"` reads the clock once per chunk
 * that yields frames (ts = when that chunk was decoded; frames of one chunk arrive together), the
 * wiring we recommend to providers; `"per-frame"` calls Date.now() for every frame.
 */
function eddy(validate: boolean, clock: "per-chunk" | "per-frame") {
  return (chunks: readonly Uint8Array[], sink: (item: unknown) => void): void => {
    let now = -1;
    const chunkClock = () => {
      if (now === -1) now = Date.now();
      return now;
    };
    const stamper = createFrameStamper({
      runId: "run_bench",
      clock: clock === "per-chunk" ? chunkClock : systemClock,
    });
    const decoder = createFrameDecoder({
      turn: 0,
      validate,
      onFrame: (frame: SseFrame) => sink(stamper.stamp(frame)),
    });
    for (const chunk of chunks) {
      now = -1;
      decoder.feed(chunk);
    }
    now = -1;
    decoder.end();
  };
}

function packageVersion(name: string): string {
  const require = createRequire(import.meta.url);
  // Not every package exports ./package.json: find its folder from the resolved entry point.
  const entry = require.resolve(name);
  const root = entry.slice(0, entry.lastIndexOf(`/node_modules/${name}/`) + `/node_modules/${name}/`.length);
  return (JSON.parse(readFileSync(`${root}package.json`, "utf8")) as { version: string }).version;
}

export const FLOOR = "floor";
export const SSE_DECODER = "sse decoder (eddy's) + JSON.parse";
export const EDDY_OFF = "eddy (validate off)";
export const EDDY_ON = "eddy (validate on)";
export const EDDY_PER_FRAME_CLOCK = "eddy (off, Date.now per frame)";

export function sseContenders(): SseContender[] {
  return [
    {
      name: FLOOR,
      version: "-",
      what: 'streaming TextDecoder + indexOf("\\n\\n") + JSON.parse, sync loop over chunks (text kept in pieces until a blank line arrives)',
      decode: floor,
    },
    {
      name: "eventsource-parser",
      version: packageVersion("eventsource-parser"),
      what: "createParser({onEvent}) fed TextDecoder({stream:true}) text, JSON.parse(data); sync loop",
      decode: eventsourceParser,
    },
    {
      name: SSE_DECODER,
      version: "-",
      what: "eddy's createSseDecoder({onMessage}) fed the byte chunks, JSON.parse(data): the same job as the eventsource-parser row",
      decode: eddySseDecoder,
    },
    {
      name: "openai Stream",
      version: packageVersion("openai"),
      what: "openai/core/streaming Stream.fromSSEResponse(new Response(ReadableStream)) iterated with for-await",
      decode: openaiStream,
    },
    {
      name: EDDY_OFF,
      version: "-",
      what: "createFrameDecoder({validate:false}) → provider_event + output_text_delta frames, each stamped (createFrameStamper, clock read once per chunk)",
      decode: eddy(false, "per-chunk"),
    },
    {
      name: EDDY_ON,
      version: "-",
      what: "the same with schema validation of every event (and embedded ResponseResource)",
      decode: eddy(true, "per-chunk"),
    },
    {
      name: EDDY_PER_FRAME_CLOCK,
      version: "-",
      what: "validation off, stamped with the default systemClock: one Date.now() per frame (timed up to 10k deltas)",
      maxDeltas: 10_000,
      decode: eddy(false, "per-frame"),
    },
  ];
}
