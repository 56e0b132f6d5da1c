import { describe, expect, it } from "vitest";
import { composedRun, replayComposed } from "../../test/support/compose.js";
import type { Script } from "../../test/support/scripted.js";
import type { Frame } from "../frames/frame.js";
import type { JsonObject } from "../protocol/types.js";
import { defineTool } from "../tools/tool.js";
import type { ToolHooks } from "./hooks.js";

const ran: string[] = [];
const read = defineTool({
  name: "read_secret",
  description: "Reads a file",
  parameters: { type: "object", properties: { path: { type: "string" } } },
  execute: (args) => {
    const path = (args as { path?: string }).path ?? "";
    ran.push(path);
    return `content of ${path}: token=abc123`;
  },
});

const scripts: Script[] = [
  { items: [{ type: "function_call", name: "read_secret", arguments: '{"path":"a.txt"}', call_id: "c1" }] },
  { items: [{ type: "message", text: "done" }] },
];

/** The output the model got for c1 (the follow-up request's function_call_output). */
function sentOutput(requests: JsonObject[]): string {
  const input = (requests[1]?.input ?? []) as JsonObject[];
  const out = input.find((i) => i.type === "function_call_output" && i.call_id === "c1");
  return String(out?.output);
}

function hookFrames(frames: Frame[]) {
  return frames.filter((f) => f.type === "hook_decided");
}

async function hooked(hooks: ToolHooks) {
  ran.length = 0;
  const run = await composedRun(scripts, {}, [read], { hooks });
  const replay = await replayComposed(run.tape, [read]);
  expect(replay.verdict).toMatchObject({ match: true });
  return run;
}

describe("tool-call hooks", () => {
  it("beforeToolCall deny: the call is not run and the model reads the reason", async () => {
    const run = await hooked({ beforeToolCall: () => ({ action: "deny", reason: "blocked by policy" }) });
    expect(ran).toEqual([]);
    expect(sentOutput(run.requests)).toContain("blocked by policy");
    expect(sentOutput(run.requests)).not.toContain("abc123");
    expect(hookFrames(run.frames)).toMatchObject([
      { hook: "before_tool_call", decision: "deny", reason: "blocked by policy", call_id: "c1" },
    ]);
    const types = run.frames
      .filter((f) => ("call_id" in f && f.call_id === "c1") || f.type === "hook_decided")
      .map((f) => f.type);
    expect(types).toEqual(["tool_call", "hook_decided", "tool_started", "tool_ended"]);
  });

  it("beforeToolCall rewrite: the call runs with the new arguments (the tool_call frame keeps the model's)", async () => {
    const run = await hooked({ beforeToolCall: () => ({ action: "rewrite", arguments: { path: "b.txt" } }) });
    expect(ran).toEqual(["b.txt"]);
    expect(hookFrames(run.frames)[0]).toMatchObject({ decision: "rewrite", arguments: '{"path":"b.txt"}' });
    expect(run.frames.find((f) => f.type === "tool_call")).toMatchObject({ arguments: '{"path":"a.txt"}' });
  });

  it("afterToolCall rewrite: the model gets the rewritten output (redaction), and so does tool_ended", async () => {
    const run = await hooked({
      afterToolCall: (call) => ({ action: "rewrite", output: call.output.replace(/token=\w+/, "token=***") }),
    });
    expect(sentOutput(run.requests)).toContain("token=***");
    expect(sentOutput(run.requests)).not.toContain("abc123");
    const ended = run.frames.find((f) => f.type === "tool_ended");
    expect(ended?.type === "tool_ended" && ended.output).toContain("token=***");
    const types = run.frames.filter((f) => "call_id" in f && f.call_id === "c1").map((f) => f.type);
    expect(types).toEqual(["tool_call", "tool_started", "hook_decided", "tool_ended"]);
  });

  it("the approval asked after a rewrite is about the rewritten arguments, and a rule judges those", async () => {
    const wrote: string[] = [];
    const write = defineTool({
      name: "write_note",
      description: "Writes a note",
      parameters: { type: "object", properties: { path: { type: "string" } } },
      // Only notes outside drafts/ need approval.
      needsApproval: (args) => !String((args as { path?: string }).path).startsWith("drafts/"),
      execute: (args) => {
        wrote.push(String((args as { path?: string }).path));
        return "written";
      },
    });
    const asked: string[] = [];
    const run = await composedRun(
      [
        {
          items: [
            { type: "function_call", name: "write_note", arguments: '{"path":"drafts/a"}', call_id: "c1" },
          ],
        },
        { items: [{ type: "message", text: "done" }] },
      ],
      {},
      [write],
      {
        hooks: { beforeToolCall: () => ({ action: "rewrite", arguments: { path: "notes/b" } }) },
        onApproval: (request) => {
          asked.push(request.arguments);
          return "deny";
        },
      },
    );
    // The model's arguments needed no approval; the ones that would run do, and are what is asked.
    expect(asked).toEqual(['{"path":"notes/b"}']);
    expect(wrote).toEqual([]);
    expect(run.frames.find((f) => f.type === "approval_requested")).toMatchObject({
      arguments: '{"path":"notes/b"}',
    });
    const replay = await replayComposed(run.tape, [write]);
    expect(replay.verdict).toMatchObject({ match: true });
  });

  it("a rewrite whose arguments cannot be written as JSON (cyclic, or nested past the stack) fails closed", async () => {
    const cyclic: JsonObject = { path: "b.txt" };
    (cyclic as Record<string, unknown>).self = cyclic;
    // As a hook command's stdout `{"arguments": {"a": [[[…]]]}}` parses: deeper than JSON.stringify goes.
    let deep: unknown = [];
    for (let i = 0; i < 200_000; i++) deep = [deep];
    for (const args of [cyclic, { a: deep } as JsonObject]) {
      const run = await hooked({ beforeToolCall: () => ({ action: "rewrite", arguments: args }) });
      expect(ran).toEqual([]);
      expect(hookFrames(run.frames)).toMatchObject([
        { hook: "before_tool_call", decision: "deny", note: expect.stringContaining("the call was not run") },
      ]);
      expect(run.result.reason).toBe("completed");
    }
  });

  it("a hook that throws fails closed with a note; allow decisions are frames too", async () => {
    const run = await hooked({
      beforeToolCall: () => undefined,
      afterToolCall: () => {
        throw new Error("redactor crashed");
      },
    });
    expect(ran).toEqual(["a.txt"]);
    expect(hookFrames(run.frames)).toMatchObject([
      { hook: "before_tool_call", decision: "allow" },
      { hook: "after_tool_call", decision: "deny", note: expect.stringContaining("redactor crashed") },
    ]);
    expect(sentOutput(run.requests)).not.toContain("abc123");
  });
});
