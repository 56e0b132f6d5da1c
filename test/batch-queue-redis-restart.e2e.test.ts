/**
 * Redis restarted empty in the middle of a queue batch (killed, started again on the same port
 * with nothing saved): every job, tape and setting of the batch is gone. The coordinator notices
 * its jobs vanished and queues them again (their tapes went too, so they start over); the batch
 * ends with one result per task. Coordinator and worker each say, in one line, that the
 * connection was lost — no `[ioredis] Unhandled error event` stack traces. It used to wait
 * forever while stderr filled with stack traces.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { ResultLine } from "../src/batch/batch-dir.js";
import { createMockServer } from "../src/mock/index.js";
import { type CliProcess, cleanupsAfterEach, startCli, stopAfterTest, until } from "./support/cli-process.js";
import { startGateProxy } from "./support/gate-proxy.js";
import { HAVE_REDIS, type RedisServer, startRedis } from "./support/redis.js";

const cleanups = cleanupsAfterEach();
const stopLater = (p: CliProcess) => stopAfterTest(cleanups, p);

/** No stack trace and no ioredis complaint in a process's stderr. */
function expectNoStackTrace(stderr: string): void {
  expect(stderr).not.toMatch(/Unhandled error event/);
  expect(stderr).not.toMatch(/^\s+at .+:\d+:\d+\)?$/m);
}

describe.skipIf(!HAVE_REDIS)(
  "a queue batch whose Redis restarts empty (slow: redis-server restarted)",
  () => {
    it("the coordinator queues the vanished jobs again and the batch completes; one line about it, no stack traces", async () => {
      let redis: RedisServer = await startRedis();
      cleanups.push(() => redis.stop());
      const cwd = mkdtempSync(join(tmpdir(), "eddy-queue-restart-"));
      cleanups.push(() => rmSync(cwd, { recursive: true, force: true }));
      const base = join(cwd, "workspace");
      mkdirSync(base);
      writeFileSync(join(base, "package.json"), '{"name": "restart"}\n');
      const server = await createMockServer({
        scenario: { turns: [{ items: [{ type: "message", text: "done" }], repeat: true }] },
      });
      cleanups.push(() => server.close());
      const gate = await startGateProxy(server.url);
      cleanups.push(() => gate.stop());
      gate.close();
      const tasks = Array.from({ length: 4 }, (_, i) => JSON.stringify({ id: `r${i}`, prompt: `task ${i}` }));
      writeFileSync(join(cwd, "tasks.jsonl"), `${tasks.join("\n")}\n`);

      const worker = startCli(
        [
          "worker",
          "--queue",
          redis.url,
          "--base-url",
          gate.url,
          "--model",
          "m",
          "--concurrency",
          "2",
          "--stall-timeout",
          "3000",
          "--workspace",
          base,
        ],
        { cwd },
      );
      stopLater(worker);
      await until(() => worker.stderr.includes("serving the queue"), "the worker");
      const coordinator = startCli(["batch", "tasks.jsonl", "--out", "out", "--queue", redis.url], { cwd });
      stopLater(coordinator);

      // Two runs wait for the model, two tasks wait in the queue: then Redis dies and comes back empty.
      await until(() => gate.held === 2, "two runs waiting for the model", 30_000);
      await redis.kill();
      redis = await startRedis({ port: redis.port });
      gate.open();

      // A hang guard only: the coordinator used to wait here forever.
      const exit = await Promise.race([
        coordinator.exited,
        new Promise<never>((_, reject) =>
          setTimeout(
            () => reject(new Error(`coordinator stuck:\n${coordinator.stderr}\nworker:\n${worker.stderr}`)),
            90_000,
          ),
        ),
      ]);
      expect(exit.code, coordinator.stderr).toBe(0);
      const lines = readFileSync(join(cwd, "out", "results.jsonl"), "utf8")
        .trim()
        .split("\n")
        .map((l) => JSON.parse(l) as ResultLine);
      expect(lines.map((l) => [l.id, l.reason]).sort()).toEqual([
        ["r0", "completed"],
        ["r1", "completed"],
        ["r2", "completed"],
        ["r3", "completed"],
      ]);

      expectNoStackTrace(coordinator.stderr);
      expect(coordinator.stderr.match(/lost the connection to Redis at 127\.0\.0\.1:\d+/g)).toHaveLength(1);
      expect(coordinator.stderr).toMatch(/vanished from Redis .* queued again/);
      worker.child.kill("SIGINT");
      await worker.exited;
      expectNoStackTrace(worker.stderr);
      expect(worker.stderr.match(/lost the connection to Redis at 127\.0\.0\.1:\d+/g)).toHaveLength(1);
    }, 150_000);
  },
);
