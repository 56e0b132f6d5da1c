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

/**
 * A server's tools as the model is offered them, said when a server is ready (`server_ready`) or
 * has listed its tools again (`tools_changed`): at the `tools()` that offers them, when the bounds
 * of all the run's servers and the name clashes are known (docs/pitfalls.md #121, #124).
 */
export interface McpToolsEvent {
  type: "server_ready" | "tools_changed";
  server: string;
  /** The server's tools offered to the model. */
  tools: number;
  /**
   * Tools the server listed that are not offered (past `MCP_DEFAULTS.maxTools` of the pages read,
   * past the byte bounds of one server or of all, or kept out by a name clash); absent when none.
   * The warnings name them.
   */
  tools_left_out?: number;
  message: string;
}

/** What happened to a server, for the user (each `message` is one line, secrets redacted). */
export type McpEvent =
  | (McpToolsEvent & { type: "server_ready" })
  | { type: "server_failed"; server: string; message: string }
  | { type: "server_exited"; server: string; message: string }
  | (McpToolsEvent & { type: "tools_changed" })
  | { type: "warning"; server: string; message: string };
