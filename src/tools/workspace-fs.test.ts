/**
 * `removeChildTree` under a racing process (src/tools/test-support/swap-racer.mjs): the directory
 * it removes is flipped, hundreds of times, between a real one and a symlink to a folder outside
 * the workspace. Whatever state each removal meets, nothing outside may go (`rm(path,
 * {recursive})` lstat-ed the path, then listed and unlinked through it by name: a swap in between
 * emptied the outside folder).
 */
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createSandbox, type Sandbox } from "./test-support/workspace.js";
import { openDir, removeChildTree } from "./workspace-fs.js";

const RACER = fileURLToPath(new URL("./test-support/swap-racer.mjs", import.meta.url));
const SWAPS = 400;
let box: Sandbox;

beforeEach(async () => {
  box = await createSandbox();
});
afterEach(() => box.cleanup());

describe("removeChildTree", () => {
  it("never removes anything outside while the directory is swapped for a symlink", async () => {
    const outsideFiles = ["inner.txt", "a.txt", "b.txt"].map((n) => join(box.outside, n));
    const restore = () => Promise.all(outsideFiles.map((f) => writeFile(f, "outside\n")));
    await restore();
    const racer = spawn(process.execPath, [RACER, "dir", box.root, "d", "../outside", String(SWAPS)], {
      stdio: ["ignore", "pipe", "inherit"],
    });
    let out = "";
    let finished = false;
    const done = new Promise<void>((resolve) =>
      racer.on("exit", () => {
        finished = true;
        resolve();
      }),
    );
    await new Promise<void>((resolve) =>
      racer.stdout.on("data", (c: Buffer) => {
        out += c.toString();
        if (out.includes("ready")) resolve();
      }),
    );
    const root = await openDir(box.root, box.root, { tool: "test", display: "." });
    let calls = 0;
    const lost = new Set<string>();
    try {
      while (!finished) {
        await removeChildTree(root, "d").catch(() => {}); // a failure is fine; an escape is not
        calls++;
        for (const f of outsideFiles) if (!existsSync(f)) lost.add(f);
        if (lost.size > 0) await restore();
      }
    } finally {
      await root.close();
      await done;
    }
    expect(out).toContain(`done ${SWAPS}`);
    expect(calls).toBeGreaterThan(0); // how many met the race depends on load: a count would be a wall-time verdict
    expect([...lost]).toEqual([]);
    expect(existsSync(join(box.outside, "secret.txt"))).toBe(true);
  }, 120_000);
});
