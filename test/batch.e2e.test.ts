/**
 * End-to-end: `eddy batch` in one process against `eddy mock` (the demo model, real file tools):
 * 200 tasks at `--concurrency 16` all complete, and running the same command again sends no
 * request. Bad lines are reported with their line numbers and skipped.
 */
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { holdBatchDir, type ResultLine } from "../src/batch/batch-dir.js";
import { readTape } from "../src/replay/tape.js";
import { runCli } from "./support/cli.js";
import { type CliProcess, startCli, until } from "./support/cli-process.js";

let mock: CliProcess;
let url: string;
const requests = () => mock.stderr.split("\n").filter((l) => l.includes("POST /v1/responses")).length;

beforeAll(async () => {
  mock = startCli(["mock"]);
  await until(() => mock.stdout.includes("http://"), "eddy mock to listen");
  url = mock.stdout.trim();
});
afterAll(async () => {
  mock.child.kill("SIGINT");
  await mock.exited;
});

function workspace(tasks: string[]): string {
  const dir = mkdtempSync(join(tmpdir(), "eddy-batch-e2e-"));
  writeFileSync(join(dir, "package.json"), `${JSON.stringify({ name: "batch-demo", version: "3.1.0" })}\n`);
  writeFileSync(join(dir, "tasks.jsonl"), `${tasks.join("\n")}\n`);
  return dir;
}

const results = (dir: string): ResultLine[] =>
  readFileSync(join(dir, "out", "results.jsonl"), "utf8")
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l) as ResultLine);

