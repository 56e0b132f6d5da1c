/**
 * What `eddy batch` shows while it runs: on an interactive stderr a progress bar (`cli-progress`:
 * done/total, running, failed, tokens, ETA); when stdout is piped, one line per finished task
 * there (`✓ ID completed · 2 turns · 1 tool call · 812 ms`), so `eddy batch … | grep ✗` works.
 */
import { Presets, SingleBar } from "cli-progress";
import type { ResultLine } from "../batch/batch-dir.js";
import { isFailure } from "../batch/batch-dir.js";
import type { QueueNotice } from "../batch/redis-watch.js";
import { assertNever } from "../errors.js";
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
  let toldSkipped = false;
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
      // Every task's copy skips the same files: said once.
      if (!toldSkipped && line.skipped_files !== undefined && line.skipped_files.length > 0) {
        toldSkipped = true;
        io.stderr.write(`${styles.yellow(skippedLine(line.skipped_files))}\n`);
      }
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

/** One line for what happened to the queue (`who` is `eddy batch` or `eddy worker`). */
export function describeQueueNotice(who: string, notice: QueueNotice): string {
  switch (notice.type) {
    case "connection_lost":
      return `${who}: lost the connection to Redis at ${notice.where} (${notice.reason}); trying again until it is back (Ctrl-C stops)`;
    case "connection_restored":
      return `${who}: connected to Redis at ${notice.where} again`;
    case "tasks_requeued": {
      const n = notice.ids.length;
      const shown = notice.ids.slice(0, 5).join(", ") + (n > 5 ? ` and ${n - 5} more` : "");
      return `${who}: ${n} task${n === 1 ? "" : "s"} vanished from Redis (restarted empty or flushed?) and ${n === 1 ? "was" : "were"} queued again, to start over: ${shown}`;
    }
    case "task_lost":
      return `${who}: task ${notice.id} lost its job in Redis (restarted empty or flushed?): its run is stopped and its result dropped; the coordinator queues it again (${notice.reason})`;
    default:
      return assertNever(notice, "queue notice");
  }
}

/** The one line saying which special files the workspace copies leave out. */
export function skippedLine(files: readonly string[]): string {
  const shown = files.slice(0, 5).join(", ");
  const more = files.length > 5 ? ` and ${files.length - 5} more` : "";
  return `eddy batch: --workspace-per-task does not copy special files (FIFOs, sockets, devices): ${shown}${more}`;
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
