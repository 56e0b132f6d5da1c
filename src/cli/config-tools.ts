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
  const { flags, file, path } = s;
  const fromFile = path ?? "config";
  const servers = new Map<string, McpServerSetting>();
  if (file.mcp_servers !== undefined) {
    const where = `config file ${fromFile}: mcp_servers`;
    for (const [name, value] of Object.entries(parseMcpServers(file.mcp_servers, where))) {
      servers.set(name, { name, value, source: "config", from: fromFile });
    }
  }
  for (const spec of flags.mcp ?? []) {
    const { name, config } = parseMcpFlag(spec);
    servers.delete(name); // the flag's server replaces the file's, and is listed where the flags are
    servers.set(name, { name, value: config, source: "flag" });
  }
  const onSwitch = (flag: boolean | undefined, value: boolean | undefined): Setting<boolean> => {
    if (flag === true) return { value: true, source: "flag" };
    if (value !== undefined) return { value, source: "config", from: fromFile };
    return { value: false, source: "default" };
  };
  let approve: Setting<ApproveMode | undefined> = { value: undefined, source: "default" };
  if (flags.approve !== undefined) approve = { value: flags.approve, source: "flag" };
  else if (file.approve !== undefined) approve = { value: file.approve, source: "config", from: fromFile };
  return {
    mcpServers: [...servers.values()],
    parallelToolCalls:
      flags.parallelToolCalls === true || file.parallel_tool_calls !== undefined
        ? onSwitch(flags.parallelToolCalls, file.parallel_tool_calls)
        : { value: LOOP_DEFAULTS.parallelToolCalls, source: "default" },
    approve,
    sandbox: onSwitch(flags.sandbox, file.sandbox),
  };
}
