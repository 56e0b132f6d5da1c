import { PassThrough } from "node:stream";
import { describe, expect, it } from "vitest";
import type { ResultLine } from "../batch/batch-dir.js";
import { batchProgress } from "./batch-progress.js";
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

describe("eddy batch's progress", () => {
  it("on a terminal: a bar with done/total, running, failed and tokens; no lines on stdout", async () => {
    const stderr = terminal();
    const stdout = terminal();
    const progress = batchProgress(io(stderr, stdout), 3, stylesFor(stdout, {}));
    progress.skipped(1);
    progress.started("a");
    progress.started("b");
    progress.finished(line("a", "completed", 1200));
    progress.finished(line("b", "failed", 34));
    progress.stop();
    await new Promise((r) => setImmediate(r));
    expect(stderr.text()).toMatch(/3\/3 · 0 running · 1 failed · 1,234 tokens · ETA/);
    expect(stdout.text()).toBe("");
  });

  it("piped: one line per finished task on stdout, no bar", () => {
    const out: string[] = [];
    const err: string[] = [];
    const progress = batchProgress(
      io({ write: (s: string) => err.push(s) }, { write: (s: string) => out.push(s) }),
      2,
      stylesFor({ write: () => true }, { NO_COLOR: "1" }),
    );
    progress.started("a");
    progress.finished(line("a", "completed", 10));
    progress.finished(line("b", "max_turns", 10));
    progress.stop();
    expect(out.join("")).toBe(
      "✓ a completed · 1 turn · 0 tool calls · 5 ms\n✗ b max_turns · 1 turn · 0 tool calls · 5 ms\n",
    );
    expect(err.join("")).toBe("");
  });
});
