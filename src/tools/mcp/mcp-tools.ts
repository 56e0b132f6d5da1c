/**
 * MCP servers as a tool source: `createMcpTools(servers, options)` checks the configuration at
 * once, starts the servers on first use (`tools()`: the registry needs the declarations before the
 * first request, so that is "lazily, once"), offers each server tool as `SERVER__TOOL`
 * (`./names.ts`) with the server's description and input schema, and shuts everything down on
 * `close()`. The tool list follows `tools/list_changed`: `revision` moves and `tools()` returns
 * the new list, for the loop to rebuild its registry between turns.
 */
import type { Tool } from "@modelcontextprotocol/sdk/types.js";
import { EddyError } from "../../errors.js";
import { untilAborted } from "../../util/abort.js";
import { nestsDeeperThan } from "../../util/json.js";
import { compileSchema } from "../../util/schema.js";
import { EDDY_VERSION } from "../../version.js";
import type { JsonSchema, ToolDefinition } from "../tool.js";
import { parseMcpServers } from "./config.js";
import { createMcpConnection, type McpConnection } from "./connection.js";
import { MCP_DEFAULTS } from "./defaults.js";
import { mcpToolName } from "./names.js";
import { MCP_TOOL_EFFECTS } from "./offline.js";
import { type Environment, resolveMcpServer } from "./resolve.js";
import type { McpEvent, McpServerStatus, McpToolsEvent } from "./status.js";
import { acrossWarning, boundedAcross } from "./tool-size.js";

/** Options of `createMcpTools`. */
export interface McpToolsOptions {
  /**
   * The environment `${VAR}` references and `bearer_token_env_var` are read from, and the source of
   * the few variables stdio servers inherit (`MCP_DEFAULTS.inheritedEnv`). The library never reads
   * `process.env` itself: the CLI passes it.
   * @defaultValue {} (no variables: servers get only their configured `env`)
   */
  env?: Environment;
  /** Base for relative `cwd`s and the working directory of stdio servers without one. @defaultValue the process's */
  cwd?: string;
  /** @defaultValue MCP_DEFAULTS.startupTimeoutMs (a server's `startup_timeout_sec` wins) */
  startupTimeoutMs?: number;
  /** @defaultValue MCP_DEFAULTS.callTimeoutMs (a server's `tool_timeout_sec` wins) */
  callTimeoutMs?: number;
  /** @defaultValue MCP_DEFAULTS.closeGraceMs */
  closeGraceMs?: number;
  /**
   * Told what happens to servers: ready, failed to start, exited mid-run, tools changed, warnings.
   * Every `message` is one line with secrets redacted, ready to print. A server's `server_ready`
   * and `tools_changed` are said by the `tools()` that offers its tools, counting those offered and
   * those left out (docs/pitfalls.md #124).
   * @defaultValue none
   */
  onEvent?: (event: McpEvent) => void;
  /** How eddy introduces itself in `initialize`. @defaultValue {name: "eddy", version: EDDY_VERSION} */
  clientInfo?: { name: string; version: string };
}

/** A tool offered from an MCP server (serializable: for a tape header or a listing). */
export interface McpToolInfo {
  /** The model-facing name, `SERVER__TOOL`. */
  name: string;
  server: string;
  /** The tool's name on the server. */
  tool: string;
  description: string;
  parameters: JsonSchema;
  /**
   * The server's `readOnlyHint` annotation, as the server gave it: shown and recorded, and it
   * grants nothing (the tool still needs approval and is not run again on resume: `MCP_TOOL_EFFECTS`).
   */
  readOnly: boolean;
}

/** The MCP tool source of a run (or of a process, for library users). */
export interface McpTools {
  /**
   * Starts every server on the first call (concurrently; each within its startup timeout), then
   * returns the definitions for `createToolRegistry`: the same objects until a server changes its
   * tools. A tool list being re-read after a `tools/list_changed` is waited for, so a notification
   * sent during a call (before its result) is reflected when the call's turn ends. A server that
   * fails to start contributes no tools (see `status()` and `onEvent`).
   * Rejects with `invalid_config` when two tools would be offered under one name (at the first
   * listing; a later clash keeps the previous list and reports a warning), after `close()`, and
   * with `signal`'s reason as soon as it aborts (the servers' starts and listings go on, bounded
   * by their timeouts, until `close()`).
   */
  tools(options?: { signal?: AbortSignal }): Promise<ToolDefinition[]>;
  /** The offered tools as data (after `tools()`). */
  toolInfo(): McpToolInfo[];
  /** Every server, in configuration order: name, transport, state, tool count, error. */
  status(): McpServerStatus[];
  /** Moves each time a server's tool list changes: compare it between turns, then call `tools()`. */
  readonly revision: number;
  /**
   * Secret values taken from the environment or configuration (header tokens, secret-looking
   * variables): add them to the redaction list of frames, tapes and logs.
   */
  readonly secrets: readonly string[];
  /**
   * Shuts every server down at once (stdio: its whole process group), also one still starting.
   * With a `deadline` (a `performance.now()` time) each server's close is done by then: its
   * grace periods shrink to fit, ending with SIGKILL. Idempotent.
   */
  close(deadline?: number): Promise<void>;
}

