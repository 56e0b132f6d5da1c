/**
 * `eddy batch --workspace-per-task` on a workspace holding a FIFO and a socket: every task runs,
 * results.jsonl has every task, the special files are named once on stderr and in each result,
 * and no copy is left in the temp folder. It used to abort the whole batch ("internal error:
 * Cannot copy a FIFO pipe") with no results and copies left behind.
 */
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import type { ResultLine } from "../src/batch/batch-dir.js";
import { cleanEnv, runCli } from "./support/cli.js";

const root = mkdtempSync(join(tmpdir(), "eddy-batch-special-"));
let socket: Server | undefined;
afterAll(async () => {
  await new Promise<void>((resolve) => (socket === undefined ? resolve() : socket.close(() => resolve())));
  rmSync(root, { recursive: true, force: true });
});

describe("eddy batch --workspace-per-task with special files in the workspace", () => {
  it("runs every task, lists the special files once, leaves no copy behind", async () => {
    const ws = join(root, "ws");
    const temp = join(root, "tmp");
    mkdirSync(ws);
    mkdirSync(temp);
    writeFileSync(join(ws, "package.json"), '{"name": "special"}\n');
    expect(spawnSync("mkfifo", [join(ws, "pipe")]).status).toBe(0);
    socket = createServer();
    const server = socket;
    await new Promise<void>((resolve) => server.listen(join(ws, "daemon.sock"), resolve));
    const tasks = ["a", "b", "c"].map((id) => JSON.stringify({ id, prompt: "What is in package.json?" }));
    writeFileSync(join(root, "tasks.jsonl"), `${tasks.join("\n")}\n`);
    const r = await runCli(
      ["batch", join(root, "tasks.jsonl"), "--out", join(root, "out"), "--workspace-per-task"],
      { cwd: ws, env: cleanEnv({ TMPDIR: temp }), timeoutMs: 60_000 },
    );
    expect(r.stderr).not.toMatch(/internal error/);
    expect(r.code).toBe(0);
    const lines = readFileSync(join(root, "out", "results.jsonl"), "utf8")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as ResultLine);
    expect(lines.map((l) => [l.id, l.reason]).sort()).toEqual([
      ["a", "completed"],
      ["b", "completed"],
      ["c", "completed"],
    ]);
    for (const line of lines) expect(line.skipped_files?.sort()).toEqual(["daemon.sock", "pipe"]);
    const told = r.stderr.split("\n").filter((l) => l.includes("does not copy special files"));
    expect(told).toHaveLength(1);
    expect(told[0]).toMatch(/pipe/);
    // The copies' folder is gone or empty: a successful task's copy is removed.
    for (const entry of readdirSync(temp)) expect(readdirSync(join(temp, entry))).toEqual([]);
  });
});
