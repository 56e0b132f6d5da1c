/**
 * `eddy resume TAPE` takes its budgets from the invocation, never from the tape: a tape may lower
 * `max_turns`, `max_tool_calls`, … never raise them above this invocation's (`--max-turns`, …,
 * else the defaults), says so on stderr in one line, and its resumed tape's header shows what the
 * run had (src/batch/resume-budgets.ts). Run in-process against the mock server.
 */
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { LOOP_DEFAULTS } from "../src/loop/defaults.js";
import { createMockServer, type MockServer } from "../src/mock/index.js";
import type { Scenario } from "../src/mock/scenario.js";
import { readTape } from "../src/replay/tape.js";
import { runMainIn } from "./support/in-process-cli.js";

let mock: MockServer | undefined;
afterEach(async () => {
  await mock?.close();
  mock = undefined;
});

const cli = runMainIn;

/**
 * A write the user must approve (deferred), then `reads` read-only calls, each different (so no
 * `no_progress`), then an answer: a run that goes on as long as its budget lets it.
 */
function scenario(reads: number): Scenario {
  const read = (i: number) => ({
    items: [{ type: "function_call" as const, name: "read_file", arguments: { path: `f${i}.txt` } }],
  });
  return {
    turns: [
      {
        items: [{ type: "function_call", name: "write_file", arguments: { path: "n.txt", content: "hi\n" } }],
      },
      ...Array.from({ length: reads }, (_, i) => read(i)),
      { items: [{ type: "message", text: "all read" }] },
    ],
  };
}

/** `eddy run --approve defer` recorded as t.tape with `budgets` (flags), in a fresh workspace. */
async function deferredTape(reads: number, ...budgets: string[]): Promise<{ cwd: string; url: string }> {
  mock = await createMockServer({ scenario: scenario(reads) });
  const cwd = mkdtempSync(join(tmpdir(), "eddy-resume-budgets-"));
  const run = await cli(
    [
      "run",
      "--allow-write",
      "--approve",
      "defer",
      "--record",
      join(cwd, "t.tape"),
      "--base-url",
      mock.url,
      "--model",
      "m",
    ]
      .concat(budgets)
      .concat(["write it"]),
    cwd,
  );
  expect(run.code, run.stderr).toBe(4);
  return { cwd, url: mock.url };
}

/** Paths are absolute: a command run in-process reads a relative one from the test process's folder. */
const resumeArgs = (cwd: string, url: string, ...more: string[]) => [
  "resume",
  join(cwd, "t.tape"),
  "--allow-write",
  "--decide",
  "all=allow",
  "--base-url",
  url,
  ...more,
];

