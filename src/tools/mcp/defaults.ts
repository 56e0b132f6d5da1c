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
   * Most tools taken from one server: a listing past it is cut to its first `maxTools`, with a
   * warning. Each tool's schema is compiled as it is taken (~1 ms), so a server listing 100,000
   * tools held the run (and Ctrl-C) for minutes (docs/pitfalls.md #103).
   * @defaultValue 1000
   */
  maxTools: 1000,
  /**
   * Most UTF-8 bytes of a tool's description (and title) offered to the model: a longer one is cut
   * with a marker, with one warning per listing. Every request carries every tool's description,
   * and a server's message may be 10 MiB (docs/pitfalls.md #106).
   * @defaultValue 8192
   */
  maxDescriptionBytes: 8 * 1024,
  /**
   * Most bytes of a tool's input schema, serialized: a larger one is offered open (`{type:
   * "object", additionalProperties: true}`; the server checks the arguments), with one warning per
   * listing (docs/pitfalls.md #106).
   * @defaultValue 65536
   */
  maxSchemaBytes: 64 * 1024,
  /**
   * Most bytes of the tools one server offers, each serialized as bounded above (name, description,
   * title, input schema): the tools past it, in the server's order, are left out whole, with one
   * warning per listing. Per tool the bounds above still let `maxTools` tools take ~72 MB of every
   * request (docs/pitfalls.md #111).
   * @defaultValue 1048576
   */
  maxServerToolsBytes: 1024 * 1024,
  /**
   * Most bytes of the tools all the servers of a run offer together, each counted as for
   * `maxServerToolsBytes`: filled in configuration order, the tools past it left out whole, with
   * one warning. Each server's own bound still let 20 servers put 20 MiB into every request
   * (docs/pitfalls.md #121).
   * @defaultValue 4194304
   */
  maxTotalToolsBytes: 4 * 1024 * 1024,
  /**
   * Separator between the server name and the tool name in the name offered to the model.
   * @defaultValue "__"
   */
  nameSeparator: "__",
} as const;
