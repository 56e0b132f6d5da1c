/**
 * Start-up stays lazy: which modules a command loads, recorded by a loader hook in the built CLI's
 * process (test/support/module-log.mjs). `eddy --help` loads the command line and the defaults it
 * prints, nothing of the runtime; a run loads what it uses (the provider, the loop, the built-in
 * tools, the protocol validators when validating) and none of the optional features. The CLI runs
 * from its bundle (dist/cli/bundle/, scripts/build.mjs), whose chunks src/cli/code-cache.ts loads
 * itself: the chunks a command loaded are those its code cache file lists, written by a first start
 * in an empty cache folder. A loaded chunk stands for the compiled files and package files it holds,
 * as the build's dist/cli/bundle/chunks.json lists them. What loading costs in time is measured by
 * the bench (`npm run bench -- startup`), never asserted here.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readCodeCache } from "../src/cli/code-cache-file.js";
import { createMockServer, type MockServer } from "../src/mock/listener.js";
import { cleanEnv, ROOT, runCli } from "./support/cli.js";

const HOOK = join(ROOT, "test/support/module-log.mjs");
const PROMPT = "What is in package.json?";

/** Packages no command loads unless the feature that needs them is used. */
const OPTIONAL_PACKAGES = [
  "@modelcontextprotocol/sdk", // MCP servers configured
  "@opentelemetry/*", // --otel
  "bullmq", // --queue, eddy worker
  "ioredis",
  "gpt-tokenizer", // history folding past its threshold
  "ws", // WebSocket mode
  "file-type", // a binary file read, an attachment
  "image-size", // an image shown to the demo model
  "diff", // an approval prompt
  "yaml", // a YAML scenario
  "re2js", // a grep regex
  "picomatch", // a glob
  "cli-progress", // eddy batch
];

let dir: string;
let mock: MockServer;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "eddy-startup-modules-"));
  mock = await createMockServer({});
});

afterAll(async () => {
  await mock.close();
  rmSync(dir, { recursive: true, force: true });
});

/** The chunks of the CLI bundle a command loaded: those its code cache file lists (see above). */
function chunksLoaded(cacheHome: string): string[] {
  const folder = join(cacheHome, "eddy", "compile-cache");
  const files = readdirSync(folder).filter((name) => name.endsWith(".v8"));
  expect(files).toHaveLength(1);
  return [...readCodeCache(join(folder, files[0] ?? "")).keys()];
}

/** Runs `eddy ARGS` (from the repository, so `package.json` is there to read) and lists what it loaded. */
async function loadedBy(name: string, args: string[]): Promise<string[]> {
  const log = join(dir, `${name}.log`);
  const cacheHome = join(dir, `${name}-cache`);
  const env = cleanEnv({
    NODE_OPTIONS: `--import=${pathToFileURL(HOOK).href}`,
    EDDY_MODULE_LOG: log,
    XDG_CONFIG_HOME: dir,
    XDG_CACHE_HOME: cacheHome,
  });
  const result = await runCli(args, { env, cwd: ROOT, timeoutMs: 60_000 });
  expect(result.code, result.stderr).toBe(0);
  const lines = readFileSync(log, "utf8").split("\n");
  const urls = lines.filter((line) => line.startsWith("file:"));
  const builtins = lines.filter((line) => line.startsWith("node:"));
  const files = urls.map((url) => relative(ROOT, fileURLToPath(url)));
  const loadedChunks = chunksLoaded(cacheHome);
  expect(loadedChunks).toContain("main.cjs"); // the launcher ran the bundle
  const chunks = JSON.parse(readFileSync(join(ROOT, "dist/cli/bundle/chunks.json"), "utf8")) as Record<
    string,
    string[]
  >;
  const expanded = loadedChunks.flatMap((chunk) => {
    const inputs = chunks[chunk];
    expect(inputs, `${chunk} is not in chunks.json`).toBeDefined();
    return inputs ?? [];
  });
  // Node's loader loads nothing of the bundle but the loader of its chunks (scripts/build.mjs).
  expect(files.filter((file) => file.startsWith(BUNDLE))).toEqual([`${BUNDLE}loader.mjs`]);
  return [...new Set([...files, ...expanded, ...builtins])];
}

/** Node's own fetch (undici, loaded by the first use of `Request`, `Response` or `Headers`): ~50 ms of a start. */
const FETCH_INTERNALS = (loaded: readonly string[]) =>
  loaded.filter((m) => m.startsWith("node:internal/deps/undici"));

const BUNDLE = "dist/cli/bundle/";

/** The package a loaded file belongs to (`@scope/name` or `name`), or undefined for eddy's own. */
function packageOf(path: string): string | undefined {
  const at = path.lastIndexOf("node_modules/");
  if (at === -1) return undefined;
  const parts = path.slice(at + "node_modules/".length).split("/");
  return parts[0]?.startsWith("@") ? `${parts[0]}/${parts[1]}` : parts[0];
}

