/**
 * End-to-end: the built CLI, spawned as a user would run it, against the mock server (and its
 * faults). Asserts the JSONL frame contract, exit codes, the human view, record → replay round
 * trips and that secrets never reach a tape (docs/architecture.md, "The frame contract" and "The CLI contract").
 */
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { parseFrames } from "../src/frames/jsonl.js";
import { createMockServer, type MockServer } from "../src/mock/index.js";
import type { Scenario } from "../src/mock/scenario.js";
import { cleanEnv, runCli } from "./support/cli.js";
import { assertFrameInvariants } from "./support/frames.js";

const ANSI = new RegExp(`${String.fromCharCode(27)}\\[`);
let server: MockServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

function workspace(): string {
  const dir = mkdtempSync(join(tmpdir(), "eddy-e2e-"));
  writeFileSync(
    join(dir, "package.json"),
    `${JSON.stringify({ name: "demo-app", version: "2.0.0", scripts: { test: "vitest" } }, null, 2)}\n`,
  );
  mkdirSync(join(dir, "src"));
  writeFileSync(join(dir, "src", "index.ts"), "export const answer = 42; // TODO: explain\n");
  return dir;
}

async function mock(scenario: Scenario, apiKey?: string): Promise<string> {
  server = await createMockServer(apiKey === undefined ? { scenario } : { scenario, apiKey });
  return server.url;
}

const text = (t: string) => ({ items: [{ type: "message" as const, text: t }] });
const call = (name: string, args: Record<string, unknown>, callId?: string) => ({
  items: [{ type: "function_call" as const, name, arguments: args, ...(callId ? { call_id: callId } : {}) }],
});

describe("a fresh machine: the embedded demo model", () => {
  it('`eddy run "What is in package.json?"` answers with a read_file call and exits 0', async () => {
    const cwd = workspace();
    const r = await runCli(["run", "What is in package.json?"], { cwd });
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("demo-app");
    expect(r.stdout).toContain("2.0.0");
    expect(r.stderr).toContain("built-in offline demo model");
    expect(r.stderr).toMatch(/read_file/);
    expect(r.stderr).toMatch(/✓ completed · 2 turns · 1 tool call/);
    expect(r.stdout + r.stderr).not.toMatch(ANSI); // piped: no colours
    expect(r.stdout).not.toContain("completed ·"); // stdout holds only the answer
  });

  it("--json writes only frames, live and complete", async () => {
    const cwd = workspace();
    const r = await runCli(["run", "--json", "list the files here"], { cwd });
    expect(r.code).toBe(0);
    const frames = parseFrames(r.stdout);
    assertFrameInvariants(frames);
    const types = new Set(frames.map((f) => f.type));
    for (const t of [
      "run_started",
      "request_started",
      "response_headers",
      "provider_event",
      "output_text_delta",
      "tool_call",
      "tool_started",
      "tool_ended",
      "turn_ended",
      "run_ended",
    ]) {
      expect(types).toContain(t);
    }
    expect(frames.find((f) => f.type === "tool_call")).toMatchObject({ name: "list_dir" });
    expect(frames.at(-1)).toMatchObject({ type: "run_ended", reason: "completed" });
  });

  it("reads the prompt from stdin", async () => {
    const r = await runCli(["run"], { cwd: workspace(), stdin: "What is in package.json?" });
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("demo-app");
  });
});

