/**
 * Test support for MCP tool sources: the real SDK server in `mcp-server.mjs`, started over stdio
 * (by eddy, from a server config) or over Streamable HTTP (by the test, on 127.0.0.1), and
 * process checks for "nothing survives" assertions. Every server gets a unique `--marker` argument
 * so its processes can be found in /proc without knowing their pids.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { executeToolCall } from "../../src/tools/execute.js";
import type { ToolOutput } from "../../src/tools/output.js";
import type { ToolRegistry } from "../../src/tools/registry.js";

/** The test server script. */
export const MCP_TEST_SERVER = join(dirname(fileURLToPath(import.meta.url)), "mcp-server.mjs");

/** A unique marker to pass to a test server (and to look its processes up by). */
export function newMarker(): string {
  return `eddy-mcp-test-${randomUUID()}`;
}

/** A stdio server config that runs the test server with `args`, tagged with `marker`. */
export function testServerConfig(marker: string, ...args: string[]): { command: string; args: string[] } {
  return { command: process.execPath, args: [MCP_TEST_SERVER, "--marker", marker, ...args] };
}

/** A running HTTP test server. */
export interface HttpTestServer {
  url: string;
  pid: number;
  /** Kills it (SIGKILL) and waits for it to exit. */
  stop(): Promise<void>;
}

/** Starts the test server over Streamable HTTP on 127.0.0.1 (`--token` makes it demand `Bearer TOKEN`). */
export async function startHttpTestServer(marker: string, ...args: string[]): Promise<HttpTestServer> {
  const child: ChildProcess = spawn(
    process.execPath,
    [MCP_TEST_SERVER, "--marker", marker, "--http", ...args],
    {
      stdio: ["ignore", "pipe", "pipe"],
    },
  );
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const port = await new Promise<number>((resolve, reject) => {
    let out = "";
    let err = "";
    child.stderr?.on("data", (c: Buffer) => {
      err += c.toString();
    });
    child.stdout?.on("data", (c: Buffer) => {
      out += c.toString();
      const m = /listening (\d+)/.exec(out);
      if (m) resolve(Number(m[1]));
    });
    child.once("exit", (code) => reject(new Error(`HTTP test server exited (${code}): ${err}`)));
  });
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    pid: child.pid as number,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
      await exited;
    },
  };
}

/** True when `pid` is a live process (a zombie, already dead but not reaped, counts as gone). */
export function isAlive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    // Field 3, after the parenthesised command name, is the state.
    const state = stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3);
    return state !== "Z" && state !== "X";
  } catch {
    return false;
  }
}

/** Live processes whose command line contains `marker`. */
export function processesWith(marker: string): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const cmdline = readFileSync(`/proc/${entry}/cmdline`, "utf8");
      if (cmdline.includes(marker) && isAlive(Number(entry))) pids.push(Number(entry));
    } catch {
      // The process ended while we looked.
    }
  }
  return pids;
}

/** Polls `check` until it is true or `ms` pass; returns its last value. */
export async function eventually(check: () => boolean, ms = 5000): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) return false;
    await new Promise((r) => setTimeout(r, 20));
  }
  return true;
}

/** The hostile raw JSON-RPC server script (see its header for the modes). */
export const MCP_HOSTILE_SERVER = join(dirname(fileURLToPath(import.meta.url)), "mcp-hostile.mjs");

/** A stdio server config that runs the hostile server in `mode`, appending what it receives to `log`. */
export function hostileServerConfig(
  mode: string,
  options: { log?: string; env?: Record<string, string> } = {},
): { command: string; args: string[]; env?: Record<string, string> } {
  const args = [MCP_HOSTILE_SERVER, mode, ...(options.log === undefined ? [] : [options.log])];
  return { command: process.execPath, args, ...(options.env === undefined ? {} : { env: options.env }) };
}

/** Calls tool `name` of `registry` once (call id `call_1`) and parses its output. */
export async function callTool(
  registry: ToolRegistry,
  name: string,
  args: unknown,
  workspace: string,
): Promise<ToolOutput> {
  const result = await executeToolCall(
    registry,
    { callId: "call_1", name, arguments: JSON.stringify(args) },
    { workspace, redact: [] },
  );
  return JSON.parse(result.output) as ToolOutput;
}