/** Loaded files of the packages matching `pattern` (`name`, or `@scope/*`). */
function filesOf(loaded: readonly string[], pattern: string): string[] {
  const matches = (pkg: string) =>
    pattern.endsWith("/*") ? pkg.startsWith(pattern.slice(0, -1)) : pkg === pattern;
  return loaded.filter((path) => {
    const pkg = packageOf(path);
    return pkg !== undefined && matches(pkg);
  });
}

/** The optional packages a command loaded, with one file of each as evidence. */
function optionalLoaded(loaded: readonly string[], except: readonly string[] = []): string[] {
  return OPTIONAL_PACKAGES.filter((p) => !except.includes(p)).flatMap((p) => filesOf(loaded, p).slice(0, 1));
}

/** Not optional for a run (its settings are validated with zod), but nothing `--help` needs. */
const RUN_PACKAGES = ["zod"];

/** ajv itself (its compiler), as against the small runtime helpers precompiled validators require. */
function ajvCompiler(loaded: readonly string[]): string[] {
  return filesOf(loaded, "ajv").filter((path) => !path.includes("ajv/dist/runtime/"));
}

const eddyFiles = (loaded: readonly string[], prefix: string) =>
  loaded.filter((path) => path.startsWith(`dist/${prefix}`));

describe.each([
  ["help", ["--help"]],
  ["version", ["--version"]],
])("eddy --%s", (name, args) => {
  it("loads the command line and the defaults it prints, nothing of the runtime", async () => {
    const loaded = await loadedBy(name, args);
    expect(loaded).toContain("dist/cli/main.js"); // the hook saw the CLI
    expect(filesOf(loaded, "commander").length).toBeGreaterThan(0);
    expect(optionalLoaded(loaded)).toEqual([]);
    expect(RUN_PACKAGES.flatMap((p) => filesOf(loaded, p))).toEqual([]);
    expect(filesOf(loaded, "ajv")).toEqual([]);
    for (const prefix of [
      "protocol/generated/response-validators",
      "protocol/generated/request-validators",
      "tools/",
      "provider/open-responses",
      "loop/run",
      "mock/",
    ])
      expect(eddyFiles(loaded, prefix), prefix).toEqual([]);
    expect(loaded.filter((p) => p.startsWith("dist/cli/") && p.endsWith("-command.js"))).toEqual([]);
  });
});

describe("eddy run", () => {
  it("against a server: the provider, the loop, the tools and the validators; no optional feature", async () => {
    const loaded = await loadedBy("run", ["run", "--base-url", mock.url, "--model", "demo", PROMPT]);
    expect(loaded).toContain("dist/cli/run-command.js");
    // Validation is on by default: the events' validators; a client never checks a request body.
    expect(loaded).toContain("dist/protocol/generated/response-validators.cjs");
    expect(eddyFiles(loaded, "protocol/generated/request-validators")).toEqual([]);
    expect(optionalLoaded(loaded)).toEqual([]);
    // The built-in tools' argument validators are compiled ahead of time: no ajv compiler.
    expect(ajvCompiler(loaded)).toEqual([]);
    for (const prefix of ["mock/", "tools/mcp/mcp-tools", "telemetry/", "batch/queue", "view/"])
      expect(eddyFiles(loaded, prefix), prefix).toEqual([]);
    expect(FETCH_INTERNALS(loaded)).toEqual([]);
    // zod's message locales: English only (scripts/build.mjs), not its ~50 others.
    expect(filesOf(loaded, "zod").filter((path) => path.includes("/locales/"))).toEqual([
      "node_modules/zod/v4/locales/en.js",
    ]);
  });

  it("with --no-validate: not even the protocol validators", async () => {
    const loaded = await loadedBy("no-validate", [
      "run",
      "--no-validate",
      "--base-url",
      mock.url,
      "--model",
      "demo",
      PROMPT,
    ]);
    expect(loaded).toContain("dist/cli/run-command.js");
    expect(eddyFiles(loaded, "protocol/generated/response-validators")).toEqual([]);
    expect(eddyFiles(loaded, "protocol/generated/request-validators")).toEqual([]);
  });

  it("the demo run (nothing configured): the embedded mock, still no optional feature", async () => {
    const loaded = await loadedBy("demo", ["run", PROMPT]);
    expect(loaded).toContain("dist/mock/listener.js");
    expect(optionalLoaded(loaded)).toEqual([]);
    expect(ajvCompiler(loaded)).toEqual([]);
    for (const prefix of ["mock/chat/", "tools/mcp/mcp-tools", "telemetry/"])
      expect(eddyFiles(loaded, prefix), prefix).toEqual([]);
    // The embedded mock answers on its own values (src/mock/reply.ts), not fetch's classes, and
    // eddy's client is node:http: no run loads undici.
    expect(loaded).toContain("node:internal/http");
    expect(FETCH_INTERNALS(loaded)).toEqual([]);
  });
});
