/**
 * Golden tests over the 47 real provider captures (test/fixtures/captures). Each capture is framed
 * as SSE the way a provider sends it and decoded by `createFrameDecoder` with validation on, at
 * every standard chunking (down to one byte). Per capture:
 *
 * - the frames are identical at every chunking;
 * - one provider_event per event line, in order, carrying the line's JSON, plus one `done`;
 * - an output_text_delta right after each `response.output_text.delta`, and nowhere else;
 * - the derived frames (reasoning_delta, item_done, response_ended) right after their event;
 * - the deltas rebuild each text part's `response.output_text.done` text (see STREAM_QUIRKS);
 * - validation errors occur exactly where test/golden/capture-deviations.ts says the capture
 *   departs from the spec;
 * - the frames match the checked-in summary test/golden/frames/<provider>/<name>.json.
 *
 * Goldens are rewritten only on request: `node scripts/update-goldens.mjs` (or `UPDATE_GOLDENS=1`).
 */
import { execFileSync } from "node:child_process";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import type { ProviderEventFrame } from "../src/frames/frame.js";
import { createFrameDecoder } from "../src/frames/frame-decoder.js";
import type { SseFrame } from "../src/frames/from-sse.js";
import { upgradeFrames } from "../src/replay/upgrade-frames.js";
import { isJsonText } from "../src/util/json.js";
import {
  CAPTURE_DEVIATIONS,
  type Deviation,
  INVALID_JSON_EVENT,
  STREAM_QUIRKS,
  validationAtoms,
} from "./golden/capture-deviations.js";
import { type GoldenFrame, type GoldenSummary, summarizeFrames } from "./golden/summarize.js";
import { captureLines, listCaptures, toSse } from "./support/captures.js";
import { type Chunking, STANDARD_CHUNKINGS, utf8, WHOLE } from "./support/chunking.js";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..");
const GOLDEN_DIR = join(ROOT, "test/golden/frames");
const UPDATE = process.env.UPDATE_GOLDENS === "1";

/**
 * The capture as an SSE body: `event: <type>` + `data: <line>` per line, then `data: [DONE]`.
 * A line that is not JSON (openai/parallel-tool-call-wrapper.1 has two) has no type to name, so
 * it goes without an `event:` line.
 */
function captureSse(lines: readonly string[]): string {
  let body = "";
  for (const line of lines) {
    body += isJsonText(line)
      ? toSse([line], { done: false })
      : toSse([line], { done: false, eventLines: false });
  }
  return `${body}data: [DONE]\n\n`;
}

/**
 * The capture's frames: the SSE mapping's, with the frames the assembling stream derives from them
 * in their place (derived by the same code, src/provider/derive.ts, through upgradeFrames).
 */
function decode(bytes: Uint8Array, chunking: Chunking): GoldenFrame[] {
  const frames: SseFrame[] = [];
  const decoder = createFrameDecoder({ turn: 0, onFrame: (f) => frames.push(f) });
  for (const chunk of chunking.split(bytes)) decoder.feed(chunk);
  decoder.end();
  return upgradeFrames(frames) as GoldenFrame[];
}

const dataType = (f: GoldenFrame): string | undefined =>
  f.type === "provider_event"
    ? ((f.data as { type?: unknown } | undefined)?.type as string | undefined)
    : undefined;

/** Concatenated deltas per key, and the done text per key, over a capture's frames. */
function rebuildText(
  frames: readonly GoldenFrame[],
  keyOf: (response: number, ids: { item_id: string; output_index: number; content_index: number }) => string,
) {
  const built = new Map<string, string>();
  const done: { key: string; text: string }[] = [];
  let response = -1;
  for (const f of frames) {
    if (f.type === "output_text_delta") {
      const key = keyOf(response, f);
      built.set(key, (built.get(key) ?? "") + f.delta);
      continue;
    }
    const type = dataType(f);
    if (type === "response.created") response++;
    if (type === "response.output_text.done") {
      const d = (f as ProviderEventFrame).data as {
        item_id: string;
        output_index: number;
        content_index: number;
        text: string;
      };
      done.push({ key: keyOf(response, d), text: d.text });
    }
  }
  return { built, done };
}

