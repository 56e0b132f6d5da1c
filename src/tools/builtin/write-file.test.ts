import { chmod, readdir, readFile, stat } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { allBuiltins, createSandbox, runTool, type Sandbox } from "../test-support/workspace.js";

let box: Sandbox;
const registry = allBuiltins();

beforeEach(async () => {
  box = await createSandbox();
  await box.files({ "existing.txt": "old\n", "dir/x.txt": "x" });
});
afterEach(() => box.cleanup());

const write = (args: Record<string, unknown>) => runTool(registry, box.root, "write_file", args);
const content = (path: string) => readFile(join(box.root, path), "utf8");

describe("write_file", () => {
  it("creates a file and its parent directories", async () => {
    const r = await write({ path: "new/deep/file.txt", content: "héllo\n" });
    expect(r.ok).toBe(true);
    expect(await content("new/deep/file.txt")).toBe("héllo\n");
    expect(r.parsed.stdout).toBe("created new/deep/file.txt: wrote 7 bytes");
    expect(r.parsed.artifacts).toEqual({
      path: "new/deep/file.txt",
      bytes_written: 7,
      bytes_total: 7,
      created: true,
      append: false,
    });
  });

  it("overwrites an existing file, keeping its mode, leaving no temp file", async () => {
    await chmod(join(box.root, "existing.txt"), 0o640);
    const r = await write({ path: "existing.txt", content: "new\n" });
    expect(r.parsed.stdout).toBe("overwrote existing.txt: wrote 4 bytes");
    expect(await content("existing.txt")).toBe("new\n");
    expect((await stat(join(box.root, "existing.txt"))).mode & 0o777).toBe(0o640);
    expect((await readdir(box.root)).sort()).toEqual(["dir", "existing.txt"]);
  });

  it("appends", async () => {
    await write({ path: "existing.txt", content: "more\n", append: true });
    const r = await write({ path: "existing.txt", content: "end", append: true });
    expect(await content("existing.txt")).toBe("old\nmore\nend");
    expect(r.parsed.stdout).toBe("appended to existing.txt: wrote 3 bytes (file is now 12 bytes)");
    expect(r.parsed.artifacts).toMatchObject({ append: true, bytes_total: 12 });
  });

  it("append creates a missing file", async () => {
    await write({ path: "log.txt", content: "a", append: true });
    expect(await content("log.txt")).toBe("a");
  });

  it("writes empty content", async () => {
    const r = await write({ path: "empty.txt", content: "" });
    expect(r.ok).toBe(true);
    expect(await content("empty.txt")).toBe("");
  });

  it("writes through a symlink that stays inside to its real target", async () => {
    await box.link("alias.txt", "existing.txt");
    await write({ path: "alias.txt", content: "via link\n" });
    expect(await content("existing.txt")).toBe("via link\n");
  });

  it.each<[Record<string, unknown>, string, RegExp]>([
    [{ path: "dir", content: "x" }, "tool_failed", /dir is a directory/],
    [{ path: "dir/x.txt/y.txt", content: "x" }, "tool_failed", /a parent of this path is a file/],
    [{ path: ".", content: "x" }, "tool_input_invalid", /must name a file/],
    [{ path: "a.txt" }, "tool_input_invalid", /content: is required but missing/],
    [{ path: "a.txt", content: 5 }, "tool_input_invalid", /content: must be string/],
  ])("refuses %j", async (args, code, message) => {
    const r = await write(args);
    expect(r.ok).toBe(false);
    expect(r.error?.code).toBe(code);
    expect(r.error?.message).toMatch(message);
  });

  it("tells the model how to recover from arguments cut off mid-content (docs/pitfalls.md #39)", async () => {
    const raw = `{"path":"big.txt","content":"${"x".repeat(5000)}`;
    const r = await runTool(registry, box.root, "write_file", raw);
    expect(r.error?.message).toMatch(/cut off.*write_file with append:true/);
    expect(await readdir(box.root)).not.toContain("big.txt");
  });
});