describe("exit codes and the human view against a scripted provider", () => {
  it("0: completed", async () => {
    const url = await mock({ turns: [text("Hello from the mock.")] });
    const r = await runCli(["run", "--base-url", url, "--model", "m", "hi"], { cwd: workspace() });
    expect(r.code).toBe(0);
    expect(r.stdout).toBe("Hello from the mock.\n");
  });

  it("1: response.failed, with the partial text kept", async () => {
    const url = await mock({
      turns: [
        { ...text("partial"), status: "failed", error: { code: "server_error", message: "model crashed" } },
      ],
    });
    const r = await runCli(["run", "--base-url", url, "--model", "m", "hi"], { cwd: workspace() });
    expect(r.code).toBe(1);
    expect(r.stdout).toContain("partial");
    expect(r.stderr).toMatch(/eddy: failed: .*model crashed/);
  });

  it("1: a 401 says to check the key; no stack trace", async () => {
    const url = await mock({ turns: [text("never")] }, "right-key");
    const r = await runCli(["run", "--base-url", url, "--api-key", "wrong-key", "--model", "m", "hi"], {
      cwd: workspace(),
    });
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/check the API key/);
    expect(r.stderr).not.toMatch(/at .*\.js:\d+/);
  });

  it("1: a 400 is an invalid request, never retried", async () => {
    const url = await mock({ turns: [{ faults: { httpError: { status: 400 } } }, text("never")] });
    const r = await runCli(["run", "--base-url", url, "--model", "m", "--json", "hi"], { cwd: workspace() });
    expect(r.code).toBe(1);
    const frames = parseFrames(r.stdout);
    expect(frames.at(-1)).toMatchObject({ reason: "invalid_request" });
    expect(frames.filter((f) => f.type === "retry")).toEqual([]);
  });

  it("0: a 429 with retry-after-ms is retried and shown", async () => {
    const url = await mock({
      turns: [
        { faults: { httpError: { status: 429, headers: { "retry-after-ms": "50" } } } },
        text("after the retry"),
      ],
    });
    const r = await runCli(["run", "--base-url", url, "--model", "m", "hi"], { cwd: workspace() });
    expect(r.code).toBe(0);
    expect(r.stderr).toMatch(/retrying \(attempt 2\)/);
    expect(r.stdout).toBe("after the retry\n");
  });

  it("1: a connection dropped mid-stream is a truncated stream; the partial text stays", async () => {
    // The same cut on every attempt: if the reset loses the text before the client reads it, the retry is cut too.
    const turn = {
      ...text("This answer will be cut off somewhere in the middle."),
      faults: { dropAfterEvents: 8 },
      repeat: true,
    };
    const url = await mock({ turns: [turn] });
    const r = await runCli(["run", "--base-url", url, "--model", "m", "--json", "hi"], { cwd: workspace() });
    expect(r.code).toBe(1);
    const frames = parseFrames(r.stdout);
    const end = frames.at(-1);
    expect(end).toMatchObject({ type: "run_ended", reason: "provider_error" });
    const streamed = frames.filter((f) => f.type === "output_text_delta").length;
    if (streamed > 0) expect(end?.type === "run_ended" && end.output_text.length).toBeGreaterThan(0);
  });

  it("1: a stall hits the idle timeout", async () => {
    const url = await mock({
      turns: [{ ...text("slow answer"), faults: { stallAfterEvents: { afterEvents: 4, ms: 3000 } } }],
    });
    const r = await runCli(["run", "--base-url", url, "--model", "m", "--idle-timeout", "200", "hi"], {
      cwd: workspace(),
    });
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/idle/);
  });

  it("3: identical calls three turns in a row stop with no_progress", async () => {
    const url = await mock({ turns: [{ ...call("list_dir", { path: "." }), repeat: true }] });
    const r = await runCli(["run", "--base-url", url, "--model", "m", "hi"], { cwd: workspace() });
    expect(r.code).toBe(3);
    expect(r.stderr).toMatch(/no_progress/);
  });

  it("3: the tool-call budget", async () => {
    const url = await mock({
      turns: [
        { ...call("read_file", { path: "package.json" }) },
        { ...call("list_dir", { path: "src" }) },
        text("done"),
      ],
    });
    const r = await runCli(["run", "--base-url", url, "--model", "m", "--max-tool-calls", "1", "hi"], {
      cwd: workspace(),
    });
    expect(r.code).toBe(3);
    expect(r.stderr).toMatch(/max_tool_calls/);
  });

  it("130: SIGINT cancels within 2 s, frames complete", async () => {
    const url = await mock({
      turns: [{ ...text("a slow answer"), faults: { stallAfterEvents: { afterEvents: 5, ms: 10000 } } }],
    });
    const r = await runCli(["run", "--base-url", url, "--model", "m", "--json", "hi"], {
      cwd: workspace(),
      signalWhen: '"type":"output_text_delta"',
    });
    expect(r.code).toBe(130);
    expect(r.exitAfterSignalMs).toBeLessThan(2000);
    const frames = parseFrames(r.stdout);
    assertFrameInvariants(frames);
    expect(frames.at(-1)).toMatchObject({ reason: "cancelled" });
  });
});

