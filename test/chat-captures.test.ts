/**
 * Golden tests over real captured Chat Completions streams: every
 * `test/fixtures/chat-captures/<provider>/<name>.chunks.txt` (one JSON chunk per line, exactly as
 * the server sent it in `data:`) is framed as SSE and run through the Chat Completions path — the
 * wire format's decoder, the chunk translator and the assembling stream — at several chunkings
 * down to one byte. Per capture:
 *
 * - the frames are identical at every chunking;
 * - one provider_event per line carrying the line's JSON (or `invalid_json`), then `[DONE]`;
 * - the frames and the assembled response (items, calls, text, usage, how it ended) match the
 *   checked-in golden test/golden/chat/<provider>/<name>.json.
 *
 * A file may hold several responses: a new one starts after a `[DONE]` line or where the chunk id
 * changes. Goldens are rewritten only on request: `node scripts/update-chat-goldens.mjs`.
 */
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { frame, type ProviderFrame } from "../src/frames/frame.js";
import type { CreateResponseBody, JsonObject } from "../src/protocol/types.js";
import { createAssemblingStream } from "../src/provider/assembling-stream.js";
import { CHAT_COMPLETIONS_WIRE } from "../src/provider/chat-completions/wire.js";
import type { ProviderOutcome } from "../src/provider/provider.js";
import { wireCodec } from "../src/provider/wire-api.js";
import { fold, stableMessage } from "./golden/summarize.js";
import { type Chunking, fixedChunks, randomChunks, utf8, WHOLE } from "./support/chunking.js";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..");
const CAPTURES_DIR = join(ROOT, "test/fixtures/chat-captures");
const GOLDEN_DIR = join(ROOT, "test/golden/chat");
const UPDATE = process.env.UPDATE_GOLDENS === "1";
const CHUNKINGS: Chunking[] = [WHOLE, randomChunks(3, 512), fixedChunks(7), fixedChunks(1)];
const BODY = { model: "capture", input: "capture", stream: true } as CreateResponseBody;
const DONE = "[DONE]";

/** `<provider>/<name>` of every `<provider>/<name><suffix>` in `dir` (none while it does not exist). */
function listFiles(dir: string, suffix: string): string[] {
  if (!existsSync(dir)) return [];
  const out: string[] = [];
  for (const provider of readdirSync(dir, { withFileTypes: true })) {
    if (!provider.isDirectory()) continue;
    for (const file of readdirSync(join(dir, provider.name)))
      if (file.endsWith(suffix)) out.push(`${provider.name}/${file.slice(0, -suffix.length)}`);
  }
  return out.sort();
}

function captureLines(name: string): string[] {
  return readFileSync(join(CAPTURES_DIR, `${name}.chunks.txt`), "utf8")
    .split("\n")
    .filter((l) => l.trim() !== "");
}

/** The responses of a capture: split after `[DONE]` and where the chunk id changes. */
function splitResponses(lines: readonly string[]): string[][] {
  const out: string[][] = [];
  let current: string[] = [];
  let id: unknown;
  for (const line of lines) {
    const next = idOf(line);
    if (current.length > 0 && next !== undefined && id !== undefined && next !== id) {
      out.push(current);
      current = [];
    }
    if (next !== undefined) id = next;
    current.push(line);
    if (line.trim() === DONE) {
      out.push(current);
      current = [];
      id = undefined;
    }
  }
  if (current.length > 0) out.push(current);
  return out;
}

function idOf(line: string): string | undefined {
  try {
    const id = (JSON.parse(line) as { id?: unknown }).id;
    return typeof id === "string" ? id : undefined;
  } catch {
    return undefined;
  }
}

/** One response's lines as the SSE body a server sends (`[DONE]` appended unless the capture has it). */
function sseBody(lines: readonly string[]): Uint8Array {
  let body = "";
  for (const line of lines) body += `data: ${line}\n\n`;
  if (lines.at(-1)?.trim() !== DONE) body += `data: ${DONE}\n\n`;
  return utf8(body);
}

/** Runs the bytes through the Chat Completions path (decoder → translator → assembling stream). */
async function play(
  bytes: Uint8Array,
  chunking: Chunking,
): Promise<{ frames: ProviderFrame[]; outcome: ProviderOutcome }> {
  const request = { body: BODY, turn: 0 };
  const codec = wireCodec({ api: "chat-completions" });
  const stream = createAssemblingStream({
    request,
    source: async (control, emit) => {
      await emit([frame("request_started", { turn: 0, attempt: 1, body: BODY })]);
      const out: ProviderFrame[] = [];
      const decoder = CHAT_COMPLETIONS_WIRE.createDecoder({
        turn: 0,
        validate: true,
        onFrame: (f) => out.push(f),
      });
      let sawDone = false;
      for (const piece of chunking.split(bytes)) {
        decoder.feed(piece);
        sawDone ||= out.some((f) => f.type === "provider_event" && f.status === "done");
        await emit(out.splice(0));
      }
      decoder.end();
      await emit(out.splice(0));
      return control.endOfStreamError(sawDone);
    },
    translator: () => codec.createTranslator?.(request),
  });
  const frames: ProviderFrame[] = [];
  for await (const f of stream) frames.push(f);
  return { frames, outcome: await stream.result };
}

