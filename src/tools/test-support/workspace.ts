/**
 * Test helpers for the tools layer: throwaway workspaces under the OS temp dir (with a sibling
 * "outside" directory for escape tests) and a one-call runner that returns the parsed output.
 */
import { mkdir, mkdtemp, realpath, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
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
