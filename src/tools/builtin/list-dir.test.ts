import { mkdirSync, writeFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TOOL_DEFAULTS } from "../defaults.js";
import { allBuiltins, createSandbox, runTool, type Sandbox } from "../test-support/workspace.js";

let box: Sandbox;
const registry = allBuiltins();

beforeAll(async () => {
  box = await createSandbox();
  await box.files({
    "b.txt": "",
    "a.txt": "",
    "B.md": "",
    ".env": "SECRET=1",
    ".config/settings.json": "{}",
    "src/index.ts": "",
    "src/util/strings.ts": "",
    "src/util/strings.test.ts": "",
    "src/util/deep/deeper/bottom.ts": "",
    "node_modules/pkg/index.js": "",
    "many/.keep": "",
  });
  await box.files(
    Object.fromEntries(
      Array.from({ length: TOOL_DEFAULTS.listMaxEntries + 5 }, (_, i) => [
        `many/f${String(i).padStart(4, "0")}.txt`,
        "",
      ]),
    ),
  );
});
afterAll(() => box.cleanup());

const list = (args: Record<string, unknown>) => runTool(registry, box.root, "list_dir", args);

describe("list_dir", () => {
  it.each<[string, Record<string, unknown>, string[]]>([
    [
      "the root, one level, dirs marked, hidden skipped, code-unit order",
      {},
      ["B.md", "a.txt", "b.txt", "many/", "node_modules/", "src/"],
    ],
    ["a subdirectory (paths stay workspace-relative)", { path: "src" }, ["src/index.ts", "src/util/"]],
    [
      "recursive (node_modules listed, not entered)",
      { path: "src", recursive: true },
      [
        "src/index.ts",
        "src/util/",
        "src/util/deep/",
        "src/util/deep/deeper/",
        "src/util/deep/deeper/bottom.ts",
        "src/util/strings.test.ts",
        "src/util/strings.ts",
      ],
    ],
    [
      "max_depth",
      { path: "src", recursive: true, max_depth: 2 },
      ["src/index.ts", "src/util/", "src/util/deep/", "src/util/strings.test.ts", "src/util/strings.ts"],
    ],
    [
      "max_depth implies recursion",
      { path: "src", max_depth: 2 },
      ["src/index.ts", "src/util/", "src/util/deep/", "src/util/strings.test.ts", "src/util/strings.ts"],
    ],
    [
      "include glob without / matches file names at any depth",
      { path: "src", recursive: true, include: "*.ts" },
      ["src/index.ts", "src/util/deep/deeper/bottom.ts", "src/util/strings.test.ts", "src/util/strings.ts"],
    ],
    ["include list", { recursive: true, include: ["*.md", "src/*.ts"] }, ["B.md", "src/index.ts"]],
    [
      "exclude prunes directories",
      { path: "src", recursive: true, exclude: ["src/util/deep"] },
      ["src/index.ts", "src/util/", "src/util/strings.test.ts", "src/util/strings.ts"],
    ],
    [
      "include and exclude",
      { path: "src", recursive: true, include: "*.ts", exclude: "*.test.ts" },
      ["src/index.ts", "src/util/deep/deeper/bottom.ts", "src/util/strings.ts"],
    ],
    [
      "hidden entries on request",
      { include_hidden: true, exclude: ["many", "node_modules", "src"] },
      [".config/", ".env", "B.md", "a.txt", "b.txt"],
    ],
  ])("%s", async (_label, args, expected) => {
    const r = await list(args);
    expect(r.ok).toBe(true);
    expect(r.parsed.stdout).toBe(expected.join("\n"));
    expect(r.parsed.artifacts).toMatchObject({ entries: expected.length, truncated: false });
  });

  it("caps the number of entries with a note", async () => {
    const r = await list({ path: "many" });
    const lines = r.parsed.stdout.split("\n");
    expect(lines).toHaveLength(TOOL_DEFAULTS.listMaxEntries);
    expect(lines[0]).toBe("many/f0000.txt");
    expect(r.parsed.artifacts).toMatchObject({ truncated: true });
    expect(r.parsed.stderr).toMatch(/stopped after 1000 entries \(there are more\)/);
  });

  it("says when nothing is there", async () => {
    const r = await list({ path: "src", include: "*.rs" });
    expect(r.parsed.stdout).toBe("");
    expect(r.parsed.stderr).toMatch(
      /src has no entries \(filters: include, hidden entries skipped, ignored entries skipped\)/,
    );
  });

  it.each<[Record<string, unknown>, RegExp]>([
    [{ path: "a.txt" }, /a.txt is a file, not a directory; use read_file/],
    [{ path: "missing" }, /missing: no such file or directory/],
    [{ max_depth: 0 }, /max_depth: must be >= 1/],
    [{ include: 3 }, /include: must be string/],
  ])("refuses %j", async (args, message) => {
    const r = await list(args);
    expect(r.ok).toBe(false);
    expect(r.error?.message).toMatch(message);
  });
});

describe("list_dir with crafted globs (they ran for hours on the main thread)", () => {
  it("`*?` ×22 + `*Q` over 43–47-character names: finishes, and matches correctly", async () => {
    await box.files(
      Object.fromEntries([
        ...[43, 44, 45, 46, 47].map((n) => [`openai/${"x".repeat(n)}`, ""]),
        [`openai/${"y".repeat(30)}Q`, ""],
      ]),
    );
    const r = await list({ path: "openai", include: [`${"*?".repeat(22)}*Q`] });
    expect(r.ok).toBe(true);
    expect(r.parsed.stdout).toBe(`openai/${"y".repeat(30)}Q`);
  });

  it("`*a` ×12 + `*b` over a name of 64 a's: finishes with no match", async () => {
    await box.files({ [`aaa/${"a".repeat(64)}`]: "" });
    const r = await list({ path: "aaa", include: `${"*a".repeat(12)}*b` });
    expect(r.ok).toBe(true);
    expect(r.parsed.artifacts).toMatchObject({ entries: 0 });
  });

  it("refuses such a glob when it needs picomatch (braces), with a clear error", async () => {
    const r = await list({ path: "aaa", include: `{x,${"*a".repeat(12)}*b}` });
    expect(r.ok).toBe(false);
    expect(r.error?.code).toBe("tool_input_invalid");
    expect(r.error?.message).toMatch(/list_dir: the glob .* has 13 \* wildcards/);
  });
});

describe("list_dir with a name that is not valid UTF-8", () => {
  it("skips it with a note (escaped) and lists the rest, ok", async () => {
    await box.files({ "enc/good.txt": "", "enc/sub/inner.txt": "" });
    writeFileSync(Buffer.from(`${box.root}/enc/bad\xff.txt`, "latin1"), "x");
    mkdirSync(Buffer.from(`${box.root}/enc/dir\xfe`, "latin1"));
    const r = await list({ path: "enc", recursive: true });
    expect(r.ok).toBe(true);
    expect(r.parsed.stdout).toBe("enc/good.txt\nenc/sub/\nenc/sub/inner.txt");
    expect(r.parsed.stderr).toContain("list_dir: skipped enc/bad\\xff.txt: its name is not valid UTF-8");
    expect(r.parsed.stderr).toContain("list_dir: skipped enc/dir\\xfe: its name is not valid UTF-8");
  });
});
