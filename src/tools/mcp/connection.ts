/**
 * One MCP server's lifecycle with the official SDK client: start (spawn or connect, `initialize`,
 * `tools/list` with pagination) within a startup timeout, calls with a timeout and the run's
 * abort signal, `notifications/tools/list_changed` (the list is re-read), and close. Every failure
 * becomes a state and a one-line, secret-free message; nothing here throws at the caller or waits
 * without a bound.
 */
import { stat } from "node:fs/promises";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import { McpError, type Tool, ToolListChangedNotificationSchema } from "@modelcontextprotocol/sdk/types.js";
import type { jsonSchemaValidator } from "@modelcontextprotocol/sdk/validation/types.js";
import { describeError } from "../../errors.js";
import { redactSecrets } from "../../util/redact.js";
import { exitCodeFor } from "../execute.js";
import { type ToolErrorCode, type ToolResult, toolResult } from "../tool.js";
import { shortenText } from "../utf8.js";
import { cappedFetch } from "./capped-fetch.js";
import { MCP_DEFAULTS } from "./defaults.js";
import {
  describeExit,
  describeNetworkError,
  describeStartFailure,
  StartError,
  schemaProblem,
} from "./failures.js";
import type { ResolvedServer } from "./resolve.js";
import { type McpCallResult, mcpResultToToolResult } from "./result.js";
import type { McpEvent, McpServerState, McpServerStatus } from "./status.js";
import { createStdioTransport, type StdioTransport, within } from "./stdio-transport.js";
import { boundedTools, boundsWarning } from "./tool-size.js";

/** Settings a connection needs beyond its resolved server. */
export interface ConnectionOptions {
  clientInfo: { name: string; version: string };
  closeGraceMs: number;
  stderrTailBytes: number;
  /** Values to redact from every message. */
  secrets: readonly string[];
  onEvent: (event: McpEvent) => void;
  /**
   * Called after a listing replaced the tool list: the first (`server_ready`) or one after
   * `tools/list_changed` (`tools_changed`). The caller says it, once it knows which of the tools
   * are offered (mcp-tools.ts, docs/pitfalls.md #124).
   */
  onListed: (kind: "server_ready" | "tools_changed") => void;
}

/** One server. */
export interface McpConnection {
  readonly name: string;
  status(): McpServerStatus;
  /** Starts the server once; resolves when it is ready or has failed (never rejects). */
  start(): Promise<void>;
  /** The server's tools as last listed (empty unless started), within the bounds of tool-size.ts. */
  tools(): readonly Tool[];
  /**
   * How many tools of the last listing are not in `tools()`: past `MCP_DEFAULTS.maxTools` (of the
   * pages read: a listing past it is not read to its end) or past the server's byte bound.
   */
  leftOut(): number;
  /**
   * Starts a turn: resolves once no `tools/list_changed` refresh is in flight (never rejects). The
   * server may have its tools listed `MAX_LISTINGS_PER_TURN` times a turn; a change announced
   * past that is listed here, at the next turn's start.
   */
  settled(): Promise<void>;
  /** Calls `tool`; every failure is an `ok:false` result. `exposed` is the model-facing name. */
  call(tool: string, exposed: string, args: unknown, signal: AbortSignal): Promise<ToolResult>;
  /**
   * Shuts the server down (stdio: its whole process group), by `deadline` when one is given (a
   * `performance.now()` time: the grace periods shrink to fit). Idempotent.
   */
  close(deadline?: number): Promise<void>;
}

const MAX_PAGES = 100;
/**
 * How many times a server's tools are listed after `tools/list_changed` within one turn: a server
 * that announces a change during every listing would otherwise be listed for ever.
 */
export const MAX_LISTINGS_PER_TURN = 3;
/**
 * A call's timeout is eddy's own timer; the SDK's, required, is set this much later so that it
 * never fires first.
 */
const SDK_TIMEOUT_MARGIN_MS = 1000;
/** How long the liveness ping after an HTTP transport error may take. */
const PROBE_TIMEOUT_MS = 5000;

