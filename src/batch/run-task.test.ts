import { describe, expect, it } from "vitest";
import { createScriptedProvider, type Script } from "../../test/support/scripted.js";
import { EddyError } from "../errors.js";
import type { Frame } from "../frames/frame.js";
import { createPolicy } from "../loop/policy.js";
import type { JsonObject } from "../protocol/types.js";
import type { Tape, TapeHeader } from "../replay/tape.js";
import { createToolRegistry } from "../tools/registry.js";
import { defineTool } from "../tools/tool.js";
import { runTask } from "./run-task.js";
import type { TapeStore } from "./tape-store.js";

/** Calls `effect` once, then answers. */
const callThenAnswer: Script = (body) =>
  JSON.stringify(body.input).includes("function_call_output")
    ? { items: [{ type: "message", text: "done" }] }
    : { items: [{ type: "function_call", name: "effect", arguments: "{}" }] };

/**
 * A tape store whose writes are stored only when flushed (as a Redis tape's are once Redis
 * answers): `stored` is what a process killed now would leave.
 */
function slowStore(): { store: TapeStore; stored: Frame[] } {
  const stored: Frame[] = [];
  const store: TapeStore = {
    read: async (): Promise<Tape | undefined> => undefined,
    open() {
      let sent: Frame[] = [];
      const flush = async () => {
        await new Promise((r) => setTimeout(r, 5));
        stored.push(...sent);
        sent = [];
      };
      return { write: (frame) => sent.push(frame), commit() {}, flush, close: flush };
    },
    location: (id) => `slow:${id}`,
  };
  return { store, stored };
}

