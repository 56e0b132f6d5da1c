/**
 * MCP server configuration: the `mcp_servers` shape Codex and Claude Code users already write
 * (`{NAME: {command, args?, env?, cwd?} | {url, headers?}}`), checked with messages that name the
 * bad field, and the `--mcp NAME=COMMAND…` one-off form. Nothing here reads `process.env`: the
 * caller passes the environment in.
 */
import { z } from "zod";
import { EddyError } from "../../errors.js";
import { digitsOnlyNameProblem, MCP_SERVER_ENTRY } from "../../util/digit-names.js";
import { isJsonObject } from "../../util/json.js";
import { once } from "../../util/lazy-object.js";
import { sanitizeNamePart } from "./names.js";

/** A server started as a child process that speaks MCP over stdin/stdout. */
export interface McpStdioServerConfig {
  /** Accepted for Claude Code's `.mcp.json`; implied by `command`. */
  type?: "stdio";
  /** The program to run (looked up on `PATH`). `${VAR}` references are expanded. */
  command: string;
  /** Its arguments. `${VAR}` references are expanded. @defaultValue [] */
  args?: string[];
  /**
   * Variables set for the server, on top of the few it inherits (`MCP_DEFAULTS.inheritedEnv`).
   * Values may reference the environment: `{"GITHUB_TOKEN": "${GITHUB_TOKEN}"}`.
   */
  env?: Record<string, string>;
  /** Working directory; relative to the `cwd` option. @defaultValue the `cwd` option */
  cwd?: string;
  /** Startup timeout in seconds (Codex's name). @defaultValue MCP_DEFAULTS.startupTimeoutMs / 1000 */
  startup_timeout_sec?: number;
  /** Per-call timeout in seconds (Codex's name). @defaultValue MCP_DEFAULTS.callTimeoutMs / 1000 */
  tool_timeout_sec?: number;
}

/** A server reached over MCP Streamable HTTP. */
export interface McpHttpServerConfig {
  /** Accepted for Claude Code's `.mcp.json`; implied by `url`. */
  type?: "http" | "streamable_http";
  /** The MCP endpoint, `http://` or `https://`. `${VAR}` references are expanded. */
  url: string;
  /**
   * Sent with every request. Values may reference the environment, as in Claude Code:
   * `{"Authorization": "Bearer ${GITHUB_TOKEN}"}`.
   */
  headers?: Record<string, string>;
  /** Codex's form: the name of a variable holding a token sent as `Authorization: Bearer TOKEN`. */
  bearer_token_env_var?: string;
  /** Startup timeout in seconds. @defaultValue MCP_DEFAULTS.startupTimeoutMs / 1000 */
  startup_timeout_sec?: number;
  /** Per-call timeout in seconds. @defaultValue MCP_DEFAULTS.callTimeoutMs / 1000 */
  tool_timeout_sec?: number;
}

/** One configured server. */
export type McpServerConfig = McpStdioServerConfig | McpHttpServerConfig;

/** The `mcp_servers` map: server name → configuration. */
export type McpServersConfig = Record<string, McpServerConfig>;

/** The timeouts both transports take. */
const timeouts = () => {
  const seconds = z.number().positive().max(86_400);
  return { startup_timeout_sec: seconds.optional(), tool_timeout_sec: seconds.optional() };
};

/** A stdio server's schema, built on the first `mcp_servers` checked (most runs have none). */
const stdioSchema = once(() =>
  z.strictObject({
    type: z.literal("stdio").optional(),
    command: z.string().min(1),
    args: z.array(z.string()).optional(),
    env: z.record(z.string(), z.string()).optional(),
    cwd: z.string().min(1).optional(),
    ...timeouts(),
  }),
);

