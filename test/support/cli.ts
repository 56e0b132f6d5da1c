/** Spawning the built CLI (dist/, built by the global setup) the way a user's shell would. */
import { spawn } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

export const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
export const BIN = join(ROOT, "bin", "eddy.js");

export interface CliResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  /** Milliseconds from the signal (when `signalAfter` was used) to the exit. */
  exitAfterSignalMs?: number;
}

export interface CliOptions {
  cwd?: string;
  env?: Record<string, string>;
  stdin?: string;
  /** Send SIGINT once stdout or stderr contains this text. */
  signalWhen?: string;
  signal?: NodeJS.Signals;
  timeoutMs?: number;
}

/**
 * An empty cache directory for every CLI the tests start: `eddy run` reads eddy doctor's cache
 * (src/cli/doctor-cache.ts), and the machine's own must not steer a test's run.
 */
const CACHE_HOME = mkdtempSync(join(tmpdir(), "eddy-test-cache-"));

/** A clean environment: no provider keys or URLs, nor eddy doctor's cache, leak in from the machine running the tests. */
export function cleanEnv(extra: Record<string, string> = {}): Record<string, string> {
  // The workspaces the tests make are theirs: their eddy.config.json applies whole (src/cli/config-trust.ts;
  // the trust itself is tested with this left out).
  const env: Record<string, string> = { XDG_CACHE_HOME: CACHE_HOME, EDDY_TRUST_CONFIG: "1" };
  for (const key of ["PATH", "HOME", "LANG", "TMPDIR", "SystemRoot"]) {
    const v = process.env[key];
    if (v !== undefined) env[key] = v;
  }
  return { ...env, ...extra };
}

export function runCli(args: string[], options: CliOptions = {}): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, ...args], {
      cwd: options.cwd ?? ROOT,
      env: options.env ?? cleanEnv(),
      stdio: ["pipe", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    let signalledAt: number | undefined;
    const check = () => {
      if (
        options.signalWhen !== undefined &&
        signalledAt === undefined &&
        (stdout + stderr).includes(options.signalWhen)
      ) {
        signalledAt = performance.now();
        child.kill(options.signal ?? "SIGINT");
      }
    };
    child.stdout.on("data", (d: Buffer) => {
      stdout += d.toString("utf8");
      check();
    });
    child.stderr.on("data", (d: Buffer) => {
      stderr += d.toString("utf8");
      check();
    });
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(
        new Error(
          `eddy ${args.join(" ")} did not exit within ${options.timeoutMs ?? 60_000} ms\nstdout: ${stdout}\nstderr: ${stderr}`,
        ),
      );
    }, options.timeoutMs ?? 60_000);
    child.on("error", reject);
    child.on("close", (code, signal) => {
      clearTimeout(timer);
      const result: CliResult = { code, signal, stdout, stderr };
      if (signalledAt !== undefined) result.exitAfterSignalMs = performance.now() - signalledAt;
      resolve(result);
    });
    // A command that stops reading its stdin (an input over its bound) is not a test failure.
    child.stdin.on("error", () => {});
    if (options.stdin !== undefined) child.stdin.end(options.stdin);
    else child.stdin.end();
  });
}