describe("record → replay", () => {
  // [label, scenario, flags, the recorded run's exit code]
  const scenarios: [string, Scenario, string[], number][] = [
    [
      "a chained tool loop",
      { turns: [call("read_file", { path: "package.json" }, "c1"), text("It is demo-app.")] },
      [],
      0,
    ],
    [
      "a stateless tool loop",
      { turns: [call("grep", { pattern: "TODO" }), text("One TODO.")] },
      ["--stateless"],
      0,
    ],
    ["a failed run", { turns: [{ ...text("oops"), status: "failed" }] }, [], 1],
    [
      "a retried request",
      {
        turns: [{ faults: { httpError: { status: 503, headers: { "retry-after-ms": "10" } } } }, text("ok")],
      },
      [],
      0,
    ],
    ["an incomplete response", { turns: [{ ...text("cut"), status: "incomplete" }] }, [], 1],
    [
      "a refused disabled tool",
      { turns: [call("write_file", { path: "x", content: "y" }), text("cannot write")] },
      [],
      0,
    ],
  ];
  for (const [label, scenario, flags, code] of scenarios) {
    it(label, async () => {
      const cwd = workspace();
      const url = await mock(scenario);
      const tape = join(cwd, "run.tape");
      const rec = await runCli(["run", "--base-url", url, "--model", "m", "--record", tape, ...flags, "go"], {
        cwd,
      });
      expect(rec.code).toBe(code);
      const replay = await runCli(["replay", tape], { cwd });
      expect(replay.stdout).toMatch(/^replay matches \(\d+ frames\)/);
      expect(replay.code).toBe(0);
    });
  }

  it("a cancelled run", async () => {
    const cwd = workspace();
    const url = await mock({
      turns: [{ ...text("slow"), faults: { stallAfterEvents: { afterEvents: 5, ms: 10000 } } }],
    });
    const tape = join(cwd, "run.tape");
    const rec = await runCli(["run", "--base-url", url, "--model", "m", "--record", tape, "--json", "go"], {
      cwd,
      signalWhen: '"output_text_delta"',
    });
    expect(rec.code).toBe(130);
    const replay = await runCli(["replay", tape], { cwd });
    expect(replay.stdout).toMatch(/^replay matches/);
  });

  it("reports the first divergence of an edited tape (exit 1) and --json prints the frames", async () => {
    const cwd = workspace();
    const url = await mock({ turns: [text("Hello there")] });
    const tape = join(cwd, "run.tape");
    await runCli(["run", "--base-url", url, "--model", "m", "--record", tape, "hi"], { cwd });
    const lines = readFileSync(tape, "utf8").split("\n");
    const i = lines.findIndex((l) => l.includes('"response.output_text.delta"'));
    const frame = JSON.parse(lines[i] as string);
    frame.data.delta = `X${frame.data.delta}`;
    lines[i] = JSON.stringify(frame);
    const edited = lines.join("\n");
    writeFileSync(tape, edited);
    const r = await runCli(["replay", tape], { cwd });
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(/replay diverges at frame \d+\n {2}expected: .*\n {2}actual: {3}/);
    const json = await runCli(["replay", "--json", tape], { cwd });
    expect(parseFrames(json.stdout).length).toBeGreaterThan(3);
  });

  it("never holds the API key, from a flag or the environment", async () => {
    const cwd = workspace();
    const url = await mock({ turns: [{ ...text("ok"), repeat: true }] }, "sk-test-very-secret");
    const a = join(cwd, "a.tape");
    const b = join(cwd, "b.tape");
    expect(
      (
        await runCli(
          ["run", "--base-url", url, "--api-key", "sk-test-very-secret", "--model", "m", "--record", a, "hi"],
          { cwd },
        )
      ).code,
    ).toBe(0);
    const env = cleanEnv({ OPENRESPONSES_BASE_URL: url, OPENRESPONSES_API_KEY: "sk-test-very-secret" });
    expect((await runCli(["run", "--model", "m", "--record", b, "hi"], { cwd, env })).code).toBe(0);
    for (const tape of [a, b]) {
      const content = readFileSync(tape, "utf8");
      expect(content).not.toContain("sk-test-very-secret");
      expect(content.toLowerCase()).not.toContain("authorization");
    }
  });
});

describe("continuing from earlier runs (context bundles)", () => {
  it("--context TAPE puts the earlier prompt, its tool call and output, and its answer before the new prompt", async () => {
    const cwd = workspace();
    const url = await mock({
      turns: [
        call("read_file", { path: "package.json" }, "c1"),
        text("It is demo-app 2.0.0."),
        {
          expect: { inputContains: ["What is in package.json?", "It is demo-app 2.0.0.", "Which version?"] },
          ...text("2.0.0"),
        },
      ],
    });
    const first = join(cwd, "first.tape");
    expect(
      (
        await runCli(
          ["run", "--base-url", url, "--model", "m", "--record", first, "What is in package.json?"],
          { cwd },
        )
      ).code,
    ).toBe(0);
    const second = await runCli(
      ["run", "--base-url", url, "--model", "m", "--context", first, "--json", "Which version?"],
      { cwd },
    );
    expect(second.code).toBe(0);
    const started = parseFrames(second.stdout)[0];
    const input = started?.type === "run_started" && Array.isArray(started.input) ? started.input : [];
    expect(input.map((i) => (i as { type: string }).type)).toEqual([
      "message",
      "function_call",
      "function_call_output",
      "message",
      "message",
    ]);
  });

  it("--context TAPE whose run is over the context budget says it is left out (found by a probe: silence)", async () => {
    const cwd = workspace();
    const url = await mock({ turns: [text("long"), text("short")] });
    const big = join(cwd, "big.tape");
    const prompt = "word ".repeat(40_000); // ~50,000 tokens by the estimate: over the 32,000 budget
    const first = await runCli(["run", "--base-url", url, "--model", "m", "--record", big], {
      cwd,
      stdin: prompt,
    });
    expect(first.code).toBe(0);
    const r = await runCli(["run", "--base-url", url, "--model", "m", "--context", big, "again"], { cwd });
    expect(r.code).toBe(0);
    expect(r.stderr).toContain("↺ context: no earlier runs; 1 older run left out (over the context budget)");
  });

  it("--context TAPE cut off after its header is refused naming the tape", async () => {
    const cwd = workspace();
    const url = await mock({ turns: [text("hi")] });
    const whole = join(cwd, "whole.tape");
    expect(
      (await runCli(["run", "--base-url", url, "--model", "m", "--record", whole, "hi"], { cwd })).code,
    ).toBe(0);
    const cut = join(cwd, "cut.tape");
    writeFileSync(cut, `${readFileSync(whole, "utf8").split("\n")[0]}\n`);
    const r = await runCli(["run", "--base-url", url, "--model", "m", "--context", cut, "again"], { cwd });
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/--context .*cut\.tape: the tape has no run_started frame/);
    expect(r.stderr.trim().split("\n")).toHaveLength(1);
  });
});

