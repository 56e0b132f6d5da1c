/**
 * The tools of one `eddy run`: the built-ins (the shell under bubblewrap with `--sandbox`), the
 * tools of the configured MCP servers (started once, before the first request, and shut down when
 * the run ends — also on SIGINT), the registry rebuilt between turns when a server announces
 * `tools/list_changed`, and the approval handler of the run's `--approve` mode. `close()` releases
 * everything a tool started: background jobs of `shell` (`ToolRegistry.dispose`) and the servers.
 */
import type { ApprovalHandler } from "../loop/approvals.js";
import {
  type BuiltinTools,
  type BuiltinToolsOptions,
  createBuiltinTools,
  probeBubblewrap,
} from "../tools/builtin/index.js";
import { secretValuesFromEnv } from "../tools/execute.js";
import type { McpEvent, McpServerStatus, McpToolInfo, McpTools } from "../tools/mcp/index.js";
import { createToolRegistry, type ToolRegistry } from "../tools/registry.js";
import type { ToolDefinition } from "../tools/tool.js";
import { untilAborted } from "../util/abort.js";
import { agentToolsOf } from "./agent-tools.js";
import { assertCanAsk, chooseApproveMode, createApprovalPrompter, type Ttys } from "./approval-prompt.js";
import type { EffectiveConfig, Env } from "./config.js";
import type { ApproveMode } from "./config-tools.js";
import { untrustedNotice } from "./config-trust.js";
import { usageError } from "./preflight.js";
import type { CliIo } from "./run-command.js";
import { type Styles, terminalSafe } from "./terminal.js";

/** The run's tools, configured and checked, nothing started yet. */
export interface PreparedTools {
  builtins: BuiltinTools;
  /** Undefined when no MCP server is configured. */
  mcp: McpTools | undefined;
  /** The secret-looking values of the environment: no tool error message carries them to the model. */
  envSecrets: readonly string[];
  /** The config file's `agents` as tools (cli/agent-tools.ts), after the MCP tools. */
  agents: readonly ToolDefinition[];
}

/** The run's tools once started: what `runAgent` and the tape header need. */
export interface RunTools {
  registry: ToolRegistry;
  approveMode: ApproveMode;
  /** The terminal prompt in `ask` mode; undefined otherwise (the policy's mode applies). */
  onApproval: ApprovalHandler | undefined;
  /** Set when MCP servers may change their tools. */
  refreshTools: ((signal?: AbortSignal) => Promise<ToolRegistry | undefined>) | undefined;
  mcpServers: McpServerStatus[];
  mcpTools: McpToolInfo[];
  /** Secret values of the MCP configuration (tokens, secret-looking variables), to mask. */
  secrets: readonly string[];
}

/**
 * Checks and builds the tools without starting anything: `--approve ask` needs a terminal,
 * `--sandbox` (with `--allow-shell`) needs a working bubblewrap, every MCP server entry must be
 * valid. Each problem is a usage error (exit 2) before any process starts or request is sent.
 */
export async function prepareTools(
  config: EffectiveConfig,
  io: CliIo,
  onEvent: (event: McpEvent) => void,
): Promise<PreparedTools> {
  if (config.configUntrusted !== undefined && config.configFile !== undefined)
    io.stderr.write(
      `${terminalSafe(untrustedNotice(config.configFile, config.configUntrusted), { oneLine: true })}\n`,
    );
  assertCanAsk(config.approve, ttysOf(io));
  if (config.sandbox.value && config.allowShell.value) {
    const probe = await probeBubblewrap(io.env.PATH);
    if (!probe.ok) throw usageError(`--sandbox: ${probe.reason}`);
  }
  const builtins = createBuiltinTools(builtinOptionsOf(config, io.env));
  return {
    builtins,
    mcp: await mcpTools(config, io, onEvent),
    envSecrets: secretValuesFromEnv(io.env),
    agents: agentToolsOf(config.agents),
  };
}

/** The MCP tool source, when servers are configured: the MCP SDK is loaded only then. */
async function mcpTools(
  config: EffectiveConfig,
  io: CliIo,
  onEvent: (event: McpEvent) => void,
): Promise<McpTools | undefined> {
  if (config.mcpServers.length === 0) return undefined;
  const { createMcpTools } = await import("../tools/mcp/mcp-tools.js");
  const servers = Object.fromEntries(config.mcpServers.map((s) => [s.name, s.value]));
  return createMcpTools(servers, { env: io.env, cwd: config.workspace.value, onEvent });
}

/** The built-ins as the configuration's policy allows them (`shell` gets the CLI's environment). */
export function builtinOptionsOf(config: EffectiveConfig, env: Env): BuiltinToolsOptions {
  return {
    allowWrite: config.allowWrite.value,
    allowShell: config.allowShell.value,
    shellEnv: { source: env },
    ...(config.sandbox.value && config.allowShell.value ? { shellSandbox: "bubblewrap" as const } : {}),
  };
}

