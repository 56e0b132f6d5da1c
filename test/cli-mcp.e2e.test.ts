/**
 * MCP servers through the built CLI against the mock (the servers are the official SDK server of
 * test/support/mcp-server.mjs, over stdio and over Streamable HTTP): `--mcp` and the config file's
 * `mcp_servers`, `run_started.mcp_servers`, outputs in the next request, tapes that replay without
 * the servers, failures as one-line messages, `tools/list_changed` between turns, parallel calls,
 * and no server process left after the run — also after SIGINT.
 */
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { Frame } from "../src/frames/frame.js";
import { parseFrames } from "../src/frames/jsonl.js";
import { createMockServer, type MockServer } from "../src/mock/index.js";
import type { Scenario, ScenarioTurn } from "../src/mock/scenario.js";
import type { JsonObject } from "../src/protocol/types.js";
import { cleanEnv, runCli } from "./support/cli.js";
import { assertFrameInvariants } from "./support/frames.js";
import {
  eventually,
  type HttpTestServer,
  isAlive,
  MCP_TEST_SERVER,
  newMarker,
  processesWith,
  startHttpTestServer,
} from "./support/mcp.js";

let mock: MockServer | undefined;
let http: HttpTestServer | undefined;
afterEach(async () => {
  await mock?.close();
  await http?.stop();
  mock = undefined;
  http = undefined;
});

const TOKEN = "mcp-e2e-token-9f8e7d6c5b4a";
/** `${NAME}`: a reference to an environment variable in mcp_servers. */
const envRef = (name: string) => `\${${name}}`;
const call = (name: string, args: Record<string, unknown>, call_id: string) => ({
  type: "function_call" as const,
  name,
  arguments: args,
  call_id,
});
const answer = (text: string, expectOutputs?: string | string[]): ScenarioTurn => ({
  ...(expectOutputs === undefined ? {} : { expect: { functionCallOutputs: expectOutputs } }),
  items: [{ type: "message", text }],
});

async function startMock(scenario: Scenario): Promise<string> {
  mock = await createMockServer({ scenario });
  return mock.url;
}

function workspace(): string {
  return mkdtempSync(join(tmpdir(), "eddy-mcp-e2e-"));
}

/** `--mcp NAME=node mcp-server.mjs --marker MARKER ARGS…` */
function mcpFlag(name: string, marker: string, ...args: string[]): string[] {
  return [
    "--mcp",
    `${name}=${process.execPath} ${MCP_TEST_SERVER} --marker ${marker} ${args.join(" ")}`.trim(),
  ];
}

/** The function_call_output items of every request the mock received, in order. */
function outputsSent(): { call_id: string; output: JsonObject }[] {
  return (mock?.requests ?? []).flatMap((r) =>
    ([(r.body as JsonObject).input].flat() as JsonObject[]).flatMap((item) =>
      typeof item === "object" && item?.type === "function_call_output"
        ? [{ call_id: item.call_id as string, output: JSON.parse(item.output as string) as JsonObject }]
        : [],
    ),
  );
}

function declaredTools(index: number): string[] {
  const body = mock?.requests[index]?.body as JsonObject | undefined;
  return ((body?.tools ?? []) as { name: string }[]).map((t) => t.name);
}