/**
 * How deep a server's input schema may nest (JSON levels): far beyond what a hand-written or
 * generated schema needs, and shallow enough that compiling it, the request body, the tape header
 * and its replay never come near the stack's limit (docs/pitfalls.md #74).
 */
const MAX_SCHEMA_DEPTH = 100;

/**
 * Margin between the MCP call timeout and the timeout the executor enforces, so the MCP timeout
 * fires first (the server is told the request is cancelled and the model gets its message).
 */
const EXECUTOR_MARGIN_MS = 1000;

/**
 * Creates the MCP tool source. Checks `servers` (the `mcp_servers` shape) and expands `${VAR}`
 * references at once: throws `invalid_config` (fault: user) naming the field for a bad entry or
 * an unset variable. Starts nothing.
 *
 * @example
 * const mcp = createMcpTools({ fs: { command: "npx", args: ["-y", "@modelcontextprotocol/server-filesystem", "."] } }, { env: process.env });
 * try {
 *   const run = runAgent({ provider, model, input, tools: [...builtins, ...(await mcp.tools())] });
 *   // …
 * } finally {
 *   await mcp.close();
 * }
 */
export function createMcpTools(servers: unknown, options: McpToolsOptions = {}): McpTools {
  const config = parseMcpServers(servers);
  const onEvent = options.onEvent ?? (() => {});
  const { resolved, allSecrets } = resolveAll(config, options);

  let revision = 0;
  let started: Promise<void> | undefined;
  let closed: Promise<void> | undefined;
  let lastGood: Entry[] | undefined;
  const total = new TotalBound(onEvent);
  const listings = new Listings(onEvent);

  const connections = resolved.map((server) =>
    createMcpConnection(server, {
      clientInfo: options.clientInfo ?? { name: "eddy", version: EDDY_VERSION },
      closeGraceMs: options.closeGraceMs ?? MCP_DEFAULTS.closeGraceMs,
      stderrTailBytes: MCP_DEFAULTS.stderrTailBytes,
      secrets: allSecrets,
      onEvent,
      onListed: (kind) => {
        if (kind === "tools_changed") revision++;
        listings.listed(server.name, kind);
      },
    }),
  );
  const entries = new EntryCache(new Map(resolved.map((s) => [s.name, s.callTimeoutMs])), onEvent);

  function current(): Entry[] {
    // All servers' tools together, in configuration order (docs/pitfalls.md #121).
    const kept = total.keep(connections);
    const all = connections.flatMap((c, i) => entries.of(c, kept[i] ?? 0));
    const clash = findClash(all);
    if (clash === undefined) {
      lastGood = all;
      listings.say(connections, all);
      return all;
    }
    if (lastGood === undefined) throw new EddyError("invalid_config", clash.message, { fault: "user" });
    onEvent({
      type: "warning",
      server: clash.server,
      message: `${clash.message}; keeping the previous tools`,
    });
    listings.say(connections, lastGood);
    return lastGood;
  }

  return {
    async tools(o = {}) {
      if (closed !== undefined) {
        throw new EddyError(
          "invalid_argument",
          "the MCP tools were closed: create them again to use the servers",
        );
      }
      started ??= Promise.all(connections.map((c) => c.start())).then(() => {});
      await untilAborted(started, o.signal);
      await untilAborted(Promise.all(connections.map((c) => c.settled())), o.signal);
      return current().map((e) => e.definition);
    },
    toolInfo: () => (lastGood ?? []).map((e) => e.info),
    status: () => connections.map((c) => total.status(c.status())),
    get revision() {
      return revision;
    },
    secrets: allSecrets,
    close(deadline) {
      closed ??= Promise.all(connections.map((c) => c.close(deadline))).then(() => {});
      return closed;
    },
  };
}

/** Every server resolved against the environment, and their secrets (deduplicated, longest first). */
function resolveAll(config: ReturnType<typeof parseMcpServers>, options: McpToolsOptions) {
  const secrets: string[] = [];
  const resolved = Object.entries(config).map(([name, server]) => {
    const r = resolveMcpServer(name, server, {
      env: options.env ?? {},
      cwd: options.cwd,
      startupTimeoutMs: options.startupTimeoutMs ?? MCP_DEFAULTS.startupTimeoutMs,
      callTimeoutMs: options.callTimeoutMs ?? MCP_DEFAULTS.callTimeoutMs,
    });
    secrets.push(...r.secrets);
    return r.server;
  });
  return { resolved, allSecrets: [...new Set(secrets)].sort((a, b) => b.length - a.length) };
}

