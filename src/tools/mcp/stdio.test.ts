/**
 * MCP stdio servers end to end: the official SDK server in test/support/mcp-server.mjs, started by
 * createMcpTools as a child process, called through the real registry and executor.
 */
import { execFile } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { afterEach, describe, expect, it } from "vitest";
import {
  eventually,
  isAlive,
  MCP_TEST_SERVER,
  newMarker,
  processesWith,
  testServerConfig,
} from "../../../test/support/mcp.js";
import { executeToolCall } from "../execute.js";
import type { ToolOutput } from "../output.js";
import { createToolRegistry, type ToolRegistry } from "../registry.js";
import { createMcpTools, type McpToolInfo, type McpTools, type McpToolsOptions } from "./mcp-tools.js";
import { offlineMcpTools } from "./offline.js";
import type { McpEvent } from "./status.js";

const execFileAsync = promisify(execFile);
const workspace = mkdtempSync(join(tmpdir(), "eddy-mcp-"));
const env = { PATH: process.env.PATH };
const open: McpTools[] = [];

afterEach(async () => {
  await Promise.all(open.splice(0).map((m) => m.close()));
});

function mcp(servers: Record<string, unknown>, options: McpToolsOptions = {}) {
  const events: McpEvent[] = [];
  const tools = createMcpTools(servers, { env, onEvent: (e) => events.push(e), ...options });
  open.push(tools);
  return { tools, events };
}

async function run(registry: ToolRegistry, name: string, args: unknown = {}, signal?: AbortSignal) {
  const result = await executeToolCall(
    registry,
    { callId: "call_1", name, arguments: JSON.stringify(args) },
    { workspace, redact: [], ...(signal === undefined ? {} : { signal }) },
  );
  return { ...result, parsed: JSON.parse(result.output) as ToolOutput };
}

