/**
 * `eddy batch --workspace-per-task` on a workspace holding a FIFO and a socket: every task runs,
 * results.jsonl has every task, the special files are named once on stderr and in each result,
 * and no copy is left in the temp folder. It used to abort the whole batch ("internal error:
 * Cannot copy a FIFO pipe") with no results and copies left behind.
 *
 * Symlinks planted in the `--out` folder (`results.jsonl`, `tapes/ID.tape`) are refused, never
 * written through: eddy used to append its results, or a task's tape, to wherever they pointed.
 */
import { spawnSync } from "node:child_process";
import {
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
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

describe("eddy batch with symlinks planted in its --out folder", () => {
  const outside = join(root, "outside.txt");
  const tasksFile = join(root, "two.jsonl");
  const batch = (out: string) =>
    runCli(["batch", tasksFile, "--out", out], { cwd: root, env: cleanEnv(), timeoutMs: 60_000 });

  it("refuses a symlinked results.jsonl before any task runs, leaving its target untouched", async () => {
    writeFileSync(outside, "keep\n");
    writeFileSync(tasksFile, `${JSON.stringify({ id: "a", prompt: "hi" })}\n`);
    const out = join(root, "out-results");
    mkdirSync(out);
    symlinkSync(outside, join(out, "results.jsonl"));
    const r = await batch(out);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/results\.jsonl is a symlink.*remove it, or choose another folder with --out/);
    expect(r.stderr).not.toMatch(/\n\s+at /);
    expect(readFileSync(outside, "utf8")).toBe("keep\n");
  });

  it("refuses a symlinked tapes/ID.tape: that task fails naming it, the others run, its target is untouched", async () => {
    writeFileSync(outside, "keep\n");
    const tasks = ["a", "b"].map((id) => JSON.stringify({ id, prompt: "hi" }));
    writeFileSync(tasksFile, `${tasks.join("\n")}\n`);
    const out = join(root, "out-tape");
    mkdirSync(join(out, "tapes"), { recursive: true });
    symlinkSync(outside, join(out, "tapes", "a.tape"));
    const r = await batch(out);
    expect(r.stderr).not.toMatch(/internal error/);
    expect(r.code).toBe(1);
    expect(readFileSync(outside, "utf8")).toBe("keep\n");
    const lines = readFileSync(join(out, "results.jsonl"), "utf8")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as ResultLine);
    const byId = new Map(lines.map((l) => [l.id, l]));
    expect(byId.get("b")?.reason).toBe("completed");
    expect(byId.get("a")?.error?.message).toMatch(/a\.tape: it is a symlink.*remove it/);
  });
});
