import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { assertFrameInvariants } from "../../test/support/frames.js";
import { createScriptedProvider, type Script } from "../../test/support/scripted.js";
import type { Frame } from "../frames/frame.js";
import { runAgent } from "../loop/run.js";
import type { RunSpecInput } from "../loop/run-spec.js";
import { createToolRegistry } from "../tools/registry.js";
import { defineTool } from "../tools/tool.js";
import { createTapeHeader } from "./header.js";
import { createTapeRecorder, type TapeRecorder } from "./recorder.js";
import { replayTape } from "./replay.js";
import { parseTape, readTape } from "./tape.js";

const dir = mkdtempSync(join(tmpdir(), "eddy-replay-"));
let n = 0;

const echo = defineTool({
  name: "echo",
  description: "Echo",
  parameters: { type: "object", properties: { text: { type: "string" } }, required: ["text"] },
  execute: async (args) => {
    await new Promise((r) => setTimeout(r, 5));
    return `echo: ${(args as { text: string }).text}`;
  },
});
const wait = defineTool({
  name: "wait",
  description: "Waits until cancelled",
  parameters: { type: "object", properties: {} },
  execute: (_a, ctx) =>
    new Promise((_r, reject) => ctx.signal.addEventListener("abort", () => reject(new Error("aborted")))),
});
const tools = [echo, wait];

async function record(scripts: Script[], spec: Partial<RunSpecInput> = {}, cancelAfterMs?: number) {
  const path = join(dir, `tape-${n++}.jsonl`);
  const provider = createScriptedProvider(scripts);
  const controller = new AbortController();
  if (cancelAfterMs !== undefined) setTimeout(() => controller.abort("SIGINT"), cancelAfterMs);
  let recorder: TapeRecorder | undefined;
  const handle = runAgent(
    { model: "m", input: "go", run_id: `run_test_${n}`, ...spec },
    { provider, tools, workspace: dir, signal: controller.signal, onFrame: (f) => recorder?.observer(f) },
  );
  recorder = createTapeRecorder(path, createTapeHeader(handle.spec, { provider }), ["sk-secret"]);
  const frames: Frame[] = [];
  for await (const f of handle) frames.push(f);
  recorder.close();
  assertFrameInvariants(frames);
  return { path, frames };
}

async function roundTrip(scripts: Script[], spec: Partial<RunSpecInput> = {}, cancelAfterMs?: number) {
  const { path, frames } = await record(scripts, spec, cancelAfterMs);
  const outcome = await replayTape(readTape(path), { registry: createToolRegistry(tools), workspace: dir });
  expect(outcome.verdict, JSON.stringify(outcome.verdict).slice(0, 2000)).toEqual({
    match: true,
    frames: frames.length,
  });
  return { path, frames, outcome };
}

const call = (name: string, args: unknown, call_id?: string) =>
  ({
    type: "function_call",
    name,
    arguments: JSON.stringify(args),
    ...(call_id ? { call_id } : {}),
  }) as const;
const text = (t: string) => ({ type: "message", text: t }) as const;

