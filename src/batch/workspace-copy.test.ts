/**
 * `--workspace-per-task` on a workspace with special files in it: a FIFO used to abort the whole
 * batch ("Cannot copy a FIFO pipe"), with no results and copies left in the temp folder.
 */
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { createScriptedProvider, type Script } from "../../test/support/scripted.js";
import { createToolRegistry } from "../tools/registry.js";
import { runBatch } from "./pool.js";
import type { BatchResult } from "./run-task.js";
import { copyWorkspace } from "./workspace-copy.js";

const made: string[] = [];
const temp = (name: string) => {
  const dir = mkdtempSync(join(tmpdir(), `eddy-wscopy-${name}-`));
  made.push(dir);
  return dir;
};
afterAll(() => {
  for (const dir of made) rmSync(dir, { recursive: true, force: true });
});

async function collect(iterable: AsyncIterable<BatchResult>): Promise<BatchResult[]> {
  const out: BatchResult[] = [];
  for await (const r of iterable) out.push(r);
  return out;
}

/** A workspace with a file, a FIFO, a socket and a nested FIFO. */
async function specialWorkspace(): Promise<string> {
  const base = temp("ws");
  writeFileSync(join(base, "data.txt"), "shared\n");
  mkdirSync(join(base, "sub"));
  expect(spawnSync("mkfifo", [join(base, "pipe"), join(base, "sub", "nested.fifo")]).status).toBe(0);
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(join(base, "daemon.sock"), resolve));
  // Closing the server unlinks the socket: keep it listening for the test's life.
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return base;
}

const answer: Script = () => ({ items: [{ type: "message", text: "fine" }] });

describe("copyWorkspace", () => {
  it("copies files, folders and symlinks; skips FIFOs, sockets and devices and lists them", async () => {
    const base = await specialWorkspace();
    const to = join(temp("dest"), "copy");
    const copy = copyWorkspace(base, to);
    expect(copy.skipped.sort()).toEqual(["daemon.sock", "pipe", "sub/nested.fifo"]);
    expect(readdirSync(to).sort()).toEqual(["data.txt", "sub"]);
    expect(readdirSync(join(to, "sub"))).toEqual([]);
  });

  it("a copy that fails leaves nothing behind and says why in one line", () => {
    const base = temp("ws-plain");
    writeFileSync(join(base, "data.txt"), "x\n");
    const blocked = join(temp("blocked"), "file");
    writeFileSync(blocked, "in the way\n");
    expect(() => copyWorkspace(base, join(blocked, "copy"))).toThrow(
      /^cannot copy the workspace .* for the task: ENOTDIR/,
    );
  });
});

describe("runBatch with workspaces per task", () => {
  it("a FIFO and a socket in the workspace: every task runs, the special files are listed, no copy is left", async () => {
    const base = await specialWorkspace();
    const copies = temp("copies");
    const results = await collect(
      runBatch(
        [
          { id: "a", spec: { input: "work" } },
          { id: "b", spec: { input: "work" } },
        ],
        {
          provider: createScriptedProvider([answer]),
          spec: { model: "m" },
          workspace: base,
          tools: () => createToolRegistry([]),
          workspaces: copies,
        },
      ),
    );
    expect(results.map((r) => [r.id, r.reason]).sort()).toEqual([
      ["a", "completed"],
      ["b", "completed"],
    ]);
    for (const r of results)
      expect(r.skippedFiles?.sort()).toEqual(["daemon.sock", "pipe", "sub/nested.fifo"]);
    expect(readdirSync(copies)).toEqual([]);
  });

  it("a copy that fails fails its task clearly, never the batch, and leaves nothing behind", async () => {
    const base = temp("ws-plain");
    writeFileSync(join(base, "data.txt"), "x\n");
    const parent = temp("blocked");
    const copies = join(parent, "file");
    writeFileSync(copies, "in the way\n"); // the copies' folder cannot be made
    const results = await collect(
      runBatch(
        [
          { id: "a", spec: { input: "work" } },
          { id: "b", spec: { input: "work" } },
        ],
        {
          provider: createScriptedProvider([answer]),
          spec: { model: "m" },
          workspace: base,
          tools: () => createToolRegistry([]),
          workspaces: copies,
        },
      ),
    );
    expect(results).toHaveLength(2);
    for (const r of results) {
      expect(r.reason).toBe("failed");
      expect(r.error?.code).toBe("workspace_copy_failed");
      expect(r.error?.message).toMatch(
        /^cannot (copy the workspace .* for the task|make the task's workspace): /,
      );
    }
    expect(readdirSync(parent)).toEqual(["file"]);
    expect(existsSync(join(copies, "a"))).toBe(false);
  });
});