describe("eddy batch in one process (slow: 200 runs)", () => {
  it("200 tasks at --concurrency 16 all complete; the same command again sends no request", async () => {
    const tasks = Array.from({ length: 200 }, (_, i) =>
      JSON.stringify({ id: `task-${i}`, prompt: `What is in package.json? (${i})`, metadata: { n: i } }),
    );
    const cwd = workspace(tasks);
    const args = [
      "batch",
      "tasks.jsonl",
      "--out",
      "out",
      "--concurrency",
      "16",
      "--base-url",
      url,
      "--model",
      "eddy-demo",
    ];
    const first = await runCli(args, { cwd, timeoutMs: 120_000 });
    expect(first.code, first.stderr).toBe(0);
    const lines = results(cwd);
    expect(lines).toHaveLength(200);
    expect(new Set(lines.map((l) => l.id)).size).toBe(200);
    expect(lines.every((l) => l.reason === "completed" && l.output_text.includes("batch-demo"))).toBe(true);
    expect(lines.every((l) => l.tool_calls === 1 && l.turns === 2 && l.error === null)).toBe(true);
    expect(lines.find((l) => l.id === "task-7")?.metadata).toEqual({ n: 7 });
    // Piped: one line per task on stdout, the closing line on stderr.
    expect(first.stdout.trim().split("\n")).toHaveLength(200);
    expect(first.stdout).toMatch(/^✓ task-\d+ completed · 2 turns · 1 tool call · /m);
    expect(first.stderr).toMatch(
      /eddy batch: 200 tasks · 200 completed · 0 failed · [\d,]+ in \/ [\d,]+ out tokens/,
    );
    const summary = JSON.parse(readFileSync(join(cwd, "out", "summary.json"), "utf8"));
    expect(summary).toMatchObject({
      tasks: 200,
      finished: 200,
      pending: 0,
      failed: 0,
      by_reason: { completed: 200 },
    });
    expect(summary.duration_ms.p95).toBeGreaterThanOrEqual(summary.duration_ms.p50);
    const tape = readTape(join(cwd, "out", "tapes", "task-42.tape"));
    expect(tape.frames.at(-1)).toMatchObject({ type: "run_ended", reason: "completed" });
    expect(lines.find((l) => l.id === "task-42")?.tape).toBe("tapes/task-42.tape");
    const sent = requests();
    expect(sent).toBeGreaterThanOrEqual(400);

    const second = await runCli(args, { cwd });
    expect(second.code, second.stderr).toBe(0);
    expect(second.stdout).toBe("");
    expect(requests()).toBe(sent);
    expect(results(cwd)).toHaveLength(200);
    expect((await runCli(["replay", join("out", "tapes", "task-42.tape")], { cwd })).code).toBe(0);
  }, 150_000);

  it("reports bad lines with their numbers, skips them and runs the rest", async () => {
    const cwd = workspace([
      '{"id": "a", "prompt": "hello"}',
      "{not json",
      '{"id": "b"}',
      '{"id": "a", "prompt": "again"}',
      '{"id": "c", "prompt": "hello there"}',
    ]);
    const r = await runCli(
      ["batch", "tasks.jsonl", "--out", "out", "--base-url", url, "--model", "eddy-demo"],
      { cwd },
    );
    expect(r.stderr).toMatch(/tasks\.jsonl line 2: not valid JSON .*; skipped/);
    expect(r.stderr).toContain('tasks.jsonl line 3: no "prompt" (or "input" items); skipped');
    expect(r.stderr).toContain('tasks.jsonl line 4: duplicate id "a" (first on line 1); skipped');
    expect(r.stderr).toContain("3 bad lines skipped");
    expect(r.code).toBe(1);
    expect(
      results(cwd)
        .map((l) => l.id)
        .sort(),
    ).toEqual(["a", "c"]);
  }, 150_000);

  it("says which tasks ask a budget above the batch's, and runs them with the batch's", async () => {
    const cwd = workspace([
      '{"id": "big", "prompt": "hello", "max_turns": 50}',
      '{"id": "bigger", "prompt": "hello", "max_turns": 90, "max_tool_calls": 5}',
      '{"id": "small", "prompt": "hello", "max_turns": 2}',
    ]);
    const args = ["batch", "tasks.jsonl", "--out", "out", "--base-url", url, "--model", "eddy-demo"];
    const r = await runCli([...args, "--max-tool-calls", "4"], { cwd });
    expect(r.code).toBe(0);
    expect(r.stderr).toContain(
      'eddy: 2 tasks ("big" first) ask max_turns 50, above this batch\'s 20: they run with 20 (give --max-turns to allow more)',
    );
    expect(r.stderr).toContain(
      'eddy: task "bigger" asks max_tool_calls 5, above this batch\'s 4: it runs with 4 (give --max-tool-calls to allow more)',
    );
    const spec = (id: string) => readTape(join(cwd, "out", "tapes", `${id}.tape`)).header.spec;
    expect([spec("big").max_turns, spec("bigger").max_turns, spec("small").max_turns]).toEqual([20, 20, 2]);
    expect(spec("bigger").max_tool_calls).toBe(4);
  }, 150_000);

  it("--retry-failed runs only the failures again; without it they stay as they were", async () => {
    const tasks = Array.from({ length: 6 }, (_, i) =>
      JSON.stringify(
        i % 2 === 0
          ? { id: `t${i}`, prompt: `What is in package.json? (${i})` }
          : { id: `t${i}`, prompt: `Say hello (${i})` },
      ),
    );
    const cwd = workspace(tasks);
    const args = ["batch", "tasks.jsonl", "--out", "out", "--base-url", url, "--model", "eddy-demo"];
    // One turn is not enough for the tasks that need the tool: they end max_turns.
    const first = await runCli([...args, "--max-turns", "1"], { cwd });
    expect(first.code, first.stderr).toBe(1);
    const reasons = () => Object.fromEntries(results(cwd).map((l) => [l.id, l.reason]));
    expect(reasons()).toEqual({
      t0: "max_turns",
      t1: "completed",
      t2: "max_turns",
      t3: "completed",
      t4: "max_turns",
      t5: "completed",
    });
    const sent = requests();
    const again = await runCli(args, { cwd });
    expect(again.code).toBe(1);
    expect(requests()).toBe(sent);
    const retried = await runCli([...args, "--retry-failed"], { cwd });
    expect(retried.code, retried.stderr).toBe(0);
    expect(
      retried.stdout
        .trim()
        .split("\n")
        .map((l) => l.split(" ")[1])
        .sort(),
    ).toEqual(["t0", "t2", "t4"]);
    // Two requests for each of the three retried tasks, none for the others.
    expect(requests()).toBe(sent + 6);
    expect(results(cwd)).toHaveLength(6);
    expect(Object.values(reasons()).every((r) => r === "completed")).toBe(true);
    const summary = JSON.parse(readFileSync(join(cwd, "out", "summary.json"), "utf8"));
    expect(summary).toMatchObject({ tasks: 6, finished: 6, failed: 0, by_reason: { completed: 6 } });
    // Each of the three invocations kept: what it ran and its wall time, added up in wall_ms.
    expect(summary.runs.map((r: { tasks_run: number }) => r.tasks_run)).toEqual([6, 0, 3]);
    expect(summary.wall_ms).toBe(
      summary.runs.reduce((n: number, r: { wall_ms: number }) => n + r.wall_ms, 0),
    );
    expect(retried.stderr).toMatch(/ over 3 runs\) → /);
    // eddy view reads the folder: a row per task, each task's tape found.
    const view = await runCli(["view", "out", "--out", "page.html", "--no-open"], { cwd });
    expect(view.code, view.stderr).toBe(0);
    const page = readFileSync(join(cwd, "page.html"), "utf8");
    const index = JSON.parse(
      /<script type="[^"]+" id="eddy-index">([^<]*)<\/script>/.exec(page)?.[1] ?? "{}",
    );
    const rows = index.batch.rows as { id: string; reason: string; run?: number; tape_problem?: string }[];
    expect(rows.map((r) => r.id).sort()).toEqual(["t0", "t1", "t2", "t3", "t4", "t5"]);
    expect(
      rows.every((r) => r.reason === "completed" && r.run !== undefined && r.tape_problem === undefined),
    ).toBe(true);
  }, 150_000);

  it("refuses what cannot work before sending anything", async () => {
    const cwd = workspace(['{"id": "a", "prompt": "hello"}']);
    const missing = await runCli(["batch", "nope.jsonl", "--out", "out"], { cwd });
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/cannot read the tasks file nope\.jsonl: ENOENT/);
    const noOut = await runCli(["batch", "tasks.jsonl"], { cwd });
    expect(noOut.code).toBe(2);
    expect(noOut.stderr).toMatch(/--out/);
    const badQueue = await runCli(
      ["batch", "tasks.jsonl", "--out", "out", "--queue", "redis://127.0.0.1:1"],
      { cwd },
    );
    expect(badQueue.code).toBe(2);
    expect(badQueue.stderr).toMatch(/cannot reach Redis at 127\.0\.0\.1:1 \(ECONNREFUSED\)/);
  }, 150_000);
});

describe("one batch at a time in a folder", () => {
  it("a second eddy batch on a folder another holds is refused (exit 2) and writes nothing; once let go it runs", async () => {
    const cwd = workspace([JSON.stringify({ id: "only", prompt: "What is in package.json?" })]);
    const args = ["batch", "tasks.jsonl", "--out", "out", "--base-url", url, "--model", "eddy-demo"];
    const held = await holdBatchDir(join(cwd, "out"), "eddy batch");
    const refused = await runCli(args, { cwd });
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(
      /the batch folder .*out is in use by another "eddy batch", process \d+: wait for it to end, or give another --out/,
    );
    expect(existsSync(join(cwd, "out", "results.jsonl"))).toBe(false);
    await held.release();
    const ran = await runCli(args, { cwd });
    expect(ran.code, ran.stderr).toBe(0);
    expect(results(cwd).map((r) => r.id)).toEqual(["only"]);
    // Let go when it ended.
    expect(existsSync(join(cwd, "out", "batch.lock"))).toBe(false);
  });
});
