/**
 * Fitting a name to the function-name pattern of the Open Responses spec (`^[a-zA-Z0-9_-]{1,64}$`,
 * `schemas/openresponses/openapi.json`): how an MCP server's and tool's names become parts of the
 * name its tools are offered under (src/tools/mcp/names.ts), and how the policy finds the server of
 * such a tool (src/loop/policy.ts). A leaf, so the policy loads nothing of the MCP client.
 */

/** `text` with every character outside `[a-zA-Z0-9_-]` replaced by `_`. */
export function sanitizeNamePart(text: string): string {
  return text.replace(/[^a-zA-Z0-9_-]/g, "_");
}
