/**
 * MCP tools without their servers, for a run rebuilt from a recording (replay, resume): kept apart
 * from mcp-tools.ts so that rebuilding them does not load the MCP SDK.
 */
import { compileRecordedSchema } from "../../util/schema.js";
import { exitCodeFor } from "../execute.js";
import { type ToolDefinition, toolResult } from "../tool.js";
import type { McpToolInfo } from "./mcp-tools.js";

/**
 * What eddy takes an MCP server's tool to do, whatever the server's annotations say: its
 * `readOnlyHint` is the server's word, not a permission (permissions come from the local
 * invocation only, src/loop/policy.ts). So a run that asks (`approve` ask, deny or defer) asks
 * before every call, and a call a crash interrupted is not run again on resume unless the policy
 * says `rerunInterrupted` (docs/architecture.md, "Interrupted calls"). The hint is kept as data
 * (`McpToolInfo.readOnly`), shown and recorded, and grants nothing.
 */
export const MCP_TOOL_EFFECTS = Object.freeze({
  readOnly: false,
  idempotent: false,
  needsApproval: true,
} as const satisfies Pick<ToolDefinition, "readOnly" | "idempotent" | "needsApproval">);

/** Options of `offlineMcpTools`. */
export interface OfflineMcpToolsOptions {
  /**
   * The tools the recording asked approval for (its `approval_requested` frames). A tool its
   * server marked read-only is asked about only when named here, so a recording made while eddy
   * still let such tools run unasked replays as it ran; every other tool is asked about.
   * @defaultValue every tool is asked about (`MCP_TOOL_EFFECTS`)
   */
  askedAbout?: ReadonlySet<string>;
}

/**
 * Definitions for MCP tools recorded with `toolInfo()` (e.g. in a tape header), without their
 * servers: the same names, descriptions and schemas, so request bodies come out identical when
 * the tool outputs come from a recording. Calling one ends `ok:false`.
 */
export function offlineMcpTools(
  infos: readonly McpToolInfo[],
  options: OfflineMcpToolsOptions = {},
): ToolDefinition[] {
  return infos.map((info) => {
    untrustedCompile(info);
    const asked = options.askedAbout === undefined || !info.readOnly || options.askedAbout.has(info.name);
    return offlineTool(info, asked);
  });
}

/**
 * The recorded schema came from a server and reached us through a tape: compiled here with its
 * patterns on the linear-time engine, as when it was recorded (mcp-tools.ts usableSchema), so the
 * registry finds it compiled. One whose patterns that engine cannot run (a recording made before
 * eddy checked server patterns so, or a made-up tape) checks only that the arguments are an
 * object (`compileRecordedSchema`), as a live server's does (it is offered with an open schema).
 */
function untrustedCompile(info: McpToolInfo): void {
  try {
    compileRecordedSchema(`MCP tool "${info.tool}"`, info.parameters);
  } catch {
    // Unusable whatever the engine: the registry compiles it and reports what is wrong.
  }
}

function offlineTool(info: McpToolInfo, asked: boolean): ToolDefinition {
  return {
    name: info.name,
    description: info.description,
    parameters: info.parameters,
    strict: false,
    ...MCP_TOOL_EFFECTS,
    needsApproval: asked,
    execute: () =>
      toolResult({
        ok: false,
        exitCode: exitCodeFor("mcp_server_unavailable"),
        error: {
          code: "mcp_server_unavailable",
          message: `MCP server "${info.server}" is not connected (its tools were loaded from a recording)`,
        },
      }),
  };
}
