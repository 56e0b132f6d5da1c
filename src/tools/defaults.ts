/**
 * Behaviour-altering defaults of the tools layer, in one place. The CLI and the
 * library both read these; every per-call option that overrides one says so in its doc comment.
 */

/** Defaults and hard limits for tool execution and the built-in tools. */
export const TOOL_DEFAULTS = {
  /**
   * Per-call timeout for a tool that declares none of its own, when the run sets none
   * (`executeToolCall`'s `timeoutMs`, the loop's `toolTimeoutMs`). Every built-in tool but `shell`
   * (which has its own, from `timeout_ms`) and every MCP or custom tool without `timeoutMs` gets it.
   * @defaultValue 120000 (2 minutes)
   */
  timeoutMs: 120_000,
  /**
   * Cap on the whole model-facing output string, in UTF-8 bytes (docs/decisions.md #7: 64 KiB).
   * @defaultValue 65536
   */
  outputCapBytes: 64 * 1024,
  /**
   * Smallest accepted `outputCapBytes`: below this the envelope and the truncation notes no longer fit.
   * @defaultValue 1024
   */
  minOutputCapBytes: 1024,
  /**
   * Raw `arguments` strings longer than this (in UTF-16 code units) are refused without parsing.
   * @defaultValue 16777216 (16 Mi)
   */
  maxArgumentsChars: 16 * 1024 * 1024,
  /**
   * How much of bad raw arguments an error message quotes.
   * @defaultValue 200
   */
  argumentsPreviewChars: 200,
  /**
   * Longest thrown-error message passed to the model (the first line only, then cut).
   * @defaultValue 500
   */
  errorMessageMaxChars: 500,
  /**
   * `read_file` `max_bytes` when the model gives none. Kept below `outputCapBytes` so a plain read
   * ends on a line boundary with a "continue at start_line=N" note instead of a head+tail cut.
   * @defaultValue 49152 (48 KiB)
   */
  readMaxBytes: 48 * 1024,
  /**
   * Largest `max_bytes` a `read_file` call may ask for.
   * @defaultValue 1048576 (1 MiB)
   */
  readMaxBytesLimit: 1024 * 1024,
  /**
   * Bytes inspected for a NUL byte to decide that a file is binary (git's heuristic).
   * @defaultValue 8192
   */
  binarySniffBytes: 8 * 1024,
  /**
   * `list_dir` `max_depth` when the call is recursive and gives none.
   * @defaultValue 8
   */
  listMaxDepth: 8,
  /**
   * Most entries `list_dir` prints; beyond this it stops walking and says so.
   * @defaultValue 1000
   */
  listMaxEntries: 1000,
  /**
   * `grep` `max_results` when the model gives none.
   * @defaultValue 200
   */
  grepMaxResults: 200,
  /**
   * Largest `max_results` a `grep` call may ask for.
   * @defaultValue 5000
   */
  grepMaxResultsLimit: 5000,
  /**
   * Longest `grep` pattern, in characters: compiling is linear in the pattern's size, and the
   * pattern is compiled on the run's thread to refuse a bad one early.
   * @defaultValue 10000
   */
  grepMaxPatternChars: 10_000,
  /**
   * Files larger than this are skipped by `grep` (and counted in its note).
   * @defaultValue 8388608 (8 MiB)
   */
  grepMaxFileBytes: 8 * 1024 * 1024,
  /**
   * Longest matched line `grep` prints, in characters; longer lines are cut with "…".
   * @defaultValue 400
   */
  grepMaxLineChars: 400,
  /**
   * Directory names that directory walks (`list_dir` recursion, `grep`) list but do not enter unless
   * the call names them as its `path` or sets `include_ignored` (for trees whose `.gitignore` does
   * not exclude them). `.git` is always excluded by the ignore rules; hidden entries are skipped
   * separately.
   * @defaultValue ["node_modules"]
   */
  skipDirs: ["node_modules"] as readonly string[],
  /**
   * `shell` `timeout_ms` when the model gives none.
   * @defaultValue 120000
   */
  shellTimeoutMs: 120_000,
  /**
   * Largest `timeout_ms` a `shell` call may ask for.
   * @defaultValue 600000 (10 minutes)
   */
  shellMaxTimeoutMs: 600_000,
  /**
   * Bytes of each shell stream (stdout, stderr) kept while it runs: half from the start, half from
   * the end; the middle is dropped as it streams, so memory stays bounded.
   * @defaultValue 1048576 (1 MiB)
   */
  shellStreamCapBytes: 1024 * 1024,
  /**
   * After a timeout or cancellation, how long a shell's process group gets between SIGTERM and SIGKILL.
   * @defaultValue 1000
   */
  shellKillGraceMs: 1000,
  /**
   * Environment variables a shell command inherits (plus every `LC_*`). Anything else, API keys
   * included, is dropped unless configured through `shellEnv`.
   * @defaultValue ["PATH", "HOME", "LANG", "TERM", "USER", "SHELL", "TMPDIR"]
   */
  shellEnvAllowlist: ["PATH", "HOME", "LANG", "TERM", "USER", "SHELL", "TMPDIR"] as readonly string[],
} as const;
