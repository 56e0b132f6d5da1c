/**
 * What `eddy batch` shows while it runs: on an interactive stderr one status line, redrawn in
 * place (`████░░░░ 12/40 · 3 running · 1 failed · 8,120 tokens · ETA 42 s`); when stdout is
 * piped, one line per finished task there (`✓ ID completed · 2 turns · 1 tool call · 812 ms`), so
 * `eddy batch … | grep ✗` works.
 *
 * - **running** counts the tasks between `started` and `ended` (or `finished`), by id: a task the
 *   queue hands out twice (a retry, a stalled job taken over) counts once, and a task counts as
 *   ended when its run ends, not when its result line is written, so it never shows more than the
 *   runs actually in flight.
 * - **ETA**: none until a task of this invocation has finished (skipped tasks say nothing about
 *   speed); then the remaining tasks at the rate finished so far, counting down between finishes.
 * - **Notices** (`notice`) are printed above the line, which is redrawn under them.
 *
 * The line is drawn by hand (carriage return, erase line) rather than with a progress-bar library:
 * a notice must land above it at once, and a test drives it with a fake terminal and clock.
 */
import type { ResultLine } from "../batch/batch-dir.js";
import { isFailure } from "../batch/batch-dir.js";
import { BATCH_DEFAULTS } from "../batch/defaults.js";
import type { QueueNotice } from "../batch/redis-watch.js";
import { assertNever } from "../errors.js";
import type { CliIo } from "./run-command.js";
import { clip, formatDuration, type Styles, terminalSafe } from "./terminal.js";

/** The batch's progress display. */
export interface BatchProgress {
  started(id: string): void;
  /** The task's run ended (its result line follows with `finished`). */
  ended(id: string): void;
  /**
   * A task's result line was written; `copyDropped`: it failed and its workspace copy was removed,
   * as `BATCH_DEFAULTS.maxKeptWorkspaces` are kept already (said once).
   */
  finished(line: ResultLine, copyDropped?: boolean): void;
  /** Counts tasks that already had their result (they are not run again). */
  skipped(count: number): void;
  /** A line for the user: above the status line on a terminal, else on stderr. */
  notice(text: string): void;
  stop(): void;
}

/** Options of `batchProgress`. */
export interface BatchProgressOptions {
  /** Milliseconds, for the ETA. @defaultValue performance.now */
  now?: () => number;
  /** Redraw the ETA this often without events (ms; 0: only on events). @defaultValue 1000 */
  refreshMs?: number;
}

/** Redraws closer together than this are coalesced (the last state is drawn). */
const MIN_REDRAW_MS = 50;
const BAR_WIDTH = 20;

/** A progress display for `total` tasks on the CLI's streams. */
export function batchProgress(
  io: CliIo,
  total: number,
  styles: Styles,
  options: BatchProgressOptions = {},
): BatchProgress {
  const now = options.now ?? (() => performance.now());
  const state: Counts = { total, done: 0, failed: 0, tokens: 0, running: new Set(), ran: 0 };
  const stderr = io.stderr as CliIo["stderr"] & { isTTY?: boolean; columns?: number };
  const line = stderr.isTTY === true ? statusLine(stderr, state, now, options.refreshMs ?? 1000) : undefined;
  // A line per task where nobody watches the status line: piped stdout, or no terminal for it.
  const lines = io.stdout.isTTY !== true || line === undefined;
  let toldSkipped = false;
  let toldDropped = false;
  const notice = (text: string) => {
    if (line === undefined) io.stderr.write(`${text}\n`);
    else line.above(text);
  };
  return {
    started(id) {
      state.firstStart ??= now();
      state.running.add(id);
      line?.draw();
    },
    ended(id) {
      state.running.delete(id);
      line?.draw();
    },
    finished(result, copyDropped) {
      state.running.delete(result.id);
      state.done++;
      state.ran++;
      state.lastFinish = now();
      state.tokens += result.usage?.total_tokens ?? 0;
      if (isFailure(result)) state.failed++;
      line?.draw();
      if (lines) io.stdout.write(`${describeLine(result, styles)}\n`);
      // Every task's copy skips the same files: said once.
      if (!toldSkipped && result.skipped_files !== undefined && result.skipped_files.length > 0) {
        toldSkipped = true;
        notice(styles.yellow(skippedLine(result.skipped_files)));
      }
      if (copyDropped === true && !toldDropped) {
        toldDropped = true;
        notice(styles.yellow(droppedCopyLine("eddy batch")));
      }
    },
    skipped(count) {
      state.done += count;
      line?.draw();
    },
    notice,
    stop() {
      line?.stop();
    },
  };
}

