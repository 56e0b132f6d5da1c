/**
 * MCP servers that misbehave on purpose (test/support/mcp-hostile.mjs): what they send must not
 * stall, crash or mislead a run.
 */
import { mkdtempSync, readFileSync } from "node:fs";
import { createServer, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { callTool, hostileServerConfig } from "../../../test/support/mcp.js";
import { createToolRegistry, type ToolRegistry } from "../registry.js";
import { MAX_LISTINGS_PER_TURN } from "./connection.js";
import { MCP_DEFAULTS } from "./defaults.js";
import { createMcpTools, type McpTools } from "./mcp-tools.js";
import type { McpEvent } from "./status.js";

const workspace = mkdtempSync(join(tmpdir(), "eddy-mcp-hostile-"));
const open: McpTools[] = [];
const listening: Server[] = [];

afterEach(async () => {
  await Promise.all(open.splice(0).map((m) => m.close()));
  for (const server of listening.splice(0)) server.closeAllConnections();
  await Promise.all(listening.map((server) => new Promise((resolve) => server.close(resolve))));
});

/**
 * A raw Streamable HTTP MCP server on 127.0.0.1 whose tools/call answer is `answer(id, res)`;
 * everything else is answered as a plain server would.
 */
async function rawHttpServer(answer: (id: unknown, res: ServerResponse) => void): Promise<string> {
  const server = createServer((req, res) => {
    let body = "";
    req.on("data", (c: Buffer) => {
      body += c.toString();
    });
    req.on("end", () => {
      if (req.method !== "POST") return void res.writeHead(405).end();
      const m = JSON.parse(body) as { id?: unknown; method: string; params?: { protocolVersion?: string } };
      if (m.id === undefined) return void res.writeHead(202).end();
      const reply = (result: unknown) =>
        res
          .writeHead(200, { "content-type": "application/json", "mcp-session-id": "s1" })
          .end(JSON.stringify({ jsonrpc: "2.0", id: m.id, result }));
      if (m.method === "initialize")
        return reply({
          protocolVersion: m.params?.protocolVersion,
          capabilities: { tools: {} },
          serverInfo: { name: "flood", version: "1" },
        });
      if (m.method === "tools/list")
        return reply({ tools: [{ name: "echo", inputSchema: { type: "object" } }] });
      if (m.method === "tools/call") return answer(m.id, res);
      reply({});
    });
  });
  listening.push(server);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`;
}

/** Writes `prefix`, then `mib` MiB of "x" (as fast as the client reads), then `suffix`. */
function flood(res: ServerResponse, prefix: string, mib: number, suffix: string): void {
  res.write(prefix);
  const chunk = "x".repeat(1 << 20);
  let sent = 0;
  const pump = () => {
    while (sent < mib && !res.destroyed) {
      sent++;
      if (!res.write(chunk)) return;
    }
    if (sent >= mib) res.end(suffix);
  };
  res.on("drain", pump);
  pump();
}

function mcp(servers: Record<string, unknown>) {
  const events: McpEvent[] = [];
  const tools = createMcpTools(servers, { env: { PATH: process.env.PATH }, onEvent: (e) => events.push(e) });
  open.push(tools);
  return { tools, events };
}

const run = (registry: ToolRegistry, name: string, args: unknown = {}) =>
  callTool(registry, name, args, workspace);

/** The `server_ready` and `tools_changed` events: type, server, tools offered, tools left out. */
const toolsEvents = (events: McpEvent[]) =>
  events.flatMap((e) =>
    e.type === "server_ready" || e.type === "tools_changed"
      ? [[e.type, e.server, e.tools, e.tools_left_out]]
      : [],
  );

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

  it("takes at most MCP_DEFAULTS.maxTools tools from a server, with a warning (docs/pitfalls.md #103)", async () => {
    // 100,000 tools held the run and Ctrl-C for minutes: each schema is compiled as it is taken.
    const log = join(workspace, "many.log");
    const { tools, events } = mcp({ h: hostileServerConfig("many", { log, env: { COUNT: "1500" } }) });
    const definitions = await tools.tools();
    expect(definitions).toHaveLength(MCP_DEFAULTS.maxTools);
    expect(definitions.at(-1)?.name).toBe(`h__t${MCP_DEFAULTS.maxTools - 1}`);
    expect(tools.status()[0]).toMatchObject({ state: "ready", tools: MCP_DEFAULTS.maxTools });
    expect(events.filter((e) => e.type === "warning").map((e) => e.message)).toEqual([
      `MCP server "h" lists more than ${MCP_DEFAULTS.maxTools} tools: only its first ${MCP_DEFAULTS.maxTools} are offered`,
    ]);
    // The ready line counts those of the pages read that are left out (docs/pitfalls.md #124).
    expect(toolsEvents(events)).toEqual([["server_ready", "h", MCP_DEFAULTS.maxTools, 501]]);
    expect(events.find((e) => e.type === "server_ready")?.message).toBe(
      `MCP server "h" is ready (${MCP_DEFAULTS.maxTools} tools; 501 more it lists are left out)`,
    );
    // The listing stopped at the page that went past the limit: no page after it was asked for.
    const listings = readFileSync(log, "utf8")
      .split("\n")
      .filter((l) => l.includes('"tools/list"'));
    expect(listings).toHaveLength(Math.ceil((MCP_DEFAULTS.maxTools + 1) / 500));
  });

  it("takes at most MCP_DEFAULTS.maxServerToolsBytes of tools from a server, whole, with one warning naming the server (docs/pitfalls.md #111)", async () => {
    // 100 tools each just within the per-tool bounds: ~7 MB that went into every request.
    const { tools, events } = mcp({
      h: hostileServerConfig("heavy"),
      g: hostileServerConfig("heavy", { env: { COUNT: "3" } }),
    });
    const definitions = await tools.tools();
    const fromH = definitions.filter((d) => d.name.startsWith("h__"));
    const fromG = definitions.filter((d) => d.name.startsWith("g__"));
    const taken = fromH.length;
    expect(taken).toBeGreaterThan(5);
    expect(taken).toBeLessThan(100);
    expect(fromH.map((d) => d.name)).toEqual(Array.from({ length: taken }, (_, i) => `h__h${i}`));
    // The bound is per server: the other server's tools (within it) are all offered.
    expect(fromG.map((d) => d.name)).toEqual(["g__h0", "g__h1", "g__h2", "g__echo"]);
    // No half tool: every one offered is whole, as the server listed it.
    for (const d of fromH) {
      expect(d.description).toBe("d".repeat(8000));
      expect(Object.keys((d.parameters as { properties: object }).properties)).toHaveLength(600);
    }
    expect(Buffer.byteLength(JSON.stringify(fromH))).toBeLessThanOrEqual(
      MCP_DEFAULTS.maxServerToolsBytes + taken * 64,
    );
    expect(Buffer.byteLength(JSON.stringify(fromH))).toBeGreaterThan(
      MCP_DEFAULTS.maxServerToolsBytes - 80 * 1024,
    );
    expect(tools.status().find((st) => st.name === "h")).toMatchObject({ state: "ready", tools: taken });
    // Before: "h" was ready with its tools within the bound, those past it not counted anywhere.
    expect(toolsEvents(events)).toEqual([
      ["server_ready", "h", taken, 101 - taken],
      ["server_ready", "g", 4, undefined],
    ]);
    expect(events.filter((e) => e.type === "warning").map((e) => e.message)).toEqual([
      `MCP server "h": its tools take more than ${MCP_DEFAULTS.maxServerToolsBytes} bytes: ${101 - taken} tools ("h${taken}", "h${taken + 1}", "h${taken + 2}", …) past its first ${taken} are left out`,
    ]);
  });

  describe("the tools of all servers together (docs/pitfalls.md #121)", () => {
    // A heavy tool is 71,536 bytes as counted (h10… one more): 14 and `echo` are 1,001,582, within
    // a server's bound; four such servers are 4,006,328, and 187,976 are left of the total.
    const heavy = (env: Record<string, string>) => hostileServerConfig("heavy", { env });
    const names = (definitions: { name: string }[], server: string) =>
      definitions.filter((d) => d.name.startsWith(`${server}__`)).map((d) => d.name.slice(server.length + 2));
    const first = (n: number) => Array.from({ length: n }, (_, i) => `h${i}`);

    it("takes at most MCP_DEFAULTS.maxTotalToolsBytes from all servers, in configuration order, the rest left out whole with one warning", async () => {
      // Each server within its own bound: 20 servers put 20 MiB into every request.
      const servers = Object.fromEntries(["a", "b", "c", "d", "e"].map((s) => [s, heavy({ COUNT: "14" })]));
      const { tools, events } = mcp({ ...servers, f: hostileServerConfig("basic") });
      const definitions = await tools.tools();
      for (const s of ["a", "b", "c", "d"]) expect(names(definitions, s)).toEqual([...first(14), "echo"]);
      expect(names(definitions, "e")).toEqual(first(2));
      // A server after the bound is passed offers nothing, however small its tools.
      expect(names(definitions, "f")).toEqual([]);
      expect(Buffer.byteLength(JSON.stringify(definitions))).toBeLessThan(
        MCP_DEFAULTS.maxTotalToolsBytes + 64 * 1024,
      );
      expect(tools.status().map((st) => st.tools)).toEqual([15, 15, 15, 15, 2, 0]);
      // The ready lines say what is offered, in configuration order (docs/pitfalls.md #124).
      // Before: "e" and "f" were ready with 15 tools and 1, as each listed them.
      expect(toolsEvents(events)).toEqual([
        ...["a", "b", "c", "d"].map((s) => ["server_ready", s, 15, undefined]),
        ["server_ready", "e", 2, 13],
        ["server_ready", "f", 0, 1],
      ]);
      expect(
        events
          .filter((e) => e.type === "server_ready" && ["e", "f"].includes(e.server))
          .map((e) => e.message),
      ).toEqual([
        'MCP server "e" is ready (2 tools; 13 more it lists are left out)',
        'MCP server "f" is ready (0 tools; 1 more it lists is left out)',
      ]);
      expect(events.filter((e) => e.type === "warning").map((e) => e.message)).toEqual([
        `the tools of the MCP servers take more than ${MCP_DEFAULTS.maxTotalToolsBytes} bytes together: 14 tools past the first ones, in mcp_servers order, are left out: 13 of MCP server "e" ("h2", "h3", "h4", …), 1 of MCP server "f" ("echo")`,
      ]);
      // Said once: the next turn's tools are the same, and nothing more is said.
      expect((await tools.tools()).map((d) => d.name)).toEqual(definitions.map((d) => d.name));
      expect(events.filter((e) => e.type === "warning")).toHaveLength(1);
    });

    it("a re-listing (tools/list_changed) that would pass the total leaves the tools past it out", async () => {
      const servers = Object.fromEntries(["a", "b", "c", "d"].map((s) => [s, heavy({ COUNT: "14" })]));
      const { tools, events } = mcp({ ...servers, e: heavy({ COUNT: "2", GROW: "14" }) });
      const before = await tools.tools();
      expect(names(before, "e")).toEqual([...first(2), "echo"]);
      expect(events.filter((e) => e.type === "warning")).toEqual([]);
      const revision = tools.revision;
      expect((await run(createToolRegistry(before), "e__echo", { t: "x" })).ok).toBe(true);
      // The next turn waits for the listing the server announced.
      const after = await tools.tools();
      expect(tools.revision).toBeGreaterThan(revision);
      expect(names(after, "e")).toEqual(first(2));
      expect(names(after, "a")).toEqual([...first(14), "echo"]);
      // Before: "e" changed its tools to 15, as listed, when 2 of them are offered.
      expect(toolsEvents(events).filter(([type]) => type === "tools_changed")).toEqual([
        ["tools_changed", "e", 2, 13],
      ]);
      expect(events.find((e) => e.type === "tools_changed")?.message).toBe(
        'MCP server "e" changed its tools (2 now; 13 more it lists are left out)',
      );
      expect(events.filter((e) => e.type === "warning").map((e) => e.message)).toEqual([
        `the tools of the MCP servers take more than ${MCP_DEFAULTS.maxTotalToolsBytes} bytes together: 13 tools past the first ones, in mcp_servers order, are left out: 13 of MCP server "e" ("h2", "h3", "h4", …)`,
      ]);
    });
  });

  it("cuts a tool description over 8 KiB with a marker and offers a schema over 64 KiB open, with one warning (docs/pitfalls.md #106)", async () => {
    // An 8 MB description went into every request of the run.
    const { tools, events } = mcp({ h: hostileServerConfig("huge-text") });
    const definitions = await tools.tools();
    const byName = new Map(definitions.map((d) => [d.name, d]));
    const big = byName.get("h__big")?.description ?? "";
    expect(Buffer.byteLength(big)).toBeLessThanOrEqual(MCP_DEFAULTS.maxDescriptionBytes);
    expect(Buffer.byteLength(big)).toBeGreaterThan(MCP_DEFAULTS.maxDescriptionBytes - 100);
    expect(big.startsWith("a🦀🦀")).toBe(true);
    expect(big).toMatch(/🦀 … \[cut by eddy: 8000001 bytes, over the 8192-byte limit\]$/);
    expect(big).not.toContain("\uFFFD"); // no character split by the cut
    const titled = byName.get("h__titled")?.description ?? "";
    expect(Buffer.byteLength(titled)).toBeLessThanOrEqual(MCP_DEFAULTS.maxDescriptionBytes);
    expect(titled).toMatch(/^t+ … \[cut by eddy: 100000 bytes/);
    expect(byName.get("h__wide")?.parameters).toEqual({ type: "object", additionalProperties: true });
    expect(byName.get("h__echo")).toMatchObject({
      description: "echo",
      parameters: { type: "object", properties: { t: { type: "string" } } },
    });
    // What the run records and shows is the bounded tool too; every request stays small.
    const info = tools.toolInfo().find((i) => i.name === "h__big");
    expect(info?.description).toBe(big);
    expect(JSON.stringify(definitions).length).toBeLessThan(32 * 1024);
    expect(events.filter((e) => e.type === "warning").map((e) => e.message)).toEqual([
      'MCP server "h": the descriptions of 2 tools ("big", "titled") are over 8192 bytes and are cut; the input schemas of 1 tool ("wide") are over 65536 bytes and are offered open (the server checks the arguments)',
    ]);
    expect((await run(createToolRegistry(definitions), "h__echo", { t: "x" })).stdout).toBe('echo:{"t":"x"}');
  });

  it("says a tool list that does not follow the MCP schema in words, not as a JSON dump of issues", async () => {
    const { tools, events } = mcp({ h: hostileServerConfig("bad-list") });
    expect(await tools.tools()).toEqual([]);
    const message =
      'MCP server "h" failed to start: its answer does not follow the MCP schema: tools[0].inputSchema.type: Invalid input: expected "object" (and 2 more problems); ask the server\'s author to fix it, or remove it from mcp_servers';
    expect(tools.status()[0]).toMatchObject({ state: "failed", error: message });
    expect(events).toContainEqual(expect.objectContaining({ type: "server_failed", message }));
  });

  it("says a call result that does not follow the MCP schema in words", async () => {
    const { tools } = mcp({ h: hostileServerConfig("bad-result") });
    const out = await run(createToolRegistry(await tools.tools()), "h__echo", { t: "x" });
    expect(out.error?.message).toMatch(
      /^h__echo failed: its answer does not follow the MCP schema: content: .+; ask the server's author to fix it, or remove it from mcp_servers$/,
    );
    expect(tools.status()[0]?.state).toBe("ready");
  });

  it("stops an HTTP server whose event stream sends a message over 10 MiB", async () => {
    // 200 MiB in one event: without a cap the SDK buffers all of it (an endless line fills the heap).
    const url = await rawHttpServer((id, res) => {
      res.writeHead(200, { "content-type": "text/event-stream" });
      const text = JSON.stringify({ jsonrpc: "2.0", id, result: { content: [{ type: "text", text: "" }] } });
      flood(res, `data: ${text.slice(0, -5)}`, 200, `${text.slice(-5)}\n\n`);
    });
    const { tools, events } = mcp({ h: { url } });
    const registry = createToolRegistry(await tools.tools());
    const out = await run(registry, "h__echo");
    expect(out.ok).toBe(false);
    expect(out.error?.message).toContain("sent a message over the 10485760-byte limit and was stopped");
    expect(tools.status()[0]?.state).toBe("failed");
    expect(events.find((e) => e.type === "server_failed")?.message).toBe(
      'MCP server "h" sent a message over the 10485760-byte limit and was stopped',
    );
  });

  it("stops an HTTP server whose JSON answer is over 10 MiB", async () => {
    const url = await rawHttpServer((id, res) => {
      res.writeHead(200, { "content-type": "application/json" });
      flood(
        res,
        `{"jsonrpc":"2.0","id":${JSON.stringify(id)},"result":{"content":[{"type":"text","text":"`,
        200,
        '"}]}}',
      );
    });
    const { tools } = mcp({ h: { url } });
    const registry = createToolRegistry(await tools.tools());
    const out = await run(registry, "h__echo");
    expect(out.ok).toBe(false);
    expect(out.error?.message).toContain("sent a message over the 10485760-byte limit and was stopped");
    expect(tools.status()[0]?.state).toBe("failed");
  });

  it("lists a server that announces a change during every listing a few times a turn, not for ever", async () => {
    const log = join(workspace, "loop-relist.log");
    const { tools, events } = mcp({ h: hostileServerConfig("loop-relist", { log }) });
    const registry = createToolRegistry(await tools.tools());
    const listings = () =>
      readFileSync(log, "utf8")
        .split("\n")
        .filter((l) => l.includes('"tools/list"'));
    expect(listings()).toHaveLength(1);
    expect((await run(registry, "h__echo")).ok).toBe(true);
    // The next turn: the tools as listed last, after at most MAX_LISTINGS_PER_TURN listings.
    expect((await tools.tools()).map((d) => d.name)).toEqual(["h__echo"]);
    expect(listings()).toHaveLength(1 + MAX_LISTINGS_PER_TURN);
    expect(events.filter((e) => e.type === "warning").map((e) => e.message)).toEqual([
      'MCP server "h" keeps announcing new tools (listed 3 times this turn): the tools it listed last stay until the next turn',
    ]);
    // Said once, by the tools() that offers them, not after each listing (docs/pitfalls.md #124).
    expect(toolsEvents(events)).toEqual([
      ["server_ready", "h", 1, undefined],
      ["tools_changed", "h", 1, undefined],
    ]);
    // The turn after: the change it announced last is listed then, again a bounded number of times.
    await tools.tools();
    expect(listings()).toHaveLength(1 + 2 * MAX_LISTINGS_PER_TURN);
  });

  it("stops waiting for a listing that never comes when the run is cancelled", async () => {
    // startup_timeout_sec bounds the listing: 10 minutes without the signal.
    const { tools } = mcp({ h: { ...hostileServerConfig("hang-relist"), startup_timeout_sec: 600 } });
    const registry = createToolRegistry(await tools.tools());
    expect((await run(registry, "h__echo")).ok).toBe(true);
    const controller = new AbortController();
    const waiting = tools.tools({ signal: controller.signal });
    setTimeout(() => controller.abort(new Error("Ctrl-C")), 50);
    await expect(waiting).rejects.toThrow("Ctrl-C");
  });

  it("does not tell the server a call it answered was cancelled", async () => {
    const log = join(workspace, "cancelled.log");
    const { tools } = mcp({ h: hostileServerConfig("basic", { log }) });
    const registry = createToolRegistry(await tools.tools());
    expect((await run(registry, "h__echo", { t: "one" })).ok).toBe(true);
    // The server reads its input in order: a notification sent after the first answer is logged
    // before the second call.
    expect((await run(registry, "h__echo", { t: "two" })).ok).toBe(true);
    const received = readFileSync(log, "utf8");
    expect(received).toContain('"tools/call"');
    expect(received).not.toContain("notifications/cancelled");
  });

  it.each([
    ["-32000", "the SDK's code for a closed connection"],
    ["-32001", "the SDK's code for a timeout"],
  ])("reports a server's error answer with code %s (%s) in the server's words", async (code) => {
    const { tools } = mcp({ h: hostileServerConfig("error", { env: { CODE: code } }) });
    const registry = createToolRegistry(await tools.tools());
    const out = await run(registry, "h__echo");
    expect(out.error).toEqual({
      code: "tool_failed",
      message: `MCP server "h" refused h__echo: MCP error ${code}: the server's own words`,
    });
    expect(tools.status()[0]?.state).toBe("ready");
  });

  it.each([
    ["init-error", "-32001"],
    ["init-error", "-32000"],
    ["list-error", "-32001"],
  ])(
    "a start refused by the server (%s, code %s) is said in the server's words, not as a timeout",
    async (mode, code) => {
      const { tools, events } = mcp({ h: hostileServerConfig(mode, { env: { CODE: code } }) });
      const started = performance.now();
      expect(await tools.tools()).toEqual([]);
      expect(performance.now() - started).toBeLessThan(5000);
      const message = `MCP server "h" failed to start: it answered with an error: MCP error ${code}: the server's own words`;
      expect(tools.status()[0]).toMatchObject({ state: "failed", error: message });
      expect(events).toContainEqual(expect.objectContaining({ type: "server_failed", message }));
    },
  );
});
