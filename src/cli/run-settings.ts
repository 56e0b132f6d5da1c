/**
 * The one path from the CLI's settings to a run: the effective configuration (flags > env >
 * config file > profile > defaults, each value with its source, config.ts) becomes a partial
 * `RunSpec` — what to run — and a `Policy` — what this invocation allows (docs/architecture.md,
 * "One home for a run's settings"). `eddy run`, `batch`, `worker`, `resume`, `chat` and `serve`
 * all take their runs' settings from here; defaults are not applied here (`resolveRunSpec` does
 * that once).
 */
import type { ToolHooks } from "../loop/hooks.js";
import {
  findInstructionFiles,
  type InstructionFile,
  type SkippedInstructionFile,
} from "../loop/instruction-files.js";
import { APPROVE_MODES, type ApproveMode, createPolicy, type Policy } from "../loop/policy.js";
import type { PartialRunSpec } from "../loop/run-spec.js";
import type { EffectiveConfig, Setting } from "./config.js";
import type { Env } from "./config-file.js";
import { commandHooks } from "./hook-commands.js";
import { terminalSafe } from "./terminal.js";

/**
 * The flag that raises each budget a spec from elsewhere may only lower (a batch task, a tape
 * being resumed: `withinBudgets`, src/loop/run-spec.ts). `tool_timeout_ms` and
 * `tool_output_cap_bytes` have none: their defaults are the most such a spec gets.
 */
export const BUDGET_FLAGS: Readonly<Record<string, string>> = {
  max_turns: "--max-turns",
  max_tool_calls: "--max-tool-calls",
  tool_concurrency: "--tool-concurrency",
  "request.max_output_tokens": "--max-output-tokens",
};

/** Which settings go into the spec: all of them, or only those given as flags (a queue coordinator's). */
export interface SpecOfOptions {
  /** @defaultValue false */
  onlyFlags?: boolean;
}

/**
 * The spec fields the configuration sets. Values still at their defaults are left out, so a spec
 * merged over another (a batch task over its batch, a queue job over a worker) only overrides what
 * was asked for.
 */
export function specOf(config: EffectiveConfig, options: SpecOfOptions = {}): PartialRunSpec {
  const spec: PartialRunSpec = {};
  const take = <T>(setting: Setting<T>, set: (value: T) => void, includeDefault = false) => {
    if (options.onlyFlags === true && setting.source !== "flag") return;
    if (setting.source === "default" && !includeDefault) return;
    set(setting.value);
  };
  // The model is the run's whatever its source (the demo model on the mock is a default too).
  take(config.model, (v) => (spec.model = v), options.onlyFlags !== true);
  take(config.instructions, (v) => {
    if (v !== undefined) spec.instructions = v;
  });
  take(config.stateless, (v) => {
    if (v) spec.mode = "stateless";
  });
  take(config.maxToolCalls, (v) => (spec.max_tool_calls = v));
  take(config.maxTurns, (v) => (spec.max_turns = v));
  take(config.toolsOnFollowUp, (v) => (spec.tools_on_follow_up = v));
  take(config.parallelToolCalls, (v) => (spec.parallel_tool_calls = v));
  take(config.toolConcurrency, (v) => (spec.tool_concurrency = v));
  take(config.request, (v) => {
    if (Object.keys(v).length > 0) spec.request = v;
  });
  take(config.nativeTools, (v) => {
    if (v !== undefined) spec.native_tools = v;
  });
  take(config.hostedTools, (v) => {
    if (v.length > 0) spec.hosted_tools = v;
  });
  take(config.continueIncomplete, (v) => {
    if (v) spec.continue_incomplete = true;
  });
  take(config.transport, (v) => (spec.transport = v));
  take(config.onLimit, (v) => (spec.on_limit = v));
  const history: NonNullable<PartialRunSpec["history"]> = {};
  const h = config.history;
  take(h.strategy, (v) => (history.strategy = v));
  take(h.recentCallsToKeep, (v) => (history.recent_calls_to_keep = v));
  take(h.truncationThreshold, (v) => (history.truncation_threshold = v));
  take(h.summarizationModel, (v) => {
    if (v !== undefined) history.summarization_model = v;
  });
  if (Object.keys(history).length > 0) spec.history = history;
  return spec;
}

/**
 * What this invocation allows: `--allow-write`, `--allow-shell`, `--sandbox` (with the shell),
 * `--approve` (`approve` is the mode the command decided: `ask` on a terminal when a tool needs it,
 * else the configured mode or `auto`), the configured MCP servers, `--rerun-interrupted`.
 */
export function policyOf(
  config: EffectiveConfig,
  approve: ApproveMode,
  extra: { rerunInterrupted?: boolean } = {},
): Policy {
  return createPolicy({
    allowWrite: config.allowWrite.value,
    allowShell: config.allowShell.value,
    sandbox: config.sandbox.value && config.allowShell.value,
    approve,
    mcpServers: config.mcpServers.map((server) => server.name),
    rerunInterrupted: extra.rerunInterrupted === true,
    hostedTools: config.hostedTools.value,
  });
}

/** Whether `value` is an approval mode (for the config file and flags). */
export function isApproveMode(value: unknown): value is ApproveMode {
  return (APPROVE_MODES as readonly unknown[]).includes(value);
}

/** Reads a run's instruction files from the workspace it runs in (`copyOf`: the workspace a task's copy copies). */
export type InstructionReader = (workspace: string, copyOf?: string) => InstructionFile[];

/**
 * How runs of this configuration read AGENTS.md (`findInstructionFiles`): `eddy run` in its
 * workspace, each task of `eddy batch` and `eddy worker` in the workspace it runs in. Undefined
 * with `--no-agents-md` (config `agents_md: false`).
 */
export function instructionReaderOf(
  config: EffectiveConfig,
  warn?: (line: string) => void,
): InstructionReader | undefined {
  if (!config.agentsMd.value) return undefined;
  // Said once per file and reason (a batch reads the same files for every task).
  const said = new Set<string>();
  const onSkipped = (skipped: SkippedInstructionFile) => {
    const line = skippedNotice(skipped);
    if (warn === undefined || said.has(line)) return;
    said.add(line);
    warn(line);
  };
  return (workspace, copyOf) =>
    findInstructionFiles(workspace, { onSkipped, ...(copyOf === undefined ? {} : { copyOf }) });
}

/** The one-line notice of an AGENTS.md the instructions left out or cut (a path may hold anything). */
export function skippedNotice(skipped: SkippedInstructionFile): string {
  const path = terminalSafe(skipped.path, { oneLine: true });
  return skipped.cut
    ? `eddy: ${path} is larger than 64 KiB: the instructions have its beginning only (${skipped.reason})\n`
    : `eddy: ${path} is left out of the instructions: ${skipped.reason}\n`;
}

/**
 * The config file's hook commands (`hooks`, hook-commands.ts) for a run in a workspace: `eddy run`
 * and `eddy chat` in theirs, `eddy resume` for the live part of the run, each task of `eddy batch`
 * and `eddy worker` in the workspace it runs in, `eddy serve`'s runs. Like the policy, they come
 * from this invocation only. Undefined when none are configured.
 */
export function hooksOf(config: EffectiveConfig, env: Env): ((workspace: string) => ToolHooks) | undefined {
  const hooks = config.hooks;
  if (hooks === undefined) return undefined;
  return (workspace) => commandHooks(hooks, workspace, env);
}
