/**
 * From a server's configuration to what is needed to start it: `${VAR}` and `${VAR:-default}`
 * references expanded from the caller's environment (Claude Code's `.mcp.json` syntax), Codex's
 * `bearer_token_env_var`, timeouts in milliseconds, the stdio environment, and the secret values
 * that must be redacted wherever eddy shows or records something.
 */
import { resolve as resolvePath } from "node:path";
import { EddyError } from "../../errors.js";
import {
  basicAuthorization,
  credentialSecrets,
  describeWithCredentials,
  splitUrlCredentials,
} from "../../util/url-credentials.js";
import { secretValuesFromEnv } from "../execute.js";
import type { McpServerConfig } from "./config.js";
import { MCP_DEFAULTS } from "./defaults.js";

/** An environment: variable name → value. */
export type Environment = Readonly<Record<string, string | undefined>>;

interface ResolvedCommon {
  name: string;
  startupTimeoutMs: number;
  callTimeoutMs: number;
}

/** A stdio server ready to spawn. */
export interface ResolvedStdioServer extends ResolvedCommon {
  transport: "stdio";
  command: string;
  args: string[];
  /** The complete environment of the child (inherited allowlist plus the configured `env`). */
  env: Record<string, string>;
  cwd: string | undefined;
}

/** A Streamable HTTP server ready to connect to. */
export interface ResolvedHttpServer extends ResolvedCommon {
  transport: "http";
  /** The URL to connect to, without `user:password@` (sent as `Authorization: Basic` instead). */
  url: string;
  /** The URL as messages show it: its password masked (`http://user:***@host/mcp`). */
  shownUrl: string;
  headers: Record<string, string>;
}

/** A server with every reference expanded. Holds secrets: never log or record it. */
export type ResolvedServer = ResolvedStdioServer | ResolvedHttpServer;

/** Options of `resolveMcpServer`. */
export interface ResolveOptions {
  /** Where `${VAR}` values and the inherited variables come from. */
  env: Environment;
  /** Base for a relative `cwd`, and the `cwd` of servers that set none. */
  cwd: string | undefined;
  startupTimeoutMs: number;
  callTimeoutMs: number;
}

const REFERENCE = /\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}/g;
const MIN_TOKEN_LENGTH = 8;

/**
 * Resolves one server. Throws `invalid_config` (fault: user) for a reference to an unset variable
 * without a default, naming the field and the variable.
 */
export function resolveMcpServer(
  name: string,
  config: McpServerConfig,
  options: ResolveOptions,
): { server: ResolvedServer; secrets: string[] } {
  const substituted: Record<string, string> = {};
  const expand = (text: string, field: string) =>
    text.replace(REFERENCE, (_match, variable: string, fallback: string | undefined) => {
      const value = options.env[variable] ?? fallback;
      if (value === undefined) {
        throw new EddyError(
          "invalid_config",
          `mcp_servers.${name}.${field} refers to \${${variable}}, which is not set: set it in the environment or write \${${variable}:-default}`,
          { fault: "user", details: { server: name, variable } },
        );
      }
      if (options.env[variable] !== undefined) substituted[variable] = value;
      return value;
    });
  const expandMap = (map: Record<string, string> | undefined, field: string) =>
    Object.fromEntries(Object.entries(map ?? {}).map(([k, v]) => [k, expand(v, `${field}.${k}`)]));
  const common = {
    name,
    startupTimeoutMs: seconds(config.startup_timeout_sec) ?? options.startupTimeoutMs,
    callTimeoutMs: seconds(config.tool_timeout_sec) ?? options.callTimeoutMs,
  };

  if ("url" in config) {
    const headers = expandMap(config.headers, "headers");
    const secrets = [...secretValuesFromEnv(headers), ...tokensOf(secretValuesFromEnv(headers))];
    if (config.bearer_token_env_var !== undefined) {
      const token = options.env[config.bearer_token_env_var];
      if (token === undefined || token === "") {
        throw new EddyError(
          "invalid_config",
          `mcp_servers.${name}.bearer_token_env_var names ${config.bearer_token_env_var}, which is not set`,
          { fault: "user", details: { server: name, variable: config.bearer_token_env_var } },
        );
      }
      headers.Authorization = `Bearer ${token}`;
      secrets.push(token);
    }
    const { url, credentials } = splitUrlCredentials(expand(config.url, "url"));
    if (credentials !== undefined) {
      // Node's fetch refuses a URL with credentials: they go as a header, as for a base URL.
      if (!Object.keys(headers).some((h) => h.toLowerCase() === "authorization"))
        headers.Authorization = basicAuthorization(credentials);
      secrets.push(...credentialSecrets(credentials));
    }
    secrets.push(...substitutedSecrets(substituted));
    checkHeaders(name, headers);
    const shownUrl = describeWithCredentials(url, credentials);
    return { server: { ...common, transport: "http", url, shownUrl, headers }, secrets: unique(secrets) };
  }

  const explicit = expandMap(config.env, "env");
  const server: ResolvedStdioServer = {
    ...common,
    transport: "stdio",
    command: expand(config.command, "command"),
    args: (config.args ?? []).map((a, i) => expand(a, `args[${i}]`)),
    env: { ...inheritedEnvironment(options.env), ...explicit },
    cwd: config.cwd === undefined ? options.cwd : resolvePath(options.cwd ?? ".", expand(config.cwd, "cwd")),
  };
  const secrets = [...secretValuesFromEnv(explicit), ...substitutedSecrets(substituted)];
  return { server, secrets: unique(secrets) };
}

