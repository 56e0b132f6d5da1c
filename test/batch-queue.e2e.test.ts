/**
 * End-to-end on a real Redis: `eddy batch --queue` with two `eddy worker` processes, one killed
 * with SIGKILL while every run waits for the model. The tasks of the dead worker go to the other
 * after its stall timeout and are resumed from their tapes (which live in Redis). Then: one result
 * per task, every tape replays, the tool (shell, appending the task's own workspace path to a log
 * outside the workspaces) ran exactly once per task, and the model saw exactly two requests per
 * task — no turn was paid twice.
 *
 * The scripted model calls the tool on every turn; with `--max-tool-calls 1` each run makes its
 * call, sends it back, and ends `max_tool_calls` when the model asks for a second call: two
 * requests and one tool run per task, whatever the timing.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { ResultLine } from "../src/batch/batch-dir.js";
import { createMockServer } from "../src/mock/index.js";
import { replayTape } from "../src/replay/replay.js";
import { readTape } from "../src/replay/tape.js";
import { createBuiltinTools } from "../src/tools/builtin/index.js";
import { createToolRegistry } from "../src/tools/registry.js";
import { runCli } from "./support/cli.js";
import { type CliProcess, cleanupsAfterEach, startCli, stopAfterTest, until } from "./support/cli-process.js";
import { startGateProxy } from "./support/gate-proxy.js";
import { HAVE_REDIS, startRedis } from "./support/redis.js";

const cleanups = cleanupsAfterEach();
const stopLater = (p: CliProcess) => stopAfterTest(cleanups, p);

describe.skipIf(!HAVE_REDIS)(
  "eddy batch --queue with eddy workers (slow: redis-server, 200 runs, a worker killed)",
  () => {
    it("one worker killed mid-way: 200 results, each id once, no tool ran twice, no turn paid twice, every tape replays", async () => {
      const redis = await startRedis();
      cleanups.push(() => redis.stop());
      const cwd = mkdtempSync(join(tmpdir(), "eddy-queue-e2e-"));
      const base = join(cwd, "workspace");
      const log = join(cwd, "tool-runs.log");
      const server = await createMockServer({
        scenario: {
          turns: [
            {
              items: [{ type: "function_call", name: "shell", arguments: { command: `pwd >> ${log}` } }],
              repeat: true,
            },
          ],
        },
      });
      cleanups.push(() => server.close());
      const gate = await startGateProxy(server.url);
      cleanups.push(() => gate.stop());
      mkdirSync(base);
      writeFileSync(join(base, "package.json"), '{"name": "queued"}\n');
      const tasks = Array.from({ length: 200 }, (_, i) =>
        JSON.stringify({ id: `task-${i}`, prompt: `What is in package.json? (${i})` }),
      );
      writeFileSync(join(cwd, "tasks.jsonl"), `${tasks.join("\n")}\n`);

      const worker = () => {
        const w = startCli(
          [
            "worker",
            "--queue",
            redis.url,
            "--base-url",
            gate.url,
            "--model",
            "m",
            "--allow-shell",
            "--concurrency",
            "8",
            "--stall-timeout",
            "3000",
            "--workspace",
            base,
          ],
          { cwd },
        );
        stopLater(w);
        return w;
      };
      const a = worker();
      const b = worker();
      await until(
        () => a.stderr.includes("serving the queue") && b.stderr.includes("serving the queue"),
        "both workers",
      );
      const coordinator = startCli(
        [
          "batch",
          "tasks.jsonl",
          "--out",
          "out",
          "--queue",
          redis.url,
          "--workspace-per-task",
          "--max-tool-calls",
          "1",
        ],
        { cwd },
      );
      stopLater(coordinator);
      cleanups.push(() => {
        const id = JSON.parse(readFileSync(join(cwd, "out", "batch.json"), "utf8")).id as string;
        rmSync(join(tmpdir(), `eddy-batch-${id}`), { recursive: true, force: true });
      });

      // Mid-way, hold every request until both workers' 8 runs all wait for the model…
      await until(() => coordinator.stdout.split("\n").length > 40, "40 results", 60_000);
      gate.close();
      await until(() => gate.held === 16, "all 16 runs waiting for the model", 30_000);
      // …then kill one worker outright: no cleanup, its 8 tasks locked and half done.
      a.child.kill("SIGKILL");
      expect((await a.exited).signal).toBe("SIGKILL");
      await until(() => gate.held === 8, "the dead worker's requests to go away");
      gate.open();
      const exit = await Promise.race([
        coordinator.exited,
        new Promise<never>((_, reject) =>
          setTimeout(() => reject(new Error(`coordinator stuck:\n${coordinator.stderr}`)), 90_000),
        ),
      ]);
      // Every run ends `max_tool_calls` (see the module comment), which the batch counts as not completed.
      expect(exit.code, coordinator.stderr).toBe(1);

      const lines = readFileSync(join(cwd, "out", "results.jsonl"), "utf8")
        .trim()
        .split("\n")
        .map((l) => JSON.parse(l) as ResultLine);
      expect(lines).toHaveLength(200);
      expect(new Set(lines.map((l) => l.id)).size).toBe(200);
      expect(lines.every((l) => l.reason === "max_tool_calls" && l.tool_calls === 1 && l.turns === 2)).toBe(
        true,
      );
      // The dead worker's 8 tasks were resumed by the other one, from their tapes.
      expect(lines.filter((l) => l.resumed === 1)).toHaveLength(8);

      // Each task's tool ran exactly once: one line per task, each naming its own workspace copy.
      const runs = readFileSync(log, "utf8").trim().split("\n");
      expect(runs).toHaveLength(200);
      expect(new Set(runs.map((r) => r.split("/").at(-1))).size).toBe(200);
      // The model saw two requests per task: the dead worker's held requests never reached it.
      expect(server.requests).toHaveLength(400);

      const { tools, disabled } = createBuiltinTools({ allowShell: true });
      for (const line of lines) {
        const tape = readTape(join(cwd, "out", line.tape as string));
        const { verdict } = await replayTape(tape, {
          registry: createToolRegistry(tools, { disabled }),
          workspace: base,
        });
        expect(verdict, line.id).toMatchObject({ match: true });
      }
      const resumed = lines.find((l) => l.resumed === 1) as ResultLine;
      const replayed = await runCli(["replay", join("out", resumed.tape as string), "--workspace", base], {
        cwd,
      });
      expect(replayed.stdout).toMatch(/replay matches/);
      expect(readTape(join(cwd, "out", resumed.tape as string)).header.resumes).toHaveLength(1);
    }, 150_000);

    it("the coordinator killed mid-way: the same command again collects the rest, each id once", async () => {
      const redis = await startRedis();
      cleanups.push(() => redis.stop());
      const cwd = mkdtempSync(join(tmpdir(), "eddy-queue-coord-e2e-"));
      const log = join(cwd, "tool-runs.log");
      // Each task's tool appends its own prompt's number: the log shows how often each one ran.
      const server = await createMockServer({
        scenario: {
          turns: [
            {
              items: [{ type: "function_call", name: "shell", arguments: { command: `echo x >> ${log}` } }],
              repeat: true,
            },
          ],
        },
      });
      cleanups.push(() => server.close());
      const tasks = Array.from({ length: 60 }, (_, i) =>
        JSON.stringify({ id: `c${i}`, prompt: `task ${i}` }),
      );
      writeFileSync(join(cwd, "tasks.jsonl"), `${tasks.join("\n")}\n`);
      const worker = startCli(
        [
          "worker",
          "--queue",
          redis.url,
          "--base-url",
          server.url,
          "--model",
          "m",
          "--allow-shell",
          "--concurrency",
          "4",
        ],
        { cwd },
      );
      stopLater(worker);
      await until(() => worker.stderr.includes("serving the queue"), "the worker");
      const args = ["batch", "tasks.jsonl", "--out", "out", "--queue", redis.url, "--max-tool-calls", "1"];
      const first = startCli(args, { cwd });
      stopLater(first);
      await until(() => first.stdout.split("\n").length > 10, "10 results", 60_000);
      first.child.kill("SIGKILL");
      await first.exited;
      // The worker goes on without a coordinator; the next one collects what it finished meanwhile.
      await until(
        () => worker.stdout.trim().split("\n").length >= 60,
        "the worker to finish every task",
        60_000,
      );
      const second = await runCli(args, { cwd, timeoutMs: 60_000 });
      expect(second.code, second.stderr).toBe(1); // every run ends max_tool_calls
      const lines = readFileSync(join(cwd, "out", "results.jsonl"), "utf8")
        .trim()
        .split("\n")
        .map((l) => JSON.parse(l) as ResultLine);
      expect(lines).toHaveLength(60);
      expect(new Set(lines.map((l) => l.id)).size).toBe(60);
      expect(lines.every((l) => l.reason === "max_tool_calls" && l.tool_calls === 1)).toBe(true);
      expect(readFileSync(log, "utf8").trim().split("\n")).toHaveLength(60);
      expect(server.requests).toHaveLength(120);
      for (const line of lines)
        expect(readTape(join(cwd, "out", line.tape as string)).frames.at(-1)?.type).toBe("run_ended");
    }, 150_000);
  },
);
