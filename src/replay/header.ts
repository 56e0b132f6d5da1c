/**
 * The tape header of a run: its spec as it runs (`RunHandle.spec`: every default applied, the
 * tools it offers), the provider it streams from, and — for audit — the policy it had. Never
 * secrets: keys and headers are neither spec nor provider capabilities.
 */
import type { McpServerSummary } from "../frames/frame.js";
import type { Policy } from "../loop/policy.js";
import type { RunSpec } from "../loop/run-spec.js";
import type { Provider } from "../provider/provider.js";
import { chainWire } from "../provider/wire-api.js";
import type { McpToolInfo } from "../tools/mcp/index.js";
import { EDDY_VERSION } from "../version.js";
import { TAPE_FORMAT, type TapeAgent, type TapeClientTool, type TapeHeader } from "./tape-header.js";

/** What a tape header needs besides the spec. */
export interface TapeHeaderExtras {
  /** The provider the run streams from (its name, capabilities and wire API are recorded). */
  provider: Provider;
  /** The provider profile's name, when it differs from the provider's own (`mock` for the demo model). */
  providerName?: string;
  /** Schema validation of provider events was on. @defaultValue true */
  validate?: boolean;
  /** The policy the run had (recorded for audit). @defaultValue none */
  policy?: Policy;
  /** The MCP servers the run's tools came from (`run_started.mcp_servers`). @defaultValue none */
  mcpServers?: readonly McpServerSummary[];
  /** The MCP tools offered (`McpTools.toolInfo()`), so a replay can declare them without the servers. */
  mcpTools?: readonly McpToolInfo[];
  /** The sub-agents offered as tools (`TapeHeader.agents`). @defaultValue none */
  agents?: readonly TapeAgent[];
  /** The tools a client of the Open Responses face declared (`TapeHeader.client_tools`). @defaultValue none */
  clientTools?: readonly TapeClientTool[];
}

/**
 * The tape header of a run of `spec` (pass `RunHandle.spec`: its `run_id` and `tools` are the
 * run's own).
 *
 * @example
 * ```ts
 * const run = runAgent(spec, { provider, tools, onFrame: (f) => recorder?.observer(f) });
 * const recorder = createTapeRecorder("run.tape", createTapeHeader(run.spec, { provider }));
 * ```
 */
export function createTapeHeader(spec: RunSpec, extras: TapeHeaderExtras): TapeHeader {
  const runId = spec.run_id ?? "";
  const header: TapeHeader = {
    type: "tape_header",
    format: TAPE_FORMAT,
    eddy_version: EDDY_VERSION,
    run_id: runId,
    spec,
    provider: {
      name: extras.providerName ?? extras.provider.name,
      capabilities: extras.provider.capabilities,
      validate: extras.validate ?? true,
    },
    workspace: ".",
  };
  const wire = chainWire([extras.provider.wire]);
  if (wire !== undefined) header.provider.wire = wire;
  if (extras.policy !== undefined)
    header.policy = { ...extras.policy, mcpServers: [...extras.policy.mcpServers] };
  if (extras.mcpServers !== undefined && extras.mcpServers.length > 0)
    header.mcp_servers = extras.mcpServers.map((s) => ({ ...s }));
  if (extras.mcpTools !== undefined && extras.mcpTools.length > 0) header.mcp_tools = [...extras.mcpTools];
  if (extras.agents !== undefined && extras.agents.length > 0)
    header.agents = extras.agents.map((a) => ({ name: a.name, description: a.description }));
  if (extras.clientTools !== undefined && extras.clientTools.length > 0)
    header.client_tools = extras.clientTools.map((t) => ({ ...t }));
  return header;
}
