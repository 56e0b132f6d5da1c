import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { type Env, type RunFlags, resolveConfig } from "./config.js";
import { checkWorkspace, keyHint, missingSettings, type WorkspaceProbe } from "./preflight.js";

const home = mkdtempSync(join(tmpdir(), "eddy-preflight-"));
afterAll(() => rmSync(home, { recursive: true, force: true }));

function problems(flags: RunFlags, env: Env = {}): string[] {
  const config = resolveConfig({ workspace: home, ...flags }, { HOME: home, ...env }, home);
  return missingSettings(config, { HOME: home, ...env });
}

describe("a key an HTTP header cannot carry (found by a probe: retried as a connection error, exit 1)", () => {
  it.each([
    [
      "a carriage return",
      { OPENAI_API_KEY: "sk-test-1234567\r" },
      "OPENAI_API_KEY",
      "control character (U+000D",
    ],
    [
      "a line break",
      { OPENRESPONSES_API_KEY: "sk-test\n1234567" },
      "OPENRESPONSES_API_KEY",
      "control character (U+000A",
    ],
    ["an ellipsis", { OPENAI_API_KEY: "sk-…" }, "OPENAI_API_KEY", "past U+00FF"],
  ])("%s is named, with where it came from, the key never shown", (_label, env, from, what) => {
    const found = problems({ provider: "openai", model: "m" }, env);
    expect(found).toHaveLength(1);
    expect(found[0]).toContain(`the API key from ${from} holds a `);
    expect(found[0]).toContain(what);
    expect(found[0]).not.toContain("sk-");
  });

  it("--api-key too; a key with Latin-1 letters or a tab is sendable", () => {
    expect(problems({ baseUrl: "http://127.0.0.1:9/v1", model: "m", apiKey: "k\u0001" })[0]).toMatch(
      /^the API key from --api-key holds a control character \(U\+0001/,
    );
    expect(problems({ provider: "openai", model: "m" }, { OPENAI_API_KEY: "sk-é\tz" })).toEqual([]);
  });
});

describe("missing settings, found before any request", () => {
  it.each([
    [
      "--provider openai without a key",
      { provider: "openai" },
      {},
      "provider openai needs an API key: set OPENAI_API_KEY (or --api-key / OPENRESPONSES_API_KEY)",
    ],
    [
      "a profile/model route to OpenRouter without a key",
      { model: "openrouter/qwen/qwen3-coder" },
      {},
      "provider openrouter needs an API key: set OPENROUTER_API_KEY (or --api-key / OPENRESPONSES_API_KEY)",
    ],
    [
      "an Azure base URL without a key",
      { baseUrl: "https://me.openai.azure.com/openai/v1", model: "my-deployment" },
      {},
      "provider azure needs an API key: set AZURE_OPENAI_API_KEY (or --api-key / OPENRESPONSES_API_KEY)",
    ],
    [
      "OpenAI's key with another host",
      { provider: "openai", baseUrl: "http://127.0.0.1:9/v1" },
      { OPENAI_API_KEY: "sk-test-1234567" },
      "provider openai needs an API key: set OPENAI_API_KEY (or --api-key / OPENRESPONSES_API_KEY) — OPENAI_API_KEY is set, but eddy sends it only to api.openai.com or OPENAI_BASE_URL, not http://127.0.0.1:9/v1",
    ],
    [
      "a generic server without a model",
      { baseUrl: "http://127.0.0.1:9/v1" },
      {},
      'no model for provider generic: give --model NAME, set EDDY_MODEL, or put "model" in the config file',
    ],
    [
      "a local server without a model",
      { provider: "lmstudio" },
      {},
      'no model for provider lmstudio: give --model NAME, set EDDY_MODEL, or put "model" in the config file',
    ],
    [
      "URL credentials and a bearer key",
      { baseUrl: "http://u:pw@127.0.0.1:9/v1", model: "m", apiKey: "sk-test-1234567" },
      {},
      "the base URL carries user:password and an API key is set too (--api-key): both would go in the Authorization header — drop one",
    ],
  ])("%s", (_label, flags, env, message) => {
    expect(problems(flags, env)).toEqual([message]);
  });

  it.each([
    ["the embedded mock", {}, {}],
    ["a keyless local server with a model", { provider: "ollama", model: "llama3" }, {}],
    ["a generic server with a model and no key", { baseUrl: "http://127.0.0.1:9/v1", model: "m" }, {}],
    [
      "OpenAI with its key (the profile's default model)",
      { provider: "openai" },
      { OPENAI_API_KEY: "sk-t-123456" },
    ],
    [
      "OpenRouter without a model (its server has a default)",
      { provider: "openrouter" },
      { OPENROUTER_API_KEY: "k-123456" },
    ],
    ["URL credentials standing in for the key", { provider: "openai", baseUrl: "http://u:pw@proxy/v1" }, {}],
    [
      "Azure: the key goes in api-key, Basic in Authorization",
      { baseUrl: "https://u:pw@me.openai.azure.com/openai/v1", model: "d", apiKey: "az-123456" },
      {},
    ],
  ])("nothing missing: %s", (_label, flags, env) => {
    expect(problems(flags, env)).toEqual([]);
  });

  it("a config-file profile naming its key variable needs it; so does each fallback", () => {
    const dir = mkdtempSync(join(home, "ws-"));
    const file = join(dir, "eddy.config.json");
    const content = {
      provider: "local",
      model: "m",
      profiles: { local: { base_url: "http://127.0.0.1:9/v1", api_key_env: "LOCAL_KEY" } },
      fallbacks: ["openrouter/x"],
    };
    writeFileSync(file, JSON.stringify(content));
    expect(problems({ config: file })).toEqual([
      "provider local needs an API key: set LOCAL_KEY (or --api-key / OPENRESPONSES_API_KEY)",
      "fallback openrouter/x needs an API key: set OPENROUTER_API_KEY",
    ]);
    expect(problems({ config: file }, { LOCAL_KEY: "local-123", OPENROUTER_API_KEY: "router-123" })).toEqual(
      [],
    );
  });

  it("the 401 hint names the profile's key variable", () => {
    const config = resolveConfig(
      { provider: "azure", workspace: home },
      { HOME: home, AZURE_OPENAI_ENDPOINT: "https://me.openai.azure.com" },
      home,
    );
    if (config.target.kind !== "http") throw new Error("expected an HTTP target");
    expect(keyHint(config.target)).toBe(
      "provider azure reads its key from AZURE_OPENAI_API_KEY, --api-key or OPENRESPONSES_API_KEY",
    );
  });
});

describe("checkWorkspace", () => {
  const probe = (isDirectory: boolean, error?: string): WorkspaceProbe => ({
    isDirectory: () => isDirectory,
    canReadAndEnter: () => {
      if (error !== undefined) throw Object.assign(new Error(error), { code: error });
    },
  });

  it("accepts a readable directory", () => {
    expect(() => checkWorkspace(home)).not.toThrow();
    expect(() => checkWorkspace("/w", probe(true))).not.toThrow();
  });

  it("refuses a missing one", () => {
    expect(() => checkWorkspace(join(home, "nope"))).toThrow(
      /workspace ".*nope" does not exist or is not a directory/,
    );
  });

  it("refuses one it cannot read or enter (injected: root passes every access check)", () => {
    expect(() => checkWorkspace("/w", probe(true, "EACCES"))).toThrow(
      'workspace "/w" is not readable (EACCES): eddy needs read and execute permission on it',
    );
  });

  it.skipIf(process.getuid?.() === 0)(
    "refuses a real directory with mode 000 (not as root: root reads anything)",
    () => {
      const dir = join(home, "locked");
      mkdirSync(dir);
      chmodSync(dir, 0o000);
      try {
        expect(() => checkWorkspace(dir)).toThrow(/is not readable \(EACCES\)/);
      } finally {
        chmodSync(dir, 0o700);
      }
    },
  );
});
