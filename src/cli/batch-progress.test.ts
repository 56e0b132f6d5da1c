import { PassThrough } from "node:stream";
import { describe, expect, it } from "vitest";
import type { ResultLine } from "../batch/batch-dir.js";
import { BATCH_DEFAULTS } from "../batch/defaults.js";
import {
  batchProgress,
  describeLine,
  describeQueueNotice,
  droppedCopyLine,
  formatEta,
  queueNoticeLines,
  REFUSALS_SAID,
} from "./batch-progress.js";
import type { CliIo } from "./run-command.js";
import { stylesFor } from "./terminal.js";

/** A stream that says it is a terminal, keeping what is written to it. */
function terminal(): PassThrough & { isTTY: boolean; columns: number; text: () => string } {
  const stream = new PassThrough() as PassThrough & { isTTY: boolean; columns: number; text: () => string };
  let text = "";
  stream.on("data", (d: Buffer) => {
    text += d.toString("utf8");
  });
  stream.isTTY = true;
  stream.columns = 160;
  stream.text = () => text;
  return stream;
}

/** What a terminal shows for `text`: `\r` + erase-line starts a line over, `\n` ends it. */
function screen(text: string): string[] {
  const lines = [""];
  for (const [i, part] of text.split("\n").entries()) {
    if (i > 0) lines.push("");
    const shown = part.split("\r\x1b[2K").at(-1) ?? "";
    lines[lines.length - 1] = shown;
  }
  return lines;
}

/** Lets the stream's `data` events run. */
const flush = () => new Promise((r) => setImmediate(r));

function io(stderr: CliIo["stderr"], stdout: CliIo["stdout"]): CliIo {
  return {
    stdout,
    stderr,
    readStdin: async () => "",
    stdinIsTTY: true,
    env: {},
    cwd: "/",
    onSignal: () => () => {},
  };
}

const line = (id: string, reason: ResultLine["reason"], tokens: number): ResultLine => ({
  id,
  reason,
  output_text: "",
  result: null,
  usage: { input_tokens: tokens, output_tokens: 0, total_tokens: tokens } as ResultLine["usage"],
  turns: 1,
  tool_calls: 0,
  duration_ms: 5,
  tape: null,
  error: null,
});

/** A progress display on a fake terminal, with a clock the test moves (100 ms per step by default). */
function onTerminal(total: number) {
  const stderr = terminal();
  const stdout = terminal();
  let now = 0;
  const progress = batchProgress(io(stderr, stdout), total, stylesFor(stdout, {}), {
    now: () => now,
    refreshMs: 0,
  });
  return {
    progress,
    stdout,
    at(ms: number) {
      now = ms;
    },
    /** The status line as the terminal shows it now. */
    async status(): Promise<string> {
      await flush();
      return screen(stderr.text()).at(-1) ?? "";
    },
    async screen(): Promise<string[]> {
      await flush();
      return screen(stderr.text());
    },
  };
}

describe("eddy batch's progress on a terminal", () => {
  it("one status line: done/total, running, failed and tokens; no lines on stdout", async () => {
    const t = onTerminal(3);
    t.at(50);
    t.progress.skipped(1);
    t.at(100);
    t.progress.started("a");
    t.at(200);
    t.progress.started("b");
    t.at(300);
    t.progress.finished(line("a", "completed", 1200));
    t.at(400);
    t.progress.finished(line("b", "failed", 34));
    t.progress.stop();
    expect(await t.screen()).toEqual(["████████████████████ 3/3 · 0 running · 1 failed · 1,234 tokens", ""]);
    expect(t.stdout.text()).toBe("");
  });

  it("shows no ETA until a task of this run finished, then the real one, counting down", async () => {
    const t = onTerminal(10);
    t.at(100);
    t.progress.skipped(2); // finished earlier: says nothing about speed
    expect(await t.status()).toBe("████░░░░░░░░░░░░░░░░ 2/10 · 0 running · 0 failed · 0 tokens");
    t.at(1000);
    t.progress.started("a");
    t.progress.started("b");
    expect(await t.status()).not.toContain("ETA");
    t.at(5000);
    t.progress.finished(line("a", "completed", 10)); // 4 s for 1 task, 7 to go: 28 s
    expect(await t.status()).toBe("██████░░░░░░░░░░░░░░ 3/10 · 1 running · 0 failed · 10 tokens · ETA 28 s");
    t.at(8000);
    t.progress.started("c"); // any redraw: 3 s later
    expect(await t.status()).toMatch(/ETA 25 s$/);
    t.at(9000);
    t.progress.finished(line("b", "completed", 10)); // 8 s for 2 tasks, 6 to go: 24 s
    expect(await t.status()).toMatch(/ETA 24 s$/);
    const text = (await t.screen()).join("\n");
    expect(text).not.toMatch(/NFs|INF|NULL|NaN/);
  });

  it("running counts tasks in flight by id: never a task twice, never one whose run ended", async () => {
    const t = onTerminal(4);
    t.progress.started("a");
    t.at(100);
    t.progress.started("b");
    t.at(200);
    t.progress.started("b"); // the queue handed it out again (a retry): still one
    expect(await t.status()).toContain(" · 2 running · ");
    t.at(300);
    t.progress.ended("a"); // its run ended; its result line comes later
    t.at(400);
    t.progress.started("c");
    expect(await t.status()).toContain(" · 2 running · ");
    t.at(500);
    t.progress.finished(line("a", "completed", 1));
    expect(await t.status()).toContain(" · 2 running · ");
  });

  it("prints a notice above the status line, which goes on below it", async () => {
    const t = onTerminal(2);
    t.at(100);
    t.progress.started("a");
    t.at(200);
    t.progress.notice("eddy: no provider configured — using the built-in offline demo model");
    t.at(300);
    t.progress.finished(line("a", "completed", 5));
    t.progress.stop();
    expect(await t.screen()).toEqual([
      "eddy: no provider configured — using the built-in offline demo model",
      "██████████░░░░░░░░░░ 1/2 · 0 running · 0 failed · 5 tokens · ETA 1 s",
      "",
    ]);
  });

  it("fits the line to the terminal's width", async () => {
    const stderr = terminal();
    stderr.columns = 30;
    const narrow = batchProgress(io(stderr, terminal()), 2, stylesFor(stderr, {}), { refreshMs: 0 });
    narrow.stop();
    await flush();
    expect(screen(stderr.text())[0]).toHaveLength(29);
  });
});

