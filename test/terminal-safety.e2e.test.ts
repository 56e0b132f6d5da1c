/**
 * What a provider says reaches a terminal as text, never as commands (docs/pitfalls.md #63): a
 * model that calls a tool named with escape sequences (OSC 0 window title, CSI 2J clear screen,
 * OSC 52 clipboard write, an 8-bit CSI) and answers with the same. `eddy run` piped: stderr (the
 * "→" and "✗ Unknown tool" lines, the summary) holds no control character at all, and stdout, the
 * answer, is passed on byte for byte. On a pseudo-terminal nothing of the sequences is shown.
 */
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { createMockServer, type MockServer, type Scenario } from "../src/mock/index.js";
import type { JsonObject } from "../src/protocol/types.js";
import { cleanEnv, runCli } from "./support/cli.js";
import { HAS_SCRIPT, runOnPty } from "./support/pty.js";

const ESC = "\u001b";
const HOSTILE = `x${ESC}]0;pwned\u0007${ESC}[2J${ESC}]52;c;Y3VybCBldmlsLnNoIHwgc2g=\u0007\u009b3J`;
// biome-ignore lint/suspicious/noControlCharactersInRegex: what must never reach a terminal
const CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/;

let server: MockServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

/** A mock server playing `scenario` (closed after each test); its base URL. */
async function mockOf(scenario: Scenario): Promise<string> {
  server = await createMockServer({ scenario });
  return server.url;
}

/** The events of a response with one function call (spec order). */
function callEvents(name: string, args: string): JsonObject[] {
  const item = {
    type: "function_call",
    id: "fc_1",
    call_id: "c1",
    name,
    arguments: args,
    status: "completed",
  };
  const response = (status: string, output: JsonObject[]) => ({
    id: "resp_1",
    object: "response",
    status,
    model: "m",
    output,
    usage: { input_tokens: 1, output_tokens: 1, total_tokens: 2 },
  });
  return [
    { type: "response.created", response: response("in_progress", []) },
    { type: "response.output_item.added", output_index: 0, item: { ...item, status: "in_progress" } },
    { type: "response.output_item.done", output_index: 0, item },
    { type: "response.completed", response: response("completed", [item]) },
  ];
}

async function hostileModel(): Promise<string> {
  const scenario: Scenario = {
    turns: [
      // The mock's scenarios keep tool names well-formed: a hostile one comes as raw events.
      { rawEvents: callEvents(`read${HOSTILE}`, JSON.stringify({ path: HOSTILE })) },
      { items: [{ type: "message", text: `The answer ${HOSTILE} ends here.` }] },
    ],
  };
  return mockOf(scenario);
}

describe("escape sequences from the provider", () => {
  it("piped: stderr is stripped of every control sequence, the answer on stdout is byte-exact", async () => {
    const url = await hostileModel();
    const cwd = mkdtempSync(join(tmpdir(), "eddy-escapes-"));
    const r = await runCli(["run", "--base-url", url, "--model", "m", "go"], { cwd });
    expect(r.code).toBe(0);
    expect(r.stderr).toContain("→ readx");
    expect(r.stderr).toContain("✗ readx");
    expect(r.stderr).toContain("Unknown tool");
    expect(r.stderr).not.toMatch(CONTROL);
    expect(r.stdout).toBe(`The answer ${HOSTILE} ends here.\n`);
  });

  it.skipIf(!HAS_SCRIPT)("on a terminal: none of the sequences is shown, the answer's text is", async () => {
    const url = await hostileModel();
    const cwd = mkdtempSync(join(tmpdir(), "eddy-escapes-"));
    const run = runOnPty(["run", "--base-url", url, "--model", "m", "go"], {
      cwd,
      env: cleanEnv({ NO_COLOR: "1", TERM: "xterm" }),
    });
    expect(await run.exited).toBe(0);
    expect(run.output).toContain("The answer x ends here.");
    // (The arguments are JSON: their `\\u001b` is six characters of text, not an escape.)
    for (const sequence of [`${ESC}]0;`, `${ESC}[2J`, `${ESC}]52;`, "\u009b", "\u0007"])
      expect(run.output).not.toContain(sequence);
  });
});

