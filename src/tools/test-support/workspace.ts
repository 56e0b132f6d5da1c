/**
 * Test helpers for the tools layer: throwaway workspaces under the OS temp dir (with a sibling
 * "outside" directory for escape tests) and a one-call runner that returns the parsed output.
 */
import { spawn } from "node:child_process";
import { mkdir, mkdtemp, realpath, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { createBuiltinTools } from "../builtin/index.js";
import { executeToolCall, type ToolCallResult } from "../execute.js";
import type { ToolOutput } from "../output.js";
import { createToolRegistry, type ToolRegistry } from "../registry.js";

/** A temp sandbox: `root` is the workspace, `outside` a directory next to it. */
export interface Sandbox {
  base: string;
  root: string;
  outside: string;
  /** Writes files (workspace-relative paths → contents), creating parents. */
  files(entries: Record<string, string | Uint8Array>): Promise<void>;
  /** Creates a symlink at workspace-relative `path` pointing to `target` (absolute or relative). */
  link(path: string, target: string): Promise<void>;
  cleanup(): Promise<void>;
}

/** Creates a sandbox; call `cleanup()` in `afterEach`. */
export async function createSandbox(): Promise<Sandbox> {
  const base = await realpath(await mkdtemp(join(tmpdir(), "eddy-tools-")));
  const root = join(base, "ws");
  const outside = join(base, "outside");
  await mkdir(root);
  await mkdir(outside);
  await writeFile(join(outside, "secret.txt"), "outside secret\n");
  return {
    base,
    root,
    outside,
    async files(entries) {
      for (const [path, content] of Object.entries(entries)) {
        const abs = join(root, path);
        await mkdir(dirname(abs), { recursive: true });
        await writeFile(abs, content);
      }
    },
    async link(path, target) {
      const abs = join(root, path);
      await mkdir(dirname(abs), { recursive: true });
      await symlink(target, abs);
    },
    cleanup: () => rm(base, { recursive: true, force: true }),
  };
}

/** A registry with every built-in enabled. */
export function allBuiltins(): ToolRegistry {
  const b = createBuiltinTools({ allowWrite: true, allowShell: true });
  return createToolRegistry(b.tools, { disabled: b.disabled });
}

/** A call result with its output parsed. */
export interface RunResult extends ToolCallResult {
  parsed: ToolOutput;
}

/** Runs one call and parses its output (which must be valid JSON). */
export async function runTool(
  registry: ToolRegistry,
  workspace: string,
  name: string,
  args: Record<string, unknown> | string,
  options: { signal?: AbortSignal; outputCapBytes?: number } = {},
): Promise<RunResult> {
  const result = await executeToolCall(
    registry,
    { callId: "call_1", name, arguments: typeof args === "string" ? args : JSON.stringify(args) },
    { workspace, ...options },
  );
  return { ...result, parsed: JSON.parse(result.output) as ToolOutput };
}

/** The uid/gid `runToolUnprivileged` uses when the tests run as root (`nobody` on Debian). */
export const UNPRIVILEGED_ID = 65534;

/** One call for `runToolsUnprivileged`. */
export interface ToolCallSpec {
  workspace: string;
  name: string;
  args: Record<string, unknown>;
}

/** What `runToolsUnprivileged` gives back for each call. */
export type UnprivilegedResult = Pick<RunResult, "ok" | "output" | "error" | "parsed">;

/**
 * Runs calls as a user without privileges, so "permission denied" can happen: in this process
 * when the tests do not run as root, else in a child process running as `nobody` (root reads
 * everything). The workspaces and their parents must be readable by that user.
 */
export async function runToolsUnprivileged(calls: readonly ToolCallSpec[]): Promise<UnprivilegedResult[]> {
  if (process.getuid?.() !== 0) {
    const registry = allBuiltins();
    const results: UnprivilegedResult[] = [];
    for (const c of calls) results.push(await runTool(registry, c.workspace, c.name, c.args));
    return results;
  }
  return runToolsInChild(calls, { uid: UNPRIVILEGED_ID });
}

/**
 * Runs calls in a child Node process (`run-tool.ts`, every built-in enabled) that exits when they
 * are done, optionally dropping to the user `uid` once its modules are loaded (the process must
 * be root then); resolves with their results once it has exited.
 */
export async function runToolsInChild(
  calls: readonly ToolCallSpec[],
  options: { uid?: number } = {},
): Promise<UnprivilegedResult[]> {
  const script = fileURLToPath(new URL("./run-tool.ts", import.meta.url));
  const repo = fileURLToPath(new URL("../../..", import.meta.url));
  const args = ["--import", "tsx", script, JSON.stringify(calls)];
  if (options.uid !== undefined) args.push(String(options.uid));
  const child = spawn(process.execPath, args, {
    cwd: repo,
    env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: tmpdir() },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  let err = "";
  child.stdout.on("data", (chunk: Buffer) => {
    out += chunk.toString();
  });
  child.stderr.on("data", (chunk: Buffer) => {
    err += chunk.toString();
  });
  const code = await new Promise<number | null>((resolve) => child.on("close", resolve));
  if (code !== 0) throw new Error(`run-tool.ts exited ${code}: ${err}`);
  const results = JSON.parse(out) as Pick<RunResult, "ok" | "output" | "error">[];
  return results.map((r) => ({ ...r, parsed: JSON.parse(r.output) as ToolOutput }));
}