/**
 * The SDK client checks a tool's `structuredContent` against its `outputSchema` with ajv and
 * native RegExp: a server's pattern such as `^(a+)+$` with a crafted value would stall the
 * process for minutes, out of reach of the call's timeout. eddy hands results to the model as
 * data and never relies on their shape, so it checks nothing there.
 */
const ACCEPT_ANY_OUTPUT: jsonSchemaValidator = {
  getValidator: () => (input: unknown) => ({ valid: true, data: input as never, errorMessage: undefined }),
};

/** Creates a connection; nothing starts until `start()`. */
export function createMcpConnection(server: ResolvedServer, options: ConnectionOptions): McpConnection {
  return new ServerConnection(server, options);
}

/** One server's connection: its state, its SDK client and transport, the calls in flight. */
class ServerConnection implements McpConnection {
  readonly name: string;
  private readonly server: ResolvedServer;
  private readonly options: ConnectionOptions;
  private readonly label: string;
  private state: McpServerState = "idle";
  private stateError: string | undefined;
  private listed: readonly Tool[] = [];
  private listedLeftOut = 0;
  private client: Client | undefined;
  private transport: Transport | undefined;
  private starting: Promise<void> | undefined;
  private closing: Promise<void> | undefined;
  private refreshing: Promise<void> | undefined;
  private refreshAgain = false;
  /** Listings left this turn (`MAX_LISTINGS_PER_TURN`). */
  private listingsLeft = MAX_LISTINGS_PER_TURN;
  /** A change announced once the turn had no listing left: listed at the next turn's start. */
  private deferred = false;
  /** Ends the calls in flight early (HTTP: the server became unreachable). */
  private readonly inFlight = new Set<(reason: string) => void>();
  private probing = false;
  /** The SDK client's connection closed (its `onclose`). */
  private clientClosed = false;
  /** Why eddy stopped an HTTP server mid-run (capped-fetch.ts), once it did. */
  private dropped: string | undefined;

  constructor(server: ResolvedServer, options: ConnectionOptions) {
    this.name = server.name;
    this.server = server;
    this.options = options;
    this.label = `MCP server "${server.name}"`;
  }

  status(): McpServerStatus {
    const status: McpServerStatus = {
      name: this.name,
      transport: this.server.transport,
      state: this.state,
      tools: this.listed.length,
    };
    if (this.stateError !== undefined) status.error = this.stateError;
    return status;
  }

  start(): Promise<void> {
    if (this.closing !== undefined) return Promise.resolve();
    this.starting ??= this.doStart();
    return this.starting;
  }

  tools(): readonly Tool[] {
    return this.listed;
  }

  leftOut(): number {
    return this.listedLeftOut;
  }

  settled(): Promise<void> {
    // A refresh going on from the last turn keeps its count: it is this turn's first.
    if (this.refreshing === undefined) this.listingsLeft = MAX_LISTINGS_PER_TURN;
    if (this.deferred) {
      this.deferred = false;
      void this.refresh();
    }
    return this.refreshing ?? Promise.resolve();
  }

  async call(tool: string, exposed: string, args: unknown, signal: AbortSignal): Promise<ToolResult> {
    const c = this.client;
    if (this.state !== "ready" || c === undefined)
      return this.failure("mcp_server_unavailable", this.unavailable());
    const controller = new AbortController();
    let onLost: (reason: string) => void = () => {};
    const lost = new Promise<string>((resolve) => {
      onLost = resolve;
    });
    this.inFlight.add(onLost);
    let answered = false;
    try {
      return await Promise.race([
        this.request(
          c,
          { tool, exposed, args },
          AbortSignal.any([signal, controller.signal]),
          signal,
        ).finally(() => {
          answered = true;
        }),
        lost.then((reason) =>
          this.failure(
            "mcp_server_unavailable",
            `${this.label} became unreachable while ${exposed} was running: ${reason}`,
          ),
        ),
      ]);
    } finally {
      this.inFlight.delete(onLost);
      // A lost call's request is dropped on the client side too. Only then: aborting an answered
      // request would tell the server it was cancelled (notifications/cancelled).
      if (!answered) controller.abort();
    }
  }

