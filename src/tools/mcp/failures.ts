/**
 * One-line explanations of why an MCP server did not start or stopped, built from what is known:
 * the spawn error, the exit code and the last stderr line, the HTTP status, the network error code.
 */

import { StreamableHTTPError } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { McpError } from "@modelcontextprotocol/sdk/types.js";
import { describeError } from "../../errors.js";
import { fieldPath } from "../../util/zod-problems.js";
import { shortenText } from "../utf8.js";
import type { ResolvedServer } from "./resolve.js";
import type { StdioTransport } from "./stdio-transport.js";

/** A start failure eddy detected itself, with a message ready to show. */
export class StartError extends Error {}

/** "exited with code 3 (stderr: …)" for a stdio server that has ended, else undefined. */
export function describeExit(stdio: StdioTransport | undefined): string | undefined {
  if (stdio?.stopReason !== undefined) return stdio.stopReason;
  const exit = stdio?.exit;
  if (exit === undefined) return undefined;
  const how = exit.signal !== null ? `was killed by ${exit.signal}` : `exited with code ${exit.code ?? "?"}`;
  const line = lastLine(stdio?.stderrTail() ?? "");
  return line === undefined ? how : `${how} (stderr: ${shortenText(line, 200)})`;
}

/** What eddy saw itself when a server did not start (its own clock and transport, not the error's code). */
export interface StartContext {
  /** `describeExit` of the server's process, if it had one that ended. */
  exit?: string;
  /** eddy's startup timer ran out. */
  timedOut?: boolean;
  /** The connection closed (the SDK then fails what was waiting with its own error). */
  closed?: boolean;
}

/**
 * Why `server` did not start. An MCP error code alone tells nothing: a server may answer with the
 * codes the SDK uses for its own timeout and closed connection (-32001, -32000), so a timeout is
 * said only when eddy's timer ran out, and an error answer is said in the server's words.
 */
export function describeStartFailure(
  server: ResolvedServer,
  error: unknown,
  seen: StartContext = {},
): string {
  const { exit } = seen;
  if (error instanceof StartError) return error.message;
  const code = (error as NodeJS.ErrnoException).code;
  if (server.transport === "stdio" && code === "ENOENT") {
    return `command "${server.command}" was not found (check the command and PATH)`;
  }
  if (server.transport === "stdio" && code === "EACCES")
    return `command "${server.command}" is not executable`;
  if (exit !== undefined) return `it ${exit}`;
  if (seen.timedOut === true) {
    return `no answer within ${server.startupTimeoutMs} ms (raise startup_timeout_sec if it is just slow)`;
  }
  if (error instanceof McpError && seen.closed !== true)
    return `it answered with an error: ${describeError(error)}`;
  const schema = schemaProblem(error);
  if (schema !== undefined) return schema;
  if (server.transport === "stdio") return describeError(error);
  if (error instanceof StreamableHTTPError && (error.code === 401 || error.code === 403)) {
    return `${server.shownUrl} answered HTTP ${error.code}: check the server's headers or token`;
  }
  if (error instanceof StreamableHTTPError && error.code !== undefined && error.code > 0) {
    // The SDK prefixes every message with "Streamable HTTP error: ", which says nothing here.
    return `${server.shownUrl} answered HTTP ${error.code}: ${describeError(error).replace(/^Streamable HTTP error: /, "")}`;
  }
  return `cannot reach ${server.shownUrl}: ${describeNetworkError(error)}`;
}

/**
 * An answer (a listing, a call's result) the SDK found not to follow the MCP schema (a tool whose `inputSchema.type` is not
 * "object", a name that is a number): its ZodError's message was the issues dumped as JSON. Said as
 * the first problem's field and words, and how many more there were.
 */
export function schemaProblem(error: unknown): string | undefined {
  const issues = (error as { name?: unknown; issues?: unknown } | null)?.issues;
  // zod's classic error is "ZodError", its core one (which the SDK throws) "$ZodError".
  const name = (error as Error | null)?.name;
  if ((name !== "ZodError" && name !== "$ZodError") || !Array.isArray(issues) || issues.length === 0)
    return undefined;
  const first = issues[0] as { path?: unknown; message?: unknown };
  const path = Array.isArray(first.path)
    ? fieldPath(first.path as PropertyKey[], "the answer")
    : "the answer";
  const more =
    issues.length > 1 ? ` (and ${issues.length - 1} more problem${issues.length > 2 ? "s" : ""})` : "";
  return `its answer does not follow the MCP schema: ${path}: ${shortenText(String(first.message), 200)}${more}; ask the server's author to fix it, or remove it from mcp_servers`;
}

/** `fetch failed` says nothing: the cause (ECONNREFUSED, ENOTFOUND, …) does. */
export function describeNetworkError(error: unknown): string {
  const cause = (error as { cause?: unknown }).cause;
  const code = (cause as NodeJS.ErrnoException | undefined)?.code;
  if (typeof code === "string") return `${describeError(error)} (${code})`;
  return describeError(error);
}

function lastLine(text: string): string | undefined {
  const lines = text.split("\n").map((l) => l.trim());
  for (let i = lines.length - 1; i >= 0; i--) if (lines[i] !== "") return lines[i];
  return undefined;
}