describe("bad input exits 2 with one line", () => {
  it.each([
    [["run", "--bogus", "x"], /unknown option '--bogus'/],
    [["run", "--max-turns", "abc", "x"], /--max-turns must be an integer ≥ 1 \(got "abc"\)/],
    [["run", "--max-tool-calls", "0", "x"], /--max-tool-calls must be an integer ≥ 1/],
    [["run", "--max-turns"], /argument missing/],
    [["run", "--workspace", "/definitely/not/here", "x"], /workspace .* does not exist/],
    [["run", "--schema", "/nope/schema.json", "x"], /cannot read the --schema file/],
    [["mock", "--scenario", "/nope/scenario.yaml"], /cannot read the scenario file/],
    [["replay", "/nope/run.tape"], /cannot read tape/],
    [["frobnicate"], /unknown command 'frobnicate'/],
  ])("eddy %j", async (args, message) => {
    const r = await runCli(args as string[], { cwd: workspace() });
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(message);
    expect(r.stderr.trim().split("\n")).toHaveLength(1);
  });

  it("a tape of a newer format", async () => {
    const cwd = workspace();
    writeFileSync(join(cwd, "new.tape"), '{"type":"tape_header","format":4}\n');
    const r = await runCli(["replay", "new.tape"], { cwd });
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/tape format 4 is newer than this eddy reads/);
  });

  it("--help and --version exit 0", async () => {
    expect((await runCli(["--version"])).stdout).toMatch(/^\d+\.\d+\.\d+/);
    const help = await runCli(["run", "--help"]);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain("Examples:");
  });
});

describe("eddy mock and eddy config", () => {
  it("a bad --scenario is named as typed, not as the absolute path it resolves to", async () => {
    const cwd = workspace();
    writeFileSync(join(cwd, "sc.json"), '{"turns": 3}');
    const r = await runCli(["mock", "--scenario", "sc.json"], { cwd });
    expect(r.code).toBe(2);
    expect(r.stderr).toBe("eddy: sc.json: turns: Invalid input: expected array, received number\n");
  });

  it("serves the mock server, prints its URL and stops on Ctrl-C", async () => {
    const r = await runCli(["mock", "--port", "0"], { signalWhen: "Ctrl-C stops it" });
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/v1\n$/);
    expect(r.stderr).toContain("stopped");
  });

  it("shows where each value comes from, with the key redacted", async () => {
    const env = cleanEnv({ OPENAI_API_KEY: "sk-proj-abcdefghijklmnop", EDDY_MODEL: "gpt-5-mini" });
    const r = await runCli(["config", "--workspace", workspace()], { env });
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/base_url\s+https:\/\/api\.openai\.com\/v1/);
    expect(r.stdout).toMatch(/api_key\s+sk-p…mnop\s+\(env: OPENAI_API_KEY\)/);
    expect(r.stdout).toMatch(/model\s+gpt-5-mini\s+\(env: EDDY_MODEL\)/);
    expect(r.stdout).not.toContain("abcdefghijklmnop");
  });

  it("never sends OPENAI_API_KEY to another host", async () => {
    const env = cleanEnv({
      OPENAI_API_KEY: "sk-proj-abcdefghijklmnop",
      OPENRESPONSES_BASE_URL: "http://127.0.0.1:9/v1",
    });
    const r = await runCli(["config"], { env, cwd: workspace() });
    expect(r.stdout).toMatch(/api_key\s+\(none\)/);
  });
});
