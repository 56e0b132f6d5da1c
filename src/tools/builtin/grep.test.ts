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

const grep = (args: Record<string, unknown>) => runTool(registry, box.root, "grep", args);

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
  ])("refuses %j", async (args, code, message) => {
    const r = await grep(args);
    expect(r.ok).toBe(false);
    expect(r.error?.code).toBe(code);
    expect(r.error?.message).toMatch(message);
  });
});
