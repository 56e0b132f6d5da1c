/**
 * `eddy batch`'s tasks file is untrusted lines: a file of millions of bad lines is refused whole
 * in one line (exit 2) once it passes `BATCH_DEFAULTS.maxBadTaskLines`, before anything runs or is
 * written, so an earlier run's results in `--out` are kept; before, every line was parsed and said
 * on stderr, one line each (docs/pitfalls.md #109). Special files are refused as before.
 */
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { BATCH_DEFAULTS } from "../src/batch/defaults.js";
import { runMainIn } from "./support/in-process-cli.js";

const GOOD = '{"id": "a", "prompt": "hi"}';

function folder(): string {
  return mkdtempSync(join(tmpdir(), "eddy-batch-tasks-file-"));
}

/** The lines of a run's stderr. */
function lines(stderr: string): string[] {
  return stderr.trimEnd().split("\n");
}

/** What an `--out` folder holds, file by file. */
function contents(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const entry of readdirSync(dir, { recursive: true, withFileTypes: true }))
    if (entry.isFile()) {
      const path = join(entry.parentPath, entry.name);
      out[path] = readFileSync(path, "utf8");
    }
  return out;
}

describe("eddy batch: a tasks file of more bad lines than a tasks file has", () => {
  it("two million bad lines: one line naming the file, the count and what to do; exit 2; --out kept", async () => {
    const cwd = folder();
    writeFileSync(join(cwd, "tasks.jsonl"), `${GOOD}\n`);
    const first = await runMainIn(["batch", "tasks.jsonl", "--out", "out"], cwd);
    expect(first.code, first.stderr).toBe(0);
    const before = contents(join(cwd, "out"));
    expect(Object.keys(before).some((p) => p.endsWith("results.jsonl"))).toBe(true);

    writeFileSync(join(cwd, "tasks.jsonl"), `${GOOD}\n${'{"id": \n'.repeat(2_000_000)}`);
    const r = await runMainIn(["batch", "tasks.jsonl", "--out", "out"], cwd);
    expect(r.code).toBe(2);
    expect(lines(r.stderr)).toHaveLength(1);
    expect(r.stderr).toMatch(
      /^eddy: the tasks file tasks\.jsonl has more than 1,000 bad lines by line 1002 \(the first, line 2: not valid JSON \(.*\)\): it does not look like a tasks file \(one JSON task a line\); fix it and run again — no task was run and nothing was written\n$/,
    );
    expect(contents(join(cwd, "out"))).toEqual(before);
  });

  it("NUL bytes: two million lines of them are refused the same way, and none reaches stderr", async () => {
    const cwd = folder();
    writeFileSync(join(cwd, "tasks.jsonl"), "\u0000\n".repeat(2_000_000));
    const r = await runMainIn(["batch", "tasks.jsonl", "--out", "out"], cwd);
    expect(r.code).toBe(2);
    expect(lines(r.stderr)).toHaveLength(1);
    expect(r.stderr).toContain("more than 1,000 bad lines by line 1001 ");
    expect(r.stderr).not.toContain("\u0000");
  });

  it("as many bad lines as the bound: each said and skipped, the good task run (exit 1)", async () => {
    const cwd = folder();
    const max = BATCH_DEFAULTS.maxBadTaskLines;
    writeFileSync(join(cwd, "tasks.jsonl"), `${"x\n".repeat(max)}${GOOD}\n`);
    const r = await runMainIn(["batch", "tasks.jsonl", "--out", "out"], cwd);
    expect(r.code, r.stderr).toBe(1);
    expect(lines(r.stderr).filter((l) => l.endsWith("; skipped"))).toHaveLength(max);
    expect(readFileSync(join(cwd, "out", "results.jsonl"), "utf8")).toContain('"id":"a"');
  });

  it("one huge line is one bad line, said in one bounded line; the good task runs", async () => {
    const cwd = folder();
    writeFileSync(join(cwd, "tasks.jsonl"), `${GOOD}\n${"x".repeat(20 * 1024 * 1024)}\n`);
    const r = await runMainIn(["batch", "tasks.jsonl", "--out", "out"], cwd);
    expect(r.code, r.stderr.slice(0, 500)).toBe(1);
    const skipped = lines(r.stderr).filter((l) => l.endsWith("; skipped"));
    expect(skipped).toHaveLength(1);
    expect(skipped[0]).toMatch(/^eddy: tasks\.jsonl line 2: not valid JSON/);
    expect(skipped[0]?.length).toBeLessThan(300);
  });
});

describe("eddy batch: a tasks file that is not a regular file", () => {
  it.each([
    ["a FIFO", (dir: string) => spawnSync("mkfifo", [join(dir, "tasks.jsonl")]), "is a FIFO (named pipe)"],
    ["a directory", (dir: string) => mkdirSync(join(dir, "tasks.jsonl")), "is a directory"],
  ])("%s: one line, exit 2, nothing written", async (_what, make, said) => {
    const cwd = folder();
    make(cwd);
    const r = await runMainIn(["batch", "tasks.jsonl", "--out", "out"], cwd);
    expect(r.code).toBe(2);
    expect(r.stderr).toBe(`eddy: the tasks file tasks.jsonl ${said}, not a regular file: give a file\n`);
    expect(readdirSync(cwd)).toEqual(["tasks.jsonl"]);
  });
});