/** What one chunk held, in a few words: `content`, `tool_calls#0+id`, `finish=stop`, `usage`, … */
function describeChunk(data: unknown): string {
  const chunk = data as {
    choices?: {
      delta?: Record<string, unknown>;
      message?: Record<string, unknown>;
      finish_reason?: unknown;
    }[];
    usage?: unknown;
    error?: unknown;
  };
  if (chunk.error !== undefined) return "error";
  const parts: string[] = [];
  const choice = chunk.choices?.[0];
  const delta = choice?.delta ?? choice?.message ?? {};
  for (const [key, value] of Object.entries(delta)) {
    if (value === null || value === "" || (Array.isArray(value) && value.length === 0)) continue;
    if (key === "tool_calls" && Array.isArray(value))
      for (const c of value as { index?: number; id?: unknown }[])
        parts.push(`tool_calls#${c.index ?? "?"}${typeof c.id === "string" && c.id !== "" ? "+id" : ""}`);
    else parts.push(key);
  }
  if (typeof choice?.finish_reason === "string") parts.push(`finish=${choice.finish_reason}`);
  if (chunk.usage !== null && chunk.usage !== undefined) parts.push("usage");
  return parts.length === 0 ? "empty" : parts.join(",");
}

/** The golden of one response: its frames in short, and what was assembled. */
function summarize(frames: readonly ProviderFrame[], outcome: ProviderOutcome) {
  const errors: string[] = [];
  const lines: string[] = [];
  let text = "";
  for (const f of frames) {
    if (f.type === "output_text_delta") {
      lines.push(`delta ${f.output_index}/${f.content_index}`);
      text += f.delta;
    } else if (f.type === "provider_event") {
      let line = f.status === "event" ? `event ${describeChunk(f.data)}` : `${f.status}`;
      for (const e of f.errors ?? []) {
        const message = stableMessage(e);
        if (!errors.includes(message)) errors.push(message);
        line += ` !${errors.indexOf(message)}`;
      }
      lines.push(line);
    } else if (f.type === "reasoning_delta")
      lines.push(`reasoning ${f.output_index}/${f.channel}:${f.index}`);
    else if (f.type === "item_done")
      lines.push(`item_done ${f.output_index} ${String(f.item.type)}:${String(f.item.status ?? "-")}`);
    else if (f.type === "response_ended")
      lines.push(
        `response_ended ${f.status}${f.incomplete_reason === undefined ? "" : ` ${f.incomplete_reason}`}`,
      );
    else lines.push(f.type);
  }
  const r = outcome.response;
  return {
    frames: frames.length,
    errors,
    lines: fold(lines),
    text,
    assembled: {
      ok: outcome.ok,
      error: outcome.ok ? null : { code: outcome.error.frameCode, kind: outcome.error.kind },
      id: r.id,
      model: r.model,
      status: r.status,
      terminal: r.terminal,
      incomplete_reason: r.incompleteReason,
      output_text: r.outputText,
      items: r.items.map((i) => summarizeItem(i)),
      calls: r.calls.map((c) => ({
        output_index: c.outputIndex,
        call_id: c.callId,
        name: c.name,
        arguments: c.arguments,
      })),
      usage: r.usage,
    },
  };
}

function summarizeItem(item: JsonObject): JsonObject {
  const out: JsonObject = { type: item.type, status: item.status ?? null };
  if (item.type === "reasoning" && Array.isArray(item.content))
    out.reasoning = (item.content as { text?: string }[]).map((p) => p.text ?? "").join("");
  return out;
}

const CAPTURES = listFiles(CAPTURES_DIR, ".chunks.txt");
const written: string[] = [];

afterAll(() => {
  // Goldens are JSON checked by Biome: format what we wrote so `biome check` stays clean.
  if (written.length > 0)
    execFileSync(join(ROOT, "node_modules/.bin/biome"), ["format", "--write", ...written], {
      stdio: "ignore",
    });
});

it("every chat capture has a golden and every golden a capture", () => {
  if (UPDATE) return;
  expect(listFiles(GOLDEN_DIR, ".json")).toEqual(CAPTURES);
});

describe.each(CAPTURES)("chat capture %s", (name) => {
  const responses = splitResponses(captureLines(name));

  it("frames every line once, identically at every chunking, and matches its golden", async () => {
    const summaries = [];
    for (const lines of responses) {
      const bytes = sseBody(lines);
      const runs = [];
      for (const chunking of CHUNKINGS) runs.push(await play(bytes, chunking));
      const first = runs[0] as Awaited<ReturnType<typeof play>>;
      for (const [i, r] of runs.entries()) expect(r.frames, CHUNKINGS[i]?.name).toEqual(first.frames);

      const events = first.frames.filter((f) => f.type === "provider_event");
      const dataLines = lines.filter((l) => l.trim() !== DONE);
      expect(events).toHaveLength(dataLines.length + 1);
      dataLines.forEach((line, i) => {
        let parsed: unknown;
        try {
          parsed = JSON.parse(line);
        } catch {
          expect(events[i], `line ${i + 1}`).toMatchObject({ status: "invalid_json", raw: line });
          return;
        }
        expect(events[i]?.data, `line ${i + 1}`).toEqual(parsed);
      });
      expect(events.at(-1)).toMatchObject({ status: "done", raw: DONE });
      summaries.push(summarize(first.frames, first.outcome));
    }
    const golden = { capture: name, lines: captureLines(name).length, responses: summaries };
    const path = join(GOLDEN_DIR, `${name}.json`);
    if (UPDATE) {
      mkdirSync(dirname(path), { recursive: true });
      writeFileSync(path, `${JSON.stringify(golden, null, 2)}\n`);
      written.push(path);
      return;
    }
    let expected: unknown;
    try {
      expected = JSON.parse(readFileSync(path, "utf8"));
    } catch (err) {
      throw new Error(
        `no readable golden ${path} (${String(err)}): run node scripts/update-chat-goldens.mjs`,
      );
    }
    expect(golden, "differs from the golden: if intended, run node scripts/update-chat-goldens.mjs").toEqual(
      expected,
    );
  });
});