describe("record → replay round trips", () => {
  it("a plain answer", async () => {
    await roundTrip([{ items: [text("Hello there")] }]);
  });

  it("a chained tool loop with two calls in one response", async () => {
    const { frames } = await roundTrip([
      { items: [call("echo", { text: "a" }, "c1"), call("echo", { text: "b" }, "c2")] },
      { items: [text("done")] },
    ]);
    expect(frames.filter((f) => f.type === "tool_ended")).toHaveLength(2);
  });

  it("a tool that ends while the response still streams (eager execution)", async () => {
    const { frames, outcome } = await roundTrip([
      {
        items: [call("echo", { text: "a" }, "c1"), text("streaming on while the tool runs")],
        pauses: { 8: 20 },
      },
      { items: [text("done")] },
    ]);
    for (const run of [frames, outcome.frames]) {
      const toolEnded = run.findIndex((f) => f.type === "tool_ended");
      const completed = run.findIndex(
        (f) =>
          f.type === "provider_event" &&
          (f.data as { type?: unknown } | undefined)?.type === "response.completed",
      );
      expect(toolEnded).toBeGreaterThan(-1);
      expect(toolEnded).toBeLessThan(completed);
    }
  });

  it("calls completed out of output order (they run in completion order)", async () => {
    const { outcome } = await roundTrip([
      {
        items: [call("echo", { text: "a" }, "c1"), call("echo", { text: "b" }, "c2")],
        reorder: (events) => {
          const done = (i: number) =>
            events.findIndex((e) => e.type === "response.output_item.done" && e.output_index === i);
          const moved = events.splice(done(1), 1);
          events.splice(done(0), 0, ...moved);
          return events;
        },
      },
      { items: [text("done")] },
    ]);
    expect(
      outcome.frames.filter((f) => f.type === "tool_call").map((f) => (f as { call_id: string }).call_id),
    ).toEqual(["c2", "c1"]);
  });

  it("parallel calls that end in another order than they started, with approvals", async () => {
    const sleepy = defineTool({
      name: "sleepy",
      description: "Sleeps as long as asked",
      parameters: { type: "object", properties: { ms: { type: "number" } }, required: ["ms"] },
      needsApproval: (args) => (args as { ms: number }).ms > 25,
      execute: async (args) => {
        await new Promise((r) => setTimeout(r, (args as { ms: number }).ms));
        return "ok";
      },
    });
    const path = join(dir, `tape-${n++}.jsonl`);
    const provider = createScriptedProvider([
      {
        items: [
          call("sleepy", { ms: 60 }, "p1"),
          call("sleepy", { ms: 10 }, "p2"),
          call("sleepy", { ms: 30 }, "p3"),
        ],
      },
      { items: [text("done")] },
    ]);
    let recorder: TapeRecorder | undefined;
    const handle = runAgent(
      { model: "m", input: "go", run_id: "run_parallel", parallel_tool_calls: true },
      {
        provider,
        tools: [sleepy],
        workspace: dir,
        onApproval: async (request) => (request.callId === "p3" ? "deny" : "allow"),
        onFrame: (f) => recorder?.observer(f),
      },
    );
    recorder = createTapeRecorder(path, createTapeHeader(handle.spec, { provider }));
    const frames: Frame[] = [];
    for await (const f of handle) frames.push(f);
    recorder.close();
    assertFrameInvariants(frames);
    expect(frames.filter((f) => f.type === "approval_decided")).toHaveLength(2);
    const outcome = await replayTape(readTape(path), {
      registry: createToolRegistry([sleepy]),
      workspace: dir,
    });
    expect(outcome.verdict).toEqual({ match: true, frames: frames.length });
  });

  it.each([
    ["allow", "allow"],
    ["deny", "deny"],
    ["defer", "defer"],
  ] as const)(
    "calls needing approval (%s) in a response that arrived as one chunk, with text after them",
    async (_name, decision) => {
      const careful = defineTool({
        name: "careful",
        description: "Needs approval",
        parameters: { type: "object", properties: { n: { type: "number" } }, required: ["n"] },
        needsApproval: true,
        execute: async () => "done carefully",
      });
      const path = join(dir, `tape-${n++}.jsonl`);
      // One chunk: the calls complete while the rest of the response is already in hand, so the
      // approval's frames must still land where a replay, fed one frame at a time, puts them.
      const provider = createScriptedProvider([
        {
          chunks: "whole",
          items: [call("careful", { n: 1 }, "c1"), text("asking first"), call("careful", { n: 2 }, "c2")],
        },
        { chunks: "whole", items: [text("all done")] },
      ]);
      let recorder: TapeRecorder | undefined;
      const handle = runAgent(
        { model: "m", input: "go", run_id: `run_chunk_${decision}`, parallel_tool_calls: true },
        {
          provider,
          tools: [careful],
          workspace: dir,
          onApproval: async () => decision,
          onFrame: (f) => recorder?.observer(f),
        },
      );
      recorder = createTapeRecorder(path, createTapeHeader(handle.spec, { provider }));
      const frames: Frame[] = [];
      for await (const f of handle) frames.push(f);
      recorder.close();
      if (decision === "defer")
        expect(frames.at(-1)).toMatchObject({ type: "run_ended", pending_calls: ["c1", "c2"] });
      else assertFrameInvariants(frames);
      expect(frames.filter((f) => f.type === "approval_requested")).toHaveLength(2);
      const outcome = await replayTape(readTape(path), {
        registry: createToolRegistry([careful]),
        workspace: dir,
      });
      expect(outcome.verdict, JSON.stringify(outcome.verdict).slice(0, 2000)).toEqual({
        match: true,
        frames: frames.length,
      });
    },
  );

  it("a stateless loop with reasoning", async () => {
    await roundTrip(
      [
        { items: [{ type: "reasoning", summary: "s", encrypted_content: "E" }, call("echo", { text: "a" })] },
        { items: [text("done")] },
      ],
      { mode: "stateless" },
    );
  });

  it("retries (500 then success), with the recorded delays", async () => {
    const { frames } = await roundTrip([{ http: { status: 500, body: "oops" } }, { items: [text("ok")] }]);
    expect(frames.some((f) => f.type === "retry")).toBe(true);
  });

  it("the previous_response_not_found fallback", async () => {
    const nf = {
      http: { status: 404, body: { error: { code: "previous_response_not_found", message: "gone" } } },
    };
    const { frames } = await roundTrip([
      { items: [call("echo", { text: "a" })] },
      nf,
      { items: [text("ok")] },
    ]);
    expect(frames.some((f) => f.type === "mode_changed")).toBe(true);
  });

  it("a failed run", async () => {
    const { outcome } = await roundTrip([
      { items: [text("partial")], status: "failed", error: { code: "server_error", message: "x" } },
    ]);
    expect(outcome.result.reason).toBe("failed");
  });

  it("a truncated stream (provider_error)", async () => {
    const { outcome } = await roundTrip([{ items: [text("partial answer")], cutAfter: 4 }], {}, undefined);
    expect(outcome.result.reason).toBe("provider_error");
  });

  it("a cancelled run (mid-tool)", async () => {
    const { outcome } = await roundTrip([{ items: [call("wait", {})] }], {}, 30);
    expect(outcome.result.reason).toBe("cancelled");
  });

  it("a run stopped by the tool-call budget", async () => {
    const { outcome } = await roundTrip(
      [{ items: [call("echo", { text: "a" }), call("echo", { text: "b" })] }],
      { max_tool_calls: 1 },
    );
    expect(outcome.result.reason).toBe("max_tool_calls");
  });

  it("a response the loop stopped reading after too many calls past the budget", async () => {
    const many = Array.from({ length: 300 }, (_, i) => call("echo", { text: String(i) }, `c${i}`));
    const { outcome, frames } = await roundTrip([{ items: many }], { max_tool_calls: 1 });
    expect(outcome.result.reason).toBe("max_tool_calls");
    expect(frames.filter((f) => f.type === "tool_call").length).toBeLessThan(300);
  });
});

