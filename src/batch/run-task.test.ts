import { describe, expect, it } from "vitest";
import { createScriptedProvider, type Script } from "../../test/support/scripted.js";
import { EddyError } from "../errors.js";
import type { Frame } from "../frames/frame.js";
import { createPolicy } from "../loop/policy.js";
import type { JsonObject } from "../protocol/types.js";
import type { Tape } from "../replay/tape.js";
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
});
