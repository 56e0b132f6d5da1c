/**
 * End-to-end: `eddy doctor` against `eddy mock` (every probe passes), against a gateway that takes
 * messages only (it reports the refused function_call input items and previous_response_id), and
 * what a later `eddy run --history-strategy auto` makes of that report: stateless requests whose
 * tool results travel as text (text-embed), none of which the gateway refuses.
 */
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { createMockServer, type MockServer } from "../src/mock/index.js";
import { type DoctorReport, PROBE_NAMES } from "../src/provider/probe/index.js";
import { cleanEnv, runCli } from "./support/cli.js";
import { type CliProcess, startCli, until } from "./support/cli-process.js";
import { type MessagesOnlyGateway, startMessagesOnlyGateway } from "./support/messages-only-gateway.js";
import { startRawServer } from "./support/raw-server.js";

let mock: CliProcess;
let mockUrl: string;
const KEY = "sk-doctor-e2e-secret-7781";

beforeAll(async () => {
  mock = startCli(["mock", "--api-key", KEY]);
  await until(() => mock.stdout.includes("http://"), "eddy mock to listen");
  mockUrl = mock.stdout.trim();
});
afterAll(async () => {
  mock.child.kill("SIGINT");
  await mock.exited;
});

/** A fresh cache directory and a clean environment using it. */
function cacheEnv(): { env: Record<string, string>; cacheFile: string } {
  const cache = mkdtempSync(join(tmpdir(), "eddy-doctor-e2e-"));
  return { env: cleanEnv({ XDG_CACHE_HOME: cache }), cacheFile: join(cache, "eddy", "doctor.json") };
}

function workspace(): string {
  const dir = mkdtempSync(join(tmpdir(), "eddy-doctor-ws-"));
  writeFileSync(join(dir, "package.json"), `${JSON.stringify({ name: "doctor-demo", version: "2.0.0" })}\n`);
  return dir;
}

describe("eddy doctor", () => {
  it("--json against eddy mock: exit 0, one ok result per probe, JSON only on stdout, cached, no secret anywhere", async () => {
    const { env, cacheFile } = cacheEnv();
    const r = await runCli(
      ["doctor", "--json", "--base-url", mockUrl, "--api-key", KEY, "--model", "eddy-demo"],
      {
        env,
      },
    );
    expect(r.code, r.stderr).toBe(0);
    const report = JSON.parse(r.stdout) as DoctorReport;
    expect(Object.keys(report)).toEqual(["provider", "base_url", "model", "api", "probes", "cached_at"]);
    expect(report).toMatchObject({
      provider: "generic",
      base_url: mockUrl,
      model: "eddy-demo",
      api: "responses",
    });
    expect(report.probes.map((p) => [p.name, p.status])).toEqual(PROBE_NAMES.map((name) => [name, "ok"]));
    for (const probe of report.probes) expect(probe.ms).toBeGreaterThanOrEqual(0);
    const cached = readFileSync(cacheFile, "utf8");
    expect(Object.values(JSON.parse(cached).entries)).toEqual([report]);
    for (const text of [r.stdout, r.stderr, cached]) expect(text).not.toContain(KEY);
  });

  it("with nothing configured probes the embedded demo model, says so, and prints a table", async () => {
    const { env } = cacheEnv();
    const r = await runCli(["doctor"], { env });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toMatch(/no provider configured — probing the built-in offline demo model/);
    for (const name of PROBE_NAMES) expect(r.stdout).toMatch(new RegExp(`^  ${name} +ok `, "m"));
    expect(r.stdout).toMatch(/10 ok — auth and streaming pass/);
  });

  it("a wrong key: exit 1, auth failed with the hint naming where the key comes from, the rest skipped", async () => {
    const { env } = cacheEnv();
    const r = await runCli(["doctor", "--json", "--base-url", mockUrl, "--model", "eddy-demo"], {
      env: { ...env, OPENRESPONSES_API_KEY: "sk-not-the-right-one" },
    });
    expect(r.code).toBe(1);
    const report = JSON.parse(r.stdout) as DoctorReport;
    expect(report.probes[0]).toMatchObject({ name: "auth", status: "failed" });
    expect(report.probes[0]?.hint).toMatch(/OPENRESPONSES_API_KEY/);
    expect(report.probes.slice(1).every((p) => p.status === "skipped")).toBe(true);
    expect(r.stdout).not.toContain("sk-not-the-right-one");
  });

  it("a server's escape sequences in its errors reach the table inert (no clipboard write, no screen clear)", async () => {
    const hostile = "denied\u001b]52;c;cm0gLXJmIH4=\u0007\u001b[2J\r\u202eevil";
    const raw = await startRawServer([
      {
        status: 401,
        headers: { "content-type": "application/json" },
        body: [JSON.stringify({ error: { message: hostile, code: "c\u001b[8m" } })],
      },
    ]);
    try {
      const r = await runCli(["doctor", "--base-url", `${raw.url}/v1`, "--api-key", "k", "--model", "m"], {
        env: cacheEnv().env,
      });
      expect(r.code).toBe(1);
      expect(r.stdout).toMatch(/auth/);
      expect(r.stdout).toMatch(/denied/);
      for (const bad of ["\u001b]", "\u001b[2J", "\u001b[8m", "\u0007", "\u202e", "\r"])
        expect(r.stdout).not.toContain(bad);
    } finally {
      await raw.close();
    }
  });

  it.each([
    [["doctor", "--probe-timeout", "soon"], /--probe-timeout must be an integer/],
    [["doctor", "--provider", "openai"], /provider openai needs an API key/],
    [["doctor", "--api", "soap"], /--api must be responses or chat-completions/],
  ])("bad usage exits 2 before any request: %j", async (args, message) => {
    const r = await runCli(args, { env: cacheEnv().env });
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(message);
  });

  it("Ctrl-C ends it within 2 s (exit 130) and caches nothing", async () => {
    const raw = await startRawServer([{ hang: true, body: [] }]);
    try {
      const { env, cacheFile } = cacheEnv();
      const r = await runCli(["doctor", "--base-url", raw.url, "--model", "m"], {
        env,
        signalWhen: "detail",
      });
      expect(r.code).toBe(130);
      expect(r.exitAfterSignalMs).toBeLessThan(2000);
      expect(r.stderr).toMatch(/cancelled; nothing was cached/);
      expect(existsSync(cacheFile)).toBe(false);
    } finally {
      await raw.close();
    }
  });
});

