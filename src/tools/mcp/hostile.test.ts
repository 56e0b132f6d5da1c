/**
 * MCP servers that misbehave on purpose (test/support/mcp-hostile.mjs): what they send must not
 * stall, crash or mislead a run.
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { hostileServerConfig } from "../../../test/support/mcp.js";
import { executeToolCall } from "../execute.js";
import type { ToolOutput } from "../output.js";
import { createToolRegistry, type ToolRegistry } from "../registry.js";
import { createMcpTools, type McpTools } from "./mcp-tools.js";
import type { McpEvent } from "./status.js";

const workspace = mkdtempSync(join(tmpdir(), "eddy-mcp-hostile-"));
const open: McpTools[] = [];

afterEach(async () => {
  await Promise.all(open.splice(0).map((m) => m.close()));
});

function mcp(servers: Record<string, unknown>) {
  const events: McpEvent[] = [];
  const tools = createMcpTools(servers, { env: { PATH: process.env.PATH }, onEvent: (e) => events.push(e) });
  open.push(tools);
  return { tools, events };
}

async function run(registry: ToolRegistry, name: string, args: unknown = {}) {
  const result = await executeToolCall(
    registry,
    { callId: "call_1", name, arguments: JSON.stringify(args) },
    { workspace, redact: [] },
  );
  return JSON.parse(result.output) as ToolOutput;
}

describe("hostile MCP servers", () => {
  it("checks a server's input-schema pattern in linear time (no catastrophic backtracking)", async () => {
    const { tools } = mcp({ h: hostileServerConfig("redos") });
    const registry = createToolRegistry(await tools.tools());
    // With backtracking RegExp, ^(a+)+$ against 54 "a"s and a "!" takes longer than the universe is old.
    const bad = await run(registry, "h__r", { t: `${"a".repeat(54)}!` });
    expect(bad.error?.code).toBe("tool_input_invalid");
    expect((await run(registry, "h__r", { t: "aaaa" })).ok).toBe(true);
  });

  it("does not check structuredContent against the server's outputSchema", async () => {
    const { tools } = mcp({ h: hostileServerConfig("redos-out") });
    const registry = createToolRegistry(await tools.tools());
    // The SDK's own check would run ^(a+)+$ on 40 "a"s and a "!": minutes of backtracking.
    const out = await run(registry, "h__echo", { t: "x" });
    expect(out.ok).toBe(true);
  });

  it("offers a tool whose pattern cannot run in linear time with an open schema and a warning", async () => {
    const { tools, events } = mcp({ h: hostileServerConfig("lookahead") });
    const la = (await tools.tools()).find((d) => d.name === "h__la");
    expect(la?.parameters).toEqual({ type: "object", additionalProperties: true });
    expect(events.find((e) => e.type === "warning")?.message).toContain(
      'the input schema of tool "la" cannot be used',
    );
  });

  it("offers a tool whose schema nests 3,000 levels deep with an open schema; the others work", async () => {
    const { tools, events } = mcp({ h: hostileServerConfig("deep", { env: { DEPTH: "3000" } }) });
    const definitions = await tools.tools();
    expect(definitions.find((d) => d.name === "h__deep")?.parameters).toEqual({
      type: "object",
      additionalProperties: true,
    });
    expect(events.find((e) => e.type === "warning")?.message).toContain(
      'the input schema of tool "deep" cannot be used (it nests deeper than 100 levels',
    );
    expect(JSON.stringify(tools.toolInfo())).toContain("h__deep");
    const registry = createToolRegistry(definitions);
    expect((await run(registry, "h__echo", { t: "x" })).stdout).toBe('echo:{"t":"x"}');
    // A second listing (tools/list_changed) reuses nothing of it, and still does not throw.
    expect((await tools.tools()).length).toBe(2);
  });
});