const byItemId = (r: number, d: { item_id: string; content_index: number }) =>
  `${r}|${d.item_id}|${d.content_index}`;
const byOutputIndex = (r: number, d: { output_index: number; content_index: number }) =>
  `${r}|#${d.output_index}|${d.content_index}`;

/** Validation atoms per capture: atom → the event types it occurred on. */
function collectAtoms(frames: readonly GoldenFrame[]): Map<string, Set<string>> {
  const atoms = new Map<string, Set<string>>();
  for (const f of frames) {
    if (f.type !== "provider_event" || f.errors === undefined) continue;
    const event = f.status === "invalid_json" ? INVALID_JSON_EVENT : String(dataType(f));
    for (const message of f.errors) {
      for (const atom of validationAtoms(message)) {
        const events = atoms.get(atom) ?? new Set<string>();
        events.add(event);
        atoms.set(atom, events);
      }
    }
  }
  return atoms;
}

const explains = (d: Deviation, atom: string, event: string) =>
  d.messages.includes(atom) && d.events.includes(event);

const CAPTURES = listCaptures();
const written: string[] = [];

afterAll(() => {
  // Goldens are JSON checked by Biome: format what we wrote so `biome check` stays clean.
  if (written.length > 0) {
    execFileSync(join(ROOT, "node_modules/.bin/biome"), ["format", "--write", ...written], {
      stdio: "ignore",
    });
  }
});

it("the deviation table names exactly the captures on disk", () => {
  expect(Object.keys(CAPTURE_DEVIATIONS).sort()).toEqual(CAPTURES);
  for (const name of Object.keys(STREAM_QUIRKS)) expect(CAPTURES).toContain(name);
  expect(CAPTURES).toHaveLength(47);
});