describe("eddy doctor, then eddy run --history-strategy auto, against a gateway that takes messages only", () => {
  let gateway: MessagesOnlyGateway;
  const scripted: MockServer[] = [];
  beforeAll(async () => {
    gateway = await startMessagesOnlyGateway();
  });
  afterEach(async () => {
    await Promise.all(scripted.splice(0).map((s) => s.close()));
  });
  afterAll(async () => {
    await gateway.close();
  });

  /** Puts a model behind the gateway that reads package.json, then answers. */
  async function scriptedModel(): Promise<void> {
    const server = await createMockServer({
      scenario: {
        turns: [
          { items: [{ type: "function_call", name: "read_file", arguments: { path: "package.json" } }] },
          { items: [{ type: "message", text: "The package is doctor-demo 2.0.0." }] },
        ],
      },
    });
    scripted.push(server);
    gateway.setUpstream(server.url);
  }

  const run = (env: Record<string, string>) =>
    runCli(
      [
        "run",
        "--base-url",
        gateway.url,
        "--model",
        "eddy-demo",
        "--history-strategy",
        "auto",
        "What is in package.json?",
      ],
      { env, cwd: workspace() },
    );

  it("doctor reports the refusals; the run then sends tool results as text and completes", async () => {
    const { env } = cacheEnv();
    const doctor = await runCli(
      ["doctor", "--json", "--base-url", gateway.url, "--model", "eddy-demo", "--probe-timeout", "15000"],
      { env },
    );
    expect(doctor.code, doctor.stderr).toBe(0);
    const probes = Object.fromEntries(
      (JSON.parse(doctor.stdout) as DoctorReport).probes.map((p) => [p.name, p]),
    );
    expect(probes.function_call_input).toMatchObject({ status: "unsupported" });
    expect(probes.function_call_input?.detail).toMatch(/Invalid input item type 'function_call'/);
    expect(probes.previous_response_id).toMatchObject({ status: "unsupported" });
    expect(probes.tool_call).toMatchObject({ status: "ok", follow_up: "text" });

    const config = await runCli(["config", "--base-url", gateway.url, "--model", "eddy-demo"], { env });
    expect(config.stdout).toMatch(/^mode +stateless \(eddy doctor: the server cannot chain\)/m);
    expect(config.stdout).toMatch(
      /^doctor +report from \d+ s ago: previousResponseId false, nativeToolHistory false/m,
    );

    await scriptedModel();
    const seen = gateway.requests.length;
    const r = await run(env);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/doctor-demo 2\.0\.0/);
    expect(r.stderr).toMatch(
      /capabilities from eddy doctor .*previousResponseId false.*nativeToolHistory false/,
    );
    const bodies = gateway.requests.slice(seen).filter((q) => q.url.endsWith("/responses"));
    expect(bodies).toHaveLength(2);
    for (const q of bodies) {
      expect(q.refused).toBeUndefined();
      expect(q.body?.previous_response_id).toBeUndefined();
      expect(JSON.stringify(q.body?.input)).not.toMatch(/"type":"function_call/);
    }
    // The follow-up resends the prompt and carries the tool's result as a user message (text-embed).
    const follow = bodies[1]?.body?.input as { role?: string; content?: { text?: string }[] }[];
    expect(follow.map((item) => item.role)).toEqual(["user", "user"]);
    expect(follow[1]?.content?.[0]?.text).toMatch(/^Context \(tool result of read_file\):\n.*doctor-demo/s);
  });

  it("without doctor's report the same run sends native tool items, which the gateway refuses", async () => {
    await scriptedModel();
    const seen = gateway.requests.length;
    const r = await run(cacheEnv().env);
    expect(r.code).toBe(1);
    const refused = gateway.requests.slice(seen).filter((q) => q.refused !== undefined);
    expect(refused).toHaveLength(1);
  });
});