describe("eddy run with MCP servers", () => {
  it("a stdio server (--mcp) and an HTTP server (config file, token from the environment): calls, outputs, listing, replay, no process left", async () => {
    const marker = newMarker();
    http = await startHttpTestServer(newMarker(), "--token", TOKEN);
    const url = await startMock({
      turns: [
        { items: [call("local__echo", { text: "from stdio" }, "call_a")] },
        {
          expect: { functionCallOutputs: "call_a" },
          items: [call("remote__add", { a: 40, b: 2 }, "call_b")],
        },
        answer("Both worked.", "call_b"),
      ],
    });
    const cwd = workspace();
    writeFileSync(
      join(cwd, "eddy.config.json"),
      JSON.stringify({
        mcp_servers: {
          remote: { url: http.url, headers: { Authorization: `Bearer ${envRef("REMOTE_TOKEN")}` } },
        },
      }),
    );
    const tape = join(cwd, "run.tape");
    const args = ["run", "--json", "--base-url", url, "--model", "m", ...mcpFlag("local", marker)];
    const r = await runCli([...args, "--record", tape, "go"], {
      cwd,
      env: cleanEnv({ REMOTE_TOKEN: TOKEN }),
    });
    expect(r.stderr).not.toContain("failed");
    expect(r.code).toBe(0);
    const frames = parseFrames(r.stdout);
    assertFrameInvariants(frames);
    const started = frames[0] as Frame & { type: "run_started" };
    expect(started.tools).toEqual(expect.arrayContaining(["read_file", "remote__add", "local__echo"]));
    expect(started.mcp_servers).toEqual([
      { name: "remote", transport: "http", state: "ready", tools: expect.any(Number) },
      { name: "local", transport: "stdio", state: "ready", tools: expect.any(Number) },
    ]);
    expect(started.mcp_servers?.[1]?.tools).toBeGreaterThan(5);
    expect(declaredTools(0)).toEqual(expect.arrayContaining(["local__echo", "remote__add"]));
    expect(outputsSent()).toEqual([
      {
        call_id: "call_a",
        output: { tool: "local__echo", ok: true, exit_code: 0, stdout: "from stdio", stderr: "" },
      },
      {
        call_id: "call_b",
        output: { tool: "remote__add", ok: true, exit_code: 0, stdout: '{"sum":42}', stderr: "" },
      },
    ]);
    // The token is a secret: not in the frames, stderr or the tape.
    expect(r.stdout + r.stderr + readFileSync(tape, "utf8")).not.toContain(TOKEN);
    expect(processesWith(marker)).toEqual([]);

    // The tape replays without starting any server.
    const replay = await runCli(["replay", tape], { cwd, env: cleanEnv() });
    expect(replay.stdout).toMatch(/replay matches/);
    expect(replay.code).toBe(0);
  });

  it("the human view shows the servers, and the run ends with no server process", async () => {
    const marker = newMarker();
    const url = await startMock({
      turns: [{ items: [call("fs__pid", {}, "call_p")] }, answer("ok", "call_p")],
    });
    const r = await runCli(["run", "--base-url", url, "--model", "m", ...mcpFlag("fs", marker), "go"], {
      cwd: workspace(),
    });
    expect(r.code).toBe(0);
    expect(r.stderr).toMatch(/⚙ MCP server "fs" is ready \(\d+ tools\)/);
    expect(r.stderr).toMatch(/✓ fs__pid/);
    const serverPid = Number(outputsSent()[0]?.output.stdout);
    expect(serverPid).toBeGreaterThan(0);
    expect(isAlive(serverPid)).toBe(false);
    expect(processesWith(marker)).toEqual([]);
  });

  it("SIGINT during a call: exit 130, the server and the grandchild it spawned are gone", async () => {
    const marker = newMarker();
    const url = await startMock({
      turns: [
        { items: [call("local__spawn_grandchild", {}, "call_g")] },
        { items: [call("local__slow", { ms: 30_000 }, "call_s")] },
        answer("never"),
      ],
    });
    const r = await runCli(["run", "--base-url", url, "--model", "m", ...mcpFlag("local", marker), "go"], {
      cwd: workspace(),
      signalWhen: "→ local__slow",
    });
    expect(r.code).toBe(130);
    const grandchild = Number(outputsSent()[0]?.output.stdout);
    expect(grandchild).toBeGreaterThan(0);
    expect(await eventually(() => !isAlive(grandchild), 30_000)).toBe(true);
    expect(processesWith(marker)).toEqual([]);
  });

  it("SIGINT while a server is still starting: exit 130 at once, no server process left", async () => {
    const marker = newMarker();
    const url = await startMock({ turns: [answer("never")] });
    const r = await runCli(
      ["run", "--base-url", url, "--model", "m", ...mcpFlag("slow", marker, "--hang-start"), "go"],
      {
        cwd: workspace(),
        signalWhen: "starting MCP servers: slow",
      },
    );
    expect(r.code).toBe(130);
    expect(r.exitAfterSignalMs).toBeLessThan(5000);
    expect(r.stderr).toMatch(/eddy: cancelled while starting the MCP servers/);
    expect(mock?.requests).toHaveLength(0);
    expect(processesWith(marker)).toEqual([]);
  });

  it("a server that fails to start is one line on stderr; the run goes on with the others", async () => {
    const good = newMarker();
    const url = await startMock({
      turns: [{ items: [call("ok__echo", { text: "hi" }, "c1")] }, answer("done", "c1")],
    });
    const r = await runCli(
      [
        "run",
        "--json",
        "--base-url",
        url,
        "--model",
        "m",
        ...mcpFlag("broken", newMarker(), "--fail-start", "no-database"),
        ...mcpFlag("ok", good),
        "go",
      ],
      { cwd: workspace() },
    );
    expect(r.code).toBe(0);
    const lines = r.stderr.split("\n").filter((l) => l.includes('"broken"'));
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(
      /^eddy: MCP server "broken" failed to start: it exited with code 2 \(stderr: no-database\)$/,
    );
    const started = parseFrames(r.stdout)[0] as Frame & { type: "run_started" };
    expect(started.mcp_servers?.[0]).toMatchObject({ name: "broken", state: "failed", tools: 0 });
    expect(started.tools.some((t) => t.startsWith("broken__"))).toBe(false);
  });

  it("a server that crashes mid-call gives the model ok:false and the user one line; no hang", async () => {
    const marker = newMarker();
    const url = await startMock({
      turns: [
        { items: [call("local__crash", {}, "c1")] },
        { expect: { functionCallOutputs: "c1" }, items: [call("local__echo", { text: "again" }, "c2")] },
        answer("gave up", "c2"),
      ],
    });
    const r = await runCli(["run", "--base-url", url, "--model", "m", ...mcpFlag("local", marker), "go"], {
      cwd: workspace(),
    });
    expect(r.code).toBe(0);
    const [crash, after] = outputsSent();
    expect(crash?.output).toMatchObject({ ok: false, tool: "local__crash" });
    expect(after?.output).toMatchObject({ ok: false, tool: "local__echo" });
    expect(r.stderr).toMatch(/eddy: MCP server "local" exited with code 3 \(stderr: fatal: out of widgets\)/);
    expect(processesWith(marker)).toEqual([]);
  });

  it("tools/list_changed between turns: the next request declares the new tool, the model calls it, the tape replays", async () => {
    const marker = newMarker();
    const url = await startMock({
      turns: [
        { items: [call("local__add_tool", {}, "c1")] },
        {
          expect: { functionCallOutputs: "c1", tools: ["local__late"] },
          items: [call("local__late", {}, "c2")],
        },
        answer("done", "c2"),
      ],
    });
    const cwd = workspace();
    const tape = join(cwd, "changed.tape");
    const r = await runCli(
      ["run", "--base-url", url, "--model", "m", ...mcpFlag("local", marker), "--record", tape, "go"],
      { cwd },
    );
    expect(r.stderr).toMatch(/⚙ MCP server "local" changed its tools/);
    expect(r.code).toBe(0);
    expect(declaredTools(0)).not.toContain("local__late");
    expect(declaredTools(1)).toContain("local__late");
    expect(outputsSent()[1]?.output).toMatchObject({ ok: true, stdout: "late tool here" });
    const replay = await runCli(["replay", tape], { cwd });
    expect(replay.stdout).toMatch(/replay matches/);
    expect(replay.code).toBe(0);
  });

  it("--parallel-tool-calls: three 300 ms calls of one response overlap, outputs go back in output order, the tape replays", async () => {
    const marker = newMarker();
    // Durations differ so they finish in reverse order; serially they would take 900 ms.
    const url = await startMock({
      turns: [
        {
          items: [
            call("local__slow", { ms: 360 }, "c1"),
            call("local__slow", { ms: 300 }, "c2"),
            call("local__slow", { ms: 240 }, "c3"),
          ],
        },
        answer("all three", ["c1", "c2", "c3"]),
      ],
    });
    const cwd = workspace();
    const tape = join(cwd, "parallel.tape");
    const flags = ["--parallel-tool-calls", ...mcpFlag("local", marker), "--record", tape];
    const r = await runCli(["run", "--json", "--base-url", url, "--model", "m", ...flags, "go"], { cwd });
    expect(r.code).toBe(0);
    const frames = parseFrames(r.stdout);
    assertFrameInvariants(frames);
    expect((mock?.requests[0]?.body as JsonObject | undefined)?.parallel_tool_calls).toBe(true);
    const started = frames.filter((f) => f.type === "tool_started");
    const ended = frames.filter((f) => f.type === "tool_ended");
    // At once, by the frames (not the clock; which ends first varies at load average 10): all
    // three started before the first ended.
    expect(ended.map((f) => f.call_id).sort()).toEqual(["c1", "c2", "c3"]);
    expect(Math.max(...started.map((f) => f.seq))).toBeLessThan(Math.min(...ended.map((f) => f.seq)));
    expect(outputsSent().map((o) => o.call_id)).toEqual(["c1", "c2", "c3"]);
    const replay = await runCli(["replay", tape], { cwd });
    expect(replay.stdout).toMatch(/replay matches/);
    expect(replay.code).toBe(0);
  });

  it("without --parallel-tool-calls the same calls run one at a time (the control)", async () => {
    const url = await startMock({
      turns: [
        {
          ignoreToolChoice: true, // send all three although the request says parallel_tool_calls: false
          items: [
            call("local__slow", { ms: 300 }, "c1"),
            call("local__slow", { ms: 300 }, "c2"),
            call("local__slow", { ms: 300 }, "c3"),
          ],
        },
        answer("done", ["c1", "c2", "c3"]),
      ],
    });
    const r = await runCli(
      ["run", "--json", "--base-url", url, "--model", "m", ...mcpFlag("local", newMarker()), "go"],
      {
        cwd: workspace(),
      },
    );
    expect(r.code).toBe(0);
    const frames = parseFrames(r.stdout);
    const started = frames.filter((f) => f.type === "tool_started");
    const ended = frames.filter((f) => f.type === "tool_ended");
    expect((ended.at(-1)?.ts ?? 0) - (started[0]?.ts ?? 0)).toBeGreaterThanOrEqual(900);
  });

  it("bad MCP configuration exits 2 with one line naming the problem", async () => {
    const noName = await runCli(["run", "--mcp", "just-a-command", "x"], { cwd: workspace() });
    expect(noName.code).toBe(2);
    expect(noName.stderr).toMatch(/--mcp expects NAME=COMMAND \[ARGS…\] or NAME=URL/);

    const cwd = workspace();
    writeFileSync(join(cwd, "eddy.config.json"), JSON.stringify({ mcp_servers: { gh: { url: "ftp://x" } } }));
    const badFile = await runCli(["run", "x"], { cwd });
    expect(badFile.code).toBe(2);
    expect(badFile.stderr.trim().split("\n")).toHaveLength(1);
    expect(badFile.stderr).toMatch(
      /config file .*eddy\.config\.json: mcp_servers\.gh\.url: must start with http/,
    );

    const unset = await runCli(["run", "x"], {
      cwd: (() => {
        const dir = workspace();
        writeFileSync(
          join(dir, "eddy.config.json"),
          JSON.stringify({
            mcp_servers: {
              gh: {
                url: "http://127.0.0.1:1/mcp",
                headers: { Authorization: `Bearer ${envRef("NOT_SET_ANYWHERE")}` },
              },
            },
          }),
        );
        return dir;
      })(),
    });
    expect(unset.code).toBe(2);
    expect(unset.stderr).toMatch(
      /mcp_servers\.gh\.headers\.Authorization refers to \$\{NOT_SET_ANYWHERE\}, which is not set/,
    );
  });

  it("eddy replay (--live-tools too) never runs a tape's MCP pattern on the backtracking engine: a recorded ^(?=a)(a+)+$ does not freeze it", async () => {
    const marker = newMarker();
    const s = `${"a".repeat(40)}!`;
    const url = await startMock({
      turns: [{ items: [call("t__match", { s }, "call_m")] }, answer("Matched.", "call_m")],
    });
    const cwd = workspace();
    const tape = join(cwd, "run.tape");
    const args = [
      "run",
      "--base-url",
      url,
      "--model",
      "m",
      ...mcpFlag("t", marker, "--toolset", "lookahead"),
    ];
    const r = await runCli([...args, "--record", tape, "go"], { cwd, env: cleanEnv() });
    expect(r.code, r.stderr).toBe(0);
    // Live, the schema is offered open (RE2 cannot run the lookahead). A tape made before that,
    // or made up, holds the pattern itself: in its header and in the requests it recorded.
    const open = JSON.stringify({ type: "object", additionalProperties: true });
    const recorded = readFileSync(tape, "utf8");
    expect(recorded).toContain(open);
    const patterned = JSON.stringify({
      type: "object",
      properties: { s: { type: "string", pattern: "^(?=a)(a+)+$" } },
      required: ["s"],
    });
    writeFileSync(tape, recorded.split(open).join(patterned));
    const replay = await runCli(["replay", tape], { cwd, env: cleanEnv(), timeoutMs: 20_000 });
    expect(replay.stdout).toMatch(/replay matches/);
    expect(replay.code).toBe(0);
    // --live-tools checks the arguments again, in linear time: the tool, its server absent, answers
    // that it is not connected, which is not what the tape says.
    const live = await runCli(["replay", "--live-tools", tape], { cwd, env: cleanEnv(), timeoutMs: 20_000 });
    expect(live.stdout).toMatch(/replay diverges at frame/);
    expect(live.stdout).toContain("is not connected (its tools were loaded from a recording)");
    expect(live.code).toBe(1);
  });

  it("a server named __proto__ (config file or --mcp) is refused in one line, not dropped", async () => {
    const cwd = workspace();
    const server = `{"command":${JSON.stringify(process.execPath)},"args":[${JSON.stringify(MCP_TEST_SERVER)}]}`;
    writeFileSync(join(cwd, "eddy.config.json"), `{"mcp_servers":{"__proto__":${server}}}`);
    const fromFile = await runCli(["run", "x"], { cwd, env: cleanEnv() });
    expect(fromFile.code).toBe(2);
    expect(fromFile.stderr.trim().split("\n")).toHaveLength(1);
    expect(fromFile.stderr).toMatch(
      /config file .*eddy\.config\.json: mcp_servers\.__proto__: "__proto__" cannot be a name in a config file \(JavaScript reserves it\); rename it/,
    );
    const fromFlag = await runCli(["run", ...mcpFlag("__proto__", newMarker()), "x"], {
      cwd: workspace(),
      env: cleanEnv(),
    });
    expect(fromFlag.code).toBe(2);
    expect(fromFlag.stderr.trim().split("\n")).toHaveLength(1);
    expect(fromFlag.stderr).toMatch(/--mcp __proto__: "__proto__" cannot name an MCP server/);
  });

  it("a password in an MCP server's URL is masked on stderr, in frames, the tape and eddy config", async () => {
    http = await startHttpTestServer(newMarker(), "--token", TOKEN);
    const url = await startMock({ turns: [answer("done")] });
    const cwd = workspace();
    const tape = join(cwd, "run.tape");
    const withPassword = `x=${http.url.replace("http://", "http://user:hunter2pass@")}`;
    const run = ["run", "--json", "--base-url", url, "--model", "m", "--record", tape];
    const r = await runCli([...run, "--mcp", withPassword, "go"], { cwd });
    expect(r.code).toBe(0);
    // Sent as Basic credentials, which this server refuses (it wants its bearer token).
    expect(r.stderr).toMatch(
      /MCP server "x" failed to start: http:\/\/user:\*\*\*@127\.0\.0\.1:\d+\/mcp answered HTTP 401/,
    );
    const config = await runCli(["config", "--mcp", withPassword], { cwd });
    expect(config.stdout).toMatch(/mcp_servers\.x\s+http:\/\/user:\*\*\*@127\.0\.0\.1:/);
    for (const text of [r.stderr, r.stdout, readFileSync(tape, "utf8"), config.stdout])
      expect(text).not.toContain("hunter2pass");
  });

  it("--approve deny: a tool its server annotates read-only is still refused (annotations grant nothing); the tape replays", async () => {
    const marker = newMarker();
    const url = await startMock({
      turns: [{ items: [call("local__echo", { text: "hi" }, "call_e")] }, answer("Done.", "call_e")],
    });
    const cwd = workspace();
    const tape = join(cwd, "deny.tape");
    const r = await runCli(
      ["run", "--json", "--base-url", url, "--model", "m", ...mcpFlag("local", marker)].concat([
        "--approve",
        "deny",
        "--record",
        tape,
        "go",
      ]),
      { cwd, env: cleanEnv() },
    );
    expect(r.code).toBe(0);
    const frames = parseFrames(r.stdout);
    expect(frames).toContainEqual(
      expect.objectContaining({ type: "approval_decided", call_id: "call_e", decision: "deny" }),
    );
    expect(outputsSent()).toEqual([
      { call_id: "call_e", output: expect.objectContaining({ tool: "local__echo", ok: false }) },
    ]);
    expect((outputsSent()[0]?.output.error as JsonObject | undefined)?.code).toBe("denied");
    expect(processesWith(marker)).toEqual([]);
    const replay = await runCli(["replay", tape], { cwd, env: cleanEnv() });
    expect(replay.stdout).toMatch(/replay matches/);
    expect(replay.code).toBe(0);
  });

  it("eddy config lists the servers without their header values", async () => {
    const cwd = workspace();
    writeFileSync(
      join(cwd, "eddy.config.json"),
      JSON.stringify({
        mcp_servers: {
          gh: { url: "http://127.0.0.1:9/mcp", headers: { Authorization: "Bearer secret-value-123" } },
        },
        approve: "deny",
      }),
    );
    const r = await runCli(["config", "--mcp", "fs=npx -y server-filesystem .", "--parallel-tool-calls"], {
      cwd,
    });
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(
      /mcp_servers\.gh\s+http:\/\/127\.0\.0\.1:9\/mcp \(headers: Authorization\)\s+\(config: /,
    );
    expect(r.stdout).toMatch(/mcp_servers\.fs\s+npx -y server-filesystem \.\s+\(flag\)/);
    expect(r.stdout).toMatch(/parallel_tool_calls\s+true\s+\(flag\)/);
    expect(r.stdout).toMatch(/approve\s+deny\s+\(config: /);
    expect(r.stdout).not.toContain("secret-value-123");
  });
});
