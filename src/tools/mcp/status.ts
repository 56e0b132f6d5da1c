/** What eddy tells about MCP servers: their status (for `run_started.mcp_servers`) and events. */

/** Where a server is in its life. */
export type McpServerState = "idle" | "starting" | "ready" | "failed" | "exited" | "closed";

/** A server as `run_started.mcp_servers` lists it. */
export interface McpServerStatus {
  name: string;
  transport: "stdio" | "http";
  state: McpServerState;
  /** Tools offered from this server (0 unless it started). */
  tools: number;
  /** Why it failed or exited: one line, secrets redacted. */
  error?: string;
}

/** What happened to a server, for the user (each `message` is one line, secrets redacted). */
export type McpEvent =
  | { type: "server_ready"; server: string; tools: number; message: string }
  | { type: "server_failed"; server: string; message: string }
  | { type: "server_exited"; server: string; message: string }
  | { type: "tools_changed"; server: string; tools: number; message: string }
  | { type: "warning"; server: string; message: string };
