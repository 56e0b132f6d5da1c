import { randomBytes } from "node:crypto";
import { writeFileSync } from "node:fs";
import { readdir } from "node:fs/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { allBuiltins, createSandbox, runTool, type Sandbox } from "../test-support/workspace.js";

let box: Sandbox;
const registry = allBuiltins();

beforeAll(async () => {
  box = await createSandbox();
  await box.files({
    "b.ts": "const Foo = 1;\nfoo();\n",
    "a.ts": "// foo.bar\nfoobar\r\nFOO\n",
    "docs/readme.md": "Use foo(x) here.\n",
    "docs/deep/x.ts": "nothing\nlast foo",
    ".hidden/h.ts": "foo\n",
    "node_modules/m/index.js": "foo\n",
    "img.png": Buffer.concat([Buffer.from("foo"), Buffer.from([0, 1, 2]), Buffer.from("foo")]),
    "long.txt": `foo${"y".repeat(1000)}\n`,
    "many.txt": "hit\n".repeat(300),
  });
});
afterAll(() => box.cleanup());

const grep = (args: Record<string, unknown>, signal?: AbortSignal) =>
  runTool(registry, box.root, "grep", args, signal === undefined ? {} : { signal });

describe("grep", () => {
  it.each<[string, Record<string, unknown>, string[]]>([
    [
      "literal, case-sensitive, walk order, skips hidden/node_modules/binary",
      { pattern: "foo" },
      [
        "a.ts:1:// foo.bar",
        "a.ts:2:foobar",
        "b.ts:2:foo();",
        "docs/deep/x.ts:2:last foo",
        "docs/readme.md:1:Use foo(x) here.",
      ],
    ],
    [
      "literal treats regex characters literally",
      { pattern: "foo(x)" },
      ["docs/readme.md:1:Use foo(x) here."],
    ],
    ["literal dot is not a wildcard", { pattern: "o.b" }, ["a.ts:1:// foo.bar"]],
    [
      "case-insensitive",
      { pattern: "foo", case_sensitive: false, path: "a.ts" },
      ["a.ts:1:// foo.bar", "a.ts:2:foobar", "a.ts:3:FOO"],
    ],
    [
      "case-insensitive literal with regex characters",
      { pattern: "FOO(X)", case_sensitive: false },
      ["docs/readme.md:1:Use foo(x) here."],
    ],
    ["regex", { pattern: "^fo+\\w*$", regex: true }, ["a.ts:2:foobar"]],
    ["regex, case-insensitive", { pattern: "^foo$", regex: true, case_sensitive: false }, ["a.ts:3:FOO"]],
    [
      "a directory path",
      { pattern: "foo", path: "docs" },
      ["docs/deep/x.ts:2:last foo", "docs/readme.md:1:Use foo(x) here."],
    ],
    ["a hidden directory given explicitly", { pattern: "foo", path: ".hidden" }, [".hidden/h.ts:1:foo"]],
    ["include globs", { pattern: "foo", include: "*.md" }, ["docs/readme.md:1:Use foo(x) here."]],
    [
      "include list with a path glob",
      { pattern: "foo", include: ["docs/**/*.ts", "b.*"] },
      ["b.ts:2:foo();", "docs/deep/x.ts:2:last foo"],
    ],
  ])("%s", async (_label, args, expected) => {
    const r = await grep({ include: ["*.ts", "*.md"], ...args });
    expect(r.ok).toBe(true);
    expect(r.parsed.stdout).toBe(expected.join("\n"));
    expect(r.parsed.artifacts).toMatchObject({ matches: expected.length, truncated: false });
  });

  it("skips binary files and says so", async () => {
    const r = await grep({ pattern: "foo", include: "*.png" });
    expect(r.parsed.stdout).toBe("");
    expect(r.parsed.stderr).toMatch(/skipped 1 binary file/);
  });

  it("cuts very long matching lines", async () => {
    const r = await grep({ pattern: "foo", path: "long.txt" });
    expect(r.parsed.stdout.length).toBeLessThan(450);
    expect(r.parsed.stdout.endsWith("…")).toBe(true);
  });

  it("stops at max_results, with a note", async () => {
    const r = await grep({ pattern: "hit", max_results: 5 });
    expect(r.parsed.stdout.split("\n")).toEqual([
      "many.txt:1:hit",
      "many.txt:2:hit",
      "many.txt:3:hit",
      "many.txt:4:hit",
      "many.txt:5:hit",
    ]);
    expect(r.parsed.artifacts).toMatchObject({ matches: 5, truncated: true });
    expect(r.parsed.stderr).toMatch(/stopped after 5 matches \(there are more\)/);
  });

  it("defaults to 200 results", async () => {
    const r = await grep({ pattern: "hit" });
    expect(r.parsed.artifacts).toMatchObject({ matches: 200, truncated: true });
  });

  it("exactly max_results matches is not truncated", async () => {
    const r = await grep({ pattern: "hit", max_results: 300 });
    expect(r.parsed.artifacts).toMatchObject({ matches: 300, truncated: false });
  });

  it("says when nothing matched", async () => {
    const r = await grep({ pattern: "zzz" });
    expect(r.ok).toBe(true);
    expect(r.parsed.stdout).toBe("");
    expect(r.parsed.stderr).toMatch(/no matches for "zzz" in \. \(\d+ file\(s\) searched\)/);
  });

  it.each<[Record<string, unknown>, string, RegExp]>([
    [{ pattern: "(", regex: true }, "tool_input_invalid", /invalid regular expression "\(".*regex:false/],
    [{ pattern: "" }, "tool_input_invalid", /pattern: must NOT have fewer than 1 characters/],
    [{ pattern: "x", path: "missing" }, "tool_failed", /missing: no such file or directory/],
    [{ pattern: "x", max_results: 0 }, "tool_input_invalid", /max_results: must be >= 1/],
    [
      { pattern: "x".repeat(10_001), regex: true },
      "tool_input_invalid",
      /pattern: must NOT have more than 10000 characters/,
    ],
  ])("refuses %j", async (args, code, message) => {
    const r = await grep(args);
    expect(r.ok).toBe(false);
    expect(r.error?.code).toBe(code);
    expect(r.error?.message).toMatch(message);
  });
});

