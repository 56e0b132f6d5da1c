import { describe, expect, it } from "vitest";
import type { Frame } from "../frames/frame.js";
import type { TapeHeader } from "../replay/tape.js";
import type { McpToolInfo } from "../tools/mcp/index.js";
import { replayTools } from "./replay-tools.js";

const info = (tool: string, readOnly: boolean): McpToolInfo => ({
  name: `fs__${tool}`,
  server: "fs",
  tool,
  description: `The ${tool} tool`,
  parameters: { type: "object", properties: {} },
  readOnly,
});

function header(tools: string[], mcp_tools?: McpToolInfo[]): TapeHeader {
  return {
    spec: { tools },
    ...(mcp_tools === undefined ? {} : { mcp_tools }),
  } as unknown as TapeHeader;
}

const requestStarted = (turn: number, tools: unknown[]) =>
  ({
    type: "request_started",
    run_id: "r",
    seq: turn,
    ts: 0,
    turn,
    attempt: 1,
    body: { tools },
  }) as unknown as Frame;

describe("replayTools", () => {
  it("declares the recorded MCP tools without their servers, asking about the ones not read-only", () => {
    const { registry } = replayTools(
      header(["read_file", "fs__read", "fs__write"], [info("read", true), info("write", false)]),
      [],
      {},
      "t.tape",
    );
    // Every built-in is rebuilt (the tape's spec.tools selects which the replayed run offers), plus the recorded MCP tools.
    expect(registry.names()).toEqual([
      "read_file",
      "list_dir",
      "grep",
      "write_file",
      "apply_patch",
      "shell",
      "fs__read",
      "fs__write",
    ]);
    expect(registry.resolve("fs__write")?.definition.needsApproval).toBe(true);
    // A recording made while eddy let read-only-hinted tools run unasked replays so.
    expect(registry.resolve("fs__read")?.definition.needsApproval).toBe(false);
  });

  it("asks about a read-only-hinted MCP tool the recording asked about (a server's hint grants nothing)", () => {
    const asked = {
      type: "approval_requested",
      run_id: "r",
      seq: 3,
      ts: 0,
      turn: 0,
      call_id: "c",
      name: "fs__read",
      arguments: "{}",
    } as unknown as Frame;
    const { registry } = replayTools(header(["fs__read"], [info("read", true)]), [asked], {}, "t.tape");
    expect(registry.resolve("fs__read")?.definition).toMatchObject({
      needsApproval: true,
      idempotent: false,
    });
  });

  it("never runs a recorded pattern on the backtracking engine: one RE2 cannot run checks only for an object", () => {
    // A lookahead RE2 cannot run, around a pattern that backtracks exponentially on "aaa…!".
    const catastrophic = { type: "string", pattern: "^(?=a)(a+)+$" };
    const recorded = {
      ...info("match", false),
      parameters: { type: "object", properties: { s: catastrophic }, required: ["s"] },
    };
    const { registry } = replayTools(header(["fs__match"], [recorded]), [], {}, "t.tape");
    const tool = registry.resolve("fs__match");
    // Declared as recorded, so the replayed requests match the tape.
    expect(tool?.declaration.parameters).toEqual(recorded.parameters);
    expect(tool?.parseArguments(JSON.stringify({ s: "b" })).ok).toBe(true);
    const started = performance.now();
    expect(tool?.parseArguments(JSON.stringify({ s: `${"a".repeat(40)}!` })).ok).toBe(true);
    expect(performance.now() - started).toBeLessThan(1000);
    expect(tool?.parseArguments("[1]").ok).toBe(false);
    // A pattern RE2 runs is still checked, in linear time.
    const linear = {
      ...info("plain", false),
      parameters: { type: "object", properties: { s: { type: "string", pattern: "^a+$" } } },
    };
    const plain = replayTools(header(["fs__plain"], [linear]), [], {}, "t.tape").registry.resolve(
      "fs__plain",
    );
    expect(plain?.parseArguments(JSON.stringify({ s: "b" })).ok).toBe(false);
    expect(plain?.parseArguments(JSON.stringify({ s: "aa" })).ok).toBe(true);
  });

  it("refuses a recorded MCP schema that is unusable whatever the engine", () => {
    const recorded = { ...info("bad", false), parameters: { type: "string" } };
    expect(() => replayTools(header(["fs__bad"], [recorded]), [], {}, "t.tape")).toThrow(
      /must describe a JSON object/,
    );
  });

  it("masks the secret-looking values of the CLI's environment in tool errors", () => {
    const env = { ACME_API_KEY: "sk-acme-0123456789", PATH: "/usr/bin:/bin" };
    const { registry } = replayTools(header(["read_file"]), [], env, "t.tape");
    expect(registry.secrets).toEqual(["sk-acme-0123456789"]);
  });

  it("refuses a tape whose tools it cannot rebuild", () => {
    expect(() => replayTools(header(["read_file", "weather"]), [], {}, "t.tape")).toThrow(
      /t\.tape: the recorded run used tools that are neither eddy's built-ins nor recorded MCP tools, sub-agents or a client's tools \(weather\)/,
    );
  });

  it("declares the tools a client of eddy serve's face declared, each call needing approval, none run", async () => {
    const recorded = {
      ...header(["read_file", "get_weather"]),
      client_tools: [
        {
          name: "get_weather",
          description: "The weather",
          parameters: { type: "object", properties: { city: { type: "string" } } },
          strict: false,
        },
      ],
    } as TapeHeader;
    const { registry } = replayTools(recorded, [], {}, "t.tape");
    const weather = registry.resolve("get_weather")?.definition;
    expect(weather).toMatchObject({ description: "The weather", needsApproval: true, strict: false });
    expect(registry.declarations().find((d) => d.name === "get_weather")?.parameters).toEqual({
      type: "object",
      properties: { city: { type: "string" } },
    });
    const execute = weather?.execute;
    expect(execute).toBeDefined();
    await expect(Promise.resolve().then(() => execute?.({}, {} as never))).rejects.toThrow(
      /runs on the client/,
    );
  });

  it("refuses a tape's client tools with a control-character name or a schema that is not an object's", () => {
    const withClient = (name: string, parameters: Record<string, unknown>) =>
      ({
        ...header(["read_file", name]),
        client_tools: [{ name, description: "\u001b]52;c;aGk=\u0007", parameters }],
      }) as TapeHeader;
    expect(() =>
      replayTools(withClient("get\u001b[2J\u0007x", { type: "object" }), [], {}, "t.tape"),
    ).toThrow(/invalid tool name "get\\u001b\[2J\\u0007x"/);
    expect(() => replayTools(withClient("w", { type: "nope" }), [], {}, "t.tape")).toThrow(
      /tool "w": the schema must describe a JSON object/,
    );
  });

  it("follows the tools each recorded request declared (a server's tools/list_changed)", () => {
    const start = header(["read_file", "list_dir", "grep", "fs__read"], [info("read", true)]);
    const first = replayTools(start, [], {}, "t.tape").registry.declarations();
    const late = {
      type: "function",
      name: "fs__late",
      description: "Added later.",
      parameters: { type: "object" },
      strict: false,
    };
    const frames = [
      requestStarted(0, first),
      requestStarted(1, [...first, late]),
      requestStarted(2, [...first, late]),
    ];
    const { refreshTools } = replayTools(start, frames, {}, "t.tape");
    expect(refreshTools?.()).toBeUndefined(); // turn 0: as recorded at the start
    const next = refreshTools?.();
    expect(next?.names()).toContain("fs__late");
    expect(next?.declarations()).toEqual([...first, late]);
    expect(refreshTools?.()).toBeUndefined(); // turn 2: unchanged since turn 1
  });
});
