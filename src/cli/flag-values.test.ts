import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { runMainIn } from "../../test/support/in-process-cli.js";
import { parseFrames } from "../frames/jsonl.js";

/**
 * A value-taking option followed by a flag is a usage error on every command, never the flag
 * taken as the value (`eddy run --model --allow-write "…"` ran with the model "--allow-write" and
 * without the permission the user typed; src/cli/flag-values.ts).
 */

function cli(args: string[]) {
  return runMainIn(args, mkdtempSync(join(tmpdir(), "eddy-flag-values-")));
}

const dir = mkdtempSync(join(tmpdir(), "eddy-flag-values-files-"));
const tasks = join(dir, "tasks.jsonl");
writeFileSync(tasks, '{"id":"a","prompt":"hi"}\n');
const tape = join(dir, "t.tape");
writeFileSync(tape, "");

/** One usage line naming `option`, and how to give a value that starts with "-". */
function expectRefused(r: { code: number; stderr: string }, option: string, flag: string): void {
  expect(r.code, r.stderr).toBe(2);
  const lines = r.stderr.trim().split("\n");
  expect(lines).toHaveLength(1);
  expect(lines[0]).toContain(`${option} needs a value, but the next word is the flag ${flag}`);
  expect(lines[0]).toContain(`${option}=VALUE`);
}

describe("a value-taking option followed by a flag", () => {
  const cases: [string, string[], string, string][] = [
    ["run", ["run", "--model", "--allow-write", "write it"], "--model", "--allow-write"],
    ["run", ["run", "--instructions", "--allow-shell", "x"], "--instructions", "--allow-shell"],
    ["run", ["run", "--record", "--json", "x"], "--record", "--json"],
    ["run", ["run", "x", "--workspace", "--allow-write"], "--workspace", "--allow-write"],
    ["run", ["run", "--model", "-h", "x"], "--model", "-h"],
    ["run", ["run", "--instructions", "--", "x"], "--instructions", "--"],
    ["chat", ["chat", "--model", "--allow-write"], "--model", "--allow-write"],
    ["batch", ["batch", tasks, "--out", "--allow-write"], "--out", "--allow-write"],
    ["batch", ["batch", tasks, "--model", "--allow-shell", "--out", dir], "--model", "--allow-shell"],
    ["worker", ["worker", "--queue", "--concurrency", "2"], "--queue", "--concurrency"],
    ["serve", ["serve", "--host", "--token", "secret"], "--host", "--token"],
    ["serve", ["serve", "--token", "--allow-write"], "--token", "--allow-write"],
    ["resume", ["resume", tape, "--base-url", "--allow-write"], "--base-url", "--allow-write"],
    ["resume", ["resume", tape, "--decide", "--allow-write"], "--decide", "--allow-write"],
    ["replay", ["replay", tape, "--workspace", "--live-tools"], "--workspace", "--live-tools"],
    ["threads show", ["threads", "show", "t", "--workspace", "--json"], "--workspace", "--json"],
    ["config", ["config", "--model", "--allow-write"], "--model", "--allow-write"],
  ];

  it.each(cases)("eddy %s: %j is refused, exit 2", async (_name, args, option, flag) => {
    expectRefused(await cli(args), option, flag);
  });

  it("a number option given a negative number keeps the number's own error", async () => {
    const r = await cli(["run", "--max-turns", "-5", "x"]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('--max-turns must be an integer ≥ 1 (got "-5")');
  });

  it("--model=--weird is an explicit value: accepted", async () => {
    const r = await cli(["run", "--json", "--model=--weird", "hi"]);
    expect(r.code, r.stderr).toBe(0);
    expect(parseFrames(r.stdout)[0]).toMatchObject({ type: "run_started", model: "--weird" });
  });

  it("a value with a single dash that is no flag of the command stays a value (--instructions -x)", async () => {
    const r = await cli(["run", "--json", "--instructions", "-x", "hi"]);
    expect(r.code, r.stderr).toBe(0);
    expect(parseFrames(r.stdout)[0]).toMatchObject({ type: "run_started", instructions: "-x" });
    const dash = await cli(["run", "--json", "--instructions", "-", "hi"]);
    expect(parseFrames(dash.stdout)[0]).toMatchObject({ instructions: "-" });
  });

  it("after --, words are arguments: a prompt may start with --", async () => {
    const r = await cli(["run", "--json", "--", "--allow-write is not a flag here"]);
    expect(r.code, r.stderr).toBe(0);
    expect(parseFrames(r.stdout)[0]).toMatchObject({ input: "--allow-write is not a flag here" });
  });

  it("a flag-like word with control characters or of any length is quoted safely, on one line", async () => {
    const r = await cli(["run", "--model", "--\u001b]0;owned\u0007\u001b[2J\nx", "x"]);
    expect(r.code).toBe(2);
    expect(r.stderr).not.toContain("\u001b");
    expect(r.stderr.trim().split("\n")).toHaveLength(1);
    const long = await cli(["run", "--model", `--${"a".repeat(10_000)}`, "x"]);
    expect(long.code).toBe(2);
    expect(long.stderr.length).toBeLessThan(400);
    expect(long.stderr).toContain("…");
  });
});
