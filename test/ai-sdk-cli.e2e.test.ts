/**
 * End-to-end: `eddy run` with a config profile `api: "ai-sdk"` over `@ai-sdk/anthropic`, against a
 * scripted server on 127.0.0.1 that speaks Anthropic's streaming Messages events: the built CLI
 * loads the package, runs a tool loop with the built-in tools, records a tape without the key, and
 * `eddy replay` matches it. A profile that names no package, or a package that is not installed, is
 * a usage error (exit 2) saying what to do.
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { Frame } from "../src/frames/frame.js";
import { type AnthropicServer, startAnthropicServer } from "./support/anthropic-server.js";
import { cleanEnv, runCli } from "./support/cli.js";
import { ofType } from "./support/frames.js";

const KEY = "sk-ant-e2e-secret-key";
let server: AnthropicServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

/** Only a hang guard: each start of the CLI took 5-8 s at load average 23 on 2 cores. */
const HANG_GUARD_MS = 45_000;

function workspace(profile: Record<string, unknown>): string {
  const dir = mkdtempSync(join(tmpdir(), "eddy-ai-sdk-cli-"));
  writeFileSync(join(dir, "package.json"), '{ "name": "demo-app", "version": "1.2.3" }\n');
  writeFileSync(
    join(dir, "eddy.config.json"),
    JSON.stringify({ provider: "claude", profiles: { claude: profile } }),
  );
  return dir;
}

const parse = (stdout: string) =>
  stdout
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l) as Frame);

describe("eddy run with an ai-sdk profile", () => {
  it("completes a tool loop over @ai-sdk/anthropic, records a tape, and eddy replay matches", async () => {
    server = await startAnthropicServer(
      {
        turns: [
          { items: [{ type: "function_call", name: "read_file", arguments: { path: "package.json" } }] },
          { items: [{ type: "message", text: "It is demo-app, version 1.2.3." }] },
        ],
      },
      { apiKey: KEY },
    );
    const cwd = workspace({
      api: "ai-sdk",
      package: "@ai-sdk/anthropic",
      base_url: server.url,
      api_key_env: "ANTHROPIC_API_KEY",
      default_model: "claude-test",
    });
    const tape = join(cwd, "claude.tape");
    const env = cleanEnv({ ANTHROPIC_API_KEY: KEY });
    const r = await runCli(["run", "--json", "--record", tape, "What is in package.json?"], {
      cwd,
      env,
      timeoutMs: 60_000,
    });
    expect(r.code, r.stderr).toBe(0);
    const frames = parse(r.stdout);
    expect(ofType(frames, "run_started")[0]).toMatchObject({ model: "claude-test", mode: "stateless" });
    expect(ofType(frames, "tool_call")).toMatchObject([
      { name: "read_file", arguments: '{"path":"package.json"}' },
    ]);
    expect(ofType(frames, "tool_ended")[0]?.output).toContain("demo-app");
    expect(ofType(frames, "run_ended")[0]).toMatchObject({
      reason: "completed",
      output_text: "It is demo-app, version 1.2.3.",
    });
    expect(server.keys).toEqual([KEY, KEY]);
    const recorded = readFileSync(tape, "utf8");
    expect(recorded).not.toContain(KEY);
    expect(JSON.parse(recorded.split("\n")[0] ?? "{}")).toMatchObject({
      provider: { name: "claude", wire: { api: "ai-sdk" } },
    });

    await server.close();
    server = undefined; // the replay is offline
    const replay = await runCli(["replay", tape], { cwd, env: cleanEnv(), timeoutMs: 60_000 });
    expect(replay.code, replay.stdout + replay.stderr).toBe(0);
  }, 150_000);

  it("refuses a profile without a package, and a package that is not installed, before sending anything (exit 2)", async () => {
    const noPackage = await runCli(["run", "hi"], {
      cwd: workspace({ api: "ai-sdk", default_model: "m" }),
      timeoutMs: HANG_GUARD_MS,
    });
    expect(noPackage.code).toBe(2);
    expect(noPackage.stderr).toContain('an "ai-sdk" profile names its AI SDK provider package');
    const missing = await runCli(["run", "hi"], {
      cwd: workspace({ api: "ai-sdk", package: "@ai-sdk/not-installed-here", default_model: "m" }),
      timeoutMs: HANG_GUARD_MS,
    });
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain(
      "needs the package @ai-sdk/not-installed-here, which is not installed: run npm install @ai-sdk/not-installed-here",
    );
    const stray = await runCli(["run", "hi"], {
      cwd: workspace({ package: "@ai-sdk/anthropic", default_model: "m" }),
      timeoutMs: HANG_GUARD_MS,
    });
    expect(stray.code).toBe(2);
    expect(stray.stderr).toContain('package belongs to an AI SDK profile: add "api": "ai-sdk"');
  }, 150_000);

  it("loads a package from the workspace's node_modules only when the workspace is trusted (found by a probe)", async () => {
    // The user's own config names the package; an untrusted clone plants it in node_modules.
    const home = mkdtempSync(join(tmpdir(), "eddy-ai-sdk-home-"));
    mkdirSync(join(home, ".config", "eddy"), { recursive: true });
    const profile = {
      api: "ai-sdk",
      package: "@ai-sdk/planted-here",
      default_model: "m",
      api_key_env: "MY_KEY",
    };
    writeFileSync(
      join(home, ".config", "eddy", "config.json"),
      JSON.stringify({ provider: "p", profiles: { p: profile } }),
    );
    const cwd = mkdtempSync(join(tmpdir(), "eddy-ai-sdk-cli-"));
    writeFileSync(join(cwd, "package.json"), '{ "name": "clone" }\n');
    const pkg = join(cwd, "node_modules", "@ai-sdk", "planted-here");
    mkdirSync(pkg, { recursive: true });
    const marker = join(cwd, "RAN");
    writeFileSync(join(pkg, "package.json"), '{ "name": "@ai-sdk/planted-here", "main": "index.js" }\n');
    writeFileSync(
      join(pkg, "index.js"),
      `require("node:fs").writeFileSync(${JSON.stringify(marker)}, "ran");\nexports.createPlanted = () => () => ({});\n`,
    );
    const env = { ...cleanEnv({ HOME: home, MY_KEY: "sk-user-key-123456" }) };
    delete env.EDDY_TRUST_CONFIG;
    const r = await runCli(["run", "hi"], { cwd, env, timeoutMs: HANG_GUARD_MS });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("a workspace's own node_modules is loaded only once you trust the workspace");
    expect(existsSync(marker)).toBe(false);
  }, 60_000);
});