/** Options of `startTools`. */
export interface StartToolsOptions {
  config: EffectiveConfig;
  io: CliIo;
  styles: Styles;
  /** Cancels the start (SIGINT while servers start). */
  signal: AbortSignal;
  /** Holds the frames' rendering while an approval prompt is open. */
  hold: { pause(): void; resume(): void };
  /** Values masked in prompts besides the MCP secrets. */
  secrets: readonly string[];
}

/**
 * Starts the MCP servers (each within its startup timeout; a server that fails contributes no
 * tools and is reported through `onEvent`), builds the registry and picks the approval mode.
 * Resolves `undefined` when `signal` aborts first.
 */
export async function startTools(
  prepared: PreparedTools,
  o: StartToolsOptions,
): Promise<RunTools | undefined> {
  const { builtins, mcp, envSecrets, agents } = prepared;
  let mcpDefinitions: ToolDefinition[] = [];
  if (mcp !== undefined) {
    const listed = await untilAborted(mcp.tools(), o.signal).catch((error: unknown) => {
      if (o.signal.aborted) return undefined;
      throw error;
    });
    if (listed === undefined) return undefined;
    mcpDefinitions = listed;
  }
  const registry = registryOf(builtins, [...mcpDefinitions, ...agents], envSecrets);
  const approveMode = chooseApproveMode(o.config.approve, ttysOf(o.io), needsApproval(registry));
  const secrets = mcp?.secrets ?? [];
  return {
    registry,
    approveMode,
    onApproval: approvalHandler(approveMode, o, [...o.secrets, ...secrets]),
    refreshTools: mcp === undefined ? undefined : refresher(mcp, builtins, envSecrets, agents),
    mcpServers: mcp?.status() ?? [],
    mcpTools: mcp?.toolInfo() ?? [],
    secrets,
  };
}

/**
 * The built-ins first (their fixed order), then the MCP tools in configuration order; `secrets`
 * are masked in tool error messages.
 */
export function registryOf(
  builtins: BuiltinTools,
  mcpDefinitions: readonly ToolDefinition[],
  secrets: readonly string[],
): ToolRegistry {
  return createToolRegistry([...builtins.tools, ...mcpDefinitions], { disabled: builtins.disabled, secrets });
}

/**
 * Releases what the tools started — `shell`'s background jobs (`dispose`) and the MCP servers
 * (their whole process groups, by `deadline` when given: a `performance.now()` time) — whatever
 * the run's outcome. Never throws.
 */
export async function closeTools(
  prepared: PreparedTools | undefined,
  registry: ToolRegistry | undefined,
  deadline?: number,
): Promise<void> {
  await Promise.allSettled([registry?.dispose(), prepared?.mcp?.close(deadline)]);
}

function approvalHandler(
  mode: ApproveMode,
  o: StartToolsOptions,
  secrets: readonly string[],
): ApprovalHandler | undefined {
  // `auto`, `deny` and `defer` are the policy's to apply (loop/policy.ts); only `ask` needs a person.
  if (mode !== "ask") return undefined;
  const input = o.io.terminal;
  if (input === undefined) throw usageError("--approve ask needs a terminal to read the answers from");
  return createApprovalPrompter({
    input,
    output: o.io.stderr,
    styles: o.styles,
    workspace: o.config.workspace.value,
    secrets,
    hold: o.hold,
  });
}

/**
 * At each turn start: a new registry when a server changed its tools since the last one. `tools()`
 * first waits for a list being re-read (a server that announced new tools during the last call),
 * until the run's `signal` aborts (Ctrl-C: the run then ends with its tools as they were).
 */
function refresher(
  mcp: McpTools,
  builtins: BuiltinTools,
  secrets: readonly string[],
  agents: readonly ToolDefinition[],
): (signal?: AbortSignal) => Promise<ToolRegistry | undefined> {
  let seen = mcp.revision;
  return async (signal) => {
    try {
      const definitions = await mcp.tools(signal === undefined ? {} : { signal });
      if (mcp.revision === seen) return undefined;
      seen = mcp.revision;
      return registryOf(builtins, [...definitions, ...agents], secrets);
    } catch {
      return undefined; // a clash is reported by the MCP source (onEvent), or Ctrl-C: the old tools stay
    }
  };
}

function needsApproval(registry: ToolRegistry): boolean {
  return registry.names().some((name) => {
    const rule = registry.resolve(name)?.definition.needsApproval;
    return rule !== undefined && rule !== false;
  });
}

function ttysOf(io: CliIo): Ttys {
  return { stdin: io.stdinIsTTY, stdout: io.stdout.isTTY === true, stderr: io.stderr.isTTY === true };
}