/**
 * The run's bound on the tools of all its servers together (`boundedAcross`, docs/pitfalls.md
 * #121): how many of each server's tools are offered, the warning said when that changes.
 */
class TotalBound {
  private lastWarning: string | undefined;
  /** How many tools are offered of each server the bound leaves tools out of. */
  private kept = new Map<string, number>();
  private readonly onEvent: (event: McpEvent) => void;

  constructor(onEvent: (event: McpEvent) => void) {
    this.onEvent = onEvent;
  }

  /** How many of each connection's listed tools (its first ones) are offered. */
  keep(connections: readonly McpConnection[]): number[] {
    const bounded = boundedAcross(connections.map((c) => ({ server: c.name, tools: c.tools() })));
    const warning = acrossWarning(bounded);
    if (warning !== undefined && warning !== this.lastWarning)
      this.onEvent({ type: "warning", server: bounded.left[0]?.server ?? "", message: warning });
    this.lastWarning = warning;
    const kept = new Map(connections.map((c, i) => [c.name, bounded.kept[i] ?? 0]));
    this.kept = new Map(bounded.left.map(({ server }) => [server, kept.get(server) ?? 0]));
    return bounded.kept;
  }

  /** A server's status, its tool count as offered. */
  status(s: McpServerStatus): McpServerStatus {
    const kept = this.kept.get(s.name);
    return kept !== undefined && kept < s.tools ? { ...s, tools: kept } : s;
  }
}

/**
 * The servers that listed their tools since the run's tools were last built, and what is said of
 * each once they are: a connection's listing is not what is offered, as the bound of all servers
 * (`TotalBound`, filled in configuration order, so a server listed first may be cut by one that
 * starts later) and a name clash decide that when the tools are built (docs/pitfalls.md #124).
 */
class Listings {
  /** By server: `server_ready` when it has not been said yet, else `tools_changed`. */
  private readonly pending = new Map<string, McpToolsEvent["type"]>();
  private readonly onEvent: (event: McpEvent) => void;

  constructor(onEvent: (event: McpEvent) => void) {
    this.onEvent = onEvent;
  }

  /** A server listed its tools: its first listing, or one after `tools/list_changed`. */
  listed(server: string, kind: McpToolsEvent["type"]): void {
    if (this.pending.get(server) !== "server_ready") this.pending.set(server, kind);
  }

  /** Says each pending server's event, in configuration order, with the tools `offered` now. */
  say(connections: readonly McpConnection[], offered: readonly Entry[]): void {
    if (this.pending.size === 0) return;
    for (const c of connections) {
      const type = this.pending.get(c.name);
      if (type === undefined) continue;
      const mine = offered.filter((e) => e.info.server === c.name);
      const names = new Set(mine.map((e) => e.info.tool));
      const leftOut = c.tools().filter((t) => !names.has(t.name)).length + c.leftOut();
      this.onEvent(toolsEvent(type, c.name, mine.length, leftOut));
    }
    this.pending.clear();
  }
}

/** A `server_ready` or `tools_changed` event: the tools offered, and how many listed are left out. */
function toolsEvent(type: McpToolsEvent["type"], server: string, tools: number, leftOut: number): McpEvent {
  const count = type === "server_ready" ? `${tools} tool${tools === 1 ? "" : "s"}` : `${tools} now`;
  const left = leftOut > 0 ? `; ${leftOut} more it lists ${leftOut === 1 ? "is" : "are"} left out` : "";
  const label = `MCP server "${server}"`;
  const message =
    type === "server_ready"
      ? `${label} is ready (${count}${left})`
      : `${label} changed its tools (${count}${left})`;
  return leftOut > 0
    ? { type, server, tools, tools_left_out: leftOut, message }
    : { type, server, tools, message };
}

/**
 * Entries by connection and tool name, each with the JSON of the tool it was built from: after
 * a `tools/list_changed`, unchanged tools keep their definition objects (and compiled schemas).
 */
class EntryCache {
  private readonly built = new Map<
    McpConnection,
    { from: readonly Tool[]; entries: Entry[]; byTool: Map<string, Built> }
  >();

  /** Each server's call timeout, by server name. */
  private readonly callTimeout: ReadonlyMap<string, number>;
  private readonly onEvent: (event: McpEvent) => void;

