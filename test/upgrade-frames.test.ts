/**
 * Tapes recorded before eddy derived `reasoning_delta`, `item_done` and `response_ended` (tape
 * format 1) are upgraded by `upgradeFrames`: a tape recorded now, with those frames taken out and
 * `seq` renumbered (what an older eddy wrote), upgrades back to exactly the recorded frames — on
 * the Open Responses path (reasoning, text, calls, a retry after a cut stream, an incomplete
 * response), on Chat Completions, and through a fallback chain that moves from one API to the other.
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { DERIVED_FRAME_TYPES, type Frame } from "../src/frames/frame.js";
import type { RunOptions } from "../src/loop/options.js";
import { runAgent } from "../src/loop/run.js";
import type { Scenario } from "../src/mock/index.js";
import { createChatCompletionsProvider } from "../src/provider/chat-completions/provider.js";
import { createFallbackProvider } from "../src/provider/fallback.js";
import { createOpenResponsesProvider } from "../src/provider/open-responses.js";
import type { Provider } from "../src/provider/provider.js";
import { createTapeHeader } from "../src/replay/header.js";
import { createTapeRecorder } from "../src/replay/recorder.js";
import { replayTape } from "../src/replay/replay.js";
import { readTape, type Tape } from "../src/replay/tape.js";
import { upgradeFrames } from "../src/replay/upgrade-frames.js";
import { createToolRegistry } from "../src/tools/registry.js";
import { defineTool } from "../src/tools/tool.js";
import { type ChatServer, startChatServer } from "./support/chat-server.js";
import { assertFrameInvariants } from "./support/frames.js";
import { createScriptedProvider, type Script } from "./support/scripted.js";

const dir = mkdtempSync(join(tmpdir(), "eddy-upgrade-"));
let n = 0;
let server: ChatServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const weather = defineTool({
  name: "weather",
  description: "The weather in a city",
  parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
  execute: async (args) => `It is sunny in ${(args as { city: string }).city}.`,
});

/** Records a run through `provider` as `eddy run --record` does; returns the tape as read back. */
async function recordTape(provider: Provider, extra: Partial<RunOptions> = {}): Promise<Tape> {
  const path = join(dir, `run-${n++}.tape`);
  const runId = `run_upgrade_${n}`;
  const options: RunOptions = {
    provider,
    model: "m",
    input: "What is the weather in Rome?",
    tools: [weather],
    workspace: dir,
    runId,
    // One instant for every frame: a derived frame then has the time of its event, as upgraded.
    clock: () => 1_800_000_000_000,
    ...extra,
  };
  const recorder = createTapeRecorder(path, createTapeHeader(options, { runId, validate: true }), []);
  options.onFrame = recorder.observer;
  const handle = runAgent(options);
  const frames: Frame[] = [];
  for await (const f of handle) frames.push(f);
  recorder.close();
  assertFrameInvariants(frames);
  return readTape(path);
}

const DERIVED: ReadonlySet<string> = new Set(DERIVED_FRAME_TYPES);

/** What an eddy before derived frames recorded: the same frames without them, `seq` from 0. */
function formatOne(frames: readonly Frame[]): Frame[] {
  return frames.filter((f) => !DERIVED.has(f.type)).map((f, seq) => ({ ...f, seq }));
}

/** The tape, stripped to format 1 and upgraded, gives back exactly the recorded frames. */
function expectRoundTrip(tape: Tape): void {
  const old = formatOne(tape.frames);
  expect(old.length).toBeLessThan(tape.frames.length);
  const upgraded = upgradeFrames(old, tape.header.provider.wire ? { wire: tape.header.provider.wire } : {});
  expect(upgraded).toEqual(tape.frames);
  // Upgrading what is already upgraded changes nothing.
  expect(
    upgradeFrames(upgraded, tape.header.provider.wire ? { wire: tape.header.provider.wire } : {}),
  ).toEqual(tape.frames);
}

const call = (name: string, args: unknown, call_id: string) =>
  ({ type: "function_call", name, arguments: JSON.stringify(args), call_id }) as const;

describe("upgradeFrames", () => {
  it("Open Responses: reasoning, text, calls, a retried cut stream and an incomplete response", async () => {
    const scripts: Script[] = [
      { items: [{ type: "message", text: "lost" }], cutAfter: 2 },
      {
        items: [
          { type: "reasoning", summary: "Rome first, then Paris." },
          { type: "message", text: "Let me check." },
          call("weather", { city: "Rome" }, "c1"),
          call("weather", { city: "Paris" }, "c2"),
        ],
        // The scripted server sends no reasoning deltas of its own: two after the item is added.
        reorder: (events) => {
          const at = events.findIndex((e) => e.type === "response.output_item.added");
          const delta = (text: string) => ({
            type: "response.reasoning_summary_text.delta",
            item_id: "rs_resp_2_0",
            output_index: 0,
            summary_index: 0,
            delta: text,
          });
          return [
            ...events.slice(0, at + 1),
            delta("Rome first, "),
            delta("then Paris."),
            ...events.slice(at + 1),
          ];
        },
      },
      { items: [{ type: "message", text: "Sunny in both." }], status: "incomplete" },
    ];
    const tape = await recordTape(createScriptedProvider(scripts));
    const types = new Set(tape.frames.map((f) => f.type));
    for (const t of ["reasoning_delta", "item_done", "response_ended", "retry", "tool_call"]) {
      expect(types.has(t as Frame["type"]), t).toBe(true);
    }
    expectRoundTrip(tape);
    // And the upgraded frames replay.
    const outcome = await replayTape(
      { header: tape.header, frames: upgradeFrames(formatOne(tape.frames)) },
      { registry: createToolRegistry([weather]), workspace: dir },
    );
    expect(outcome.verdict).toEqual({ match: true, frames: tape.frames.length });
  });

  const LOOP: Scenario = {
    turns: [
      {
        items: [
          { type: "reasoning", content: "The user wants the weather." },
          { type: "function_call", name: "weather", arguments: { city: "Rome" }, call_id: "call_w1" },
        ],
      },
      { items: [{ type: "message", text: "It is sunny in Rome today, enjoy it." }] },
    ],
  };

  it("Chat Completions: the text deltas are derived again in their place among the others", async () => {
    server = await startChatServer(LOOP);
    const tape = await recordTape(createChatCompletionsProvider({ baseURL: server.url }));
    expect(tape.header.provider.wire?.api).toBe("chat-completions");
    expect(tape.frames.some((f) => f.type === "reasoning_delta")).toBe(true);
    expectRoundTrip(tape);
  });

  it("a fallback chain from a dead Open Responses port to Chat Completions", async () => {
    server = await startChatServer({ turns: [{ items: [{ type: "message", text: "From the fallback." }] }] });
    const dead = createOpenResponsesProvider({
      baseURL: "http://127.0.0.1:1/v1",
      retry: { maxRetries: 0 },
      name: "dead",
    });
    const chat = createChatCompletionsProvider({ baseURL: server.url, name: "chat" });
    const tape = await recordTape(createFallbackProvider([{ provider: dead }, { provider: chat }]), {
      mode: "stateless",
      tools: [],
    });
    expect(tape.frames.some((f) => f.type === "retry" && f.reason === "fallback:chat")).toBe(true);
    expectRoundTrip(tape);
  });
});