describe("runTask", () => {
  it("stores a call's tool_started before the tool runs (write-ahead: a crash mid-call leaves a tape that says it started)", async () => {
    const { store, stored } = slowStore();
    const seenAtRun: string[] = [];
    const effect = defineTool({
      name: "effect",
      description: "Has a side effect",
      parameters: { type: "object", properties: {} },
      execute: () => {
        seenAtRun.push(...stored.map((f) => f.type));
        return "ok";
      },
    });
    const result = await runTask(
      { id: "t1", spec: { input: "go" } },
      {
        spec: { model: "m" },
        provider: createScriptedProvider([callThenAnswer]),
        tools: () => createToolRegistry([effect]),
        tapes: store,
      },
    );
    expect(result.reason).toBe("completed");
    expect(seenAtRun).toContain("tool_call");
    expect(seenAtRun).toContain("tool_started");
    expect(stored.at(-1)?.type).toBe("run_ended");
  });

  it("a tape that cannot be opened (a planted symlink) fails the task, and its run is cancelled before it asks or does anything", async () => {
    const ran: string[] = [];
    const effect = defineTool({
      name: "effect",
      description: "Has a side effect",
      parameters: { type: "object", properties: {} },
      execute: () => {
        ran.push("effect");
        return "ok";
      },
    });
    const provider = createScriptedProvider([callThenAnswer]);
    const ends: Frame[] = [];
    const refusing: TapeStore = {
      read: async () => undefined,
      open() {
        throw new EddyError("invalid_config", "cannot write the tape t1.tape: it is a symlink", {
          fault: "user",
        });
      },
      location: (id) => `${id}.tape`,
    };
    const result = await runTask(
      { id: "t1", spec: { input: "go" } },
      {
        spec: { model: "m" },
        provider,
        tools: () => createToolRegistry([effect]),
        tapes: refusing,
        onFrame: (frame) => frame.type === "run_ended" && ends.push(frame),
      },
    );
    expect(result.error?.message).toMatch(/t1\.tape: it is a symlink/);
    // The run ended (cancelled) before runTask returned: nothing was sent, no tool ran.
    expect(ends).toMatchObject([{ type: "run_ended", reason: "cancelled" }]);
    expect(provider.requests).toHaveLength(0);
    expect(ran).toEqual([]);
  });

  it("a task (a queue job, a tasks-file line) may not add a hosted tool the invocation did not declare", async () => {
    const asked: unknown[] = [];
    const provider = createScriptedProvider([
      (body) => {
        asked.push(body);
        return { items: [{ type: "message", text: "done" }] };
      },
    ]);
    const web = { type: "web_search" };
    const planted = { type: "mcp", server_label: "x", server_url: "https://evil.example/mcp" };
    const ctx = {
      spec: { model: "m", hosted_tools: [web] },
      provider,
      policy: createPolicy({ hostedTools: [web] }),
    };
    const refused = await runTask({ id: "t1", spec: { input: "go", hosted_tools: [planted] } }, ctx);
    expect(refused.reason).toBe("invalid_request");
    expect(refused.error?.code).toBe("policy_denied");
    expect(refused.error?.message).toContain('hosted tool "mcp:x"');
    expect(asked).toEqual([]);
    const kept = await runTask({ id: "t2", spec: { input: "go" } }, ctx);
    expect(kept.reason).toBe("completed");
    expect(JSON.stringify(asked[0])).toContain("web_search");
  });

  it("a task may not turn the invocation's --stateless into a chained run that stores the conversation", async () => {
    const asked: JsonObject[] = [];
    const provider = createScriptedProvider([
      (body) => {
        asked.push(body);
        return { items: [{ type: "function_call", name: "note", arguments: "{}", call_id: "c1" }] };
      },
      (body) => {
        asked.push(body);
        return { items: [{ type: "message", text: "done" }] };
      },
    ]);
    const note = defineTool({
      name: "note",
      description: "notes",
      parameters: { type: "object", properties: {} },
      execute: () => "ok",
    });
    const ctx = {
      spec: { model: "m", mode: "stateless" as const },
      provider,
      tools: () => createToolRegistry([note]),
    };
    const result = await runTask({ id: "st2", spec: { input: "go", mode: "chained" } }, ctx);
    expect(result.reason).toBe("completed");
    expect(asked.map((b) => [b.store, b.previous_response_id])).toEqual([
      [false, undefined],
      [false, undefined],
    ]);
  });

  it("a task (a tasks-file line, a queue job) may lower the invocation's budgets, never raise them above its own or the defaults", async () => {
    const headers: TapeHeader[] = [];
    const store: TapeStore = {
      read: async () => undefined,
      open(_id, header) {
        headers.push(header);
        return { write() {}, commit() {}, flush: async () => {}, close: async () => {} };
      },
      location: (id) => `${id}.tape`,
    };
    const answer: Script = () => ({ items: [{ type: "message", text: "done" }] });
    const provider = createScriptedProvider([answer, answer, answer, answer]);
    const greedy = {
      input: "go",
      max_turns: 100_000,
      max_tool_calls: 1_000_000,
      tool_concurrency: 1024,
      tool_timeout_ms: 86_400_000,
      tool_output_cap_bytes: 1 << 30,
      request: { max_output_tokens: 1_000_000, temperature: 0.5 },
    };
    // The invocation set none of them: the defaults are the ceilings (max_output_tokens has none).
    await runTask({ id: "a", spec: greedy }, { spec: { model: "m" }, provider, tapes: store });
    // The invocation set them: its values are.
    const local = { model: "m", max_turns: 7, max_tool_calls: 9, request: { max_output_tokens: 500 } };
    await runTask({ id: "b", spec: greedy }, { spec: local, provider, tapes: store });
    // Lower is fine.
    const modest = { input: "go", max_turns: 2, max_tool_calls: 3, request: { max_output_tokens: 100 } };
    await runTask({ id: "c", spec: modest }, { spec: local, provider, tapes: store });
    const budgets = headers.map(({ spec }) => [
      spec.max_turns,
      spec.max_tool_calls,
      spec.tool_concurrency,
      spec.tool_timeout_ms,
      spec.tool_output_cap_bytes,
      spec.request.max_output_tokens,
    ]);
    expect(budgets).toEqual([
      [20, 32, 4, 120_000, 65_536, 1_000_000],
      [7, 9, 4, 120_000, 65_536, 500],
      [2, 3, 4, undefined, undefined, 100],
    ]);
    expect(headers[1]?.spec.request.temperature).toBe(0.5);
  });

  it("a task's unfinished tape asking a budget above the invocation's is refused, not resumed with it", async () => {
    const frames: Frame[] = [];
    let header: TapeHeader | undefined;
    const store: TapeStore = {
      read: async () => (header === undefined ? undefined : { header, frames: [...frames] }),
      open(_id, h) {
        header = h;
        return { write: (f) => frames.push(f), commit() {}, flush: async () => {}, close: async () => {} };
      },
      location: (id) => `${id}.tape`,
    };
    const controller = new AbortController();
    const stop = defineTool({
      name: "effect",
      description: "Stops the process",
      parameters: { type: "object", properties: {} },
      execute: () => {
        controller.abort("killed");
        return "ok";
      },
    });
    const first = await runTask(
      { id: "t", spec: { input: "go" } },
      {
        spec: { model: "m", max_turns: 50 },
        provider: createScriptedProvider([callThenAnswer]),
        tools: () => createToolRegistry([stop]),
        tapes: store,
        signal: controller.signal,
      },
    );
    expect(first.reason).toBe("cancelled");
    const provider = createScriptedProvider([callThenAnswer, callThenAnswer]);
    const again = await runTask(
      { id: "t", spec: { input: "go" } },
      { spec: { model: "m" }, provider, tools: () => createToolRegistry([stop]), tapes: store },
    );
    expect(again.reason).toBe("invalid_request");
    expect(again.error?.message).toContain("max_turns 50, above this invocation's limit of 20");
    expect(provider.requests).toHaveLength(0);
  });

  it("an observer (onFrame: a tracer, a live view) that throws cancels the run, never the tape: it gets every frame to run_ended", async () => {
    const { store, stored } = slowStore();
    const seen: string[] = [];
    const effect = defineTool({
      name: "effect",
      description: "Has a side effect",
      parameters: { type: "object", properties: {} },
      execute: () => "ok",
    });
    const result = await runTask(
      { id: "t1", spec: { input: "go" } },
      {
        spec: { model: "m" },
        provider: createScriptedProvider([callThenAnswer]),
        tools: () => createToolRegistry([effect]),
        tapes: store,
        onFrame: (frame) => {
          seen.push(frame.type);
          if (frame.type === "tool_call") throw new Error("the tracer broke");
        },
      },
    );
    expect(result.reason).toBe("cancelled");
    expect(stored.find((f) => f.type === "cancel_requested")).toMatchObject({
      reason: "a frame observer (onFrame) failed: the tracer broke",
    });
    // The observer saw nothing after its failure; the tape saw everything.
    expect(seen.at(-1)).toBe("tool_call");
    expect(stored.at(-1)).toMatchObject({ type: "run_ended", reason: "cancelled" });
    expect(stored.map((f) => f.seq)).toEqual(stored.map((_, i) => i));
  });
});