  constructor(callTimeout: ReadonlyMap<string, number>, onEvent: (event: McpEvent) => void) {
    this.callTimeout = callTimeout;
    this.onEvent = onEvent;
  }

  /** The entries of the first `keep` tools `connection` lists now (the others are not built). */
  of(connection: McpConnection, keep: number): Entry[] {
    const all = connection.tools();
    const cached = this.built.get(connection);
    if (cached !== undefined && cached.from === all && cached.entries.length === keep) return cached.entries;
    const listed = all.slice(0, keep);
    const timeoutMs =
      (this.callTimeout.get(connection.name) ?? MCP_DEFAULTS.callTimeoutMs) + EXECUTOR_MARGIN_MS;
    const byTool = new Map<string, Built>();
    const entries = listed.map((tool) => {
      // A tool nested deeper than the stack allows to walk (docs/pitfalls.md #74) has no JSON to
      // compare: it is built again each time (its schema is replaced, see usableSchema).
      const json = nestsDeeperThan(tool) ? undefined : JSON.stringify(tool);
      const previous = cached?.byTool.get(tool.name);
      const entry =
        json !== undefined && previous?.json === json
          ? previous.entry
          : toEntry(connection, tool, timeoutMs, this.onEvent);
      byTool.set(tool.name, { json, entry });
      return entry;
    });
    this.built.set(connection, { from: all, entries, byTool });
    return entries;
  }
}

interface Entry {
  definition: ToolDefinition;
  info: McpToolInfo;
}

interface Built {
  json: string | undefined;
  entry: Entry;
}

function toEntry(
  connection: McpConnection,
  tool: Tool,
  timeoutMs: number,
  onEvent: (event: McpEvent) => void,
): Entry {
  const server = connection.name;
  const name = mcpToolName(server, tool.name);
  const description = tool.description ?? tool.title ?? `${tool.name} (from MCP server ${server})`;
  const parameters = usableSchema(server, tool, onEvent);
  const readOnly = tool.annotations?.readOnlyHint === true;
  const definition: ToolDefinition = {
    name,
    description,
    parameters,
    strict: false,
    // Whatever the server's annotations say: they are untrusted data (MCP_TOOL_EFFECTS).
    ...MCP_TOOL_EFFECTS,
    timeoutMs,
    execute: (args, context) => connection.call(tool.name, name, args, context.signal),
  };
  return { definition, info: { name, server, tool: tool.name, description, parameters, readOnly } };
}

/**
 * The server's input schema when eddy can validate with it (it is compiled here, so the registry
 * finds it compiled, its patterns on the linear-time engine: the server is not trusted); otherwise
 * an open object schema and a warning: a server's odd schema (an older draft's tuple `items`, a bad
 * `$ref`, a pattern with lookahead) must not keep the run from starting. The server still checks
 * the arguments itself.
 */
function usableSchema(server: string, tool: Tool, onEvent: (event: McpEvent) => void): JsonSchema {
  const schema = tool.inputSchema as JsonSchema;
  try {
    if (nestsDeeperThan(schema, MAX_SCHEMA_DEPTH)) {
      throw new Error(`it nests deeper than ${MAX_SCHEMA_DEPTH} levels of arrays and objects`);
    }
    compileSchema(`MCP tool "${tool.name}"`, schema, { untrusted: true });
    return schema;
  } catch (error) {
    // A RangeError (the stack) included: a server's schema must not end the run.
    const reason = error instanceof Error ? error.message.split("\n", 1)[0] : "unusable";
    onEvent({
      type: "warning",
      server,
      message: `MCP server "${server}": the input schema of tool "${tool.name}" cannot be used (${reason}); it is offered with an open schema and the server checks the arguments`,
    });
    return { type: "object", additionalProperties: true };
  }
}

function findClash(entries: readonly Entry[]): { message: string; server: string } | undefined {
  const seen = new Map<string, McpToolInfo>();
  for (const { info } of entries) {
    const first = seen.get(info.name);
    if (first !== undefined) {
      const what = (i: McpToolInfo) => `tool "${i.tool}" of MCP server "${i.server}"`;
      if (first.server === info.server && first.tool === info.tool)
        return {
          server: info.server,
          message: `MCP server "${info.server}" lists two tools named "${info.tool}": remove the server from mcp_servers or ask its author to fix its tool list`,
        };
      const fix =
        first.server === info.server
          ? "their names differ only in characters a function name cannot hold; remove the server from mcp_servers or ask its author to rename one"
          : "rename one of the servers";
      return {
        server: info.server,
        message: `${what(first)} and ${what(info)} would both be offered as "${info.name}": ${fix}`,
      };
    }
    seen.set(info.name, info);
  }
  return undefined;
}
