/**
 * Property tests (fast-check): the SSE decoder gives the same messages at any chunking; a run over
 * a real capture gives the same frames at any chunking; random mutations of real captures
 * (dropped, duplicated, reordered and truncated events, garbage and huge lines) never throw out of
 * the provider and always end the run with `run_ended`; redaction leaves no secret anywhere in a
 * frame-like value. Failing cases print their seed and shrunk input (fast-check's report).
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { Frame } from "../src/frames/frame.js";
import type { JsonObject } from "../src/protocol/types.js";
import { replayTape } from "../src/replay/replay.js";
import { readTape } from "../src/replay/tape.js";
import { createSseDecoder, type SseMessage } from "../src/sse/decoder.js";
import { createBuiltinTools } from "../src/tools/builtin/index.js";
import { createToolRegistry } from "../src/tools/registry.js";
import { redactDeep } from "../src/util/redact.js";
import { runOver } from "./support/body-run.js";
import { captureLines, listCaptures, splitResponses, toSse } from "./support/captures.js";
import { fuzzParams, fuzzTimeout } from "./support/fuzz.js";
import { recordMockRun } from "./support/record.js";

const encoder = new TextEncoder();

/** Cuts `bytes` at the given fractions (sorted, deduplicated): any split, UTF-8 sequences included. */
function cut(bytes: Uint8Array, cuts: number[]): Uint8Array[] {
  const at = [...new Set(cuts.map((c) => Math.floor(c * bytes.length)))].sort((a, b) => a - b);
  const out: Uint8Array[] = [];
  let start = 0;
  for (const i of [...at, bytes.length]) {
    if (i > start) out.push(bytes.subarray(start, i));
    start = Math.max(start, i);
  }
  return out;
}

function decode(chunks: Uint8Array[]): SseMessage[] {
  const messages: SseMessage[] = [];
  const decoder = createSseDecoder({ onMessage: (m) => messages.push(m), datalessBlocks: "dispatch" });
  for (const chunk of chunks) decoder.feed(chunk);
  decoder.end();
  return messages;
}

const fieldText = fc.string({ unit: fc.constantFrom("a", "é", "😀", " ", ":", "{", '"', "z", "0") });
const lineEnding = fc.constantFrom("\n", "\r\n", "\r");
/** One SSE block: optional event, data lines (maybe none), an optional comment, its ending. */
const block = fc.record({
  event: fc.option(fieldText, { nil: undefined }),
  data: fc.array(fieldText, { maxLength: 3 }),
  comment: fc.option(fieldText, { nil: undefined }),
  eol: lineEnding,
});