describe("eddy batch's progress without a terminal", () => {
  it("piped: one line per finished task on stdout, notices on stderr, no status line", () => {
    const out: string[] = [];
    const err: string[] = [];
    const progress = batchProgress(
      io({ write: (s: string) => err.push(s) }, { write: (s: string) => out.push(s) }),
      2,
      stylesFor({ write: () => true }, { NO_COLOR: "1" }),
    );
    progress.notice("eddy: a notice");
    progress.started("a");
    progress.finished(line("a", "completed", 10));
    progress.finished(line("b", "max_turns", 10));
    progress.stop();
    expect(out.join("")).toBe(
      "✓ a completed · 1 turn · 0 tool calls · 5 ms\n✗ b max_turns · 1 turn · 0 tool calls · 5 ms\n",
    );
    expect(err.join("")).toBe("eddy: a notice\n");
  });
});

describe("failed tasks' workspace copies past the bound (docs/decisions.md #42)", () => {
  it("a removed copy is said once on stderr, however many", () => {
    const err: string[] = [];
    const progress = batchProgress(
      io({ write: (s: string) => err.push(s) }, { write: () => true }),
      3,
      stylesFor({ write: () => true }, { NO_COLOR: "1" }),
    );
    progress.finished(line("a", "failed", 1), false);
    progress.finished(line("b", "failed", 1), true);
    progress.finished(line("c", "failed", 1), true);
    progress.stop();
    expect(err).toEqual([`${droppedCopyLine("eddy batch")}\n`]);
    expect(err[0]).toContain(
      `at most ${BATCH_DEFAULTS.maxKeptWorkspaces} failed tasks' workspace copies are kept`,
    );
  });
});

describe("formatEta", () => {
  it.each([
    [0, "1 s"],
    [400, "1 s"],
    [42_000, "42 s"],
    [185_000, "3 min 05 s"],
    [7_800_000, "2 h 10 min"],
  ])("%d ms → %s", (ms, text) => {
    expect(formatEta(ms)).toBe(text);
  });
});

describe("a result line from a queue (Redis) reaches the terminal inert", () => {
  it("escape sequences in the id, the reason or the error are not written raw", () => {
    const esc = "\u001b";
    const hostile: ResultLine = {
      ...line(`t1${esc}]0;PWNED\u0007`, "failed", 0),
      reason: `failed${esc}[2J` as ResultLine["reason"],
      error: { code: "x", message: `boom${esc}[H\u009b31m` },
    };
    const shown = describeLine(hostile, stylesFor(terminal(), { NO_COLOR: "1" }));
    for (const c of ["\u001b", "\u0007", "\u009b"]) expect(shown).not.toContain(c);
    expect(shown).toContain("boom");
    const notice = describeQueueNotice("eddy worker", { type: "task_lost", id: `a${esc}[2Jb`, reason: "r" });
    expect(notice).not.toContain(esc);
  });
});

describe("a worker's refused jobs on stderr (docs/pitfalls.md #109)", () => {
  it("two million refused jobs: the first REFUSALS_SAID said one each, then one line a power of ten", () => {
    const lines: string[] = [];
    const notices = queueNoticeLines("eddy worker", (l) => lines.push(l));
    notices.say({ type: "connection_lost", where: "h:1", reason: "r" });
    for (let i = 0; i < 2_000_000; i++)
      notices.say(
        i % 2 === 0
          ? { type: "job_refused", job: `j${i}`, reason: "queue job: expected an object" }
          : { type: "job_unreadable", reason: "Unexpected token" },
      );
    notices.say({ type: "connection_restored", where: "h:1" });
    expect(notices.refused).toBe(2_000_000);
    expect(lines).toHaveLength(1 + REFUSALS_SAID + 1 + 3 + 1);
    expect(lines[REFUSALS_SAID - 1]).toMatch(/refused job j998 without running it/);
    expect(lines[REFUSALS_SAID]).toMatch(/a job in Redis could not be read/);
    expect(lines[REFUSALS_SAID + 1]).toBe(
      "eddy worker: more than 1,000 jobs refused without running: the rest are counted, not said one by one (each fails its task, which its batch reports); is something other than eddy batch adding jobs to this queue?",
    );
    expect(lines.slice(REFUSALS_SAID + 2, -1)).toEqual(
      ["10,000", "100,000", "1,000,000"].map((n) => `eddy worker: ${n} jobs refused without running so far`),
    );
    // Other notices are always said.
    expect(lines.at(-1)).toBe("eddy worker: connected to Redis at h:1 again");
  });
});
