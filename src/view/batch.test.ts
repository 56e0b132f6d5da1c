import { mkdirSync, mkdtempSync, realpathSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { readBatchFolder } from "./batch.js";
import { collectViewInput } from "./load.js";
import type { PageRun } from "./page.js";

const tapeText = (runId: string) =>
  `${[
    {
      type: "tape_header",
      format: 1,
      eddy_version: "0.1.0",
      run_id: runId,
      model: "m",
      mode: "chained",
      input: "go",
      tools: [],
      limits: { max_tool_calls: 1, max_turns: 1 },
      provider: { name: "mock", capabilities: {} },
      options: {},
      workspace: ".",
    },
    {
      run_id: runId,
      seq: 0,
      ts: 1,
      type: "run_started",
      model: "m",
      mode: "chained",
      input: "go",
      tools: [],
    },
    {
      run_id: runId,
      seq: 1,
      ts: 5,
      type: "run_ended",
      reason: "completed",
      output_text: "ok",
      response_id: null,
      usage: { input_tokens: 1, output_tokens: 1 },
      turns: 0,
      tool_calls: 0,
    },
  ]
    .map((o) => JSON.stringify(o))
    .join("\n")}\n`;

function batchDir(): string {
  const dir = mkdtempSync(join(tmpdir(), "eddy-batch-view-"));
  mkdirSync(join(dir, "tapes"));
  writeFileSync(join(dir, "tapes", "a.tape"), tapeText("run_a"));
  writeFileSync(join(dir, "tapes", "b.tape"), tapeText("run_b"));
  writeFileSync(join(dir, "tapes", "bad.tape"), "not a tape\n");
  writeFileSync(join(dir, "elsewhere.tape"), tapeText("run_c"));
  const line = (o: Record<string, unknown>) => JSON.stringify(o);
  writeFileSync(
    join(dir, "results.jsonl"),
    [
      line({ id: "a", reason: "failed", duration_ms: 1 }),
      line({
        id: "a",
        reason: "completed",
        output_text: "\n\nfirst line\nsecond",
        usage: { input_tokens: 10, output_tokens: 2 },
        turns: 2,
        tool_calls: 1,
        duration_ms: 120,
        tape: "tapes/a.tape",
        error: null,
      }),
      line({ id: "b", reason: "completed", duration_ms: 80 }), // no tape field: tapes/b.tape by convention
      line({
        id: "c",
        reason: "max_turns",
        tape: join(dir, "elsewhere.tape"),
        error: { code: "max_turns", message: "20 turns" },
      }),
      "[1,2]",
      "",
      line({ reason: "completed" }),
      line({ id: 7, reason: "provider_error", error: "HTTP 503", tape: "tapes/bad.tape" }),
      line({ id: "gone", reason: "completed", tape: "tapes/gone.tape" }),
      "{",
    ].join("\n"),
  );
  writeFileSync(
    join(dir, "summary.json"),
    JSON.stringify({ counts: { completed: 2 }, wall_ms: 900, p95: [1, 2] }),
  );
  return dir;
}

describe("readBatchFolder", () => {
  it("reads results.jsonl (last line per task wins), reports bad lines, flattens summary.json", () => {
    const dir = batchDir();
    const { view, tapes } = readBatchFolder(dir);
    expect(view.rows.map((r) => r.id)).toEqual(["a", "b", "c", "7", "gone"]);
    expect(view.rows[0]).toEqual({
      id: "a",
      reason: "completed",
      turns: 2,
      tool_calls: 1,
      tokens_in: 10,
      tokens_out: 2,
      duration_ms: 120,
      output: "first line",
    });
    expect(view.rows[1]).toMatchObject({ id: "b", turns: null, tokens_in: null, duration_ms: 80 });
    expect(view.rows[2]?.error).toBe("max_turns: 20 turns");
    expect(view.rows[3]?.error).toBe("HTTP 503");
    expect(tapes).toEqual([
      join(dir, "tapes/a.tape"),
      join(dir, "tapes", "b.tape"),
      join(dir, "elsewhere.tape"),
      join(dir, "tapes/bad.tape"),
      join(dir, "tapes/gone.tape"),
    ]);
    expect(view.problems).toEqual([
      "results.jsonl line 5: not a JSON object",
      'results.jsonl line 7: no "id"',
      "results.jsonl line 10: not valid JSON",
    ]);
    expect(view.summary).toEqual([
      ["Counts completed", "2"],
      ["Wall time", "900 ms"],
      ["P95", "[1,2]"],
    ]);
  });

  it("labels eddy's summary.json in words; reasons come from the rows, so by_reason is left out", () => {
    const dir = batchDir();
    writeFileSync(
      join(dir, "summary.json"),
      JSON.stringify({
        tasks: 5,
        by_reason: { completed: 2 },
        usage: { input_tokens: 1200 },
        duration_ms: { p50: 80 },
        wall_ms: 1500,
        runs: [
          { started_at: "2026-01-01T00:00:00.000Z", wall_ms: 1000, tasks_run: 4 },
          { started_at: "2026-01-02T00:00:00.000Z", wall_ms: 500, tasks_run: 1 },
        ],
      }),
    );
    expect(readBatchFolder(dir).view.summary).toEqual([
      ["Tasks in the file", "5"],
      ["Tokens in", "1,200"],
      ["Duration p50", "80 ms"],
      ["Wall time", "1.50 s"],
      ["Runs", "2 (1.00 s + 500 ms)"],
    ]);
  });

  it("links each row to its run as the page consumes the runs; unreadable tapes say why", () => {
    const dir = batchDir();
    const input = collectViewInput([dir]);
    const runs = [...(input.runs as Iterable<PageRun>)];
    expect(runs.map((r) => r.entry.run_id)).toEqual(["run_a", "run_b", "run_c"]);
    const rows = input.batch?.rows ?? [];
    expect(rows.map((r) => r.run)).toEqual([0, 1, 2, undefined, undefined]);
    expect(rows[3]?.tape_problem).toContain("bad.tape: line 1 is not a JSON object");
    expect(rows[4]?.tape_problem).toContain("ENOENT");
    expect(input.title).toMatch(/^eddy batch — eddy-batch-view-\w+ \(5 tasks\)$/);
  });
});

/** A tape holding `secret` in its answer, in a folder of its own next to the one viewed. */
function secretTape(secret: string): { outside: string; tape: string } {
  const outside = realpathSync(mkdtempSync(join(tmpdir(), "eddy-secret-")));
  const tape = join(outside, "private.tape");
  writeFileSync(tape, tapeText("run_secret").replace('"output_text":"ok"', `"output_text":"${secret}"`));
  return { outside, tape };
}

describe("a folder's tapes stay in the folder (the page is shared)", () => {
  it("a batch's results.jsonl naming a tape outside the folder, or leading out through a symlink, copies nothing of it", () => {
    const { outside, tape } = secretTape("MY-SECRET-ANSWER");
    const dir = realpathSync(mkdtempSync(join(tmpdir(), "eddy-batch-evil-")));
    mkdirSync(join(dir, "tapes"));
    writeFileSync(join(dir, "tapes", "ok.tape"), tapeText("run_ok"));
    symlinkSync(tape, join(dir, "tapes", "link.tape"));
    symlinkSync(outside, join(dir, "out"));
    const line = (id: string, tapeField?: string) =>
      JSON.stringify({ id, reason: "completed", ...(tapeField === undefined ? {} : { tape: tapeField }) });
    writeFileSync(
      join(dir, "results.jsonl"),
      [
        line("abs", tape),
        line("rel", `../${tape.split("/").slice(-2).join("/")}`),
        line("passwd", "/etc/passwd"),
        line("missing", "/nonexistent-eddy/x.tape"),
        line("link"), // tapes/link.tape, a symlink to the tape outside
        line("viadir", "out/private.tape"),
        line("../../../etc/passwd"), // tapes/ID.tape by convention, the id climbing out
        line("ok"),
      ].join("\n"),
    );
    const input = collectViewInput([dir]);
    const runs = [...(input.runs as Iterable<PageRun>)];
    expect(runs.map((r) => r.entry.run_id)).toEqual(["run_ok"]);
    expect(JSON.stringify(runs)).not.toContain("MY-SECRET");
    const problems = (input.batch?.rows ?? []).map((r) => r.tape_problem);
    const refused = "is not inside the batch folder (or leads out of it through a symlink): not read";
    expect(problems).toEqual([
      `the tape ${tape} ${refused}`,
      expect.stringContaining(refused),
      `the tape /etc/passwd ${refused}`,
      `the tape /nonexistent-eddy/x.tape ${refused}`, // worded alike: whether it exists is not told
      `the tape tapes/link.tape ${refused}`,
      `the tape out/private.tape ${refused}`,
      `the tape tapes/../../../etc/passwd.tape ${refused}`,
      undefined,
    ]);
  });

  it("a folder of tapes lists a symlink leading outside it by name, with a note, and never reads it", () => {
    const { tape } = secretTape("MY-SECRET-ANSWER");
    const dir = realpathSync(mkdtempSync(join(tmpdir(), "eddy-tapes-evil-")));
    writeFileSync(join(dir, "a.tape"), tapeText("run_a"));
    symlinkSync(tape, join(dir, "b.tape"));
    symlinkSync(join(dir, "a.tape"), join(dir, "c.tape")); // a symlink inside the folder is fine
    const runs = [...collectViewInput([dir]).runs];
    expect(runs.map((r) => [r.entry.label, r.entry.run_id, r.entry.problem])).toEqual([
      ["a.tape", "run_a", undefined],
      [
        "b.tape",
        undefined,
        expect.stringMatching(
          /^b\.tape is a symlink leading outside eddy-tapes-evil-\w+ \(or nowhere\): not read$/,
        ),
      ],
      ["c.tape", "run_a", undefined],
    ]);
    expect(JSON.stringify(runs)).not.toContain("MY-SECRET");
  });
});

describe("collectViewInput", () => {
  it("a folder without results lists its tapes (and those in tapes/)", () => {
    const dir = mkdtempSync(join(tmpdir(), "eddy-tapes-"));
    mkdirSync(join(dir, "tapes"));
    writeFileSync(join(dir, "b.tape"), tapeText("run_b"));
    writeFileSync(join(dir, "a.jsonl"), tapeText("run_a"));
    writeFileSync(join(dir, "tapes", "c.tape"), tapeText("run_c"));
    writeFileSync(join(dir, "notes.txt"), "not a tape");
    const input = collectViewInput([dir]);
    expect([...input.runs].map((r) => r.entry.label)).toEqual(["a.jsonl", "b.tape", "c.tape"]);
    expect(input.batch).toBeUndefined();
  });

  it.each([
    [[], "give one or more tapes, or a batch folder"],
    [["/nonexistent/x.tape"], "cannot read tape /nonexistent/x.tape: ENOENT"],
  ])("refuses %j", (paths, message) => {
    expect(() => [...collectViewInput(paths).runs]).toThrow(message);
  });

  it("refuses a folder given with other paths, and a folder with nothing to show", () => {
    const dir = mkdtempSync(join(tmpdir(), "eddy-empty-"));
    expect(() => collectViewInput([dir, "x.tape"])).toThrow(
      "is a folder: give either tapes or one batch folder",
    );
    expect(() => collectViewInput([dir])).toThrow("neither a batch folder");
  });

  it("a results.jsonl of many tasks or bad lines, and a summary.json nesting deep, make a bounded page", () => {
    const limits = { batchRows: 10, batchProblems: 5, batchBadLines: 20 };
    const dir = mkdtempSync(join(tmpdir(), "eddy-batch-bounds-"));
    const deep = (n: number) => `${"[".repeat(n)}${"]".repeat(n)}`;
    const task = (i: number) => JSON.stringify({ id: `t${i}`, reason: "completed" });
    // Before: every task a row and every bad line a problem (a million lines: minutes, a 145 MB
    // page), and a value nesting 100,000 levels an internal error (the stack overflowed).
    const tasks = Array.from({ length: 15 }, (_, i) => task(i));
    writeFileSync(
      join(dir, "results.jsonl"),
      `${[...tasks, task(3), `{"id":"d","error":${deep(100_000)}}`, "x", "x"].join("\n")}\n`,
    );
    writeFileSync(join(dir, "summary.json"), `{"a":${deep(100_000)}}`);
    const { view, tapes } = readBatchFolder(dir, limits);
    expect(view.rows.map((r) => r.id)).toEqual(Array.from({ length: 10 }, (_, i) => `t${i}`));
    expect(tapes).toHaveLength(10);
    expect(view.problems).toEqual([
      "results.jsonl line 17: nests deeper than 1000 levels",
      "results.jsonl line 18: not valid JSON",
      "results.jsonl line 19: not valid JSON",
      "results.jsonl has 5 more task line(s) than the page shows: the table has its first 10 tasks",
      "summary.json: nests deeper than 1000 levels",
    ]);
    // Bad lines past the bound: the first few listed, the rest counted, and the file not read further.
    writeFileSync(join(dir, "results.jsonl"), `${[...Array(30).fill("x"), task(1)].join("\n")}\n`);
    writeFileSync(
      join(dir, "summary.json"),
      JSON.stringify(Object.fromEntries(Array.from({ length: 1000 }, (_, i) => [`k${i}`, i]))),
    );
    const bad = readBatchFolder(dir, limits).view;
    expect(bad.rows).toEqual([]);
    expect(bad.problems.slice(4)).toEqual([
      "results.jsonl line 5: not valid JSON",
      "… and 15 more problem(s), not listed",
      "results.jsonl has more than 20 bad lines: it is not read past line 21",
      "summary.json has more than 200 values: the first 200 are shown",
    ]);
    expect(bad.summary).toHaveLength(200);
  });
});
