/**
 * What `eddy batch` shows while it runs: on an interactive stderr a progress bar (`cli-progress`:
 * done/total, running, failed, tokens, ETA); when stdout is piped, one line per finished task
 * there (`✓ ID completed · 2 turns · 1 tool call · 812 ms`), so `eddy batch … | grep ✗` works.
 */
import { Presets, SingleBar } from "cli-progress";
import type { ResultLine } from "../batch/batch-dir.js";
import { isFailure } from "../batch/batch-dir.js";
import type { CliIo } from "./run-command.js";
import { clip, formatDuration, type Styles } from "./terminal.js";

/** The batch's progress display. */
export interface BatchProgress {
  started(id: string): void;
  finished(line: ResultLine): void;
  /** Counts a task that already had its result (it is not run again). */
  skipped(count: number): void;
  /** A notice (the demo-model line, an MCP server event): on its own line, above the bar. */
  note(text: string): void;
  stop(): void;
}

/** A progress display for `total` tasks on the CLI's streams. */
export function batchProgress(io: CliIo, total: number, styles: Styles): BatchProgress {
  let running = 0;
  let failed = 0;
  let done = 0;
  let tokens = 0;
  const stderr = io.stderr as NodeJS.WritableStream & { isTTY?: boolean };
  const bar =
    io.stderr.isTTY === true && typeof stderr.on === "function"
      ? new SingleBar(
          {
            stream: stderr,
            format: `{bar} {value}/{total} · {running} running · {failed} failed · {tokens} tokens · ETA {eta_formatted}`,
            hideCursor: true,
            etaBuffer: 50,
          },
          Presets.shades_classic,
        )
      : undefined;
  const payload = () => ({ running, failed, tokens: tokens.toLocaleString("en-US") });
  bar?.start(total, 0, payload());
  // A line per task where nobody watches a bar: piped stdout, or a terminal without one.
  const lines = io.stdout.isTTY !== true || bar === undefined;
  return {
    started() {
      running++;
      bar?.update(payload());
    },
    finished(line) {
      running = Math.max(0, running - 1);
      done++;
      tokens += line.usage?.total_tokens ?? 0;
      if (isFailure(line)) failed++;
      bar?.update(done, payload());
      if (lines) io.stdout.write(`${describeLine(line, styles)}\n`);
    },
    skipped(count) {
      done += count;
      bar?.update(done, payload());
    },
    note(text) {
      // Clear the bar's line, write the notice, draw the bar again under it.
      io.stderr.write(bar === undefined ? `${text}\n` : `\r\u001b[2K${text}\n`);
      bar?.update(payload());
    },
    stop() {
      bar?.stop();
    },
  };
}

/** One line for a finished task: `✓ ID completed · 2 turns · 1 tool call · 812 ms`. */
export function describeLine(line: ResultLine, styles: Styles): string {
  const ok = !isFailure(line);
  const mark = ok ? styles.green("✓") : styles.red("✗");
  const facts = [
    `${line.turns} turn${line.turns === 1 ? "" : "s"}`,
    `${line.tool_calls} tool call${line.tool_calls === 1 ? "" : "s"}`,
    formatDuration(line.duration_ms),
  ];
  if (line.resumed !== undefined) facts.push(`resumed ${line.resumed}×`);
  const error = line.error === null ? "" : ` · ${clip(line.error.message, 160)}`;
  return `${mark} ${line.id} ${line.reason} · ${facts.join(" · ")}${error}`;
}
