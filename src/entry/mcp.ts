/**
 * `eddy/mcp`: tools from MCP servers, with the official `@modelcontextprotocol/sdk` client — stdio
 * servers (`command`, `args`, `env`, `cwd`) and Streamable HTTP servers (`url`, `headers`), in the
 * `mcp_servers` shape Codex and Claude Code use. Each server's tools are offered as `NAME__TOOL`;
 * servers start lazily, once, and `close()` stops them with every process they started. Kept out of
 * the core entry so a program without MCP never loads the SDK.
 *
 * @example
 * ```ts
 * import { createBuiltinTools, createToolRegistry, runAgent } from "eddy";
 * import { createMcpTools } from "eddy/mcp";
 *
 * const mcp = createMcpTools(
 *   { fs: { command: "npx", args: ["-y", "@modelcontextprotocol/server-filesystem", "."] } },
 *   { env: process.env },
 * );
 * const { tools, disabled } = createBuiltinTools();
 * try {
 *   const registry = createToolRegistry([...tools, ...(await mcp.tools())], { disabled });
 *   const run = runAgent({ provider, model, input: "What is in src/?", tools: registry });
 *   for await (const frame of run) console.log(frame.type);
 * } finally {
 *   await mcp.close();
 * }
 * ```
 *
 * @packageDocumentation
 */
export * from "../tools/mcp/index.js";
