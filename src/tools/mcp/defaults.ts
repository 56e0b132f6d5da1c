/** Behaviour-altering defaults of MCP tool sources, in one place. */

/** Defaults of `createMcpTools` and the per-server settings. */
export const MCP_DEFAULTS = {
  /**
   * How long a server gets to start and answer `initialize` and `tools/list`. Generous because
   * `npx -y some-server` may download the package first.
   * @defaultValue 30000
   */
  startupTimeoutMs: 30_000,
  /**
   * How long one `tools/call` may take before it is cancelled and the call ends `tool_timeout`.
   * @defaultValue 60000 (the SDK's own request default)
   */
  callTimeoutMs: 60_000,
  /**
   * At shutdown, how long a stdio server gets after its stdin closes, and then after SIGTERM,
   * before its whole process group is killed with SIGKILL.
   * @defaultValue 1000
   */
  closeGraceMs: 1000,
  /**
   * Bytes of a stdio server's stderr kept (the tail) to explain a failed start or a crash.
   * @defaultValue 4096
   */
  stderrTailBytes: 4096,
  /**
   * Variables a stdio server inherits from the `env` option (plus every `LC_*`), as the SDK's own
   * stdio transport does; anything else, API keys included, must be set in the server's `env`.
   * @defaultValue ["HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER", "LANG", "TMPDIR"]
   */
  inheritedEnv: ["HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER", "LANG", "TMPDIR"] as readonly string[],
  /**
   * Separator between the server name and the tool name in the name offered to the model.
   * @defaultValue "__"
   */
  nameSeparator: "__",
} as const;