interface Counts {
  total: number;
  done: number;
  failed: number;
  tokens: number;
  running: Set<string>;
  /** Tasks finished by this invocation (not skipped). */
  ran: number;
  firstStart?: number;
  lastFinish?: number;
}

interface StatusLine {
  draw(): void;
  above(text: string): void;
  stop(): void;
}

/** The status line on a terminal: drawn at once, redrawn on events (coalesced) and for the ETA. */
function statusLine(
  stream: CliIo["stderr"] & { columns?: number },
  state: Counts,
  now: () => number,
  refreshMs: number,
): StatusLine {
  let lastDraw = Number.NEGATIVE_INFINITY;
  let pending: NodeJS.Timeout | undefined;
  let stopped = false;
  const render = () => {
    clearTimeout(pending);
    pending = undefined;
    lastDraw = now();
    // One column short of the width: a line that wraps could not be redrawn in place.
    const text = renderStatus(state, now());
    const columns = stream.columns ?? 0;
    stream.write(`\r\x1b[2K${columns > 0 ? clip(text, Math.max(20, columns - 1)) : text}`);
  };
  const draw = () => {
    if (stopped) return;
    if (now() - lastDraw >= MIN_REDRAW_MS) render();
    else pending ??= setTimeout(render, MIN_REDRAW_MS).unref();
  };
  const refresh = refreshMs > 0 ? setInterval(draw, refreshMs).unref() : undefined;
  render();
  return {
    draw,
    above(text) {
      if (stopped) {
        stream.write(`${text}\n`);
        return;
      }
      stream.write(`\r\x1b[2K${text}\n`);
      render();
    },
    stop() {
      if (stopped) return;
      render();
      stopped = true;
      clearInterval(refresh);
      stream.write("\n");
    },
  };
}

/** `████░░░░ 12/40 · 3 running · 1 failed · 8,120 tokens · ETA 42 s` (no ETA until one can be estimated). */
export function renderStatus(state: Counts, at: number): string {
  const share = state.total === 0 ? 1 : Math.min(1, state.done / state.total);
  const filled = Math.round(share * BAR_WIDTH);
  const bar = `${"█".repeat(filled)}${"░".repeat(BAR_WIDTH - filled)}`;
  const parts = [
    `${bar} ${state.done}/${state.total}`,
    `${state.running.size} running`,
    `${state.failed} failed`,
    `${state.tokens.toLocaleString("en-US")} tokens`,
  ];
  const eta = etaMs(state, at);
  if (eta !== undefined) parts.push(`ETA ${formatEta(eta)}`);
  return parts.join(" · ");
}

/**
 * The time left: the remaining tasks at this invocation's rate, estimated at its last finish and
 * counting down since; undefined before anything finished here, or when nothing remains.
 */
function etaMs(state: Counts, at: number): number | undefined {
  const remaining = state.total - state.done;
  if (remaining <= 0 || state.ran === 0 || state.firstStart === undefined || state.lastFinish === undefined)
    return undefined;
  const perTask = (state.lastFinish - state.firstStart) / state.ran;
  return Math.max(0, remaining * perTask - (at - state.lastFinish));
}

