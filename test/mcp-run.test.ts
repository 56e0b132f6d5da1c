/**
 * MCP tool sources in a whole run: the loop against the mock Open Responses server, with a stdio
 * MCP server and a Streamable HTTP one (both the official SDK server of test/support/mcp-server.mjs).
 * The model calls SERVER__TOOL, the output reaches the next request, and nothing survives close().
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { Frame } from "../src/frames/frame.js";
import { runAgent } from "../src/loop/run.js";
import { createMockServer, type MockServer, type Scenario } from "../src/mock/index.js";
import type { JsonObject } from "../src/protocol/types.js";
import { createOpenResponsesProvider } from "../src/provider/open-responses.js";
import { createMcpTools } from "../src/tools/mcp/index.js";
import { createToolRegistry } from "../src/tools/registry.js";
import {
  type HttpTestServer,
  isAlive,
  newMarker,
  processesWith,
  startHttpTestServer,
  testServerConfig,
} from "./support/mcp.js";

const TOKEN = "run-test-token-0a1b2c3d";
let mock: MockServer | undefined;
let http: HttpTestServer | undefined;
afterEach(async () => {
  await mock?.close();
  await http?.stop();
  mock = undefined;
  http = undefined;
});

const call = (name: string, args: Record<string, unknown>, call_id: string) => ({
  type: "function_call" as const,
  name,
  arguments: args,
  call_id,
});

async function mockProvider(scenario: Scenario) {
  mock = await createMockServer({ scenario });
  return createOpenResponsesProvider({ baseURL: mock.url, name: "mock", retry: { maxRetries: 0 } });
}

describe("a run with MCP tools", () => {
  it("calls a stdio and an HTTP server's tools and sends their outputs back", async () => {
    const marker = newMarker();
    http = await startHttpTestServer(newMarker(), "--token", TOKEN);
    const mcp = createMcpTools(
      {
        local: testServerConfig(marker),
        // biome-ignore lint/suspicious/noTemplateCurlyInString: the ${VAR} syntax of mcp_servers is under test
        remote: { url: http.url, headers: { Authorization: "Bearer ${REMOTE_TOKEN}" } },
      },
      { env: { PATH: process.env.PATH, REMOTE_TOKEN: TOKEN } },
    );
    try {
      const provider = await mockProvider({
        turns: [
          { items: [call("local__echo", { text: "from stdio" }, "call_a")] },
          {
            expect: { functionCallOutputs: "call_a" },
            items: [call("remote__add", { a: 40, b: 2 }, "call_b")],
          },
          { expect: { functionCallOutputs: "call_b" }, items: [{ type: "message", text: "Done." }] },
        ],
      });
      const registry = createToolRegistry(await mcp.tools());
      const handle = runAgent({ model: "m", input: "go" }, { provider, tools: registry, workspace: tmp() });
      const frames: Frame[] = [];
      for await (const f of handle) frames.push(f);
      expect((await handle.result).reason).toBe("completed");

      const bodies = (mock?.requests ?? []).map((r) => r.body as JsonObject);
      const declared = ((bodies[0]?.tools ?? []) as { name: string }[]).map((t) => t.name);
      expect(declared).toEqual(expect.arrayContaining(["local__echo", "remote__add"]));
      expect(bodies[1]?.input).toEqual([
        {
          type: "function_call_output",
          call_id: "call_a",
          output: '{"tool":"local__echo","ok":true,"exit_code":0,"stdout":"from stdio","stderr":""}',
        },
      ]);
      expect(bodies[2]?.input).toEqual([
        {
          type: "function_call_output",
          call_id: "call_b",
          output: '{"tool":"remote__add","ok":true,"exit_code":0,"stdout":"{\\"sum\\":42}","stderr":""}',
        },
      ]);
      expect(JSON.stringify(frames)).not.toContain(TOKEN);
      expect(mcp.status().map((s) => [s.name, s.transport, s.state])).toEqual([
        ["local", "stdio", "ready"],
        ["remote", "http", "ready"],
      ]);
    } finally {
      await mcp.close();
    }
    expect(processesWith(marker)).toEqual([]);
  });

  it("a cancelled run stops the MCP call, and close() leaves no process", async () => {
    const marker = newMarker();
    const mcp = createMcpTools({ local: testServerConfig(marker) }, { env: { PATH: process.env.PATH } });
    const controller = new AbortController();
    try {
      const registry = createToolRegistry(await mcp.tools());
      const provider = await mockProvider({
        turns: [
          { items: [call("local__spawn_grandchild", {}, "call_g")] },
          { items: [call("local__slow", { ms: 30_000 }, "call_s")] },
          { items: [{ type: "message", text: "never" }] },
        ],
      });
      const handle = runAgent(
        { model: "m", input: "go" },
        { provider, tools: registry, workspace: tmp(), signal: controller.signal },
      );
      let grandchild = 0;
      for await (const f of handle) {
        if (f.type === "tool_ended" && grandchild === 0) grandchild = Number(JSON.parse(f.output).stdout);
        if (f.type === "tool_started" && f.name === "local__slow") setTimeout(() => controller.abort(), 100);
      }
      expect((await handle.result).reason).toBe("cancelled");
      expect(isAlive(grandchild)).toBe(true);
      await mcp.close();
      expect(processesWith(marker)).toEqual([]);
      expect(isAlive(grandchild)).toBe(false);
    } finally {
      await mcp.close();
    }
  });
});

function tmp(): string {
  return mkdtempSync(join(tmpdir(), "eddy-mcp-run-"));
}