  close(deadline?: number): Promise<void> {
    // Closing during a start: the spawned process is killed at once, and the start ends quietly.
    if (this.closing === undefined) {
      this.closing = (async () => {
        if (this.starting !== undefined && this.state === "starting") {
          this.closeTransportBy(deadline);
          await this.client?.close().catch(() => {});
          await this.transport?.close().catch(() => {});
        }
        await this.shutdown(deadline);
      })();
    }
    return this.closing;
  }

  /** Starts the stdio transport's close with the deadline (the SDK's close() then joins it). */
  private closeTransportBy(deadline: number | undefined): void {
    const transport = this.transport;
    if (deadline !== undefined && transport !== undefined && "closeBy" in transport)
      void (transport as StdioTransport).closeBy(deadline).catch(() => {});
  }

  private clean(text: string): string {
    return redactSecrets(text, this.options.secrets, "[redacted]");
  }

  private fail(next: "failed" | "exited", message: string): void {
    this.state = next;
    this.stateError = this.clean(message);
    this.options.onEvent({
      type: next === "failed" ? "server_failed" : "server_exited",
      server: this.name,
      message: this.stateError,
    });
  }

  private exitDetails(): string | undefined {
    return this.server.transport === "stdio"
      ? describeExit(this.transport as StdioTransport | undefined)
      : this.dropped;
  }

  private isClosing(): boolean {
    return this.closing !== undefined;
  }

  /** Read through a method: TypeScript would otherwise keep a narrowing across awaits. */
  private currentState(): McpServerState {
    return this.state;
  }

  private async refresh(): Promise<void> {
    // One refresh at a time; a notification during one asks for another pass after it.
    if (this.refreshing !== undefined) {
      this.refreshAgain = true;
      return this.refreshing;
    }
    if (this.listingsLeft <= 0) return this.defer();
    this.refreshing = (async () => {
      do {
        this.refreshAgain = false;
        const c = this.client;
        if (c === undefined || this.currentState() !== "ready") break;
        if (this.listingsLeft <= 0) {
          this.defer();
          break;
        }
        this.listingsLeft--;
        try {
          this.listed = this.taken(await listAll(c, { timeout: this.server.startupTimeoutMs }));
          this.options.onListed("tools_changed");
        } catch (error) {
          this.options.onEvent({
            type: "warning",
            server: this.name,
            message: this.clean(
              `${this.label} announced new tools, but listing them failed: ${describeError(error)}`,
            ),
          });
        }
      } while (this.refreshAgain);
    })().finally(() => {
      this.refreshing = undefined;
    });
    return this.refreshing;
  }

  /**
   * The tools of a listing, each within the size bounds (tool-size.ts); one cut at
   * `MCP_DEFAULTS.maxTools`, and tools cut to size, are each said once per listing.
   */
  private taken(listing: { tools: Tool[]; cut: boolean; read: number }): Tool[] {
    if (listing.cut)
      this.options.onEvent({
        type: "warning",
        server: this.name,
        message: `${this.label} lists more than ${MCP_DEFAULTS.maxTools} tools: only its first ${MCP_DEFAULTS.maxTools} are offered`,
      });
    const bounded = boundedTools(listing.tools);
    const warning = boundsWarning(this.label, bounded);
    if (warning !== undefined)
      this.options.onEvent({ type: "warning", server: this.name, message: this.clean(warning) });
    this.listedLeftOut = listing.read - bounded.tools.length;
    return bounded.tools;
  }

  /** No listing left this turn: the tools as last listed stay, and the change waits for the next turn. */
  private defer(): void {
    if (this.deferred) return;
    this.deferred = true;
    this.options.onEvent({
      type: "warning",
      server: this.name,
      message: `${this.label} keeps announcing new tools (listed ${MAX_LISTINGS_PER_TURN} times this turn): the tools it listed last stay until the next turn`,
    });
  }

