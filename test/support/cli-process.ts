/** The built CLI as a long-running child process a test can watch, signal or kill (SIGKILL). */
import { type ChildProcess, spawn } from "node:child_process";
import { afterEach } from "vitest";
import { BIN, cleanEnv, ROOT } from "./cli.js";

export interface CliProcess {
  child: ChildProcess;
  readonly stdout: string;
  readonly stderr: string;
  /** Settles with the exit code (null when killed by a signal) once the process has exited. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/** Starts `eddy ARGS…` (in `cwd`, with a clean environment plus `env`). */
export function startCli(
  args: string[],
  options: { cwd?: string; env?: Record<string, string> } = {},
): CliProcess {
  const child = spawn(process.execPath, [BIN, ...args], {
    cwd: options.cwd ?? ROOT,
    env: cleanEnv(options.env),
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  child.stdout?.on("data", (d: Buffer) => {
    stdout += d.toString("utf8");
  });
  child.stderr?.on("data", (d: Buffer) => {
    stderr += d.toString("utf8");
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on("close", (code, signal) => resolve({ code, signal })),
  );
  return {
    child,
    get stdout() {
      return stdout;
    },
    get stderr() {
      return stderr;
    },
    exited,
  };
}

/** Resolves once `test()` holds (checked every 20 ms); rejects after `timeoutMs` with `what`. */
export async function until(test: () => boolean, what: string, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!test()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** Work to undo after a test: each file's `cleanupsAfterEach()` runs them, last pushed first. */
export type Cleanups = (() => Promise<void> | void)[];

/** A list of cleanups run after each test of the calling file (vitest's `afterEach`), last pushed first. */
export function cleanupsAfterEach(): Cleanups {
  const cleanups: Cleanups = [];
  afterEach(async () => {
    for (const c of cleanups.splice(0).reverse()) await c();
  });
  return cleanups;
}

/** Kills `p` after the test (SIGKILL) when it is still running then, and waits for its exit. */
export function stopAfterTest(cleanups: Cleanups, p: CliProcess): void {
  cleanups.push(async () => {
    if (p.child.exitCode === null && p.child.signalCode === null) {
      p.child.kill("SIGKILL");
      await p.exited;
    }
  });
}
