import { execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { EddyError } from "../errors.js";
import { createThreadStore } from "./threads.js";

const lockOf = (ws: string, name: string) => join(ws, ".eddy", "threads", `${name}.lock`);

describe("holding a thread (context/thread-hold.ts)", () => {
  it("one holder at a time: the second gets thread_busy naming the first; released, it is free", async () => {
    const ws = mkdtempSync(join(tmpdir(), "eddy-hold-"));
    const store = createThreadStore({ workspace: ws });
    const first = await store.hold("t1", "eddy chat");
    expect(JSON.parse(readFileSync(lockOf(ws, "t1"), "utf8"))).toMatchObject({
      pid: process.pid,
      holder: "eddy chat",
    });
    const refused = await store.hold("t1", "eddy run").catch((e: unknown) => e);
    expect(EddyError.isInstance(refused) && refused.code).toBe("thread_busy");
    expect((refused as Error).message).toMatch(/thread t1 is in use by another "eddy chat", process \d+/);
    // Another thread is not held.
    await (await store.hold("t2", "eddy run")).release();
    await first.release();
    await first.release(); // once
    expect(existsSync(lockOf(ws, "t1"))).toBe(false);
    await (await store.hold("t1", "eddy run")).release();
  });

  it("a hold whose process is gone, or a file eddy did not write, holds nothing", async () => {
    const ws = mkdtempSync(join(tmpdir(), "eddy-hold-"));
    const store = createThreadStore({ workspace: ws });
    await (await store.hold("t", "x")).release(); // makes the folder
    const gone = Number(
      execFileSync(process.execPath, ["-e", "console.log(process.pid)"], { encoding: "utf8" }),
    );
    for (const content of [JSON.stringify({ pid: gone, holder: "eddy chat" }), "not json", '{"pid":"1"}']) {
      writeFileSync(lockOf(ws, "t"), content);
      const hold = await store.hold("t", "eddy run");
      expect(JSON.parse(readFileSync(lockOf(ws, "t"), "utf8")).pid).toBe(process.pid);
      await hold.release();
    }
  });

  it("a lock file that is a symlink is refused, never followed or removed", async () => {
    const ws = mkdtempSync(join(tmpdir(), "eddy-hold-"));
    const store = createThreadStore({ workspace: ws });
    await (await store.hold("t", "x")).release();
    const outside = join(ws, "outside.txt");
    writeFileSync(outside, "keep");
    symlinkSync(outside, lockOf(ws, "t"));
    const refused = await store.hold("t", "eddy run").catch((e: unknown) => e);
    expect(EddyError.isInstance(refused) && refused.code).toBe("state_path_unsafe");
    expect(readFileSync(outside, "utf8")).toBe("keep");
  });
});