  private async doStart(): Promise<void> {
    const server = this.server;
    this.state = "starting";
    const c = new Client(this.options.clientInfo, {
      capabilities: {},
      jsonSchemaValidator: ACCEPT_ANY_OUTPUT,
    });
    this.client = c;
    // Transport-level errors (a malformed line, a dropped SSE stream) are not fatal by themselves;
    // over HTTP they make eddy check that the server is still there (see probe()).
    c.onerror = () => {
      if (server.transport === "http") void this.probe(c);
    };
    c.onclose = () => {
      this.clientClosed = true; // before the SDK fails the requests in flight
      if (this.currentState() === "ready")
        this.fail("exited", `${this.label} ${this.exitDetails() ?? "closed the connection"}`);
    };
    c.setNotificationHandler(ToolListChangedNotificationSchema, () => {
      void this.refresh();
    });
    // The startup timeout is eddy's own timer, as a call's is (request()): a server's error answer
    // may carry the SDK's timeout code, so only this timer says that the time ran out.
    const timer = AbortSignal.timeout(server.startupTimeoutMs);
    const within = { signal: timer, timeout: server.startupTimeoutMs + SDK_TIMEOUT_MARGIN_MS };
    try {
      this.transport = await this.openTransport();
      // Closed while the transport was being made: close() found nothing to stop, so start nothing.
      if (this.isClosing()) {
        await this.transport.close().catch(() => {});
        return;
      }
      await c.connect(this.transport, within);
      if (this.isClosing()) return;
      const listing = await listAll(c, within);
      if (this.isClosing()) return;
      this.listed = this.taken(listing);
      this.state = "ready";
      this.options.onListed("server_ready");
    } catch (error) {
      if (this.isClosing()) return;
      this.fail(
        "failed",
        `${this.label} failed to start: ${describeStartFailure(server, error, {
          exit: this.exitDetails(),
          timedOut: timer.aborted,
          closed: this.clientClosed,
        })}`,
      );
      await c.close().catch(() => {});
      await this.transport?.close().catch(() => {});
    }
  }

  /**
   * Over HTTP, a response too large to take (capped-fetch.ts): the server is stopped as a stdio
   * server sending such a message is. Its calls in flight end now; a start in progress fails.
   */
  private drop(reason: string): void {
    if (this.dropped !== undefined || this.isClosing()) return;
    this.dropped = reason;
    for (const fail of [...this.inFlight]) fail(reason);
    if (this.currentState() === "ready") this.fail("failed", `${this.label} ${reason}`);
    void this.client?.close().catch(() => {});
  }

  /** The server's transport: a child process over stdio (its cwd checked first) or Streamable HTTP. */
  private async openTransport(): Promise<Transport> {
    const server = this.server;
    if (server.transport !== "stdio") {
      return new StreamableHTTPClientTransport(new URL(server.url), {
        requestInit: { headers: server.headers },
        fetch: cappedFetch((reason) => this.drop(reason)),
      });
    }
    if (server.cwd !== undefined && !(await isDirectory(server.cwd))) {
      throw new StartError(`its cwd ${server.cwd} is not a directory`);
    }
    return createStdioTransport({
      command: server.command,
      args: server.args,
      env: server.env,
      cwd: server.cwd,
      closeGraceMs: this.options.closeGraceMs,
      stderrTailBytes: this.options.stderrTailBytes,
    });
  }

  private async request(
    c: Client,
    call: { tool: string; exposed: string; args: unknown },
    requestSignal: AbortSignal,
    runSignal: AbortSignal,
  ): Promise<ToolResult> {
    const exposed = call.exposed;
    const server = this.server;
    // The codes of the SDK's own "connection closed" and "timed out" (-32000, -32001) may also come
    // from the server in an error answer: what happened is told by eddy's own timer and the
    // client's close, never by the code.
    const timer = AbortSignal.timeout(server.callTimeoutMs);
    try {
      const result = await c.callTool(
        { name: call.tool, arguments: (call.args ?? {}) as Record<string, unknown> },
        undefined,
        {
          signal: AbortSignal.any([requestSignal, timer]),
          timeout: server.callTimeoutMs + SDK_TIMEOUT_MARGIN_MS,
        },
      );
      return mcpResultToToolResult(exposed, result as McpCallResult);
    } catch (error) {
      if (runSignal.aborted) return this.failure("cancelled", `${exposed} was cancelled.`);
      if (this.currentState() === "exited" || this.clientClosed) {
        return this.failure(
          "mcp_server_unavailable",
          `${this.label} stopped while ${exposed} was running: ${this.unavailable()}`,
        );
      }
      if (timer.aborted) {
        return this.failure(
          "tool_timeout",
          `${exposed} did not answer within ${server.callTimeoutMs} ms; the call was cancelled.`,
        );
      }
      if (error instanceof McpError)
        return this.failure("tool_failed", `${this.label} refused ${exposed}: ${describeError(error)}`);
      const detail =
        schemaProblem(error) ??
        (server.transport === "http" ? describeNetworkError(error) : describeError(error));
      return this.failure("tool_failed", `${exposed} failed: ${detail}`);
    }
  }

