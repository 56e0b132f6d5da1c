import { describe, expect, it } from "vitest";
import { LOOP_DEFAULTS } from "../loop/defaults.js";
import type { ConfigSources, RunFlags } from "./config.js";
import type { ConfigFile } from "./config-file.js";
import { resolveToolSettings } from "./config-tools.js";

function sources(flags: RunFlags = {}, file: ConfigFile = {}): ConfigSources {
  return { flags, env: {}, file, path: "/ws/eddy.config.json" };
}

describe("resolveToolSettings", () => {
  it("defaults: no servers, sequential calls, approve decided at start, no sandbox", () => {
    expect(resolveToolSettings(sources())).toEqual({
      mcpServers: [],
      parallelToolCalls: { value: LOOP_DEFAULTS.parallelToolCalls, source: "default" },
      approve: { value: undefined, source: "default" },
      sandbox: { value: false, source: "default" },
    });
  });

  it.each([
    ["flag", { parallelToolCalls: true, approve: "deny", sandbox: true } as RunFlags, {}, "flag"],
    [
      "config file",
      {},
      { parallel_tool_calls: true, approve: "deny", sandbox: true } as ConfigFile,
      "config",
    ],
  ])("reads parallel_tool_calls, approve and sandbox from the %s", (_label, flags, file, source) => {
    const s = resolveToolSettings(sources(flags, file));
    expect(s.parallelToolCalls).toMatchObject({ value: true, source });
    expect(s.approve).toMatchObject({ value: "deny", source });
    expect(s.sandbox).toMatchObject({ value: true, source });
  });

  it("a flag beats the config file", () => {
    const s = resolveToolSettings(sources({ approve: "ask" }, { approve: "deny" }));
    expect(s.approve).toEqual({ value: "ask", source: "flag" });
  });

  it("servers come from mcp_servers, then --mcp; a flag's server replaces the file's of the same name", () => {
    const s = resolveToolSettings(
      sources(
        { mcp: ["fs=npx -y server-fs 'a dir'", "web=https://example.test/mcp"] },
        { mcp_servers: { fs: { command: "old" }, gh: { url: "http://127.0.0.1:1/mcp" } } },
      ),
    );
    expect(s.mcpServers).toEqual([
      {
        name: "gh",
        value: { url: "http://127.0.0.1:1/mcp" },
        source: "config",
        from: "/ws/eddy.config.json",
      },
      { name: "fs", value: { command: "npx", args: ["-y", "server-fs", "a dir"] }, source: "flag" },
      { name: "web", value: { url: "https://example.test/mcp" }, source: "flag" },
    ]);
  });

  it("a bad server entry in the file names the file, the server and the field", () => {
    expect(() =>
      resolveToolSettings(sources({}, { mcp_servers: { gh: { url: "http://x", colour: "red" } } })),
    ).toThrow(/config file \/ws\/eddy\.config\.json: mcp_servers\.gh: unknown key "colour"/);
    expect(() => resolveToolSettings(sources({ mcp: ["=x"] }))).toThrow(/--mcp expects NAME=COMMAND/);
  });
});
