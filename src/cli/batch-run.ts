/**
 * What the tasks of `eddy batch` and `eddy worker` run with, from the same settings as `eddy run`
 * (run-settings.ts): the spec every task starts from, the policy (`--allow-*`, `--sandbox`,
 * `--approve`, the MCP servers), and the tools — the built-ins under that policy, fresh for each
 * task (so `shell`'s background jobs end with their task), and the MCP servers' tools, the servers
 * started once for the whole batch and shut down at its end, and the config file's `agents` — and
 * each task's AGENTS.md files, read in the workspace it runs in, as `eddy run` reads them (the
 * same reader, run-settings.ts). A batch runs unattended: `--approve ask` is a usage error; `deny` and `defer` apply as in `eddy run` (a deferred task ends
 * `awaiting_approval`: `eddy resume DIR/tapes/ID.tape --decide …` goes on).
 */

import type { BatchTask } from "../batch/task.js";
import type { McpServerSummary } from "../frames/frame.js";
import type { ToolHooks } from "../loop/hooks.js";
import type { ApproveMode, Policy } from "../loop/policy.js";
import type { PartialRunSpec } from "../loop/run-spec.js";
import { createBuiltinTools } from "../tools/builtin/index.js";
import type { McpEvent, McpToolInfo } from "../tools/mcp/index.js";
import type { ToolRegistry } from "../tools/registry.js";
import type { EffectiveConfig } from "./config.js";
import { usageError } from "./preflight.js";
import type { CliIo } from "./run-command.js";
import { hooksOf, type InstructionReader, instructionReaderOf, policyOf, specOf } from "./run-settings.js";
import {
  builtinOptionsOf,
  closeTools,
  type PreparedTools,
  prepareTools,
  registryOf,
  startTools,
} from "./run-tools.js";
import type { Styles } from "./terminal.js";

/** The tools, spec and policy of a batch's tasks (see the module comment). */
export interface BatchRuntime {
  /** What every task starts from (a task's own fields win). */
  spec: PartialRunSpec;
  policy: Policy;
  /** A fresh registry for one task: new built-ins, the shared MCP servers' tools, the config file's `agents`. */
  tools: (task: BatchTask, workspace: string) => ToolRegistry;
  /** Reads a task's AGENTS.md files in its workspace, as `eddy run` does; undefined with `--no-agents-md`. */
  instructionFiles: InstructionReader | undefined;
  /** The config file's hook commands for a task's run in `workspace`; undefined when none are configured. */
  hooks: ((workspace: string) => ToolHooks) | undefined;
  mcpServers: McpServerSummary[];
  mcpTools: McpToolInfo[];
  /** Secret values of the MCP configuration, to mask besides the provider's keys. */
  secrets: readonly string[];
  /** Shuts the MCP servers down. Never throws. */
  close(): Promise<void>;
}

/** Options of `startBatchRuntime`. */
export interface BatchRuntimeOptions {
  config: EffectiveConfig;
  io: CliIo;
  styles: Styles;
  /** `batch` or `worker`, for messages. */
  command: string;
  /** Cancels the MCP servers' start. */
  signal: AbortSignal;
  /** Told of MCP server events (started, failed, exited). */
  onMcpEvent: (event: McpEvent) => void;
}

/** The approval mode of an unattended command: the configured one, `auto` when none; `ask` is refused. */
export function unattendedApproveMode(config: EffectiveConfig, command: string): ApproveMode {
  const mode = config.approve.value ?? "auto";
  if (mode === "ask") {
    const where =
      config.approve.source === "flag"
        ? "--approve ask"
        : `approve: "ask" (${config.approve.from ?? "config"})`;
    throw usageError(
      `${where} does not apply to eddy ${command}: its tasks run unattended — use --approve auto (run every call), deny (refuse the calls that need approval) or defer (end those tasks awaiting approval; decide later with eddy resume --decide)`,
    );
  }
  return mode;
}

/**
 * Checks the settings (a usage error before anything starts), starts the MCP servers, and returns
 * what the tasks run with; `undefined` when `signal` aborts while the servers start.
 */
export async function startBatchRuntime(o: BatchRuntimeOptions): Promise<BatchRuntime | undefined> {
  const { config, io } = o;
  const approve = unattendedApproveMode(config, o.command);
  // An unattended run is never `ask`: give prepareTools/startTools the mode decided here.
  const unattended: EffectiveConfig = {
    ...config,
    approve: { value: approve, source: config.approve.source },
  };
  const prepared: PreparedTools = await prepareTools(unattended, io, o.onMcpEvent);
  const started = await startTools(prepared, {
    config: unattended,
    io,
    styles: o.styles,
    signal: o.signal,
    hold: { pause() {}, resume() {} },
    secrets: [],
  });
  if (started === undefined) {
    await closeTools(prepared, undefined);
    return undefined;
  }
  const agents = new Set(prepared.agents.map((a) => a.name));
  const mcpDefinitions = started.registry.names().flatMap((name) => {
    const tool = started.registry.resolve(name);
    return tool !== undefined && name.includes("__") && !agents.has(name) ? [tool.definition] : [];
  });
  const builtinOptions = builtinOptionsOf(config, io.env);
  return {
    spec: specOf(config),
    policy: policyOf(config, approve),
    tools: () =>
      registryOf(
        createBuiltinTools(builtinOptions),
        [...mcpDefinitions, ...prepared.agents],
        prepared.envSecrets,
      ),
    instructionFiles: instructionReaderOf(config, (line) => io.stderr.write(line)),
    hooks: hooksOf(config, io.env),
    mcpServers: started.mcpServers,
    mcpTools: started.mcpTools,
    secrets: started.secrets,
    close: () => closeTools(prepared, started.registry),
  };
}
