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
import {
  ErrorCode,
  McpError,
  type Tool,
  ToolListChangedNotificationSchema,
} from "@modelcontextprotocol/sdk/types.js";
import { describeError } from "../../errors.js";
import { redactSecrets } from "../../util/redact.js";
import { exitCodeFor } from "../execute.js";
import { type ToolErrorCode, type ToolResult, toolResult } from "../tool.js";
import { shortenText } from "../utf8.js";
import { describeExit, describeNetworkError, describeStartFailure, StartError } from "./failures.js";
import type { ResolvedServer } from "./resolve.js";
import { type McpCallResult, mcpResultToToolResult } from "./result.js";
import type { McpEvent, McpServerState, McpServerStatus } from "./status.js";
import { createStdioTransport, type StdioTransport, within } from "./stdio-transport.js";

/** Settings a connection needs beyond its resolved server. */
export interface ConnectionOptions {
  clientInfo: { name: string; version: string };
  closeGraceMs: number;
  stderrTailBytes: number;
  /** Values to redact from every message. */
  secrets: readonly string[];
  onEvent: (event: McpEvent) => void;
  /** Called after a `tools/list_changed` refresh replaced the tool list. */
  onToolsChanged: () => void;
}

/** One server. */
export interface McpConnection {
  readonly name: string;
  status(): McpServerStatus;
  /** Starts the server once; resolves when it is ready or has failed (never rejects). */
  start(): Promise<void>;
  /** The server's tools as last listed (empty unless started). */
  tools(): readonly Tool[];
  /** Resolves once no `tools/list_changed` refresh is in flight (never rejects). */
  settled(): Promise<void>;
  /** Calls `tool`; every failure is an `ok:false` result. `exposed` is the model-facing name. */
  call(tool: string, exposed: string, args: unknown, signal: AbortSignal): Promise<ToolResult>;
  /** Shuts the server down (stdio: its whole process group). Idempotent. */
  close(): Promise<void>;
}

const MAX_PAGES = 100;
/** How long the liveness ping after an HTTP transport error may take. */
const PROBE_TIMEOUT_MS = 5000;