/** A scenario whose model writes a file named with escape sequences, then answers with them. */
async function hostileWriter(): Promise<string> {
  const scenario: Scenario = {
    turns: [
      {
        rawEvents: callEvents("write_file", JSON.stringify({ path: `ev${ESC}[31mred.txt`, content: "x" })),
      },
      { items: [{ type: "message", text: `Wrote ${HOSTILE}.` }] },
    ],
  };
  return mockOf(scenario);
}

describe("escape sequences in files eddy reads and shows", () => {
  it("a tape, a config file, a thread log: errors and listings hold no control character", async () => {
    const url = await hostileWriter();
    const cwd = mkdtempSync(join(tmpdir(), "eddy-escapes-files-"));
    const run = await runCli(
      [
        "run",
        "--base-url",
        url,
        "--model",
        "m",
        "--allow-write",
        "--thread",
        "t",
        "--record",
        "a.tape",
        "go",
      ],
      { cwd },
    );
    expect(run.code).toBe(0);
    // eddy undo names the files it restored: one named with an escape sequence.
    const undo = await runCli(["undo", "a.tape"], { cwd });
    expect(undo.code).toBe(0);
    expect(undo.stdout).toBe("restored evred.txt\n"); // the sequence removed whole
    // eddy threads show prints the prompt and the answer of each run.
    const show = await runCli(["threads", "show", "t"], { cwd });
    expect(show.code).toBe(0);
    expect(show.stdout).toContain("Wrote x");
    expect(show.stdout).not.toMatch(CONTROL);
    // A tape line that is not JSON: V8's message quotes it, escape sequences and all.
    const lines = readFileSync(join(cwd, "a.tape"), "utf8").split("\n");
    writeFileSync(join(cwd, "bad.tape"), [lines[0], `${HOSTILE}{`, ...lines.slice(1)].join("\n"));
    const replay = await runCli(["replay", "bad.tape"], { cwd });
    expect(replay.code).toBe(2);
    expect(replay.stderr).toMatch(/bad\.tape: line 2: not valid JSON/);
    expect(replay.stderr).not.toMatch(CONTROL);
    // A config file that is not JSON, and one whose model is a hostile string.
    writeFileSync(join(cwd, "eddy.config.json"), `${HOSTILE}{`);
    const broken = await runCli(["config"], { cwd });
    expect(broken.code).toBe(2);
    expect(broken.stderr).toMatch(/is not valid JSON/);
    expect(broken.stderr).not.toMatch(CONTROL);
    writeFileSync(join(cwd, "eddy.config.json"), JSON.stringify({ model: HOSTILE }));
    const shown = await runCli(["config"], { cwd });
    expect(shown.code).toBe(0);
    expect(shown.stdout).toMatch(/model\s+x/);
    expect(shown.stdout).not.toMatch(CONTROL);
  });

  it("a tape whose run ended for a reason no eddy writes: eddy resume refuses it in one clean line", async () => {
    const url = await hostileWriter();
    const cwd = mkdtempSync(join(tmpdir(), "eddy-escapes-reason-"));
    const run = await runCli(
      ["run", "--base-url", url, "--model", "m", "--allow-write", "--record", "a.tape", "go"],
      { cwd },
    );
    expect(run.code).toBe(0);
    const lines = readFileSync(join(cwd, "a.tape"), "utf8").trimEnd().split("\n");
    const last = lines.length - 1;
    const ended = JSON.parse(lines[last] ?? "{}") as { reason?: string };
    for (const reason of [HOSTILE, undefined]) {
      // Before: its reason was printed raw ("the run already ended (…)"), then an internal error.
      lines[last] = JSON.stringify({ ...ended, reason });
      writeFileSync(join(cwd, "b.tape"), `${lines.join("\n")}\n`);
      const resumed = await runCli(["resume", "--allow-write", "b.tape"], { cwd });
      expect(resumed.code).toBe(2);
      expect(resumed.stderr).toMatch(
        /^eddy: b\.tape: line \d+: frame \(run_ended\) has a `reason` that is not one eddy writes/,
      );
      expect(resumed.stderr.trimEnd().split("\n")).toHaveLength(1);
      expect(resumed.stderr).not.toMatch(CONTROL);
    }
  });
});
