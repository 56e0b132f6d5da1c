/** MCP servers as a tool source (stdio and Streamable HTTP), with the official SDK client. */
export {
  type McpHttpServerConfig,
  type McpServerConfig,
  type McpServersConfig,
  type McpStdioServerConfig,
  parseMcpFlag,
  parseMcpServers,
} from "./config.js";
export { MCP_DEFAULTS } from "./defaults.js";
export { createMcpTools, type McpToolInfo, type McpTools, type McpToolsOptions } from "./mcp-tools.js";
export { mcpToolName } from "./names.js";
export { MCP_TOOL_EFFECTS, type OfflineMcpToolsOptions, offlineMcpTools } from "./offline.js";
export { mcpResultToToolResult } from "./result.js";
export type { McpEvent, McpServerState, McpServerStatus } from "./status.js";
