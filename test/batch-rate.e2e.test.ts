/**
 * End-to-end: `--rpm 60` over 30 quick tasks (one request each) takes about 30 seconds, in one
 * process and across two workers sharing the limit through Redis — and the requests are spread a
 * second apart, not sent in bursts. Both batches run at the same time (this file takes ~35 s).
 */
import { mkdtempSync, readdirSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { readTape } from "../src/replay/tape.js";
import { type CliProcess, startCli, until } from "./support/cli-process.js";
import { HAVE_REDIS, startRedis } from "./support/redis.js";

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

function started(p: CliProcess): CliProcess {
  cleanups.push(async () => {
    if (p.child.exitCode === null && p.child.signalCode === null) {
      p.child.kill("SIGKILL");
      await p.exited;
    }
  });
  return p;
}

function tasksDir(): string {
  const cwd = mkdtempSync(join(tmpdir(), "eddy-rate-e2e-"));
  const tasks = Array.from({ length: 30 }, (_, i) =>
    JSON.stringify({ id: `q${i}`, prompt: `hello number ${i}` }),
  );
  writeFileSync(join(cwd, "tasks.jsonl"), `${tasks.join("\n")}\n`);
  return cwd;
}

/** Runs `p` to its end; returns its wall time (ms). */
async function timed(p: CliProcess, context: () => string = () => ""): Promise<number> {
  const start = performance.now();
  const { code } = await p.exited;
  expect(code, `${p.stderr}\n${context()}`).toBe(0);
  return performance.now() - start;
}

/**
 * The gaps between the batch's requests, from its tapes (ms). Every request counts, a retry too: it
 * goes through the limiter like any other. A retry is allowed only after a failed attempt (under load
 * a kept-alive socket can be closed by the server just as a request reuses it: ECONNRESET, retried).
 */
function requestGaps(cwd: string): number[] {
  const dir = join(cwd, "out", "tapes");
  const frames = readdirSync(dir).flatMap((f) =>
    readTape(join(dir, f)).frames.map((fr) => ({ tape: f, fr })),
  );
  const requests = frames.flatMap(({ tape, fr }) =>
    fr.type === "request_started" ? [{ tape, ts: fr.ts, attempt: fr.attempt }] : [],
  );
  const failed = frames.filter(({ fr }) => fr.type === "request_failed");
  const times = requests.map((r) => r.ts).sort((a, b) => a - b);
  const retries = requests.filter((r) => r.attempt > 1);
  expect(retries.length, JSON.stringify(retries)).toBeLessThanOrEqual(failed.length);
  expect(times, JSON.stringify(retries)).toHaveLength(30 + retries.length);
  return times.slice(1).map((t, i) => t - (times[i] as number));
}

describe.skipIf(!HAVE_REDIS)("--rpm (slow: about 35 s)", () => {
  it("--rpm 60 over 30 quick tasks takes about 30 s, in one process and across two workers", async () => {
    const redis = await startRedis();
    cleanups.push(() => redis.stop());
    const local = tasksDir();
    const queued = tasksDir();
    const workers = [1, 2].map(() =>
      started(startCli(["worker", "--queue", redis.url, "--concurrency", "8"], { cwd: queued })),
    );
    await until(() => workers.every((w) => w.stderr.includes("serving the queue")), "both workers");

    const [localMs, queuedMs] = await Promise.all([
      timed(
        started(
          startCli(["batch", "tasks.jsonl", "--out", "out", "--rpm", "60", "--concurrency", "8"], {
            cwd: local,
          }),
        ),
      ),
      timed(
        started(
          startCli(["batch", "tasks.jsonl", "--out", "out", "--rpm", "60", "--queue", redis.url], {
            cwd: queued,
          }),
        ),
        () => workers.map((w) => `worker:\n${w.stdout}\n${w.stderr}`).join("\n"),
      ),
    ]);
    // Not faster than the limit allows (the verdict that matters: a limiter that lets requests
    // through early fails here whatever the machine's load).
    for (const ms of [localMs, queuedMs]) expect(ms).toBeGreaterThan(24_000);
    for (const cwd of [local, queued]) {
      const gaps = requestGaps(cwd);
      // One request a second, not bursts. On a loaded machine a frame's timestamp can lag the
      // moment its request was let go, and one late stamp shrinks one gap by its lag (two requests
      // 344 ms apart at load 20), so no single gap decides: a limiter that let requests through in
      // pairs would make about 15 gaps of milliseconds, one that let many go at once would make
      // some five requests in a row span far less than their ~4 s.
      expect(gaps.filter((g) => g < 500).length, JSON.stringify(gaps)).toBeLessThanOrEqual(2);
      const spans = gaps.slice(3).map((_, i) => gaps.slice(i, i + 4).reduce((x, y) => x + y, 0));
      expect(Math.min(...spans), JSON.stringify(gaps)).toBeGreaterThan(2_500);
      // Not throttled to half the rate either: 29 gaps of about a second, measured between the
      // requests themselves (not the processes' wall time, which a busy machine stretches).
      expect(gaps.reduce((a, b) => a + b, 0)).toBeLessThan(58_000);
    }
  }, 90_000);
});