describe.each(CAPTURES)("capture %s", (name) => {
  const lines = captureLines(name);
  const bytes = utf8(captureSse(lines));
  let cached: GoldenFrame[] | undefined;
  const frames = (): GoldenFrame[] => {
    cached ??= decode(bytes, WHOLE);
    return cached;
  };

  it("gives identical frames at every chunking", () => {
    for (const chunking of STANDARD_CHUNKINGS) {
      if (chunking === WHOLE) continue;
      expect(decode(bytes, chunking), chunking.name).toEqual(frames());
    }
  });

  it("has one provider_event per event line, in order, with the line's JSON, then done", () => {
    const events = frames().filter((f) => f.type === "provider_event");
    expect(events).toHaveLength(lines.length + 1);
    lines.forEach((line, i) => {
      const f = events[i];
      if (isJsonText(line)) {
        const data = JSON.parse(line) as { type?: unknown };
        expect(f, `line ${i + 1}`).toMatchObject({ status: "event", event_name: data.type });
        expect(f?.data, `line ${i + 1}`).toEqual(data);
      } else {
        expect(f, `line ${i + 1}`).toMatchObject({ status: "invalid_json", raw: line });
        expect(f?.event_name).toBeUndefined();
      }
    });
    expect(events.at(-1)).toMatchObject({ status: "done", raw: "[DONE]" });
    expect(events.at(-1)?.event_name).toBeUndefined();
  });

  it("derives an output_text_delta right after each response.output_text.delta, and nowhere else", () => {
    const all = frames();
    all.forEach((f, i) => {
      const next = all[i + 1];
      if (dataType(f) === "response.output_text.delta") {
        const d = (
          f as { data: { item_id: string; output_index: number; content_index: number; delta: string } }
        ).data;
        expect(next, `after frame ${i}`).toMatchObject({
          type: "output_text_delta",
          turn: 0,
          item_id: d.item_id,
          output_index: d.output_index,
          content_index: d.content_index,
          delta: d.delta,
        });
      }
      if (f.type === "output_text_delta") {
        expect(dataType(all[i - 1] as GoldenFrame), `before frame ${i}`).toBe("response.output_text.delta");
      }
    });
  });

  it("derives each finished item once, right after its event, and the response's end after the terminal event", () => {
    const all = frames();
    const derived = new Set(["reasoning_delta", "item_done", "response_ended"]);
    all.forEach((f, i) => {
      if (!derived.has(f.type)) return;
      let j = i - 1;
      while (j >= 0 && (derived.has(all[j]?.type ?? "") || all[j]?.type === "output_text_delta")) j--;
      expect(all[j]?.type, `frame ${i} (${f.type}) follows an event`).toBe("provider_event");
    });
    const done = all.filter((f) => dataType(f) === "response.output_item.done").length;
    const items = all.filter((f) => f.type === "item_done");
    expect(items.length).toBeGreaterThanOrEqual(Math.min(done, 1));
    const indexes = items.map((f) => (f.type === "item_done" ? f.output_index : -1));
    const responses = all.filter((f) => dataType(f) === "response.created").length;
    if (responses <= 1) expect(new Set(indexes).size).toBe(indexes.length);
    const terminal = all.filter((f) =>
      ["response.completed", "response.incomplete", "response.failed", "error"].includes(dataType(f) ?? ""),
    ).length;
    const ended = all.filter((f) => f.type === "response_ended").length;
    expect(ended).toBeLessThanOrEqual(terminal);
    if (terminal > 0) expect(ended).toBeGreaterThan(0);
  });

  it("rebuilds each text part from its deltas", () => {
    const quirk = STREAM_QUIRKS[name];
    const keyed = rebuildText(frames(), quirk?.kind === "item_ids_rotate" ? byOutputIndex : byItemId);
    const pairs = keyed.done.map((d) => ({ key: d.key, built: keyed.built.get(d.key) ?? "", text: d.text }));
    // Every delta belongs to a part that got its done event.
    expect([...keyed.built.keys()].filter((k) => !keyed.done.some((d) => d.key === k))).toEqual([]);
    switch (quirk?.kind) {
      case undefined:
      case "item_ids_rotate":
        for (const p of pairs) expect(p.built, p.key).toBe(p.text);
        break;
      case "deltas_elided":
        for (const p of pairs) expect(p.text.startsWith(p.built), p.key).toBe(true);
        expect(pairs.some((p) => p.built.length < p.text.length)).toBe(true);
        break;
      case "deltas_disagree":
        expect(pairs.some((p) => p.built !== p.text)).toBe(true);
        break;
    }
    if (quirk?.kind === "item_ids_rotate") {
      // Keep the quirk honest: keyed by item_id, the deltas really do not line up with the done text.
      const byId = rebuildText(frames(), byItemId);
      expect(byId.done.every((d) => byId.built.get(d.key) !== d.text)).toBe(true);
    }
  });

  it("records validation errors exactly where the capture departs from the spec", () => {
    const listed = CAPTURE_DEVIATIONS[name] ?? [];
    const atoms = collectAtoms(frames());
    const unexplained: string[] = [];
    for (const [atom, events] of atoms) {
      for (const event of events) {
        if (!listed.some((d) => explains(d, atom, event))) unexplained.push(`${event}: ${atom}`);
      }
    }
    expect(unexplained, "validation errors not in CAPTURE_DEVIATIONS").toEqual([]);
    const stale = listed.filter(
      (d) => ![...atoms].some(([atom, events]) => [...events].some((e) => explains(d, atom, e))),
    );
    expect(
      stale.map((d) => d.what),
      "listed deviations that no longer occur",
    ).toEqual([]);
  });

  it("matches its golden frame summary", () => {
    const summary = summarizeFrames(name, lines.length, frames());
    const path = join(GOLDEN_DIR, `${name}.json`);
    if (UPDATE) {
      mkdirSync(dirname(path), { recursive: true });
      writeFileSync(path, `${JSON.stringify(summary, null, 2)}\n`);
      written.push(path);
      return;
    }
    let golden: GoldenSummary;
    try {
      golden = JSON.parse(readFileSync(path, "utf8")) as GoldenSummary;
    } catch (err) {
      throw new Error(`no readable golden ${path} (${String(err)}): run node scripts/update-goldens.mjs`);
    }
    expect(
      summary,
      "frames differ from the golden: if intended, run node scripts/update-goldens.mjs",
    ).toEqual(golden);
  });
});
