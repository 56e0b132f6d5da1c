import { StreamableHTTPError } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { McpError } from "@modelcontextprotocol/sdk/types.js";
import { describe, expect, it } from "vitest";
import { describeNetworkError, describeStartFailure } from "./failures.js";
import type { ResolvedHttpServer, ResolvedStdioServer } from "./resolve.js";

const stdio: ResolvedStdioServer = {
  name: "s",
  transport: "stdio",
  command: "srv",
  args: [],
  env: {},
  cwd: undefined,
  startupTimeoutMs: 1000,
  callTimeoutMs: 1000,
};
const http: ResolvedHttpServer = {
  name: "h",
  transport: "http",
  url: "https://mcp.example/mcp",
  shownUrl: "https://mcp.example/mcp",
  headers: {},
  startupTimeoutMs: 1000,
  callTimeoutMs: 1000,
};
const errno = (code: string) => Object.assign(new Error(`spawn srv ${code}`), { code });

describe("describeStartFailure", () => {
  it.each([
    ["a missing command", stdio, errno("ENOENT"), 'command "srv" was not found (check the command and PATH)'],
    ["a command that cannot run", stdio, errno("EACCES"), 'command "srv" is not executable'],
    [
      "a refused token",
      http,
      new StreamableHTTPError(403, "Forbidden"),
      "https://mcp.example/mcp answered HTTP 403: check the server's headers or token",
    ],
    [
      "a server error",
      http,
      new StreamableHTTPError(500, "Error POSTing to endpoint: boom"),
      "https://mcp.example/mcp answered HTTP 500: Error POSTing to endpoint: boom",
    ],
    [
      "a network error",
      http,
      Object.assign(new TypeError("fetch failed"), { cause: errno("ENOTFOUND") }),
      "cannot reach https://mcp.example/mcp: fetch failed (ENOTFOUND)",
    ],
  ])("explains %s", (_label, server, error, message) => {
    expect(describeStartFailure(server, error)).toBe(message);
  });

  it("prefers how the process ended over the protocol error it caused", () => {
    expect(describeStartFailure(stdio, new Error("Connection closed"), { exit: "exited with code 1" })).toBe(
      "it exited with code 1",
    );
  });

  it("says a timeout only when eddy's timer ran out, whatever the error's code", () => {
    const answered = new McpError(-32001, "busy");
    expect(describeStartFailure(http, answered)).toBe("it answered with an error: MCP error -32001: busy");
    expect(describeStartFailure(stdio, answered, { timedOut: true })).toBe(
      "no answer within 1000 ms (raise startup_timeout_sec if it is just slow)",
    );
    // The SDK's own error for a connection that closed is not the server's answer.
    expect(describeStartFailure(stdio, new McpError(-32000, "Connection closed"), { closed: true })).toBe(
      "MCP error -32000: Connection closed",
    );
  });

  it("describeNetworkError keeps a plain message when there is no cause code", () => {
    expect(describeNetworkError(new Error("socket hang up"))).toBe("socket hang up");
  });
});