describe("properties", () => {
  it(
    "the SSE decoder gives the same messages at any chunking",
    () => {
      fc.assert(
        fc.property(
          fc.array(block, { minLength: 1, maxLength: 8 }),
          fc.array(fc.double({ min: 0, max: 1, noNaN: true }), { maxLength: 20 }),
          (blocks, cuts) => {
            const text = blocks
              .map(({ event, data, comment, eol }) => {
                const lines = [
                  ...(comment === undefined ? [] : [`:${comment}`]),
                  ...(event === undefined ? [] : [`event: ${event}`]),
                  ...data.map((d) => `data: ${d}`),
                ];
                return lines.map((l) => l + eol).join("") + eol;
              })
              .join("");
            const bytes = encoder.encode(text);
            const whole = decode([bytes]);
            expect(decode(cut(bytes, cuts))).toEqual(whole);
            // Byte by byte too.
            expect(decode(Array.from(bytes, (b) => Uint8Array.of(b)))).toEqual(whole);
          },
        ),
        fuzzParams(300),
      );
    },
    fuzzTimeout(300, 60_000),
  );

  const responses = listCaptures().flatMap((name) =>
    splitResponses(captureLines(name)).map((lines, i) => ({ name: `${name}#${i}`, lines })),
  );

  it(
    "a run over any capture response gives the same frames at any chunking",
    async () => {
      await fc.assert(
        fc.asyncProperty(
          fc.constantFrom(...responses),
          fc.array(fc.double({ min: 0, max: 1, noNaN: true }), { maxLength: 40 }),
          async (response, cuts) => {
            const bytes = encoder.encode(toSse(response.lines));
            const whole = await runOver([bytes]);
            const chunked = await runOver(cut(bytes, cuts));
            expect(comparable(chunked), response.name).toEqual(comparable(whole));
          },
        ),
        fuzzParams(60),
      );
    },
    fuzzTimeout(60, 60_000),
  );

  it(
    "mutated captures never throw out of the provider and the run ends with run_ended",
    async () => {
      const mutation = fc.oneof(
        fc.record({ kind: fc.constant("drop" as const), at: fc.nat() }),
        fc.record({ kind: fc.constant("duplicate" as const), at: fc.nat() }),
        fc.record({ kind: fc.constant("swap" as const), at: fc.nat() }),
        fc.record({ kind: fc.constant("truncate" as const), at: fc.nat() }),
        fc.record({
          kind: fc.constant("garbage" as const),
          at: fc.nat(),
          text: fc.string({ maxLength: 40 }),
        }),
        fc.record({ kind: fc.constant("huge" as const), at: fc.nat() }),
        fc.record({
          kind: fc.constant("cut_line" as const),
          at: fc.nat(),
          keep: fc.double({ min: 0, max: 1, noNaN: true }),
        }),
      );
      await fc.assert(
        fc.asyncProperty(
          fc.constantFrom(...responses),
          fc.array(mutation, { minLength: 1, maxLength: 4 }),
          async (response, mutations) => {
            const lines = [...response.lines];
            for (const m of mutations) mutate(lines, m);
            const frames = await runOver([encoder.encode(toSse(lines))], 2 * 1024 * 1024);
            frames.forEach((f, i) => {
              expect(f.seq).toBe(i);
            });
            expect(frames.at(-1)?.type, response.name).toBe("run_ended");
            expect(frames.filter((f) => f.type === "run_ended")).toHaveLength(1);
          },
        ),
        fuzzParams(120),
      );
    },
    fuzzTimeout(120, 60_000),
  );

  it(
    "redaction leaves no secret in any string or key of a value",
    () => {
      const secret = fc.string({
        unit: fc.constantFrom("a", "b", "c", "K", "1", "-"),
        minLength: 4,
        maxLength: 10,
      });
      fc.assert(
        fc.property(
          fc.uniqueArray(secret, { minLength: 1, maxLength: 3 }),
          fc.jsonValue(),
          fc.nat(),
          (secrets, value, seed) => {
            // Plant the secrets in the value's strings and as a key.
            const planted = {
              value,
              [`k${secrets[0]}`]: `x${secrets.join("y")}z`,
              list: secrets.map((s, i) => `${i}${s}${seed}`),
            };
            const before = JSON.stringify(planted);
            const out = redactDeep(planted, secrets);
            expect(JSON.stringify(planted)).toBe(before); // the input is not changed
            const strings: string[] = [];
            const visit = (v: unknown) => {
              if (typeof v === "string") strings.push(v);
              else if (Array.isArray(v)) v.forEach(visit);
              else if (v !== null && typeof v === "object")
                for (const [k, w] of Object.entries(v)) {
                  strings.push(k);
                  visit(w);
                }
            };
            visit(out);
            for (const s of secrets) expect(strings.filter((x) => x.includes(s))).toEqual([]);
          },
        ),
        fuzzParams(300),
      );
    },
    fuzzTimeout(300, 60_000),
  );
});

type Mutation =
  | { kind: "drop" | "duplicate" | "swap" | "truncate" | "huge"; at: number }
  | { kind: "garbage"; at: number; text: string }
  | { kind: "cut_line"; at: number; keep: number };