/** An HTTP header name: a token (RFC 9110 section 5.6.2). */
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

/**
 * Refuses a header fetch cannot send: a name that is not a token (a line break in a config key),
 * a value holding a control character (a carriage return copied with a token, `${VAR}` of a CRLF
 * file) or a character past U+00FF. Sent, each failed the server's start with fetch's own words,
 * cut at the line break ("Headers.append: \"A"). The value itself is never shown: it may be a token.
 */
function checkHeaders(name: string, headers: Readonly<Record<string, string>>): void {
  const problem = (header: string, what: string) =>
    new EddyError("invalid_config", `mcp_servers.${name}.headers.${JSON.stringify(header)}: ${what}`, {
      fault: "user",
      details: { server: name },
    });
  for (const [header, value] of Object.entries(headers)) {
    if (!HEADER_NAME.test(header))
      throw problem(
        header,
        "is not an HTTP header name (letters, digits and !#$%&'*+-.^_`|~ only): rename it",
      );
    for (let i = 0; i < value.length; i++) {
      const c = value.charCodeAt(i);
      if (c === 0x09 || (c >= 0x20 && c !== 0x7f && c <= 0xff)) continue;
      const what =
        c < 0x20 || c === 0x7f
          ? `a control character (U+${c.toString(16).toUpperCase().padStart(4, "0")})`
          : "a character past U+00FF";
      throw problem(
        header,
        `its value holds ${what} at position ${i + 1}, which an HTTP header cannot carry: fix the value (or the variable it comes from)`,
      );
    }
  }
}

/** The variables every stdio server inherits: `MCP_DEFAULTS.inheritedEnv` and `LC_*`. */
export function inheritedEnvironment(env: Environment): Record<string, string> {
  const out: Record<string, string> = {};
  const names = new Set(MCP_DEFAULTS.inheritedEnv);
  for (const name of Object.keys(env).sort()) {
    const value = env[name];
    // A value starting with "()" is an exported bash function: never pass those on (the SDK's rule).
    if (value === undefined || value.startsWith("()")) continue;
    if (names.has(name) || name.startsWith("LC_")) out[name] = value;
  }
  return out;
}

/**
 * Every value a `${VAR}` took from the environment, whatever the variable's name: a URL's
 * `?access=${GH_PAT}` or an argument `${MY_KEY}` is as secret as a header token. Values shorter
 * than `MIN_TOKEN_LENGTH` are left out: masking `1` or `true` would shred every output; so are the
 * variables every process has and shows anyway (`${HOME}/bin/server.js`: masking the home folder
 * would turn every path under it in every output into `***`).
 */
function substitutedSecrets(substituted: Readonly<Record<string, string>>): string[] {
  return Object.entries(substituted)
    .filter(([name, value]) => value.length >= MIN_TOKEN_LENGTH && !isPublicVariable(name))
    .map(([, value]) => value);
}

/** Variables that name the process's surroundings, not credentials. */
const PUBLIC_VARIABLES = new Set([
  "HOME",
  "USER",
  "LOGNAME",
  "PWD",
  "OLDPWD",
  "PATH",
  "SHELL",
  "TMPDIR",
  "TMP",
  "TEMP",
  "LANG",
  "TERM",
  "HOSTNAME",
]);

function isPublicVariable(name: string): boolean {
  return PUBLIC_VARIABLES.has(name) || name.startsWith("XDG_") || name.startsWith("LC_");
}

/** `Bearer abc…` → also `abc…`, so the token alone is redacted wherever it shows up. */
function tokensOf(values: readonly string[]): string[] {
  return values.flatMap((v) => v.split(/\s+/).filter((t) => t.length >= MIN_TOKEN_LENGTH && t !== v));
}

function seconds(value: number | undefined): number | undefined {
  return value === undefined ? undefined : Math.round(value * 1000);
}

function unique(values: readonly string[]): string[] {
  return [...new Set(values)].sort((a, b) => b.length - a.length);
}