/** An HTTP server's schema, built on first use. */
const httpSchema = once(() =>
  z.strictObject({
    type: z.enum(["http", "streamable_http"]).optional(),
    url: z.string().regex(/^https?:\/\//i, "must start with http:// or https://"),
    headers: z.record(z.string(), z.string()).optional(),
    bearer_token_env_var: z.string().min(1).optional(),
    ...timeouts(),
  }),
);

/**
 * Checks an `mcp_servers` value (from a config file or a library caller). Throws `invalid_config`
 * (fault: user) naming the field, e.g. `mcp_servers.github.headers.Authorization: expected string`.
 * `where` names the value in messages.
 */
export function parseMcpServers(value: unknown, where = "mcp_servers"): McpServersConfig {
  if (!isJsonObject(value)) {
    throw invalid(`${where} must be an object of NAME: {command, args?, env?, cwd?} | {url, headers?}`);
  }
  const out: McpServersConfig = {};
  for (const [name, server] of Object.entries(value)) {
    out[name] = parseMcpServer(name, server, `${where}.${name}`);
  }
  return out;
}

function parseMcpServer(name: string, value: unknown, where: string): McpServerConfig {
  if (name.trim() === "") throw invalid(`${where}: a server name must not be empty`);
  checkServerName(name, where, invalid);
  if (!isJsonObject(value)) {
    throw invalid(`${where} must be an object: {command, args?, env?, cwd?} or {url, headers?}`);
  }
  const fields = value as Record<string, unknown>;
  if (fields.type === "sse") {
    throw invalid(
      `${where}: the legacy HTTP+SSE transport is not supported; use the server's Streamable HTTP endpoint (type "http")`,
    );
  }
  const isHttp = "url" in fields;
  if (isHttp && "command" in fields)
    throw invalid(`${where}: give either command (stdio) or url (HTTP), not both`);
  if (!isHttp && !("command" in fields)) {
    throw invalid(`${where} needs either command (a stdio server) or url (a Streamable HTTP server)`);
  }
  const result = (isHttp ? httpSchema() : stdioSchema()).safeParse(value);
  if (result.success) return result.data;
  const issue = result.error.issues[0];
  const path = issue?.path.map(String).join(".") ?? "";
  const field = path === "" ? where : `${where}.${path}`;
  const message =
    issue?.code === "unrecognized_keys"
      ? `unknown key${issue.keys.length > 1 ? "s" : ""} ${issue.keys.map((k) => JSON.stringify(k)).join(", ")} (${isHttp ? "an HTTP server takes url, headers, bearer_token_env_var" : "a stdio server takes command, args, env, cwd"}, startup_timeout_sec, tool_timeout_sec)`
      : (issue?.message ?? "invalid");
  throw invalid(`${field}: ${message}`);
}

/**
 * Parses the CLI's one-off form `NAME=COMMAND ARG…` (split like a shell: single and double
 * quotes, backslash escapes; no expansion) or `NAME=URL` for a Streamable HTTP server.
 * Throws `invalid_argument` (fault: user) for a spec without `NAME=` or an unclosed quote.
 */
export function parseMcpFlag(spec: string): { name: string; config: McpServerConfig } {
  const eq = spec.indexOf("=");
  const name = eq === -1 ? "" : spec.slice(0, eq).trim();
  const rest = eq === -1 ? "" : spec.slice(eq + 1).trim();
  if (name === "" || rest === "") {
    throw new EddyError(
      "invalid_argument",
      `--mcp expects NAME=COMMAND [ARGS…] or NAME=URL (got ${JSON.stringify(spec)})`,
      { fault: "user" },
    );
  }
  checkServerName(
    name,
    `--mcp ${name}`,
    (message) => new EddyError("invalid_argument", message, { fault: "user" }),
  );
  if (/^https?:\/\//i.test(rest)) return { name, config: { url: rest } };
  const [command, ...args] = splitWords(rest, `--mcp ${name}`);
  if (command === undefined) {
    throw new EddyError("invalid_argument", `--mcp ${name}: the command is empty`, { fault: "user" });
  }
  return { name, config: args.length === 0 ? { command } : { command, args } };
}

/** Splits a command line into words the way a POSIX shell would, without any expansion. */
export function splitWords(line: string, where: string): string[] {
  const words: string[] = [];
  let word: string | undefined;
  let quote: "'" | '"' | undefined;
  const add = (text: string | undefined) => {
    word = (word ?? "") + (text ?? "");
  };
  for (let i = 0; i < line.length; i++) {
    const c = line[i] as string;
    if (quote === "'") {
      if (c === "'") quote = undefined;
      else add(c);
    } else if (quote === '"') {
      if (c === '"') quote = undefined;
      else if (c === "\\" && i + 1 < line.length && '"\\$`'.includes(line[i + 1] as string)) add(line[++i]);
      else add(c);
    } else if (c === "'" || c === '"') {
      quote = c;
      add("");
    } else if (c === "\\" && i + 1 < line.length) {
      add(line[++i]);
    } else if (/\s/.test(c)) {
      if (word !== undefined) words.push(word);
      word = undefined;
    } else {
      add(c);
    }
  }
  if (quote !== undefined) {
    throw new EddyError("invalid_argument", `${where}: unclosed ${quote} quote in ${JSON.stringify(line)}`, {
      fault: "user",
    });
  }
  if (word !== undefined) words.push(word);
  return words;
}

/**
 * Refuses `__proto__` as a server name: an object key of that name is the object's prototype, so
 * the server would vanish from any object of servers (a config file's, `createMcpTools`'s argument)
 * without a word. Other names of object members (`constructor`, `toString`) are names like any.
 * Refuses a name of digits only: an object lists such keys ("1", "20": integers) first, in numeric
 * order, whatever the order written, and the servers are started, offered and bounded in
 * configuration order (docs/pitfalls.md #121, #123; the rule is src/util/digit-names.ts, shared with
 * the config file's `agents`).
 */
function checkServerName(name: string, where: string, error: (message: string) => EddyError): void {
  if (name === "__proto__")
    throw error(
      `${where}: "__proto__" cannot name an MCP server (JavaScript reserves it); rename the server`,
    );
  const digits = digitsOnlyNameProblem(name, MCP_SERVER_ENTRY);
  if (digits !== undefined) throw error(`${where}: ${digits}`);
  // A tool's name is SERVER__TOOL, split at the first "__" (policy.ts toolPermission): a name that
  // holds "__", or starts or ends with "_", once sanitized (names.ts), would be split elsewhere and
  // its tools checked against another server, or against none.
  const part = sanitizeNamePart(name);
  if (part.includes("__") || part.startsWith("_") || part.endsWith("_"))
    throw error(
      `${where}: an MCP server's name may not hold "__" or start or end with "_" (its tools are named SERVER__TOOL); rename the server`,
    );
}

function invalid(message: string): EddyError {
  return new EddyError("invalid_config", message, { fault: "user" });
}
