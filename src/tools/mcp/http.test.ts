/**
 * MCP Streamable HTTP servers end to end: the official SDK server in test/support/mcp-server.mjs
 * listening on 127.0.0.1 with a required bearer token, used through the real registry and executor.
 */
import { mkdtempSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import {
  callTool,
  eventually,
  type HttpTestServer,
  newMarker,
  startHttpTestServer,
} from "../../../test/support/mcp.js";
import { createToolRegistry, type ToolRegistry } from "../registry.js";
import { createMcpTools, type McpTools, type McpToolsOptions } from "./mcp-tools.js";
import type { McpEvent } from "./status.js";

const workspace = mkdtempSync(join(tmpdir(), "eddy-mcp-http-"));
const TOKEN = "mcp-test-token-5f1c2a9e";
const open: McpTools[] = [];
const servers: HttpTestServer[] = [];

afterEach(async () => {
  await Promise.all(open.splice(0).map((m) => m.close()));
  await Promise.all(servers.splice(0).map((s) => s.stop()));
});

async function httpServer(...args: string[]): Promise<HttpTestServer> {
  const server = await startHttpTestServer(newMarker(), "--token", TOKEN, ...args);
  servers.push(server);
  return server;
}

function mcp(config: Record<string, unknown>, options: McpToolsOptions = {}) {
  const events: McpEvent[] = [];
  const tools = createMcpTools(config, { onEvent: (e) => events.push(e), ...options });
  open.push(tools);
  return { tools, events };
}

const run = (registry: ToolRegistry, name: string, args: unknown = {}) =>
  callTool(registry, name, args, workspace);

// biome-ignore lint/suspicious/noTemplateCurlyInString: the ${VAR} syntax of mcp_servers is under test
const AUTH_FROM_ENV = { Authorization: "Bearer ${MCP_TEST_TOKEN}" };

describe("Streamable HTTP MCP servers", () => {
  it("connects with a header taken from the environment, lists and calls tools", async () => {
    const server = await httpServer();
    const { tools } = mcp(
      { web: { url: server.url, headers: AUTH_FROM_ENV } },
      { env: { MCP_TEST_TOKEN: TOKEN } },
    );
    const definitions = await tools.tools();
    expect(definitions.map((d) => d.name)).toContain("web__echo");
    expect(tools.status()).toEqual([
      { name: "web", transport: "http", state: "ready", tools: definitions.length },
    ]);
    expect(tools.secrets).toContain(TOKEN);
    const registry = createToolRegistry(definitions);
    expect(await run(registry, "web__echo", { text: "over http" })).toEqual({
      tool: "web__echo",
      ok: true,
      exit_code: 0,
      stdout: "over http",
      stderr: "",
    });
    expect((await run(registry, "web__fail")).error?.message).toBe(
      "web__fail reported an error: the widget is broken",
    );
    expect((await run(registry, "web__media")).stdout).toContain("[image: image/png, 68 bytes, not shown]");
  });

  it("accepts Codex's bearer_token_env_var", async () => {
    const server = await httpServer();
    const { tools } = mcp(
      { web: { url: server.url, bearer_token_env_var: "MY_MCP_TOKEN" } },
      { env: { MY_MCP_TOKEN: TOKEN } },
    );
    expect((await tools.tools()).length).toBeGreaterThan(0);
    expect(tools.secrets).toContain(TOKEN);
  });

  it("a refused token fails the start in one line that never shows the token", async () => {
    const server = await httpServer();
    const wrong = "wrong-token-1234567890";
    const { tools, events } = mcp(
      { web: { url: server.url, headers: AUTH_FROM_ENV } },
      { env: { MCP_TEST_TOKEN: wrong } },
    );
    expect(await tools.tools()).toEqual([]);
    const status = tools.status()[0];
    expect(status?.state).toBe("failed");
    expect(status?.error).toBe(
      `MCP server "web" failed to start: ${server.url} answered HTTP 401: check the server's headers or token`,
    );
    expect(JSON.stringify(events)).not.toContain(wrong);
  });

  it("an unreachable URL fails the start with the network reason", async () => {
    const port = await freePort();
    const { tools } = mcp({ web: { url: `http://127.0.0.1:${port}/mcp` } });
    expect(await tools.tools()).toEqual([]);
    expect(tools.status()[0]?.error).toMatch(
      new RegExp(
        `^MCP server "web" failed to start: cannot reach http://127.0.0.1:${port}/mcp: .*ECONNREFUSED`,
      ),
    );
  });

  it("honours tools/list_changed over the session's event stream", async () => {
    const server = await httpServer();
    const { tools } = mcp(
      { web: { url: server.url, headers: AUTH_FROM_ENV } },
      { env: { MCP_TEST_TOKEN: TOKEN } },
    );
    const before = await tools.tools();
    const revision = tools.revision;
    await run(createToolRegistry(before), "web__add_tool");
    expect(await eventually(() => tools.revision > revision)).toBe(true);
    const registry = createToolRegistry(await tools.tools());
    expect((await run(registry, "web__late")).stdout).toBe("late tool here");
  });

  it("a server that dies mid-call gives ok:false, not a hang", async () => {
    const server = await httpServer();
    const { tools } = mcp(
      { web: { url: server.url, headers: AUTH_FROM_ENV } },
      { env: { MCP_TEST_TOKEN: TOKEN }, callTimeoutMs: 10_000 },
    );
    const registry = createToolRegistry(await tools.tools());
    const started = Date.now();
    const crash = await run(registry, "web__crash");
    expect(crash.ok).toBe(false);
    expect(crash.error?.code).toBe("mcp_server_unavailable");
    expect(crash.error?.message).toMatch(
      // The probe may find the port closed, or catch the connection being reset as the server dies.
      /^MCP server "web" became unreachable while web__crash was running: .*(ECONNREFUSED|ECONNRESET)/,
    );
    expect(Date.now() - started).toBeLessThan(9_000);
    // The server is gone: the next call fails at once with the network reason.
    const next = await run(registry, "web__echo", { text: "x" });
    expect(next.error?.message).toMatch(/^web__echo failed: .*ECONNREFUSED/);
  });
});

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const probe = createServer();
    probe.listen(0, "127.0.0.1", () => {
      const address = probe.address();
      probe.close(() => resolve(typeof address === "object" && address !== null ? address.port : 0));
    });
  });
}
