/**
 * MCP tools without their servers, for a run rebuilt from a recording (replay, resume): kept apart
 * from mcp-tools.ts so that rebuilding them does not load the MCP SDK.
 */
import { compileSchema } from "../../util/schema.js";
import { exitCodeFor } from "../execute.js";
import { type ToolDefinition, toolResult } from "../tool.js";
import type { McpToolInfo } from "./mcp-tools.js";

/**
 * Definitions for MCP tools recorded with `toolInfo()` (e.g. in a tape header), without their
 * servers: the same names, descriptions, schemas and read-only hints, so request bodies come out
 * identical when the tool outputs come from a recording. Calling one ends `ok:false`.
 */
export function offlineMcpTools(infos: readonly McpToolInfo[]): ToolDefinition[] {
  return infos.map((info) => {
    untrustedCompile(info);
    return offlineTool(info);
  });
}

/**
 * The recorded schema came from a server: compiled here with its patterns on the linear-time
 * engine, as when it was recorded (mcp-tools.ts usableSchema), so the registry finds it compiled.
 * A schema that does not compile so is left to the registry (a recording made before eddy checked
 * server patterns in linear time).
 */
function untrustedCompile(info: McpToolInfo): void {
  try {
    compileSchema(`MCP tool "${info.tool}"`, info.parameters, { untrusted: true });
  } catch {
    // The registry compiles it and reports what is wrong.
  }
}

function offlineTool(info: McpToolInfo): ToolDefinition {
  return {
    name: info.name,
    description: info.description,
    parameters: info.parameters,
    strict: false,
    readOnly: info.readOnly,
    needsApproval: !info.readOnly,
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