/** `42 s`, `3 min 05 s`, `2 h 10 min` (at least `1 s`). */
export function formatEta(ms: number): string {
  const s = Math.max(1, Math.ceil(ms / 1000));
  if (s < 60) return `${s} s`;
  if (s < 3600) return `${Math.floor(s / 60)} min ${String(s % 60).padStart(2, "0")} s`;
  return `${Math.floor(s / 3600)} h ${String(Math.floor((s % 3600) / 60)).padStart(2, "0")} min`;
}

/** One line for what happened to the queue (`who` is `eddy batch` or `eddy worker`). */
export function describeQueueNotice(who: string, notice: QueueNotice): string {
  // Task ids and reasons come from Redis (docs/pitfalls.md #66).
  return terminalSafe(queueNoticeText(who, notice), { oneLine: true });
}

function queueNoticeText(who: string, notice: QueueNotice): string {
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
    case "job_unreadable":
      return `${who}: a job in Redis could not be read (its data is not JSON: ${notice.reason.slice(0, 200)}); it is failed without running`;
    case "tape_not_kept":
      return `${who}: task ${notice.id}'s result is kept, its tape is not: ${notice.reason.slice(0, 500)}`;
    case "job_refused":
      return `${who}: refused job ${notice.job.slice(0, 80)} without running it: ${notice.reason.slice(0, 500)}`;
    case "task_lost":
      return `${who}: task ${notice.id} lost its job in Redis (restarted empty or flushed?): its run is stopped and its result dropped; the coordinator queues it again (${notice.reason})`;
    default:
      return assertNever(notice, "queue notice");
  }
}

/**
 * Refused and unreadable jobs a worker says one line each before it only counts them: anyone who
 * can write to the Redis can add millions (docs/pitfalls.md #109).
 */
export const REFUSALS_SAID = 1_000;

/** A worker's queue notices as stderr lines, refusals bounded (`queueNoticeLines`). */
export interface QueueNoticeLines {
  say(notice: QueueNotice): void;
  /** Jobs refused or unreadable so far. */
  readonly refused: number;
}

/**
 * Each queue notice as one line to `write` (`describeQueueNotice`), except refused and unreadable
 * jobs past the first `REFUSALS_SAID`: one line says the rest are only counted, then one line at
 * each power of ten says how many so far. Each such job still fails its task, which its batch
 * reports.
 */
export function queueNoticeLines(who: string, write: (line: string) => void): QueueNoticeLines {
  let refused = 0;
  return {
    get refused() {
      return refused;
    },
    say(notice) {
      if (notice.type !== "job_refused" && notice.type !== "job_unreadable")
        return write(describeQueueNotice(who, notice));
      refused++;
      if (refused <= REFUSALS_SAID) return write(describeQueueNotice(who, notice));
      const limit = REFUSALS_SAID.toLocaleString("en-US");
      if (refused === REFUSALS_SAID + 1)
        write(
          `${who}: more than ${limit} jobs refused without running: the rest are counted, not said one by one (each fails its task, which its batch reports); is something other than eddy batch adding jobs to this queue?`,
        );
      else if (isPowerOfTen(refused))
        write(`${who}: ${refused.toLocaleString("en-US")} jobs refused without running so far`);
    },
  };
}

function isPowerOfTen(n: number): boolean {
  let x = n;
  while (x >= 10 && x % 10 === 0) x /= 10;
  return x === 1;
}

/** The one line saying that failed tasks' workspace copies past the bound are removed, not kept. */
export function droppedCopyLine(who: string): string {
  return `${who}: at most ${BATCH_DEFAULTS.maxKeptWorkspaces} failed tasks' workspace copies are kept: later failures' copies are removed (each task's tape records what it did; remove kept copies to keep later ones)`;
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
  // A queued batch's results come from Redis: what they say reaches the terminal inert (docs/pitfalls.md #66).
  const said = terminalSafe(`${line.id} ${line.reason} · ${facts.join(" · ")}${error}`, { oneLine: true });
  return `${mark} ${said}`;
}
