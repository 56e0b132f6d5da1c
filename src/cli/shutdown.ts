/**
 * The end of a command: what it started — telemetry exporters, MCP servers, the embedded mock,
 * the tools' background jobs — is closed all at once, within one shared deadline, instead of one
 * after the other with each its own timeout. The CLI contract says a process exits within 2 s of
 * SIGINT/SIGTERM, and a run that completed is not held by telemetry for more than about 1 s
 * (docs/architecture.md, "The CLI contract"). A closer still busy at the deadline is left behind:
 * what it started dies with the process (the MCP and `shell` process groups have `exit` hooks that
 * SIGKILL them), and bin/eddy.js exits even if a socket it left open would hold the event loop.
 */

/** How long the end of a command may take, in ms. */
export const SHUTDOWN_BUDGET = {
  /** After a run that ended on its own (telemetry flush, MCP servers, the mock), from its end. */
  afterRunMs: 800,
  /** After SIGINT/SIGTERM, from the signal: the run's own cancellation and every close, within 2 s. */
  afterSignalMs: 1200,
} as const;

/** One thing to close. */
export interface Closer {
  /** For the report of closers still busy at the deadline. */
  name: string;
  /**
   * Closes; should be done by `deadline` (a `performance.now()` time). Its result is handed back
   * (e.g. a problem to report); a rejection counts as done.
   */
  close(deadline: number): Promise<unknown>;
}

/** The clock of a shutdown (tests inject one to see which waits it makes). */
export interface ShutdownClock {
  /** Milliseconds on the `performance.now()` scale. */
  now(): number;
  /** Resolves after `ms`; `cancel` stops the timer. */
  wait(ms: number): { done: Promise<void>; cancel(): void };
}

const realClock: ShutdownClock = {
  now: () => performance.now(),
  wait(ms) {
    let timer: NodeJS.Timeout | undefined;
    const done = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, Math.max(0, ms));
    });
    return { done, cancel: () => clearTimeout(timer) };
  },
};

/** What came of a shutdown. */
export interface ShutdownReport {
  /** Each closer's result, by name (undefined for one that failed or was still busy). */
  results: Map<string, unknown>;
  /** Closers still busy at the deadline. */
  late: string[];
}

/**
 * Runs every closer at once and waits until all are done or `deadline` has come, whichever is
 * first — one timer for all of them, never one after another.
 */
export async function closeAllBy(
  closers: readonly Closer[],
  deadline: number,
  clock: ShutdownClock = realClock,
): Promise<ShutdownReport> {
  const results = new Map<string, unknown>();
  const pending = new Set(closers.map((c) => c.name));
  const all = Promise.all(
    closers.map(async (c) => {
      try {
        results.set(c.name, await c.close(deadline));
      } catch {
        results.set(c.name, undefined);
      } finally {
        pending.delete(c.name);
      }
    }),
  );
  const timer = clock.wait(deadline - clock.now());
  try {
    await Promise.race([all, timer.done]);
  } finally {
    timer.cancel();
  }
  return { results, late: [...pending] };
}