  /**
   * Over HTTP, a response stream that breaks before its answer leaves the SDK's request waiting
   * until its timeout (it reports the break only to `onerror`, without saying which request).
   * So after a transport error with calls in flight, eddy pings the server: if the ping fails too,
   * the server is gone and those calls end now. If it answers, a dropped idle event stream (a
   * proxy's timeout) was all, and the calls go on.
   */
  private async probe(c: Client): Promise<void> {
    if (this.probing || this.inFlight.size === 0) return;
    this.probing = true;
    try {
      await c.ping({ timeout: Math.min(PROBE_TIMEOUT_MS, this.server.callTimeoutMs) });
    } catch (error) {
      const reason = describeNetworkError(error);
      for (const fail of [...this.inFlight]) fail(reason);
    } finally {
      this.probing = false;
    }
  }

  private unavailable(): string {
    switch (this.state) {
      case "exited":
      case "failed":
        return this.stateError ?? `${this.label} is not running`;
      case "closed":
        return `${this.label} was shut down`;
      default:
        return `${this.label} is not running (${this.state})`;
    }
  }

  private failure(code: ToolErrorCode, message: string): ToolResult {
    return toolResult({
      ok: false,
      exitCode: exitCodeFor(code),
      error: { code, message: shortenText(this.clean(message), 500) },
    });
  }

  private async shutdown(deadline: number | undefined): Promise<void> {
    await this.starting?.catch(() => {});
    const previous = this.state;
    this.state = "closed";
    if (previous === "idle") return;
    const transport = this.transport;
    this.closeTransportBy(deadline);
    if (transport instanceof StreamableHTTPClientTransport) {
      // Tell the server the session is over (it may answer 405: that is allowed).
      const grace = this.options.closeGraceMs;
      await within(
        transport.terminateSession().catch(() => {}),
        deadline === undefined ? grace : Math.min(grace, Math.max(0, deadline - performance.now())),
      );
    }
    await this.client?.close().catch(() => {});
    await transport?.close().catch(() => {});
  }
}

/**
 * Every tool the server lists, page by page (at most `MAX_PAGES`), each page within `options`, up
 * to `MCP_DEFAULTS.maxTools`: past it the listing stops, and `cut` says so.
 */
async function listAll(
  c: Client,
  options: { timeout: number; signal?: AbortSignal },
): Promise<{ tools: Tool[]; cut: boolean; read: number }> {
  const all: Tool[] = [];
  let cursor: string | undefined;
  for (let page = 0; page < MAX_PAGES; page++) {
    const result = await c.listTools(cursor === undefined ? undefined : { cursor }, options);
    // A page is one message (at most 10 MiB), so its tools are counted before they are kept.
    if (all.length + result.tools.length > MCP_DEFAULTS.maxTools) {
      const read = all.length + result.tools.length;
      all.push(...result.tools.slice(0, MCP_DEFAULTS.maxTools - all.length));
      return { tools: all, cut: true, read };
    }
    all.push(...result.tools);
    cursor = result.nextCursor;
    if (cursor === undefined) break;
  }
  return { tools: all, cut: false, read: all.length };
}

async function isDirectory(path: string): Promise<boolean> {
  try {
    return (await stat(path)).isDirectory();
  } catch {
    return false;
  }
}
