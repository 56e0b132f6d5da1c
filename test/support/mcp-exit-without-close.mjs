/**
 * Starts an MCP test server through createMcpTools, has it start a grandchild, prints both pids
 * and exits *without* calling close(): the process-exit safety net must still kill them.
 *
 *   node --import tsx mcp-exit-without-close.mjs MCP_TOOLS_MODULE MARKER
 */
import { MCP_TEST_SERVER } from "./mcp.ts";

const [modulePath, marker] = process.argv.slice(2);
const { createMcpTools } = await import(modulePath);
const mcp = createMcpTools(
  { t: { command: process.execPath, args: [MCP_TEST_SERVER, "--marker", marker] } },
  { env: { PATH: process.env.PATH } },
);
const tools = await mcp.tools();
const call = (name) =>
  tools
    .find((t) => t.name === name)
    .execute({}, { signal: new AbortController().signal, workspace: ".", callId: "c" });
const pid = (await call("t__pid")).stdout;
const grandchild = (await call("t__spawn_grandchild")).stdout;
process.stdout.write(`${pid} ${grandchild}\n`);
process.exit(0);