describe("stdio MCP servers", () => {
  it("offers the server's tools as NAME__TOOL with description, schema and read-only hint", async () => {
    const marker = newMarker();
    const { tools, events } = mcp({ t: testServerConfig(marker) });
    const definitions = await tools.tools();
    const names = definitions.map((d) => d.name);
    expect(names).toContain("t__echo");
    expect(names).toContain("t__add");
    const echo = definitions.find((d) => d.name === "t__echo");
    expect(echo?.description).toBe("Echoes text back.");
    expect(echo?.strict).toBe(false);
    // A server's readOnlyHint grants nothing: every server tool is asked about (when the run asks
    // at all) and is not run again after a crash interrupted it.
    for (const name of ["t__echo", "t__crash"])
      expect(definitions.find((d) => d.name === name)).toMatchObject({
        readOnly: false,
        idempotent: false,
        needsApproval: true,
      });
    expect(echo?.parameters).toMatchObject({ properties: { text: { type: "string" } }, required: ["text"] });
    expect(tools.status()).toEqual([
      { name: "t", transport: "stdio", state: "ready", tools: definitions.length },
    ]);
    expect(events).toEqual([
      {
        type: "server_ready",
        server: "t",
        tools: definitions.length,
        message: expect.stringContaining("ready"),
      },
    ]);
    // Started once: a second call returns the same definitions without a new process.
    expect(await tools.tools()).toEqual(definitions);
    expect(processesWith(marker)).toHaveLength(1);
    const registry = createToolRegistry(definitions);
    expect(registry.declarations().find((d) => d.name === "t__echo")).toMatchObject({
      type: "function",
      strict: false,
    });
    // Recorded as data (a tape header), the tools declare the same way without the server.
    const info = JSON.parse(JSON.stringify(tools.toolInfo())) as McpToolInfo[];
    expect(info.find((i) => i.name === "t__echo")).toMatchObject({
      server: "t",
      tool: "echo",
      readOnly: true,
    });
    expect(info.find((i) => i.name === "t__crash")?.readOnly).toBe(false);
    const offline = createToolRegistry(offlineMcpTools(info));
    expect(offline.resolve("t__crash")?.definition.needsApproval).toBe(true);
    expect(offline.resolve("t__echo")?.definition.needsApproval).toBe(true);
    // A recording that did not ask about a read-only-hinted tool (made before eddy asked) replays so.
    const unasked = createToolRegistry(offlineMcpTools(info, { askedAbout: new Set(["t__crash"]) }));
    expect(unasked.resolve("t__echo")?.definition).toMatchObject({ needsApproval: false, idempotent: false });
    expect(unasked.resolve("t__crash")?.definition.needsApproval).toBe(true);
    expect(offline.declarations()).toEqual(registry.declarations());
    expect((await run(offline, "t__echo", { text: "x" })).parsed.error?.code).toBe("mcp_server_unavailable");
  });

  it("turns text, structured content, isError and thrown errors into the stable output", async () => {
    const { tools } = mcp({ t: testServerConfig(newMarker()) });
    const registry = createToolRegistry(await tools.tools());

    const echo = await run(registry, "t__echo", { text: "hej" });
    expect(echo.parsed).toEqual({ tool: "t__echo", ok: true, exit_code: 0, stdout: "hej", stderr: "" });

    // The text block already carries the structured JSON: not repeated.
    expect((await run(registry, "t__add", { a: 2, b: 3 })).parsed.stdout).toBe('{"sum":5}');
    expect((await run(registry, "t__structured_only")).parsed.stdout).toBe('{"rows":[1,2],"ok":true}');

    const fail = await run(registry, "t__fail");
    expect(fail.parsed).toMatchObject({
      ok: false,
      exit_code: 1,
      stdout: "the widget is broken\nsecond line",
      error: { code: "tool_failed", message: "t__fail reported an error: the widget is broken" },
    });

    const thrown = await run(registry, "t__throws");
    expect(thrown.ok).toBe(false);
    expect(thrown.parsed.error?.code).toBe("tool_failed");
    expect(thrown.parsed.error?.message).toContain("kaboom inside the handler");
  });

  it("describes images, audio, resource links and embedded resources", async () => {
    const { tools } = mcp({ t: testServerConfig(newMarker()) });
    const registry = createToolRegistry(await tools.tools());
    const media = await run(registry, "t__media");
    expect(media.ok).toBe(true);
    expect(media.parsed.stdout.split("\n")).toEqual([
      "here is media",
      "[image: image/png, 68 bytes, not shown]",
      "[audio: audio/wav, 300 bytes, not shown]",
      "[resource link: report.csv <file:///tmp/report.csv> (text/csv): the report]",
      "[resource <memo://1> (text/plain)]",
      "memo body",
      "[resource <blob://2> (application/zip): 10 bytes of binary data, not shown]",
    ]);
  });

  it("validates arguments locally against the server's schema", async () => {
    const { tools } = mcp({ t: testServerConfig(newMarker()) });
    const registry = createToolRegistry(await tools.tools());
    const bad = await run(registry, "t__add", { a: "two", b: 3 });
    expect(bad.parsed.error?.code).toBe("tool_input_invalid");
    expect(bad.parsed.error?.message).toContain("a: must be number");
  });

  it("times a call out, tells the server, and keeps the server usable", async () => {
    const { tools } = mcp({ t: testServerConfig(newMarker()) }, { callTimeoutMs: 300 });
    const registry = createToolRegistry(await tools.tools());
    const started = Date.now();
    const slow = await run(registry, "t__slow", { ms: 20_000 });
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(slow.parsed).toMatchObject({
      ok: false,
      exit_code: 124,
      error: {
        code: "tool_timeout",
        message: "t__slow did not answer within 300 ms; the call was cancelled.",
      },
    });
    expect((await run(registry, "t__echo", { text: "still here" })).parsed.stdout).toBe("still here");
  });

  it("a server's own tool_timeout_sec wins over the option", async () => {
    const { tools } = mcp(
      { t: { ...testServerConfig(newMarker()), tool_timeout_sec: 0.2 } },
      { callTimeoutMs: 60_000 },
    );
    const registry = createToolRegistry(await tools.tools());
    expect((await run(registry, "t__slow", { ms: 20_000 })).parsed.error?.message).toContain("within 200 ms");
  });

  it("reports a server that crashes mid-call: ok:false, a one-line event, no hang", async () => {
    const marker = newMarker();
    const { tools, events } = mcp({ t: testServerConfig(marker) });
    const registry = createToolRegistry(await tools.tools());
    const crash = await run(registry, "t__crash");
    expect(crash.parsed.ok).toBe(false);
    expect(crash.parsed.error?.code).toBe("mcp_server_unavailable");
    expect(crash.parsed.error?.message).toBe(
      'MCP server "t" stopped while t__crash was running: MCP server "t" exited with code 3 (stderr: fatal: out of widgets)',
    );
    expect(events.at(-1)).toEqual({
      type: "server_exited",
      server: "t",
      message: 'MCP server "t" exited with code 3 (stderr: fatal: out of widgets)',
    });
    expect(tools.status()[0]).toMatchObject({ state: "exited", error: expect.stringContaining("code 3") });
    const after = await run(registry, "t__echo", { text: "x" });
    expect(after.parsed.error).toEqual({
      code: "mcp_server_unavailable",
      message: 'MCP server "t" exited with code 3 (stderr: fatal: out of widgets)',
    });
    expect(processesWith(marker)).toEqual([]);
  });

  it("stops a server whose answer is over the message limit, instead of waiting for the timeout", async () => {
    const marker = newMarker();
    const { tools } = mcp({ t: testServerConfig(marker) });
    const registry = createToolRegistry(await tools.tools());
    const huge = await run(registry, "t__huge");
    expect(huge.parsed.error).toEqual({
      code: "mcp_server_unavailable",
      message:
        'MCP server "t" stopped while t__huge was running: MCP server "t" sent a message over the 10485760-byte limit and was stopped',
    });
    expect(processesWith(marker)).toEqual([]);
  });

  it("honours tools/list_changed: revision moves and tools() returns the new list", async () => {
    const { tools, events } = mcp({ t: testServerConfig(newMarker()) });
    const before = await tools.tools();
    expect(before.map((d) => d.name)).not.toContain("t__late");
    const revision = tools.revision;
    await run(createToolRegistry(before), "t__add_tool");
    expect(await eventually(() => tools.revision > revision)).toBe(true);
    const after = await tools.tools();
    expect(after.map((d) => d.name)).toContain("t__late");
    expect(events.some((e) => e.type === "tools_changed" && e.tools === before.length + 1)).toBe(true);
    expect((await run(createToolRegistry(after), "t__late")).parsed.stdout).toBe("late tool here");
    // Unchanged servers keep their definition objects (their schemas stay compiled).
    expect(after.find((d) => d.name === "t__echo")).toBe(before.find((d) => d.name === "t__echo"));
  });

  it("close() leaves no server process, nor one the server started", async () => {
    const marker = newMarker();
    const { tools } = mcp({ t: testServerConfig(marker) });
    const registry = createToolRegistry(await tools.tools());
    const serverPid = Number((await run(registry, "t__pid")).parsed.stdout);
    const grandchild = Number((await run(registry, "t__spawn_grandchild")).parsed.stdout);
    expect(isAlive(serverPid)).toBe(true);
    expect(isAlive(grandchild)).toBe(true);
    await tools.close();
    expect(isAlive(serverPid)).toBe(false);
    expect(await eventually(() => !isAlive(grandchild), 30_000)).toBe(true);
    expect(processesWith(marker)).toEqual([]);
    expect(tools.status()[0]?.state).toBe("closed");
    await expect(tools.tools()).rejects.toThrow(/closed/);
    const late = await run(registry, "t__echo", { text: "x" });
    expect(late.parsed.error).toEqual({
      code: "mcp_server_unavailable",
      message: 'MCP server "t" was shut down',
    });
  });

  it("close(deadline) stops a server that ignores SIGTERM and keeps a child by the deadline, not after every grace in turn", async () => {
    // A 5 s grace: stdin closed, then SIGTERM, then the group once more, each waited in full, took
    // over 10 s; the steps now share the time left before the deadline and end with SIGKILL.
    const marker = newMarker();
    const { tools } = mcp({ t: testServerConfig(marker, "--stubborn") }, { closeGraceMs: 5000 });
    await tools.tools();
    expect(processesWith(marker)).toHaveLength(2); // the server and its child
    const start = performance.now();
    await tools.close(start + 600);
    const tookMs = performance.now() - start;
    expect(await eventually(() => processesWith(marker).length === 0, 30_000)).toBe(true);
    expect(tookMs).toBeLessThan(4500); // far above the 600 ms asked, far below one 5 s grace
  });

  it("an aborted call ends cancelled, and close() afterwards leaves nothing behind", async () => {
    const marker = newMarker();
    const { tools } = mcp({ t: testServerConfig(marker) });
    const registry = createToolRegistry(await tools.tools());
    const grandchild = Number((await run(registry, "t__spawn_grandchild")).parsed.stdout);
    const controller = new AbortController();
    const pending = run(registry, "t__slow", { ms: 20_000 }, controller.signal);
    setTimeout(() => controller.abort(), 200);
    const cancelled = await pending;
    expect(cancelled.parsed).toMatchObject({ ok: false, exit_code: 130, error: { code: "cancelled" } });
    // The server is still fine after a cancelled request.
    expect((await run(registry, "t__echo", { text: "ok" })).parsed.stdout).toBe("ok");
    await tools.close();
    expect(processesWith(marker)).toEqual([]);
    expect(await eventually(() => !isAlive(grandchild), 30_000)).toBe(true);
  });

  it("a server that fails to start contributes no tools and says why in one line", async () => {
    const { tools, events } = mcp({
      good: testServerConfig(newMarker()),
      missing: { command: "eddy-no-such-mcp-server-command" },
      dies: testServerConfig(newMarker(), "--fail-start", "cannot open database widgets.db"),
      nodir: { ...testServerConfig(newMarker()), cwd: join(workspace, "does-not-exist") },
    });
    const names = (await tools.tools()).map((d) => d.name);
    expect(names.every((n) => n.startsWith("good__"))).toBe(true);
    const byName = Object.fromEntries(tools.status().map((s) => [s.name, s]));
    expect(byName.good?.state).toBe("ready");
    expect(byName.missing).toEqual({
      name: "missing",
      transport: "stdio",
      state: "failed",
      tools: 0,
      error:
        'MCP server "missing" failed to start: command "eddy-no-such-mcp-server-command" was not found (check the command and PATH)',
    });
    expect(byName.dies?.error).toBe(
      'MCP server "dies" failed to start: it exited with code 2 (stderr: cannot open database widgets.db)',
    );
    expect(byName.nodir?.error).toContain("is not a directory");
    const failures = events.filter((e) => e.type === "server_failed").map((e) => e.server);
    expect(failures.sort()).toEqual(["dies", "missing", "nodir"]);
    for (const e of events) expect(e.message).not.toContain("\n");
  });

  it("gives up on a server that never answers, within the startup timeout, and kills it", async () => {
    const marker = newMarker();
    const { tools } = mcp({ t: testServerConfig(marker, "--hang-start") }, { startupTimeoutMs: 400 });
    const started = Date.now();
    expect(await tools.tools()).toEqual([]);
    expect(Date.now() - started).toBeLessThan(8000);
    expect(tools.status()[0]?.error).toBe(
      'MCP server "t" failed to start: no answer within 400 ms (raise startup_timeout_sec if it is just slow)',
    );
    expect(await eventually(() => processesWith(marker).length === 0, 30_000)).toBe(true);
  });

  it("close() during start kills the starting server", async () => {
    const marker = newMarker();
    const { tools } = mcp({ t: testServerConfig(marker, "--hang-start") });
    const listing = tools.tools();
    expect(await eventually(() => processesWith(marker).length === 1, 30_000)).toBe(true);
    await tools.close();
    expect(processesWith(marker)).toEqual([]);
    await expect(listing).resolves.toEqual([]);
  });

  it("close() while the server's cwd is being checked (before it is spawned) starts nothing and returns at once", async () => {
    const marker = newMarker();
    // A cwd is checked on disk before the spawn, so the close lands in that wait (as a Ctrl-C can).
    // The startup timeout is long: a close that waited for the start would take 30 s.
    const server = { ...testServerConfig(marker, "--hang-start"), cwd: tmpdir() };
    const { tools } = mcp({ t: server }, { startupTimeoutMs: 30_000 });
    const listing = tools.tools();
    const started = Date.now();
    await tools.close();
    expect(Date.now() - started).toBeLessThan(5000);
    await expect(listing).resolves.toEqual([]);
    // Nothing was spawned after the close either.
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(processesWith(marker)).toEqual([]);
  });

  it("passes only the allowlisted environment plus the server's env, expanding variable references", async () => {
    const { tools } = mcp(
      {
        t: {
          ...testServerConfig(newMarker()),
          // biome-ignore lint/suspicious/noTemplateCurlyInString: the ${VAR} syntax of mcp_servers is under test
          env: { GREETING: "${WORD} world", SERVICE_TOKEN: "${MY_TOKEN}", LEVEL: "${LEVEL:-info}" },
        },
      },
      { env: { ...env, WORD: "hello", MY_TOKEN: "tok-1234567890", OTHER_API_KEY: "sk-should-not-pass" } },
    );
    const registry = createToolRegistry(await tools.tools());
    const read = async (name: string) => (await run(registry, "t__env", { name })).parsed.stdout;
    expect(await read("GREETING")).toBe("hello world");
    expect(await read("SERVICE_TOKEN")).toBe("tok-1234567890");
    expect(await read("LEVEL")).toBe("info");
    expect(await read("OTHER_API_KEY")).toBe("<unset>");
    expect(await read("PATH")).toBe(process.env.PATH);
    expect(tools.secrets).toEqual(["tok-1234567890"]);
  });

  it("never shows a configured secret in a failure message", async () => {
    const { tools, events } = mcp(
      {
        t: {
          ...testServerConfig(newMarker(), "--fail-start", "token tok-1234567890 was rejected"),
          // biome-ignore lint/suspicious/noTemplateCurlyInString: the ${VAR} syntax of mcp_servers is under test
          env: { SERVICE_TOKEN: "${MY_TOKEN}" },
        },
      },
      { env: { ...env, MY_TOKEN: "tok-1234567890" } },
    );
    await tools.tools();
    expect(tools.status()[0]?.error).toBe(
      'MCP server "t" failed to start: it exited with code 2 (stderr: token [redacted] was rejected)',
    );
    expect(JSON.stringify(events)).not.toContain("tok-1234567890");
  });

  it("refuses two tools offered under one name, naming both", async () => {
    const { tools } = mcp({ fs: testServerConfig(newMarker(), "--toolset", "collide") });
    await expect(tools.tools()).rejects.toThrow(
      'tool "read.file" of MCP server "fs" and tool "read file" of MCP server "fs" would both be offered as "fs__read_file"',
    );
  });

  it("refuses a server that lists one name twice, saying so (it was told their names 'differ only in characters')", async () => {
    const { tools } = mcp({ fs: testServerConfig(newMarker(), "--toolset", "duplicate") });
    await expect(tools.tools()).rejects.toThrow('MCP server "fs" lists two tools named "dup"');
  });

  it("shortens long names deterministically to 64 characters", async () => {
    const first = mcp({ srv: testServerConfig(newMarker(), "--toolset", "long") });
    const names = (await first.tools.tools()).map((d) => d.name);
    expect(names).toHaveLength(2);
    for (const n of names) expect(n).toMatch(/^[a-zA-Z0-9_-]{64}$/);
    expect(new Set(names).size).toBe(2);
    const second = mcp({ srv: testServerConfig(newMarker(), "--toolset", "long") });
    expect((await second.tools.tools()).map((d) => d.name)).toEqual(names);
    createToolRegistry(await first.tools.tools());
  });

  it("offers a tool whose schema eddy cannot compile with an open schema and a warning", async () => {
    const { tools, events } = mcp({ s: testServerConfig(newMarker(), "--toolset", "bad-schema") });
    const definitions = await tools.tools();
    expect(definitions.find((d) => d.name === "s__tuple")?.parameters).toEqual({
      type: "object",
      additionalProperties: true,
    });
    expect(events.find((e) => e.type === "warning")?.message).toContain('input schema of tool "tuple"');
    const registry = createToolRegistry(definitions);
    expect((await run(registry, "s__tuple", { p: ["x"] })).ok).toBe(true);
    expect((await run(registry, "s__echo", { text: 5 })).parsed.error?.code).toBe("tool_input_invalid");
  });
});

describe("a process that exits without close()", () => {
  // The child compiles the MCP client from source (tsx) and starts a server: at load average 10
  // that took over 15 s, so its bound is generous; what is checked is what it leaves behind.
  it("still takes its servers and their children with it", { timeout: 180_000 }, async () => {
    const marker = newMarker();
    const script = join(dirname(MCP_TEST_SERVER), "mcp-exit-without-close.mjs");
    const module = fileURLToPath(new URL("./mcp-tools.ts", import.meta.url));
    const { stdout } = await execFileAsync(process.execPath, ["--import", "tsx", script, module, marker], {
      timeout: 150_000,
    });
    const [server, grandchild] = stdout.trim().split(" ").map(Number) as [number, number];
    expect(server).toBeGreaterThan(0);
    expect(grandchild).toBeGreaterThan(0);
    expect(await eventually(() => !isAlive(server) && !isAlive(grandchild), 30_000)).toBe(true);
    expect(processesWith(marker)).toEqual([]);
  });
});