/** Creates a connection; nothing starts until `start()`. */
export function createMcpConnection(server: ResolvedServer, options: ConnectionOptions): McpConnection {
  const name = server.name;
  const label = `MCP server "${name}"`;
  let state: McpServerState = "idle";
  let stateError: string | undefined;
  let tools: readonly Tool[] = [];
  let client: Client | undefined;
  let transport: Transport | undefined;
  let starting: Promise<void> | undefined;
  let closing: Promise<void> | undefined;
  let refreshing: Promise<void> | undefined;
  let refreshAgain = false;
  /** Ends the calls in flight early (HTTP: the server became unreachable). */
  const inFlight = new Set<(reason: string) => void>();
  let probing = false;

  const clean = (text: string) => redactSecrets(text, options.secrets, "[redacted]");
  const fail = (next: "failed" | "exited", message: string) => {
    state = next;
    stateError = clean(message);
    options.onEvent({
      type: next === "failed" ? "server_failed" : "server_exited",
      server: name,
      message: stateError,
    });
  };

  const exitDetails = () =>
    server.transport === "stdio" ? describeExit(transport as StdioTransport | undefined) : undefined;

  const onClientClose = () => {
    if (state === "ready") fail("exited", `${label} ${exitDetails() ?? "closed the connection"}`);
  };

  async function listAll(c: Client, timeout: number): Promise<Tool[]> {
    const all: Tool[] = [];
    let cursor: string | undefined;
    for (let page = 0; page < MAX_PAGES; page++) {
      const result = await c.listTools(cursor === undefined ? undefined : { cursor }, { timeout });
      all.push(...result.tools);
      cursor = result.nextCursor;
      if (cursor === undefined) break;
    }
    return all;
  }

  async function refresh(): Promise<void> {
    // One refresh at a time; a notification during one asks for another pass after it.
    if (refreshing !== undefined) {
      refreshAgain = true;
      return refreshing;
    }
    refreshing = (async () => {
      do {
        refreshAgain = false;
        const c = client;
        if (c === undefined || state !== "ready") break;
        try {
          tools = await listAll(c, server.startupTimeoutMs);
          options.onToolsChanged();
          options.onEvent({
            type: "tools_changed",
            server: name,
            tools: tools.length,
            message: `${label} changed its tools (${tools.length} now)`,
          });
        } catch (error) {
          options.onEvent({
            type: "warning",
            server: name,
            message: clean(`${label} announced new tools, but listing them failed: ${describeError(error)}`),
          });
        }
      } while (refreshAgain);
    })().finally(() => {
      refreshing = undefined;
    });
    return refreshing;
  }

  async function doStart(): Promise<void> {
    state = "starting";
    const c = new Client(options.clientInfo, { capabilities: {} });
    client = c;
    // Transport-level errors (a malformed line, a dropped SSE stream) are not fatal by themselves;
    // over HTTP they make eddy check that the server is still there (see probe()).
    c.onerror = () => {
      if (server.transport === "http") void probe(c);
    };
    c.onclose = onClientClose;
    c.setNotificationHandler(ToolListChangedNotificationSchema, () => {
      void refresh();
    });
    const deadline = Date.now() + server.startupTimeoutMs;
    try {
      if (server.transport === "stdio") {
        if (server.cwd !== undefined && !(await isDirectory(server.cwd))) {
          throw new StartError(`its cwd ${server.cwd} is not a directory`);
        }
        transport = createStdioTransport({
          command: server.command,
          args: server.args,
          env: server.env,
          cwd: server.cwd,
          closeGraceMs: options.closeGraceMs,
          stderrTailBytes: options.stderrTailBytes,
        });
      } else {
        transport = new StreamableHTTPClientTransport(new URL(server.url), {
          requestInit: { headers: server.headers },
        });
      }
      await c.connect(transport, { timeout: server.startupTimeoutMs });
      if (isClosing()) return;
      tools = await listAll(c, Math.max(1, deadline - Date.now()));
      if (isClosing()) return;
      state = "ready";
      options.onEvent({
        type: "server_ready",
        server: name,
        tools: tools.length,
        message: `${label} is ready (${tools.length} tool${tools.length === 1 ? "" : "s"})`,
      });
    } catch (error) {
      if (isClosing()) return;
      fail("failed", `${label} failed to start: ${describeStartFailure(server, error, exitDetails())}`);
      await c.close().catch(() => {});
      await transport?.close().catch(() => {});
    }
  }

  const isClosing = () => closing !== undefined;
  // Read through a function: TypeScript would otherwise keep a narrowing across awaits.
  const currentState = () => state;

  async function call(
    tool: string,
    exposed: string,
    args: unknown,
    signal: AbortSignal,
  ): Promise<ToolResult> {
    const c = client;
    if (state !== "ready" || c === undefined) return failure("mcp_server_unavailable", unavailable());
    const controller = new AbortController();
    let onLost: (reason: string) => void = () => {};
    const lost = new Promise<string>((resolve) => {
      onLost = resolve;
    });
    inFlight.add(onLost);
    try {
      return await Promise.race([
        request(c, tool, exposed, args, AbortSignal.any([signal, controller.signal]), signal),
        lost.then((reason) =>
          failure(
            "mcp_server_unavailable",
            `${label} became unreachable while ${exposed} was running: ${reason}`,
          ),
        ),
      ]);
    } finally {
      inFlight.delete(onLost);
      controller.abort(); // a lost call's request is dropped on the client side too
    }
  }

  async function request(
    c: Client,
    tool: string,
    exposed: string,
    args: unknown,
    requestSignal: AbortSignal,
    runSignal: AbortSignal,
  ): Promise<ToolResult> {
    try {
      const result = await c.callTool(
        { name: tool, arguments: (args ?? {}) as Record<string, unknown> },
        undefined,
        { signal: requestSignal, timeout: server.callTimeoutMs },
      );
      return mcpResultToToolResult(exposed, result as McpCallResult);
    } catch (error) {
      if (runSignal.aborted) return failure("cancelled", `${exposed} was cancelled.`);
      if (
        currentState() === "exited" ||
        (error instanceof McpError && error.code === ErrorCode.ConnectionClosed)
      ) {
        return failure(
          "mcp_server_unavailable",
          `${label} stopped while ${exposed} was running: ${unavailable()}`,
        );
      }
      if (error instanceof McpError && error.code === ErrorCode.RequestTimeout) {
        return failure(
          "tool_timeout",
          `${exposed} did not answer within ${server.callTimeoutMs} ms; the call was cancelled.`,
        );
      }
      if (error instanceof McpError)
        return failure("tool_failed", `${label} refused ${exposed}: ${describeError(error)}`);
      const detail = server.transport === "http" ? describeNetworkError(error) : describeError(error);
      return failure("tool_failed", `${exposed} failed: ${detail}`);
    }
  }

  /**
   * Over HTTP, a response stream that breaks before its answer leaves the SDK's request waiting
   * until its timeout (it reports the break only to `onerror`, without saying which request).
   * So after a transport error with calls in flight, eddy pings the server: if the ping fails too,
   * the server is gone and those calls end now. If it answers, a dropped idle event stream (a
   * proxy's timeout) was all, and the calls go on.
   */
  async function probe(c: Client): Promise<void> {
    if (probing || inFlight.size === 0) return;
    probing = true;
    try {
      await c.ping({ timeout: Math.min(PROBE_TIMEOUT_MS, server.callTimeoutMs) });
    } catch (error) {
      const reason = describeNetworkError(error);
      for (const fail of [...inFlight]) fail(reason);
    } finally {
      probing = false;
    }
  }

  function unavailable(): string {
    switch (state) {
      case "exited":
      case "failed":
        return stateError ?? `${label} is not running`;
      case "closed":
        return `${label} was shut down`;
      default:
        return `${label} is not running (${state})`;
    }
  }

  function failure(code: ToolErrorCode, message: string): ToolResult {
    return toolResult({
      ok: false,
      exitCode: exitCodeFor(code),
      error: { code, message: shortenText(clean(message), 500) },
    });
  }

  async function shutdown(): Promise<void> {
    await starting?.catch(() => {});
    const previous = state;
    state = "closed";
    if (previous === "idle") return;
    if (transport instanceof StreamableHTTPClientTransport) {
      // Tell the server the session is over (it may answer 405: that is allowed).
      const t = transport;
      await within(
        t.terminateSession().catch(() => {}),
        options.closeGraceMs,
      );
    }
    await client?.close().catch(() => {});
    await transport?.close().catch(() => {});
  }

  return {
    name,
    status() {
      const status: McpServerStatus = { name, transport: server.transport, state, tools: tools.length };
      if (stateError !== undefined) status.error = stateError;
      return status;
    },
    start() {
      if (closing !== undefined) return Promise.resolve();
      starting ??= doStart();
      return starting;
    },
    tools: () => tools,
    settled: () => refreshing ?? Promise.resolve(),
    call,
    close() {
      // Closing during a start: the spawned process is killed at once, and the start ends quietly.
      if (closing === undefined) {
        closing = (async () => {
          if (starting !== undefined && state === "starting") {
            await client?.close().catch(() => {});
            await transport?.close().catch(() => {});
          }
          await shutdown();
        })();
      }
      return closing;
    },
  };
}

async function isDirectory(path: string): Promise<boolean> {
  try {
    return (await stat(path)).isDirectory();
  } catch {
    return false;
  }
}