describe("eddy resume: the tape's budgets are capped by the invocation's", () => {
  it("a tape asking 100000 turns runs with the default 20, says so in one line, and its header shows 20", async () => {
    const { cwd, url } = await deferredTape(40, "--max-turns", "100000", "--max-tool-calls", "1000000");
    expect(readTape(join(cwd, "t.tape")).header.spec).toMatchObject({ max_turns: 100_000 });
    const r = await cli(resumeArgs(cwd, url), cwd);
    // Stopped by the limit it has (exit 3), not by the tape's (it would have read all 40 files).
    expect(r.code, r.stderr).toBe(3);
    const notice = r.stderr.split("\n").filter((l) => l.includes("more than this invocation allows"));
    expect(notice).toEqual([
      `eddy: ${join(cwd, "t.tape")} asks max_turns 100000, max_tool_calls 1000000, more than this invocation allows: it runs with max_turns ${LOOP_DEFAULTS.maxTurns}, max_tool_calls ${LOOP_DEFAULTS.maxToolCalls} (give --max-turns, --max-tool-calls to allow more)`,
    ]);
    const resumed = readTape(join(cwd, "t.tape"));
    expect(resumed.header.spec).toMatchObject({
      max_turns: LOOP_DEFAULTS.maxTurns,
      max_tool_calls: LOOP_DEFAULTS.maxToolCalls,
    });
    const ended = resumed.frames.at(-1);
    expect(ended).toMatchObject({ type: "run_ended", reason: "max_turns", turns: LOOP_DEFAULTS.maxTurns });
    // The resumed tape replays as one run, under its header's spec.
    expect((await cli(["replay", join(cwd, "t.tape")], cwd)).code).toBe(0);
  });

  it("--max-turns and --max-tool-calls are the ceilings on resume (accepted, not refused)", async () => {
    const { cwd, url } = await deferredTape(40, "--max-turns", "100000");
    const r = await cli(resumeArgs(cwd, url, "--max-turns", "5", "--max-tool-calls", "100"), cwd);
    expect(r.code, r.stderr).toBe(3);
    expect(r.stderr).toContain(
      `eddy: ${join(cwd, "t.tape")} asks max_turns 100000, more than this invocation allows: it runs with max_turns 5 (give --max-turns to allow more)`,
    );
    const resumed = readTape(join(cwd, "t.tape"));
    // A ceiling, not a setting: the tape's 32 tool calls stay 32 under --max-tool-calls 100.
    expect(resumed.header.spec).toMatchObject({ max_turns: 5, max_tool_calls: LOOP_DEFAULTS.maxToolCalls });
    expect(resumed.frames.at(-1)).toMatchObject({ reason: "max_turns", turns: 5 });
  });

  it("a tape within the invocation's budgets resumes as recorded, with no notice", async () => {
    const { cwd, url } = await deferredTape(3, "--max-turns", "30");
    const r = await cli(resumeArgs(cwd, url, "--max-turns", "30"), cwd);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).not.toContain("more than this invocation allows");
    expect(readTape(join(cwd, "t.tape")).header.spec).toMatchObject({ max_turns: 30 });
  });

  it("a tape whose recorded run already made more requests than it may now is refused (exit 2), naming the flag; nothing is sent", async () => {
    const { cwd, url } = await deferredTape(40, "--max-turns", "100000", "--max-tool-calls", "100");
    // Resumed with room for every turn, then killed while its 26th request was in flight.
    const first = await cli(
      resumeArgs(
        cwd,
        url,
        "--max-turns",
        "100000",
        "--max-tool-calls",
        "100",
        "--record",
        join(cwd, "long.tape"),
      ),
      cwd,
    );
    expect(first.code, first.stderr).toBe(0);
    const lines = readFileSync(join(cwd, "long.tape"), "utf8").trimEnd().split("\n");
    let requests = 0;
    const cut = lines.findIndex((l) => l.includes('"type":"request_started"') && ++requests === 26);
    writeFileSync(join(cwd, "cut.tape"), `${lines.slice(0, cut + 1).join("\n")}\n`);
    const before = mock?.requests.length;
    const r = await cli(["resume", join(cwd, "cut.tape"), "--allow-write", "--base-url", url], cwd);
    expect(r.code).toBe(2);
    expect(r.stderr.trim().split("\n")).toEqual([
      `eddy: the tape's run already made 26 model requests, more than the ${LOOP_DEFAULTS.maxTurns} this invocation allows (max_turns; the tape asks 100000): resume it with --max-turns 26 or more`,
    ]);
    expect(mock?.requests.length).toBe(before);
    const ok = await cli(
      ["resume", join(cwd, "cut.tape"), "--allow-write", "--base-url", url, "--max-turns", "26"],
      cwd,
    );
    expect(ok.stderr).not.toContain("already made");
  });
});

describe("eddy resume: hostile budgets", () => {
  const bad: [string, string][] = [
    ["--max-turns", "many"],
    ["--max-turns", "-5"],
    ["--max-turns", "0"],
    ["--max-turns", "2.5"],
    ["--max-turns", "99999999999999999999999"],
    ["--max-turns", "200000"],
    ["--max-turns", "\u001b[31m7"],
    ["--max-tool-calls", "lots"],
    ["--max-tool-calls", "-1"],
    ["--max-tool-calls", "0"],
    ["--max-tool-calls", "1e9"],
    ["--tool-concurrency", "0"],
    ["--tool-concurrency", "many"],
    ["--max-output-tokens", "-3"],
    ["--max-output-tokens", "x"],
  ];

  it.each(bad)("eddy resume %s %j is one usage line, exit 2", async (flag, value) => {
    const { cwd, url } = await deferredTape(1);
    const before = mock?.requests.length;
    const r = await cli(resumeArgs(cwd, url, flag, value), cwd);
    expect(r.code).toBe(2);
    const lines = r.stderr.trim().split("\n");
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(
      /max_turns|max_tool_calls|tool_concurrency|max_output_tokens|--max-|--tool-concurrency/,
    );
    expect(r.stderr).not.toContain("\u001b");
    expect(r.stderr).not.toMatch(/internal error|\n\s+at /);
    expect(mock?.requests.length).toBe(before);
  });

  const tapes: [string, unknown][] = [
    ["max_turns", 1e9],
    ["max_turns", -3],
    ["max_turns", 2.5],
    ["max_turns", "many"],
    ["max_tool_calls", 0],
    ["max_tool_calls", 1e12],
    ["tool_concurrency", -1],
    ["tool_timeout_ms", "forever"],
  ];

  it.each(tapes)(
    "a tape whose spec asks %s %j is refused: one line, exit 2, nothing sent",
    async (field, value) => {
      const { cwd, url } = await deferredTape(1);
      const lines = readFileSync(join(cwd, "t.tape"), "utf8").split("\n");
      const header = JSON.parse(lines[0] as string);
      header.spec[field] = value;
      writeFileSync(join(cwd, "t.tape"), [JSON.stringify(header), ...lines.slice(1)].join("\n"));
      const before = mock?.requests.length;
      const r = await cli(resumeArgs(cwd, url), cwd);
      expect(r.code).toBe(2);
      expect(r.stderr.trim().split("\n")).toHaveLength(1);
      expect(r.stderr).toContain(`t.tape: tape header spec: ${field}`);
      expect(mock?.requests.length).toBe(before);
    },
  );
});
