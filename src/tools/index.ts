/**
 * The tools layer: tool definitions, the registry, strict argument parsing, execution with
 * timeout and cancellation, the stable model-facing output (docs/decisions.md #7), the built-in tools and
 * MCP servers as a tool source.
 */
export { type ParsedArguments, parseToolArguments } from "./arguments.js";
export {
  type ApplyPatchArgs,
  BUILTIN_TOOL_NAMES,
  type BuiltinTools,
  type BuiltinToolsOptions,
  bubblewrapArgs,
  createBuiltinTools,
  createShellTool,
  type GrepArgs,
  type ListDirArgs,
  probeBubblewrap,
  type ReadFileArgs,
  type ShellArgs,
  type ShellEnvOptions,
  type ShellSandbox,
  type ShellToolOptions,
  shellEnvironment,
  type WriteFileArgs,
} from "./builtin/index.js";
export { TOOL_DEFAULTS } from "./defaults.js";
export {
  type ExecuteToolCallOptions,
  executeToolCall,
  exitCodeFor,
  redactSecrets,
  refusedToolOutput,
  secretValuesFromEnv,
  TOOL_EXIT_CODES,
  type ToolCall,
  type ToolCallResult,
} from "./execute.js";
export {
  createMcpTools,
  MCP_DEFAULTS,
  type McpEvent,
  type McpHttpServerConfig,
  type McpServerConfig,
  type McpServerState,
  type McpServerStatus,
  type McpServersConfig,
  type McpStdioServerConfig,
  type McpToolInfo,
  type McpTools,
  type McpToolsOptions,
  mcpResultToToolResult,
  mcpToolName,
  offlineMcpTools,
  parseMcpFlag,
  parseMcpServers,
} from "./mcp/index.js";
export { executeCall, type ShellOutputChunk, shellOutputChunks } from "./native-calls.js";
export {
  type EncodedToolOutput,
  type EncodeOptions,
  encodeToolOutput,
  type ToolOutput,
  toToolOutput,
} from "./output.js";
export {
  createToolRegistry,
  type DisabledTool,
  type RegisteredTool,
  TOOL_NAME_PATTERN,
  type ToolLookup,
  type ToolRegistry,
  type ToolRegistryOptions,
} from "./registry.js";
export {
  defineTool,
  isToolResult,
  type JsonSchema,
  type SubRunRecord,
  type ToolContext,
  type ToolDefinition,
  type ToolError,
  type ToolErrorCode,
  type ToolResult,
  type ToolReturn,
  toolResult,
} from "./tool.js";
export { isInside, resolveInWorkspace, type WorkspacePath, workspaceRoot } from "./workspace.js";
