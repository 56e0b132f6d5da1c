/**
 * End-to-end on a real Redis: an `eddy worker` stopped (Ctrl-C) while a `--workspace-per-task`
 * task runs hands the task back to the queue and removes its copy: whichever worker takes it
 * resumes it from its tape in a copy of its own (docs/decisions.md #42). The copy used to stay in
 * the worker's temporary folder, named nowhere, for good.
 */
import { mkdirSync, mkdtempSync, readdirSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { createMockServer } from "../src/mock/index.js";
import { type CliProcess, cleanupsAfterEach, startCli, stopAfterTest, until } from "./support/cli-process.js";
import { HAVE_REDIS, startRedis } from "./support/redis.js";

const cleanups = cleanupsAfterEach();
const stopLater = (p: CliProcess) => stopAfterTest(cleanups, p);

/** The task copies under the worker's temporary folder (`eddy-batch-ID/NAME`). */
function copies(temp: string): string[] {
  return readdirSync(temp).flatMap((batch) => readdirSync(join(temp, batch)).map((c) => `${batch}/${c}`));
}

describe.skipIf(!HAVE_REDIS)("eddy worker --workspace-per-task stopped mid-task (redis-server)", () => {
  it("hands the task back and removes its copy", { timeout: 300_000 }, async () => {
    const redis = await startRedis();
    cleanups.push(() => redis.stop());
    const server = await createMockServer({
      scenario: {
        turns: [{ items: [{ type: "message", text: "late" }], faults: { stallBeforeHeadersMs: 120_000 } }],
      },
    });
    cleanups.push(() => server.close());
    const cwd = mkdtempSync(join(tmpdir(), "eddy-worker-copies-"));
    const temp = join(cwd, "tmp");
    mkdirSync(temp);
    mkdirSync(join(cwd, "ws"));
    writeFileSync(join(cwd, "ws", "data.txt"), "shared\n");
    writeFileSync(join(cwd, "tasks.jsonl"), `${JSON.stringify({ id: "t", prompt: "hi" })}\n`);
    const worker = startCli(
      ["worker", "--queue", redis.url, "--base-url", server.url, "--model", "m", "--workspace", "ws"],
      { cwd, env: { TMPDIR: temp } },
    );
    stopLater(worker);
    await until(() => worker.stderr.includes("serving the queue"), "the worker");
    const coordinator = startCli(
      ["batch", "tasks.jsonl", "--out", "out", "--queue", redis.url, "--workspace-per-task"],
      { cwd },
    );
    stopLater(coordinator);
    await until(() => server.requests.length > 0, "the task's request", 120_000);
    expect(copies(temp)).toEqual([expect.stringMatching(/^eddy-batch-[a-z0-9]+\/t$/)]);

    worker.child.kill("SIGINT");
    const exit = await worker.exited;
    expect(exit.code, worker.stderr).toBe(130);
    expect(worker.stderr).toContain("stopped (tasks in flight went back to the queue)");
    expect(copies(temp)).toEqual([]);
  });
});
