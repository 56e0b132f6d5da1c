/**
 * Tools that change between turns (`refreshTools`, e.g. MCP `tools/list_changed`) and the MCP
 * servers listed in `run_started` (`mcpServers`).
 */
import { tmpdir } from "node:os";
import { describe, expect, it } from "vitest";
import { createScriptedProvider } from "../../test/support/scripted.js";
import type { Frame } from "../frames/frame.js";
import { createToolRegistry, type ToolRegistry } from "../tools/registry.js";
import { defineTool } from "../tools/tool.js";
import type { RunDeps } from "./options.js";
import { runAgent } from "./run.js";

const tool = (name: string, answer: string) =>
  defineTool({
    name,
    description: `The ${name} tool`,
    parameters: { type: "object", properties: {} },
    execute: () => answer,
  });

async function collect(deps: Partial<RunDeps>, provider: ReturnType<typeof createScriptedProvider>) {
  const handle = runAgent({ model: "m", input: "go" }, { provider, workspace: tmpdir(), ...deps });
  const frames: Frame[] = [];
  for await (const f of handle) frames.push(f);
  return { frames, result: await handle.result };
}

const call = (name: string, call_id: string) => ({
  items: [{ type: "function_call" as const, name, arguments: "{}", call_id }],
});

describe("refreshTools", () => {
  it("is asked at each turn start; a new registry is declared and callable from then on", async () => {
    const provider = createScriptedProvider([
      call("first", "c1"),
      call("late", "c2"),
      { items: [{ type: "message", text: "done" }] },
    ]);
    const before = createToolRegistry([tool("first", "one")]);
    const after = createToolRegistry([tool("first", "one"), tool("late", "two")]);
    const asked: number[] = [];
    let turn = 0;
    const { frames, result } = await collect(
      {
        tools: before,
        refreshTools: async (): Promise<ToolRegistry | undefined> => {
          asked.push(turn++);
          return turn === 2 ? after : undefined;
        },
      },
      provider,
    );
    expect(result.reason).toBe("completed");
    expect(asked).toEqual([0, 1, 2]);
    const declared = provider.requests.map((b) => (b.tools as { name: string }[]).map((t) => t.name));
    expect(declared).toEqual([["first"], ["first", "late"], ["first", "late"]]);
    const outputs = frames.flatMap((f) => (f.type === "tool_ended" ? [[f.name, f.ok, f.output]] : []));
    expect(outputs).toEqual([
      ["first", true, expect.stringContaining('"stdout":"one"')],
      ["late", true, expect.stringContaining('"stdout":"two"')],
    ]);
  });

  it("is given the run's signal: a refresh still waiting ends with the cancellation", async () => {
    const provider = createScriptedProvider([{ items: [{ type: "message", text: "never" }] }]);
    const controller = new AbortController();
    const handle = runAgent(
      { model: "m", input: "go" },
      {
        provider,
        workspace: tmpdir(),
        signal: controller.signal,
        // A refresh that waits for ever unless it is told the run was cancelled.
        refreshTools: (signal) =>
          new Promise<undefined>((resolve) => {
            signal.addEventListener("abort", () => resolve(undefined));
            controller.abort();
          }),
      },
    );
    for await (const _ of handle);
    expect((await handle.result).reason).toBe("cancelled");
  });

  it("without a refresh, a tool that appears later is unknown (the control)", async () => {
    const provider = createScriptedProvider([
      call("late", "c1"),
      { items: [{ type: "message", text: "ok" }] },
    ]);
    const { frames } = await collect({ tools: [tool("first", "one")] }, provider);
    const ended = frames.find((f) => f.type === "tool_ended");
    expect(ended).toMatchObject({ name: "late", ok: false });
  });
});

describe("mcpServers", () => {
  it("are listed in run_started, and only when there are any", async () => {
    const servers = [
      { name: "fs", transport: "stdio" as const, state: "ready" as const, tools: 3 },
      { name: "gh", transport: "http" as const, state: "failed" as const, tools: 0, error: "HTTP 401" },
    ];
    const text = { items: [{ type: "message" as const, text: "hi" }] };
    const withServers = await collect({ mcpServers: servers }, createScriptedProvider([text]));
    expect(withServers.frames[0]).toMatchObject({ type: "run_started", mcp_servers: servers });
    const without = await collect({ mcpServers: [] }, createScriptedProvider([text]));
    expect(without.frames[0]).not.toHaveProperty("mcp_servers");
  });
});
