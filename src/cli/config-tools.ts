/**
 * The tool settings of a run, one step of `resolveConfig`: MCP servers (the config file's
 * `mcp_servers`, plus `--mcp NAME=COMMAND…` for one-off use; a flag's server replaces a config
 * server of the same name), parallel tool calls, approvals and the shell sandbox. Flag > config
 * file > default, each value with its source, like every other setting.
 */
import { LOOP_DEFAULTS } from "../loop/defaults.js";
import type { ApproveMode } from "../loop/policy.js";
import { type McpServerConfig, parseMcpFlag, parseMcpServers } from "../tools/mcp/config.js";
import type { ConfigSources, Setting } from "./config.js";
import { configPath } from "./config-origin.js";

/**
 * `--approve`: ask on the terminal, run every call (`auto`), deny every call that needs approval,
 * or defer it (the run ends `awaiting_approval`, exit 4; `eddy resume --decide` goes on).
 */
export type { ApproveMode } from "../loop/policy.js";

/** One configured MCP server and where it was configured. */
export interface McpServerSetting extends Setting<McpServerConfig> {
  name: string;
}

/** The tool settings of `EffectiveConfig`. */
export interface ToolSettings {
  /** In configuration order: the config file's servers, then the `--mcp` ones. */
  mcpServers: McpServerSetting[];
  parallelToolCalls: Setting<boolean>;
  /**
   * `undefined` (the default) is decided when the run starts: `ask` when stdin, stdout and stderr
   * are a terminal and a tool needs approval, `auto` otherwise (see approval-prompt.ts).
   */
  approve: Setting<ApproveMode | undefined>;
  sandbox: Setting<boolean>;
}

/** Resolves the tool settings. Throws `invalid_config`/`invalid_argument` (exit 2) for a bad server. */
export function resolveToolSettings(s: ConfigSources): ToolSettings {
  const { flags, file } = s;
  const at = (key: string) => configPath(s, key) ?? "config";
  const servers = new Map<string, McpServerSetting>();
  const parsed = new Map<string, McpServerSetting>();
  for (const [from, entries] of byFile(s, file.mcp_servers ?? {})) {
    const where = `config file ${from}: mcp_servers`;
    for (const [name, value] of Object.entries(parseMcpServers(entries, where)))
      parsed.set(name, { name, value, source: "config", from });
  }
  // In the layered file's order, whichever file each came from.
  for (const name of Object.keys(file.mcp_servers ?? {})) {
    const server = parsed.get(name);
    if (server !== undefined) servers.set(name, server);
  }
  for (const spec of flags.mcp ?? []) {
    const { name, config } = parseMcpFlag(spec);
    servers.delete(name); // the flag's server replaces the file's, and is listed where the flags are
    servers.set(name, { name, value: config, source: "flag" });
  }
  const onSwitch = (flag: boolean | undefined, key: "parallel_tool_calls" | "sandbox"): Setting<boolean> => {
    const value = file[key];
    if (flag === true) return { value: true, source: "flag" };
    if (value !== undefined) return { value, source: "config", from: at(key) };
    return { value: false, source: "default" };
  };
  let approve: Setting<ApproveMode | undefined> = { value: undefined, source: "default" };
  if (flags.approve !== undefined) approve = { value: flags.approve, source: "flag" };
  else if (file.approve !== undefined)
    approve = { value: file.approve, source: "config", from: at("approve") };
  return {
    mcpServers: [...servers.values()],
    parallelToolCalls:
      flags.parallelToolCalls === true || file.parallel_tool_calls !== undefined
        ? onSwitch(flags.parallelToolCalls, "parallel_tool_calls")
        : { value: LOOP_DEFAULTS.parallelToolCalls, source: "default" },
    approve,
    sandbox: onSwitch(flags.sandbox, "sandbox"),
  };
}

/**
 * The servers of the layered config files grouped by the file that configured each, in
 * configuration order: each group is checked with messages naming its own file.
 */
function byFile(s: ConfigSources, servers: Record<string, unknown>): Map<string, Record<string, unknown>> {
  const groups = new Map<string, Record<string, unknown>>();
  for (const [name, value] of Object.entries(servers)) {
    const from = configPath(s, `mcp_servers.${name}`) ?? "config";
    const group = groups.get(from) ?? {};
    // Defined, not assigned: a server named `__proto__` stays a server.
    Object.defineProperty(group, name, { value, enumerable: true, writable: true, configurable: true });
    groups.set(from, group);
  }
  return groups;
}
