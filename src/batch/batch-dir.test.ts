import { linkSync, mkdirSync, mkdtempSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { describe, expect, it } from "vitest";
import { type BatchSummary, holdBatchDir, openBatchDir, type ResultLine, summarize } from "./batch-dir.js";
import type { BatchResult } from "./run-task.js";
import { fileTapeStore } from "./tape-store.js";

const line = (id: string, reason: ResultLine["reason"], ms: number): ResultLine => ({
  id,
  reason,
  output_text: "",
  result: null,
  usage: { input_tokens: 10, output_tokens: 2, total_tokens: 12 } as ResultLine["usage"],
  turns: 1,
  tool_calls: 0,
  duration_ms: ms,
  tape: null,
  error: null,
});

const run = (started_at: string, wall_ms: number, tasks_run: number) => ({ started_at, wall_ms, tasks_run });

describe("summarize", () => {
  it("counts, tokens and percentiles from the lines; the run's wall time", () => {
    const summary = summarize([line("a", "completed", 100), line("b", "max_turns", 300)], {
      tasks: 3,
      badLines: 1,
      run: run("2026-01-01T00:00:00.000Z", 1234.4, 2),
    });
    expect(summary).toMatchObject({
      tasks: 3,
      finished: 2,
      pending: 1,
      by_reason: { completed: 1, max_turns: 1 },
      failed: 1,
      usage: { input_tokens: 20, output_tokens: 4, total_tokens: 24 },
      duration_ms: { p50: 100, p95: 300, max: 300 },
      wall_ms: 1234,
      runs: [run("2026-01-01T00:00:00.000Z", 1234, 2)],
      bad_lines: 1,
    });
  });

  it("a rerun keeps the earlier runs and adds its own: wall_ms is their total", () => {
    const first = summarize([line("a", "completed", 1)], {
      tasks: 2,
      badLines: 0,
      run: run("2026-01-01T00:00:00.000Z", 5000, 1),
    });
    const second = summarize([line("a", "completed", 1), line("b", "completed", 1)], {
      tasks: 2,
      badLines: 0,
      run: run("2026-01-02T00:00:00.000Z", 700, 1),
      previous: first,
    });
    expect(second.runs).toEqual([
      run("2026-01-01T00:00:00.000Z", 5000, 1),
      run("2026-01-02T00:00:00.000Z", 700, 1),
    ]);
    expect(second.wall_ms).toBe(5700);
  });

  it("a summary from before runs were recorded counts as one run; junk entries are dropped", () => {
    const old = {
      wall_ms: 2000,
      finished: 4,
      finished_at: "2026-01-01T00:00:02.000Z",
    } as unknown as BatchSummary;
    const next = summarize([], {
      tasks: 4,
      badLines: 0,
      run: run("2026-01-03T00:00:00.000Z", 10, 0),
      previous: old,
    });
    expect(next.runs).toEqual([
      run("2026-01-01T00:00:00.000Z", 2000, 4),
      run("2026-01-03T00:00:00.000Z", 10, 0),
    ]);
    const junk = { runs: [null, { wall_ms: "x" }, { wall_ms: 30 }] } as unknown as BatchSummary;
    const kept = summarize([], {
      tasks: 0,
      badLines: 0,
      run: run("2026-01-03T00:00:00.000Z", 10, 0),
      previous: junk,
    });
    expect(kept.runs).toEqual([
      { started_at: null, wall_ms: 30, tasks_run: 0 },
      run("2026-01-03T00:00:00.000Z", 10, 0),
    ]);
    expect(kept.wall_ms).toBe(40);
  });
});

describe("openBatchDir", () => {
  it("reads the summary an earlier invocation wrote, so the next one merges it", () => {
    const path = mkdtempSync(join(tmpdir(), "eddy-batch-dir-"));
    const first = openBatchDir(path);
    expect(first.summary).toBeUndefined();
    first.writeSummary(
      summarize([], { tasks: 1, badLines: 0, run: run("2026-01-01T00:00:00.000Z", 900, 0) }),
    );
    const again = openBatchDir(path);
    again.writeSummary(
      summarize([], {
        tasks: 1,
        badLines: 0,
        run: run("2026-01-02T00:00:00.000Z", 100, 0),
        previous: again.summary,
      }),
    );
    const written = JSON.parse(readFileSync(join(path, "summary.json"), "utf8")) as BatchSummary;
    expect(written.runs.map((r) => r.wall_ms)).toEqual([900, 100]);
    expect(written.wall_ms).toBe(1000);
    writeFileSync(join(path, "summary.json"), "{not json");
    expect(openBatchDir(path).summary).toBeUndefined();
  });

  it("a directory where summary.json or batch.json goes is named when the folder is opened, not after the tasks ran", () => {
    for (const name of ["summary.json", "batch.json"]) {
      const path = mkdtempSync(join(tmpdir(), "eddy-batch-dir-"));
      mkdirSync(join(path, name));
      expect(() => openBatchDir(path)).toThrow(
        new RegExp(
          `the batch file .*${name.replace(".", "\\.")} is a directory, not a regular file: remove it`,
        ),
      );
    }
    const path = mkdtempSync(join(tmpdir(), "eddy-batch-dir-"));
    writeFileSync(join(path, "tapes"), "");
    expect(() => openBatchDir(path)).toThrow(/cannot create its tapes folder .*tapes: (ENOTDIR|EEXIST)/);
  });
});

describe("openBatchDir and symlinks planted in the folder", () => {
  it("refuses a symlinked tapes folder, and never writes results or summary through a symlink planted after it opened", () => {
    const path = mkdtempSync(join(tmpdir(), "eddy-batch-dir-"));
    const outside = join(mkdtempSync(join(tmpdir(), "eddy-batch-outside-")), "target.txt");
    writeFileSync(outside, "keep");
    symlinkSync(dirname(outside), join(path, "tapes"));
    expect(() => openBatchDir(path)).toThrow(/tapes is a symlink: .*remove it/);
    const clean = mkdtempSync(join(tmpdir(), "eddy-batch-dir-"));
    const dir = openBatchDir(clean);
    symlinkSync(outside, join(clean, "results.jsonl"));
    const result = { id: "a", reason: "completed", outputText: "", usage: line("a", "completed", 1).usage };
    expect(() => dir.append({ ...result, turns: 1, toolCalls: 0, durationMs: 1 } as BatchResult)).toThrow(
      /cannot write the batch file .*results\.jsonl: it is a symlink, .*remove it/,
    );
    symlinkSync(outside, join(clean, "summary.json.tmp"));
    expect(() =>
      dir.writeSummary(summarize([], { tasks: 0, badLines: 0, run: run("2026-01-01T00:00:00.000Z", 1, 0) })),
    ).toThrow(/summary\.json\.tmp: it is a symlink/);
    expect(readFileSync(outside, "utf8")).toBe("keep");
  });
});

describe("openBatchDir and hard links planted in the folder", () => {
  const outsideFile = (text: string) => {
    const path = join(mkdtempSync(join(tmpdir(), "eddy-batch-outside-")), "target.txt");
    writeFileSync(path, text);
    return path;
  };

  it("refuses a hard-linked results.jsonl before any task runs, and never appends to one planted after it opened", () => {
    const outside = outsideFile("keep");
    const path = mkdtempSync(join(tmpdir(), "eddy-batch-dir-"));
    linkSync(outside, join(path, "results.jsonl"));
    expect(() => openBatchDir(path)).toThrow(
      /the batch file .*results\.jsonl has 2 hard links, .*remove it, or choose another folder with --out/,
    );
    const clean = mkdtempSync(join(tmpdir(), "eddy-batch-dir-"));
    const dir = openBatchDir(clean);
    linkSync(outside, join(clean, "results.jsonl"));
    const result = { id: "a", reason: "completed", outputText: "", usage: line("a", "completed", 1).usage };
    expect(() => dir.append({ ...result, turns: 1, toolCalls: 0, durationMs: 1 } as BatchResult)).toThrow(
      /cannot write the batch file .*results\.jsonl: it has \d+ hard links, .*remove it/,
    );
    expect(readFileSync(outside, "utf8")).toBe("keep");
  });

  it("never empties or writes a hard link planted as summary.json.tmp or tapes/ID.tape", () => {
    const outside = outsideFile("keep");
    const path = mkdtempSync(join(tmpdir(), "eddy-batch-dir-"));
    const dir = openBatchDir(path);
    linkSync(outside, join(path, "summary.json.tmp"));
    expect(() =>
      dir.writeSummary(summarize([], { tasks: 0, badLines: 0, run: run("2026-01-01T00:00:00.000Z", 1, 0) })),
    ).toThrow(/summary\.json\.tmp: it has \d+ hard links/);
    linkSync(outside, join(path, "tapes", "a.tape"));
    const header = { format: 2 } as unknown as Parameters<typeof dir.tapes.open>[1];
    expect(() => fileTapeStore(join(path, "tapes")).open("a", header, "now")).toThrow(
      /cannot write the tape .*a\.tape: it has \d+ hard links/,
    );
    expect(readFileSync(outside, "utf8")).toBe("keep");
  });

  it("does not read summary.json or batch.json through a symlink planted there (the rewrite replaces the link)", () => {
    const summary = outsideFile(JSON.stringify({ runs: [run("2020-01-01T00:00:00.000Z", 5, 1)] }));
    const batch = outsideFile(JSON.stringify({ id: "planted0planted0" }));
    const path = mkdtempSync(join(tmpdir(), "eddy-batch-dir-"));
    symlinkSync(summary, join(path, "summary.json"));
    symlinkSync(batch, join(path, "batch.json"));
    const dir = openBatchDir(path);
    expect(dir.summary).toBeUndefined();
    expect(dir.id).not.toBe("planted0planted0");
    expect(JSON.parse(readFileSync(join(path, "batch.json"), "utf8")).id).toBe(dir.id);
    expect(JSON.parse(readFileSync(batch, "utf8")).id).toBe("planted0planted0");
  });
});

describe("the batch folder's lock (holdBatchDir)", () => {
  it("a live holder refuses, one whose process is gone or whose file is garbage holds nothing, a symlinked lock is refused untouched", async () => {
    const dir = mkdtempSync(join(tmpdir(), "eddy-batch-lock-"));
    const held = await holdBatchDir(dir);
    await expect(holdBatchDir(dir)).rejects.toThrow(/is in use by another "eddy batch", process \d+/);
    await held.release();
    writeFileSync(join(dir, "batch.lock"), JSON.stringify({ pid: 2 ** 22 + 12345, holder: "eddy batch" }));
    await (await holdBatchDir(dir)).release();
    writeFileSync(join(dir, "batch.lock"), "\u001b[2J garbage");
    await (await holdBatchDir(dir)).release();
    const target = join(dir, "target.txt");
    writeFileSync(target, "keep");
    symlinkSync(target, join(dir, "batch.lock"));
    await expect(holdBatchDir(dir)).rejects.toThrow();
    expect(readFileSync(target, "utf8")).toBe("keep");
  });

  it.skipIf(process.platform !== "linux")(
    "a folder that exists but takes no file is one line naming it and --out, not an internal error",
    async () => {
      // /proc/self is a directory nobody can create a file in (as a read-only mount is, even for root).
      const refused = await holdBatchDir("/proc/self").then(
        () => undefined,
        (err: unknown) => err,
      );
      expect(refused).toMatchObject({ code: "invalid_config", fault: "user" });
      expect((refused as Error).message).toMatch(
        /^cannot write in the batch folder \/proc\/self: .+; give another --out$/,
      );
    },
  );
});
