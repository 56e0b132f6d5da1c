/**
 * End-to-end: a queue job is untrusted input (anyone who can write to the Redis can add one). A
 * job whose batch id climbs out of the worker's temp folder fails with a reason naming the field,
 * deletes nothing, and the worker goes on serving the next job (src/batch/queue.ts checkQueuedTask).
 */
import { existsSync, mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import { type Job, Queue } from "bullmq";
import { describe, expect, it } from "vitest";
import { BATCH_DEFAULTS } from "../src/batch/defaults.js";
import { connectRedis, UNREADABLE_JOB } from "../src/batch/queue.js";
import { createMockServer } from "../src/mock/index.js";
import { type CliProcess, cleanupsAfterEach, startCli, stopAfterTest, until } from "./support/cli-process.js";
import { HAVE_REDIS, startRedis } from "./support/redis.js";

const cleanups = cleanupsAfterEach();
const stopLater = (p: CliProcess) => stopAfterTest(cleanups, p);

/**
 * The job once it has ended (failed for good or completed), polled from Redis. Not BullMQ's
 * `waitUntilFinished`: its QueueEvents reads the event stream from "now", and a job that ends before
 * that read is issued (a fast worker on a loaded machine) is never reported; the test then waited
 * its full two minutes (seen once in a fresh clone).
 */
async function ended(queue: Queue, id: string, worker: CliProcess, timeoutMs = 120_000): Promise<Job> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    // The state first, then the job: a job read before it ended would lack its failedReason.
    const state = await queue.getJobState(id);
    const job = state === "failed" || state === "completed" ? await queue.getJob(id) : undefined;
    if (job !== undefined) return job;
    if (Date.now() > deadline)
      throw new Error(`job ${id} still ${state} after ${timeoutMs} ms; the worker said:\n${worker.stderr}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe.skipIf(!HAVE_REDIS)("eddy worker and hostile queue jobs (redis-server)", () => {
  // Generous: a Redis, a worker process and two jobs took over 60 s at load average 10; the
  // verdict is what the worker does with the jobs, not how fast.
  it("a job whose batch id holds ../ fails naming the field, deletes nothing, and the worker keeps serving", {
    timeout: 300_000,
  }, async () => {
    const redis = await startRedis();
    cleanups.push(() => redis.stop());
    const server = await createMockServer({
      scenario: { turns: [{ items: [{ type: "message", text: "fine" }], repeat: true }] },
    });
    cleanups.push(() => server.close());
    // What the old worker would have removed: <victim>/t, reached from its temp folder by ../
    const victim = mkdtempSync(join(tmpdir(), "eddy-victim-"));
    mkdirSync(join(victim, "t"));
    writeFileSync(join(victim, "t", "precious.txt"), "keep me\n");
    const cwd = mkdtempSync(join(tmpdir(), "eddy-queue-hostile-"));
    const worker = startCli(["worker", "--queue", redis.url, "--base-url", server.url, "--model", "m"], {
      cwd,
    });
    stopLater(worker);
    await until(() => worker.stderr.includes("serving the queue"), "the worker");

    const connection = { url: redis.url, maxRetriesPerRequest: null };
    const queue = new Queue(BATCH_DEFAULTS.queueName, { connection });
    cleanups.push(() => queue.close());
    const hostile = await queue.add(
      "task",
      {
        batch: `x/../../${basename(tmpdir())}/${basename(victim)}`,
        task: { id: "t", spec: { input: "hi" } },
        retry: false,
        workspacePerTask: true,
      },
      { jobId: "hostile", attempts: 3 },
    );
    const failed = await ended(queue, hostile.id as string, worker);
    expect(await failed.getState()).toBe("failed");
    expect(failed.failedReason).toMatch(/batch: must be 8–40 lowercase/);
    expect(failed.attemptsMade).toBe(1); // not retried: it can never succeed
    expect(existsSync(join(victim, "t", "precious.txt"))).toBe(true);

    const wrongTypes = await queue.add(
      "task",
      {
        batch: "abcdefgh12",
        task: { id: "w", spec: { input: "hi", max_turns: "many" } },
        retry: false,
        workspacePerTask: false,
      },
      { jobId: "wrong-types" },
    );
    const wrong = await ended(queue, wrongTypes.id as string, worker);
    expect(await wrong.getState()).toBe("failed");
    expect(wrong.failedReason).toMatch(/max_turns/);
    // Each refusal is said on the worker's stderr too, where its operator looks.
    expect(worker.stderr).toContain(
      "eddy worker: refused job hostile without running it: queue job: batch: must be",
    );
    expect(worker.stderr).toMatch(/eddy worker: refused job wrong-types without running it: .*max_turns/);

    // A well-formed job that adds a hosted tool this worker was not given: its task fails, nothing is sent.
    const sent = server.requests.length;
    const planted = { type: "mcp", server_label: "x", server_url: "https://evil.example/mcp" };
    const hostedJob = await queue.add(
      "task",
      {
        batch: "abcdefgh12",
        task: { id: "h", spec: { input: "hi", hosted_tools: [planted] } },
        retry: false,
        workspacePerTask: false,
      },
      { jobId: "hosted-tool" },
    );
    const hosted = await ended(queue, hostedJob.id as string, worker);
    expect(hosted.returnvalue).toMatchObject({ reason: "invalid_request", error: { code: "policy_denied" } });
    expect(JSON.stringify(hosted.returnvalue)).toContain(
      'the hosted tool \\"mcp:x\\" is not one this invocation declares',
    );
    expect(server.requests.length).toBe(sent);

    // A job whose data someone made not JSON: BullMQ cannot read it as it takes it. It was said nowhere.
    await queue.add(
      "task",
      { batch: "abcdefgh12", task: { id: "u", spec: { input: "hi" } } },
      { jobId: "unreadable", delay: 1_500 },
    );
    const client = connectRedis(redis.url);
    cleanups.push(() => void client.disconnect());
    await client.hset(`bull:${BATCH_DEFAULTS.queueName}:unreadable`, "data", "{oops");
    await until(
      () => worker.stderr.includes("eddy worker: a job in Redis could not be read (its data is not JSON"),
      "the worker to say so",
    );
    // And fails it: BullMQ cannot take it, so it stayed active for ever (its stall limit never applied).
    const unreadable = await ended(queue, "unreadable", worker);
    expect(await unreadable.getState()).toBe("failed");
    expect(unreadable.failedReason).toBe(UNREADABLE_JOB);
    expect(worker.child.exitCode).toBeNull();
    expect(worker.stderr).not.toMatch(/\n\s+at .*\.js:\d+/);
  });
});
