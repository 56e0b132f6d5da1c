/**
 * The built-in tools, in their fixed declaration order: read_file, list_dir, grep (read-only, always
 * on), write_file, apply_patch (with `allowWrite`), shell (with `allowShell`; alias `bash`). Tools
 * left off are returned as `disabled`, so a registry built from both refuses calls to them with
 * the flag that enables them instead of "unknown tool".
 */
import type { DisabledTool } from "../registry.js";
import type { ToolDefinition } from "../tool.js";
import { applyPatchTool } from "./apply-patch.js";
import { grepTool } from "./grep.js";
import { listDirTool } from "./list-dir.js";
import { registerBuiltinValidators } from "./precompiled.js";
import { readFileTool } from "./read-file.js";
import type { ShellSandbox } from "./sandbox.js";
import { createShellTool, type ShellEnvOptions } from "./shell.js";
import { writeFileTool } from "./write-file.js";

/** Options of `createBuiltinTools`. */
export interface BuiltinToolsOptions {
  /** Enable write_file and apply_patch (CLI: `--allow-write`). @defaultValue false */
  allowWrite?: boolean;
  /** Enable shell (CLI: `--allow-shell`). @defaultValue false */
  allowShell?: boolean;
  /**
   * What shell commands see of the environment: pass `{ source: process.env }` (as the CLI does)
   * for the allowlisted variables of your process.
   * @defaultValue a standard `PATH` (`/usr/local/bin:/usr/bin:/bin`) and nothing else
   */
  shellEnv?: ShellEnvOptions;
  /**
   * Confine shell commands (CLI: `--sandbox`): `"bubblewrap"` runs them under `bwrap` (see
   * `probeBubblewrap`); throws `invalid_config` when `bwrap` is missing. @defaultValue "none"
   */
  shellSandbox?: ShellSandbox;
}

/** The enabled built-ins (in declaration order) and the disabled ones, for `createToolRegistry`. */
export interface BuiltinTools {
  tools: ToolDefinition[];
  disabled: DisabledTool[];
}

/** Names of every built-in tool, in declaration order. */
export const BUILTIN_TOOL_NAMES = [
  "read_file",
  "list_dir",
  "grep",
  "write_file",
  "apply_patch",
  "shell",
] as const;

/**
 * Creates the built-in tools: the read-only ones always, the writers and `shell` when enabled.
 *
 * @example
 * ```ts
 * const { tools, disabled } = createBuiltinTools({ allowWrite: true });
 * const registry = createToolRegistry(tools, { disabled }); // disabled tools answer with the flag that enables them
 * ```
 */
export function createBuiltinTools(options: BuiltinToolsOptions = {}): BuiltinTools {
  registerBuiltinValidators();
  const tools: ToolDefinition[] = [readFileTool, listDirTool, grepTool];
  const disabled: DisabledTool[] = [];
  const writeTools: ToolDefinition[] = [changesThings(writeFileTool), changesThings(applyPatchTool)];
  if (options.allowWrite === true) tools.push(...writeTools);
  else
    for (const t of writeTools)
      disabled.push({ name: t.name, reason: "run with --allow-write to enable it" });
  if (options.allowShell === true) {
    tools.push(
      changesThings(
        createShellTool({
          ...(options.shellEnv === undefined ? {} : { env: options.shellEnv }),
          ...(options.shellSandbox === undefined ? {} : { sandbox: options.shellSandbox }),
        }),
      ),
    );
  } else disabled.push({ name: "shell", aliases: ["bash"], reason: "run with --allow-shell to enable it" });
  return { tools, disabled };
}

/** Writers and `shell` change the workspace or the machine: they ask first and run alone. */
function changesThings<Args>(tool: ToolDefinition<Args>): ToolDefinition<Args> {
  return { ...tool, needsApproval: true, parallel: false };
}

export type { ApplyPatchArgs } from "./apply-patch.js";
export type { GrepArgs } from "./grep.js";
export type { ListDirArgs } from "./list-dir.js";
export type { ReadFileArgs } from "./read-file.js";
export { bubblewrapArgs, probeBubblewrap, type ShellSandbox } from "./sandbox.js";
export {
  createShellTool,
  type ShellArgs,
  type ShellEnvOptions,
  type ShellToolOptions,
  shellEnvironment,
} from "./shell.js";
export type { WriteFileArgs } from "./write-file.js";
