/**
 * The README's first library example (the first ```ts block under "## Using the library") runs as
 * a user would paste it, against the mock: whatever the block says, with `from "eddy"` (and
 * `"eddy/…"` subpaths) mapped to the built dist/ and the api.openai.com URL pointed at a local
 * server, so the test never reaches the internet. It must report its outcome: an answer and exit
 * 0 when the run completes; the error on stderr and a non-zero exit when it fails (offline, no
 * key). It used to print nothing and exit 0 when the run failed.
 */
import { spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { transformSync } from "esbuild";
import { afterAll, describe, expect, it } from "vitest";
import { createMockServer, type MockServer } from "../src/mock/index.js";
import { cleanEnv, ROOT } from "./support/cli.js";
import { freePort } from "./support/redis.js";

const README = readFileSync(join(ROOT, "README.md"), "utf8");
const PACKAGE = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as {
  exports: Record<string, { import?: string }>;
};
const OPENAI = "https://api.openai.com/v1";

/** The first ```ts block of the "Using the library" section. */
function firstLibraryExample(): string {
  const section = README.split(/^## /m).find((s) => s.startsWith("Using the library"));
  const block = section === undefined ? null : /```ts\n([\s\S]*?)```/.exec(section);
  if (block?.[1] === undefined) throw new Error('README.md: no ```ts block under "## Using the library"');
  return block[1];
}

/** The example as a runnable module: "eddy" imports point at dist/, the OpenAI URL at `baseURL`. */
function runnable(source: string, baseURL: string): string {
  const mapped = source
    .replace(/from "eddy(\/[a-z-]+)?"/g, (_, sub: string | undefined) => {
      const target = PACKAGE.exports[sub === undefined ? "." : `.${sub}`]?.import;
      if (target === undefined) throw new Error(`package.json exports no "eddy${sub ?? ""}"`);
      return `from ${JSON.stringify(pathToFileURL(join(ROOT, target)).href)}`;
    })
    .split(OPENAI)
    .join(baseURL);
  return transformSync(mapped, { loader: "ts", format: "esm", target: "node20" }).code;
}

interface Outcome {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs the example in a fresh workspace (a package.json to read) with `env`. */
function runExample(baseURL: string, env: Record<string, string>): Promise<Outcome> {
  // Inside node_modules/ so the example's other imports (zod) resolve as in a user's project.
  const dir = join(ROOT, "node_modules", ".cache", "eddy-readme-example");
  mkdirSync(dir, { recursive: true });
  const script = join(mkdtempSync(join(dir, "run-")), "example.mjs");
  writeFileSync(script, runnable(firstLibraryExample(), baseURL));
  const cwd = mkdtempSync(join(dir, "ws-"));
  writeFileSync(join(cwd, "package.json"), '{"name": "readme-demo"}\n');
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [script], {
      cwd,
      env: cleanEnv({ OPENAI_BASE_URL: baseURL, ...env }),
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d: Buffer) => (stdout += d.toString("utf8")));
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString("utf8")));
    // A hang guard only.
    const timer = setTimeout(() => child.kill("SIGKILL"), 30_000);
    child.on("error", reject);
    child.on("close", (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

const servers: MockServer[] = [];
afterAll(async () => {
  for (const s of servers) await s.close();
});

describe("README: the first library example", () => {
  it("is found, imports eddy, and reads the run's result", () => {
    const source = firstLibraryExample();
    expect(source).toMatch(/from "eddy"/);
    expect(source).toMatch(/\.result/);
  });

  it("against the mock: prints the answer and exits 0", async () => {
    const server = await createMockServer();
    servers.push(server);
    const r = await runExample(server.url, { OPENAI_API_KEY: "sk-test" });
    expect(r.stderr).toBe("");
    expect(r.stdout.trim()).not.toBe("");
    expect(r.code).toBe(0);
  });

  it("offline (nothing listening): says why on stderr and exits non-zero", async () => {
    const url = `http://127.0.0.1:${await freePort()}/v1`;
    const r = await runExample(url, { OPENAI_API_KEY: "sk-test" });
    expect(r.stderr).toMatch(/provider_error/);
    expect(r.code).not.toBe(0);
  });

  it("with no key, against a server that wants one: says why on stderr and exits non-zero", async () => {
    const server = await createMockServer({ apiKey: "sk-right" });
    servers.push(server);
    const r = await runExample(server.url, {});
    expect(r.stderr).toMatch(/401|api key/i);
    expect(r.code).not.toBe(0);
  });
});