describe("replay verification", () => {
  it("reports an edited provider event as a mismatch", async () => {
    const { path } = await record([{ items: [text("Hello there")] }]);
    const lines = readFileSync(path, "utf8").split("\n");
    const i = lines.findIndex((l) => l.includes('"response.output_text.delta"'));
    lines[i] = (lines[i] as string).replace('"delta":"Hell"', '"delta":"Jell"');
    const tape = parseTape(lines.join("\n"));
    const outcome = await replayTape(tape, { registry: createToolRegistry(tools), workspace: dir });
    expect(outcome.verdict.match).toBe(false);
  });

  it("reports a request body that differs", async () => {
    const { path } = await record([{ items: [text("hi")] }]);
    const tape = readTape(path);
    tape.header.spec.model = "other-model";
    const outcome = await replayTape(tape, { registry: createToolRegistry(tools), workspace: dir });
    expect(outcome.verdict.match).toBe(false);
    if (!outcome.verdict.match) expect(outcome.verdict.index).toBe(0);
  });

  it("refuses a tape from a newer format and a bad line, naming the problem (the first in the file)", async () => {
    expect(() => parseTape('{"type":"tape_header","format":99}\n')).toThrow(/tape format 99 is newer/);
    expect(() => parseTape('{"type":"tape_header","format":1}\nnot json\n{}\n')).toThrow(
      /format-1 tape header lacks/,
    );
    const { path } = await record([{ items: [text("hi")] }]);
    const head = readFileSync(path, "utf8").split("\n")[0];
    expect(() => parseTape(`${head}\nnot json\n{}\n`)).toThrow(/line 2: not valid JSON/);
    // Each line is checked as it is read: a bad frame on line 2 is named before the lines after it are parsed.
    expect(() => parseTape(`${head}\n{"a":1}\n${"not json\n".repeat(3)}`)).toThrow(/line 2: frame/);
    expect(() => parseTape(`\ufeff${head}\n`)).not.toThrow(); // an editor's byte order mark
    expect(() => parseTape(head?.slice(0, 40) ?? "")).toThrow(/first line \(its header\) is cut short/);
    // What eddy takes in may nest 1,000 levels; its records wrap it in a few more (util/json.ts).
    const deep = (n: number) => `${"[".repeat(n)}${"]".repeat(n)}`;
    expect(() => parseTape(`${head}\n{"type":"run_started","x":${deep(1033)}}\n`)).toThrow(
      /line 2: nests deeper than 1032 levels/,
    );
  });

  it("refuses a run_ended whose reason is missing or one no eddy writes (its exit code is switched on)", async () => {
    const { path } = await record([{ items: [text("hi")] }]);
    const lines = readFileSync(path, "utf8").trimEnd().split("\n");
    const ended = JSON.parse(lines.at(-1) ?? "{}") as Record<string, unknown>;
    const withReason = (reason: unknown) =>
      `${[...lines.slice(0, -1), JSON.stringify({ ...ended, reason })].join("\n")}\n`;
    expect(parseTape(withReason("completed")).frames.at(-1)?.type).toBe("run_ended");
    for (const reason of ["finished", "", "constructor", undefined])
      expect(() => parseTape(withReason(reason))).toThrow(
        /frame \(run_ended\) has a `reason` that is not one eddy writes \(completed, /,
      );
  });

  it("a torn last line (a write the process died in) is dropped, and the tape says so", async () => {
    const { path } = await record([{ items: [text("hi")] }]);
    const whole = readFileSync(path, "utf8");
    expect(parseTape(whole).torn).toBeUndefined();
    const torn = parseTape(whole.slice(0, whole.length - 20));
    expect(torn.torn).toBe(true);
    expect(torn.frames.length).toBe(parseTape(whole).frames.length - 1);
  });

  it("refuses a header whose client_tools are not tools, naming the field", async () => {
    const { path } = await record([{ items: [text("hi")] }]);
    const [head, ...rest] = readFileSync(path, "utf8").split("\n");
    const withTools = (client_tools: unknown) =>
      [JSON.stringify({ ...JSON.parse(head as string), client_tools }), ...rest].join("\n");
    const good = { name: "get_weather", description: "", parameters: { type: "object" } };
    expect(parseTape(withTools([good])).header.client_tools).toEqual([good]);
    for (const bad of [
      "get_weather",
      [{ ...good, name: "" }],
      [{ ...good, name: "x".repeat(300) }],
      [{ ...good, parameters: "object" }],
      [{ ...good, strict: "yes" }],
      [{ ...good, execute: "rm -rf /" }],
    ])
      expect(() => parseTape(withTools(bad))).toThrow(/client_tools/);
  });

  it("tapes never hold a configured secret", async () => {
    const { path } = await record([{ items: [text("the key is sk-secret-and-more")] }]);
    expect(readFileSync(path, "utf8")).not.toContain("sk-secret");
    writeFileSync(join(dir, "noop"), "");
  });
});