function mutate(lines: string[], m: Mutation): void {
  if (lines.length === 0) return;
  const i = m.at % lines.length;
  const line = lines[i] as string;
  switch (m.kind) {
    case "drop":
      lines.splice(i, 1);
      break;
    case "duplicate":
      lines.splice(i, 0, line);
      break;
    case "swap":
      if (i + 1 < lines.length) [lines[i], lines[i + 1]] = [lines[i + 1] as string, line];
      break;
    case "truncate":
      lines.length = i;
      break;
    case "garbage":
      lines.splice(i, 0, m.text.replace(/[\r\n]/g, " "));
      break;
    case "huge":
      // Larger than the provider's message limit in this test (2 MiB): an error, not an out-of-memory.
      lines.splice(
        i,
        0,
        JSON.stringify({ type: "response.output_text.delta", delta: "x".repeat(3 * 1024 * 1024) }),
      );
      break;
    case "cut_line":
      lines[i] = line.slice(0, Math.floor(line.length * m.keep));
      break;
  }
}

/** Frames without what varies between runs (times). */
/**
 * The frames without what may differ between two runs of the same stream: time stamps, durations
 * and `seq`. A call runs as soon as its item is done (eager execution), concurrently with the rest
 * of the stream, so where its `tool_ended` lands among the later stream frames depends on how the
 * bytes were cut: the `tool_ended` frames and the others are compared each in their own order.
 */
function comparable(frames: Frame[]): { stream: unknown[]; tools: unknown[] } {
  const clean = frames.map((f) => {
    const { ts: _ts, seq: _seq, ...rest } = f as Frame & { duration_ms?: number };
    delete (rest as { duration_ms?: number }).duration_ms;
    return rest;
  });
  const ended = (f: { type: string }) => f.type === "tool_ended";
  return { stream: clean.filter((f) => !ended(f)), tools: clean.filter(ended) };
}

describe("a final text that differs from the streamed deltas", () => {
  it("is recorded on the provider_event that brought it; the answer is the final text", async () => {
    const events = [
      {
        type: "response.created",
        sequence_number: 0,
        response: { id: "r", status: "in_progress", output: [] },
      },
      {
        type: "response.output_item.added",
        sequence_number: 1,
        output_index: 0,
        item: { type: "message", id: "msg_1", role: "assistant", status: "in_progress", content: [] },
      },
      {
        type: "response.output_text.delta",
        sequence_number: 2,
        item_id: "msg_1",
        output_index: 0,
        content_index: 0,
        delta: "Hi",
        logprobs: [],
      },
      {
        type: "response.output_text.done",
        sequence_number: 3,
        item_id: "msg_1",
        output_index: 0,
        content_index: 0,
        text: "Hi there",
        logprobs: [],
      },
    ];
    const frames = await runOver([encoder.encode(toSse(events.map((e) => JSON.stringify(e))))]);
    const noted = frames.filter(
      (f) =>
        f.type === "provider_event" &&
        (f.errors ?? []).some((e) => e.includes("differs from its streamed deltas")),
    );
    expect(noted).toHaveLength(1);
    expect(noted[0]).toMatchObject({ data: { type: "response.output_text.done" } });
  });

  it("a real capture whose deltas were cut short (openai-phase.1) is noted, and its tape replays with the notes", async () => {
    const dir = mkdtempSync(join(tmpdir(), "eddy-note-"));
    const tape = join(dir, "run.tape");
    const rawEvents = captureLines("openai/openai-phase.1").map((l) => JSON.parse(l) as JsonObject);
    const { frames } = await recordMockRun({
      scenario: { turns: [{ rawEvents }] },
      prompt: "hi",
      workspace: dir,
      tape,
    });
    const noted = frames.filter(
      (f) =>
        f.type === "provider_event" &&
        (f.errors ?? []).some((e) => e.includes("differs from its streamed deltas")),
    );
    expect(noted).toHaveLength(2);
    const { tools, disabled } = createBuiltinTools({ allowWrite: false });
    const registry = createToolRegistry(tools, { disabled });
    const outcome = await replayTape(readTape(tape), { registry, workspace: dir });
    expect(outcome.verdict).toMatchObject({ match: true });
  });
});
