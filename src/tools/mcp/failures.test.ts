import { StreamableHTTPError } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
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
    expect(describeStartFailure(server, error, undefined)).toBe(message);
  });

  it("prefers how the process ended over the protocol error it caused", () => {
    expect(describeStartFailure(stdio, new Error("Connection closed"), "exited with code 1")).toBe(
      "it exited with code 1",
    );
  });

  it("describeNetworkError keeps a plain message when there is no cause code", () => {
    expect(describeNetworkError(new Error("socket hang up"))).toBe("socket hang up");
  });
});
