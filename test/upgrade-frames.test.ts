/**
 * Tapes recorded before eddy derived `reasoning_delta`, `item_done` and `response_ended` (tape
 * formats 1 and 2) are upgraded by `upgradeFrames` (and so when they are read): a tape recorded now, with those frames taken out and
 * `seq` renumbered (what an older eddy wrote), upgrades back to exactly the recorded frames — on
 * the Open Responses path (reasoning, text, calls, a retry after a cut stream, an incomplete
 * response), on Chat Completions, and through a fallback chain that moves from one API to the other.
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { DERIVED_FRAME_TYPES, type Frame } from "../src/frames/frame.js";
import { runAgent } from "../src/loop/run.js";
import type { RunSpecInput } from "../src/loop/run-spec.js";
import type { Scenario } from "../src/mock/index.js";
import { createChatCompletionsProvider } from "../src/provider/chat-completions/provider.js";
import { createFallbackProvider } from "../src/provider/fallback.js";
import { createOpenResponsesProvider } from "../src/provider/open-responses.js";
import type { Provider } from "../src/provider/provider.js";
import { createTapeHeader } from "../src/replay/header.js";
import { createTapeRecorder } from "../src/replay/recorder.js";
import { replayTape } from "../src/replay/replay.js";
import { parseTape, readTape, type Tape } from "../src/replay/tape.js";
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
async function recordTape(
  provider: Provider,
  extra: Partial<RunSpecInput> = {},
  tools = [weather],
): Promise<Tape> {
  const path = join(dir, `run-${n++}.tape`);
  const spec: RunSpecInput = {
    model: "m",
    input: "What is the weather in Rome?",
    run_id: `run_upgrade_${n}`,
    ...extra,
  };
  let recorder: ReturnType<typeof createTapeRecorder> | undefined;
  const handle = runAgent(spec, {
    provider,
    tools,
    workspace: dir,
    // One instant for every frame: a derived frame then has the time of its event, as upgraded.
    clock: () => 1_800_000_000_000,
    onFrame: (f) => recorder?.observer(f),
  });
  recorder = createTapeRecorder(path, createTapeHeader(handle.spec, { provider, validate: true }), []);
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
  // A format-2 tape (the spec header, no derived frames) gets them when it is read.
  const lines = (header: unknown) => [header, ...old].map((l) => JSON.stringify(l)).join("\n");
  expect(parseTape(`${lines({ ...tape.header, format: 2 })}\n`).frames).toEqual(tape.frames);
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
    // A format-1 tape (its header written field by field) reads with its frames upgraded, and replays.
    const legacy = {
      type: "tape_header",
      format: 1,
      eddy_version: "0.1.0",
      run_id: tape.header.run_id,
      model: "m",
      mode: tape.header.spec.mode,
      input: "What is the weather in Rome?",
      tools: ["weather"],
      limits: { max_tool_calls: tape.header.spec.max_tool_calls, max_turns: tape.header.spec.max_turns },
      provider: { name: tape.header.provider.name, capabilities: tape.header.provider.capabilities },
      options: { validate: true },
      workspace: ".",
    };
    const text = [legacy, ...formatOne(tape.frames)].map((l) => JSON.stringify(l)).join("\n");
    const old = parseTape(`${text}\n`, "old.tape");
    expect(old.header.format).toBe(1);
    expect(old.frames).toEqual(tape.frames);
    const again = await replayTape(old, { registry: createToolRegistry([weather]), workspace: dir });
    expect(again.verdict).toEqual({ match: true, frames: tape.frames.length });
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
    const tape = await recordTape(
      createFallbackProvider([{ provider: dead }, { provider: chat }]),
      { mode: "stateless" },
      [],
    );
    expect(tape.frames.some((f) => f.type === "retry" && f.reason === "fallback:chat")).toBe(true);
    expectRoundTrip(tape);
  });
});
