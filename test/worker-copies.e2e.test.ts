/**
 * End-to-end on a real Redis: an `eddy worker` stopped (Ctrl-C) while a `--workspace-per-task`
 * task runs hands the task back to the queue and removes its copy: whichever worker takes it
 * resumes it from its tape in a copy of its own (docs/decisions.md #42). The copy used to stay in
 * the worker's temporary folder, named nowhere, for good. And a worker removes a batch's copies
 * folder it marked once the folder has been idle for a day (it never knows a batch is over): it
 * used to leave every batch's folder behind for good.
 */
import { existsSync, mkdirSync, mkdtempSync, readdirSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { COPIES_MARKER, MARKER_TEXT } from "../src/batch/worker-copies.js";
import { createMockServer } from "../src/mock/index.js";
import { type CliProcess, cleanupsAfterEach, startCli, stopAfterTest, until } from "./support/cli-process.js";
import { HAVE_REDIS, startRedis } from "./support/redis.js";

const cleanups = cleanupsAfterEach();
const stopLater = (p: CliProcess) => stopAfterTest(cleanups, p);

/** The task copies under the worker's temporary folder (`eddy-batch-ID/NAME`; not its marker). */
function copies(temp: string): string[] {
  return readdirSync(temp).flatMap((batch) =>
    readdirSync(join(temp, batch))
      .filter((c) => c !== COPIES_MARKER)
      .map((c) => `${batch}/${c}`),
  );
}

/** A batch's copies folder in `temp` with a copy in it, last used `daysAgo` days ago; marked unless told. */
function batchFolder(temp: string, batch: string, daysAgo: number, marked = true): string {
  const folder = join(temp, `eddy-batch-${batch}`);
  mkdirSync(join(folder, "t"), { recursive: true, mode: 0o700 });
  if (marked) writeFileSync(join(folder, COPIES_MARKER), MARKER_TEXT);
  const at = Date.now() / 1000 - daysAgo * 86_400;
  for (const path of [join(folder, "t"), ...(marked ? [join(folder, COPIES_MARKER)] : []), folder])
    utimesSync(path, at, at);
  return folder;
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
    // The worker marked the batch's folder as its own: it goes once idle.
    const [folder] = readdirSync(temp);
    expect(readdirSync(join(temp, folder as string))).toEqual([COPIES_MARKER]);
  });

  it("removes a batch's copies folder idle for more than a day as it starts, and nothing else", {
    timeout: 120_000,
  }, async () => {
    const redis = await startRedis();
    cleanups.push(() => redis.stop());
    const cwd = mkdtempSync(join(tmpdir(), "eddy-worker-copies-"));
    const temp = join(cwd, "tmp");
    mkdirSync(temp);
    const old = batchFolder(temp, "oldbatch01", 2);
    const fresh = batchFolder(temp, "freshbatch1", 0.5);
    const unmarked = batchFolder(temp, "unmarked01", 2, false);
    const worker = startCli(
      ["worker", "--queue", redis.url, "--base-url", "http://127.0.0.1:9", "--model", "m"],
      {
        cwd,
        env: { TMPDIR: temp },
      },
    );
    stopLater(worker);
    await until(() => worker.stderr.includes("serving the queue"), "the worker");
    // The folder is renamed (`….removing-HEX`) before its contents go: wait for both to be gone.
    const left = () => readdirSync(temp).filter((name) => name.startsWith("eddy-batch-oldbatch01"));
    await until(() => !existsSync(old) && left().length === 0, "the idle folder's removal");
    expect(readdirSync(temp).sort()).toEqual(["eddy-batch-freshbatch1", "eddy-batch-unmarked01"]);
    expect(readdirSync(fresh).sort()).toEqual([COPIES_MARKER, "t"]);
    expect(readdirSync(unmarked)).toEqual(["t"]);
    expect(worker.stderr).not.toContain("cannot");
  });
});