describe("grep on hostile and large input", () => {
  it("a catastrophic-backtracking pattern finishes at once (linear-time engine)", async () => {
    await box.files({ "evil/aaa.txt": `${"a".repeat(40)}!\n` });
    const r = await grep({ pattern: "(a+)+$", regex: true, path: "evil" });
    expect(r.ok).toBe(true);
    expect(r.parsed.stdout).toBe("");
    // A backtracking engine takes minutes here; the margin is for a loaded machine.
    expect(r.durationMs).toBeLessThan(10_000);
    const hit = await grep({ pattern: "(a+)+!$", regex: true, path: "evil" });
    expect(hit.parsed.stdout).toBe(`evil/aaa.txt:1:${"a".repeat(40)}!`);
  });

  it.each<[string, string, RegExp]>([
    [
      "lookahead",
      "foo(?=bar)",
      /does not support: invalid or unsupported Perl syntax: `\(\?=`.*lookahead and backreferences/,
    ],
    ["a backreference", "(a)\\1", /does not support: invalid escape sequence: `\\1`/],
  ])("refuses %s with a clear message", async (_label, pattern, message) => {
    const r = await grep({ pattern, regex: true });
    expect(r.ok).toBe(false);
    expect(r.error?.code).toBe("tool_input_invalid");
    expect(r.error?.message).toMatch(message);
  });

  it.each<[string, string]>([
    ["named groups", "(?<word>fo+)\\("],
    ["\\u escapes", "\\u0066oo\\(x"],
    ["lookbehind", "(?<=Use )foo"],
    ["[^] and \\d", "Use[^]foo\\(\\w\\)"],
  ])("keeps JavaScript syntax: %s", async (_label, pattern) => {
    const r = await grep({ pattern, regex: true, include: "*.md" });
    expect(r.parsed.stdout).toBe("docs/readme.md:1:Use foo(x) here.");
  });

  it("streams large files: line numbers stay right across read chunks and very long lines", async () => {
    const rows = Array.from({ length: 60_000 }, (_, i) =>
      i + 1 === 30_000 ? "needle here" : `row ${i + 1}`,
    );
    rows.push(`${"x".repeat(400_000)}needle${"y".repeat(400_000)}`, "needle at the end");
    await box.files({ "large/rows.txt": rows.join("\r\n") });
    const r = await grep({ pattern: "needle", path: "large" });
    const lines = r.parsed.stdout.split("\n");
    expect(lines).toHaveLength(3);
    expect(lines[0]).toBe("large/rows.txt:30000:needle here");
    expect(lines[1]).toMatch(/^large\/rows.txt:60001:x{300}/);
    expect(lines[2]).toBe("large/rows.txt:60002:needle at the end");
    const regex = await grep({ pattern: "^needle", regex: true, path: "large" });
    expect(regex.parsed.stdout).toBe(
      "large/rows.txt:30000:needle here\nlarge/rows.txt:60002:needle at the end",
    );
  });

  it("a cancelled long search returns promptly (the search runs in a worker that is terminated)", async () => {
    // About 8 MB on one line where RE2's DFA keeps missing its cache: a linear but slow search
    // (about 10 s here), far longer than the cancellation may take.
    const ab = randomBytes(7_900_000).map((byte) => (byte & 1 ? 0x61 : 0x62));
    await box.files({ "slow/ab.txt": Buffer.concat([ab, Buffer.from("x\n")]) });
    const fdsBefore = (await readdir("/proc/self/fd")).length;
    const controller = new AbortController();
    const pending = grep({ pattern: "a[ab]{25}b$", regex: true, path: "slow" }, controller.signal);
    await new Promise((resolve) => setTimeout(resolve, 300));
    const abortedAt = performance.now();
    controller.abort();
    const r = await pending;
    expect(r.error?.code).toBe("cancelled");
    expect(performance.now() - abortedAt).toBeLessThan(2_000);
    // The terminated worker's open files are closed with it.
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect((await readdir("/proc/self/fd")).length).toBeLessThanOrEqual(fdsBefore);
  });
});

describe("grep over a name that is not valid UTF-8", () => {
  it("skips it with a note and searches the rest, ok", async () => {
    await box.files({ "enc/good.txt": "needle here\n" });
    writeFileSync(Buffer.from(`${box.root}/enc/bad\xff.txt`, "latin1"), "needle too\n");
    const r = await grep({ pattern: "needle", path: "enc" });
    expect(r.ok).toBe(true);
    expect(r.parsed.stdout).toBe("enc/good.txt:1:needle here");
    expect(r.parsed.stderr).toContain("grep: skipped enc/bad\\xff.txt: its name is not valid UTF-8");
  });
});
