import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { allBuiltins, createSandbox, runTool, type Sandbox } from "../test-support/workspace.js";

let box: Sandbox;
const registry = allBuiltins();
const lines = (n: number, from = 1) => Array.from({ length: n }, (_, i) => `line ${i + from}\n`).join("");

beforeAll(async () => {
  box = await createSandbox();
  await box.files({
    "ten.txt": lines(10),
    "no-newline.txt": "a\nb\nc",
    "empty.txt": "",
    "crlf.txt": "one\r\ntwo\r\n",
    "utf8.txt": "héllo 😀\nwörld\n",
    "long-line.txt": `${"x".repeat(300)}\nshort\n`,
    "binary.bin": Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x00, 0x01, 0x02]),
    "late-nul.txt": `${"a\n".repeat(10_000)}\u0000tail\n`,
    "dir/inner.txt": "x\n",
    "big.txt": lines(20_000),
  });
});
afterAll(() => box.cleanup());

const read = (args: Record<string, unknown>) => runTool(registry, box.root, "read_file", args);

describe("read_file", () => {
  it.each<[string, Record<string, unknown>, string, Record<string, unknown>]>([
    [
      "whole file",
      { path: "ten.txt" },
      lines(10),
      { total_lines: 10, start_line: 1, end_line: 10, truncated: false },
    ],
    [
      "a range (1-based, inclusive)",
      { path: "ten.txt", start_line: 3, end_line: 5 },
      lines(3, 3),
      { start_line: 3, end_line: 5 },
    ],
    ["from a line to the end", { path: "ten.txt", start_line: 9 }, lines(2, 9), { end_line: 10 }],
    [
      "end_line past the end is clamped",
      { path: "ten.txt", start_line: 10, end_line: 99 },
      lines(1, 10),
      { end_line: 10 },
    ],
    ["no final newline", { path: "no-newline.txt", start_line: 2 }, "b\nc", { total_lines: 3, end_line: 3 }],
    ["empty file", { path: "empty.txt" }, "", { total_lines: 0, bytes: 0 }],
    ["CRLF kept as is", { path: "crlf.txt", end_line: 1 }, "one\r\n", { total_lines: 2 }],
    ["UTF-8", { path: "utf8.txt" }, "héllo 😀\nwörld\n", { total_lines: 2, bytes: 19 }],
    ["a path with ./ and ..", { path: "./dir/../ten.txt", end_line: 1 }, "line 1\n", { path: "ten.txt" }],
  ])("%s", async (_label, args, stdout, artifacts) => {
    const r = await read(args);
    expect(r.ok).toBe(true);
    expect(r.parsed.stdout).toBe(stdout);
    expect(r.parsed.stderr).toBe("");
    expect(r.parsed.artifacts).toMatchObject(artifacts);
  });

  it("stops at max_bytes on a line boundary and says where to continue", async () => {
    const r = await read({ path: "ten.txt", max_bytes: 20 });
    expect(r.parsed.stdout).toBe("line 1\nline 2\n");
    expect(r.parsed.artifacts).toMatchObject({ bytes: 14, end_line: 2, total_lines: 10, truncated: true });
    expect(r.parsed.stderr).toBe(
      "read_file: stopped at max_bytes (20) after line 2 of 10; call read_file with start_line=3 to continue.",
    );
  });

  it("cuts a single line longer than max_bytes and says so", async () => {
    const r = await read({ path: "long-line.txt", max_bytes: 100 });
    expect(r.parsed.stdout).toBe("x".repeat(100));
    expect(r.parsed.artifacts).toMatchObject({ start_line: 1, end_line: 1, truncated: true });
    expect(r.parsed.stderr).toMatch(/line 1 alone is longer than max_bytes \(100\)/);
  });

  it("by default reads at most 48 KiB, so the output stays under the 64 KiB cap", async () => {
    const r = await read({ path: "big.txt" });
    expect(r.truncated).toBe(false);
    expect(r.parsed.artifacts).toMatchObject({ total_lines: 20_000, truncated: true });
    expect(Buffer.byteLength(r.parsed.stdout)).toBeLessThanOrEqual(48 * 1024);
    expect(r.parsed.stderr).toMatch(/start_line=\d+ to continue/);
  });

  it("reads a late range of a large file (counting every line)", async () => {
    const r = await read({ path: "big.txt", start_line: 19_999 });
    expect(r.parsed.stdout).toBe("line 19999\nline 20000\n");
  });

  it.each<[string, Record<string, unknown>, string, RegExp]>([
    ["a directory", { path: "dir" }, "tool_failed", /dir is a directory; use list_dir/],
    ["a binary file", { path: "binary.bin" }, "tool_failed", /binary file \(it contains NUL bytes\)/],
    ["a NUL in the returned range", { path: "late-nul.txt", start_line: 10_001 }, "tool_failed", /binary/],
    ["a missing file", { path: "nope.txt" }, "tool_failed", /nope.txt: no such file or directory/],
    [
      "end_line before start_line",
      { path: "ten.txt", start_line: 5, end_line: 2 },
      "tool_input_invalid",
      /end_line \(2\) is before start_line \(5\)/,
    ],
    [
      "start_line past the end",
      { path: "ten.txt", start_line: 11 },
      "tool_input_invalid",
      /past the end of ten.txt \(10 lines\)/,
    ],
    ["start_line 0", { path: "ten.txt", start_line: 0 }, "tool_input_invalid", /start_line: must be >= 1/],
    ["the workspace root", { path: "." }, "tool_failed", /is a directory/],
  ])("refuses %s", async (_label, args, code, message) => {
    const r = await read(args);
    expect(r.ok).toBe(false);
    expect(r.error?.code).toBe(code);
    expect(r.error?.message).toMatch(message);
  });
});

describe("read_file on special files", () => {
  it("refuses a FIFO instead of blocking on it", async () => {
    const { execFileSync } = await import("node:child_process");
    execFileSync("mkfifo", [`${box.root}/pipe`]);
    const r = await read({ path: "pipe" });
    expect(r.error?.message).toMatch(/pipe is not a regular file/);
    const g = await runTool(registry, box.root, "grep", { pattern: "x", path: "pipe" });
    expect(g.error?.message).toMatch(/pipe is not a regular file or directory/);
  });
});
