/**
 * `eddy batch --workspace-per-task` leaves in the temporary folder only the copies a later run
 * uses (docs/decisions.md #42): a refused task's copy and the batch's emptied copies folder are
 * removed; on Ctrl-C the unfinished tasks' copies stay, said on stderr, and go once the batch runs
 * again and finishes them. Before, a refused task's copy and the folder stayed for good.
 */
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { main } from "../src/cli/main.js";
import type { CliIo } from "../src/cli/run-command.js";
import { createMockServer, type MockServer } from "../src/mock/index.js";
import { runMainIn } from "./support/in-process-cli.js";

/** The temporary folder before it is stubbed: the batches run outside the copies' folder. */
const realTmp = tmpdir();
let temp = "";
const servers: MockServer[] = [];

beforeEach(() => {
  // The copies go to os.tmpdir()'s eddy-batch-ID: a folder of this test's own.
  temp = mkdtempSync(join(realTmp, "eddy-batch-ws-tmp-"));
  vi.stubEnv("TMPDIR", temp);
});

afterEach(async () => {
  vi.unstubAllEnvs();
  for (const server of servers.splice(0)) await server.close();
});

/** A folder to run the batch in: a workspace with one file and the tasks file. */
function batchFolder(tasks: object[]): string {
  const cwd = mkdtempSync(join(realTmp, "eddy-batch-ws-"));
  mkdirSync(join(cwd, "ws"));
  writeFileSync(join(cwd, "ws", "data.txt"), "shared\n");
  writeFileSync(join(cwd, "tasks.jsonl"), `${tasks.map((t) => JSON.stringify(t)).join("\n")}\n`);
  return cwd;
}

/** The batch's copies folder (in the stubbed temporary folder). */
function copiesOf(cwd: string): string {
  const { id } = JSON.parse(readFileSync(join(cwd, "out", "batch.json"), "utf8")) as { id: string };
  return join(temp, `eddy-batch-${id}`);
}

const BATCH = ["batch", "tasks.jsonl", "--out", "out", "--workspace", "ws", "--workspace-per-task"];

describe("eddy batch --workspace-per-task: what stays in the temporary folder", () => {
  it("a refused task's copy is removed, and the copies folder once it is empty", async () => {
    const cwd = batchFolder([
      { id: "good", prompt: "hi" },
      // A hosted tool this invocation does not declare: refused before it runs.
      { id: "refused", prompt: "hi", hosted_tools: [{ type: "web_search" }] },
    ]);
    const r = await runMainIn(BATCH, cwd);
    expect(r.code, r.stderr).toBe(1);
    const lines = readFileSync(join(cwd, "out", "results.jsonl"), "utf8");
    expect(lines).toMatch(/"id":"refused","reason":"invalid_request"/);
    expect(existsSync(copiesOf(cwd))).toBe(false);
  });

  it("Ctrl-C: the unfinished task's copy stays (said on stderr) and goes once the batch finishes it", async () => {
    const stalled = await createMockServer({
      scenario: {
        turns: [
          {
            items: [
              { type: "function_call", name: "write_file", arguments: { path: "w.txt", content: "hi" } },
            ],
          },
          { items: [{ type: "message", text: "late" }], faults: { stallBeforeHeadersMs: 60_000 } },
        ],
      },
    });
    servers.push(stalled);
    const cwd = batchFolder([{ id: "t", prompt: "write it" }]);
    const flags = ["--model", "m", "--allow-write", "--approve", "auto"];
    let stderr = "";
    let interrupt: (signal: string) => void = () => {};
    const io: CliIo = {
      stdout: { write: () => true },
      stderr: { write: (s: string) => (stderr += s) },
      readStdin: async () => "",
      stdinIsTTY: false,
      env: { HOME: cwd, XDG_CONFIG_HOME: join(cwd, ".config"), XDG_CACHE_HOME: join(cwd, ".cache") },
      cwd,
      onSignal: (handler) => {
        interrupt = handler;
        return () => {};
      },
    };
    const running = main([...BATCH, "--base-url", stalled.url, ...flags], io);
    // Ctrl-C once the task wrote its file and waits for the model.
    for (let i = 0; stalled.requests.length < 2; i++) {
      if (i > 6000) throw new Error(`the task never made its second request:\n${stderr}`);
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    interrupt("SIGINT");
    expect(await running, stderr).toBe(130);
    const copies = copiesOf(cwd);
    expect(readFileSync(join(copies, "t", "w.txt"), "utf8")).toBe("hi");
    expect(stderr).toContain(
      `eddy batch: the workspace copies of 1 unfinished task stay in ${copies}: they resume in them when the batch runs again`,
    );

    const answering = await createMockServer({
      scenario: { turns: [{ items: [{ type: "message", text: "done" }], repeat: true }] },
    });
    servers.push(answering);
    const again = await runMainIn([...BATCH, "--base-url", answering.url, ...flags], cwd);
    expect(again.code, again.stderr).toBe(0);
    expect(existsSync(copies)).toBe(false);
    expect(readdirSync(temp)).toEqual([]);
  });
});
