/**
 * `list_dir` and `grep` leave out what `.gitignore`/`.ignore` files exclude, as ripgrep does, and
 * show it with `include_ignored: true`. A fixture tree covers the rule kinds; the repository
 * itself is the real case (its `node_modules/` and `dist/` must not be listed).
 */
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { allBuiltins, createSandbox, runTool, type Sandbox } from "../test-support/workspace.js";

let box: Sandbox;
const registry = allBuiltins();
const REPO = join(dirname(fileURLToPath(import.meta.url)), "../../..");

beforeAll(async () => {
  box = await createSandbox();
  await box.files({
    ".gitignore": "dist/\n*.log\n!keep.log\n/build\n*.tmp\n",
    ".ignore": "scratch/\n!keep.tmp\n",
    ".git/HEAD": "ref: refs/heads/main\n",
    ".git/info/exclude": "local-only.txt\n",
    "local-only.txt": "needle\n",
    "dist/out.js": "needle\n",
    "dist/sub/deep.js": "needle\n",
    "dist/noise.log": "needle\n",
    "build/x.txt": "needle\n",
    "keep.tmp": "needle\n",
    "other.tmp": "needle\n",
    "keep.log": "needle\n",
    "app.log": "needle\n",
    "scratch/s.txt": "needle\n",
    "node_modules/pkg/index.js": "needle\n",
    "src/a.ts": "needle\n",
    "src/.gitignore": "generated/\n!important.log\n",
    "src/generated/g.ts": "needle\n",
    "src/important.log": "needle\n",
    "src/other.log": "needle\n",
    "src/sub/build/y.txt": "needle\n",
  });
});
afterAll(() => box.cleanup());

const list = (args: Record<string, unknown>, root = box.root) => runTool(registry, root, "list_dir", args);
const grep = (args: Record<string, unknown>) =>
  runTool(registry, box.root, "grep", { pattern: "needle", ...args });
const files = (stdout: string) => stdout.split("\n").map((line) => line.split(":")[0]);

const VISIBLE = [
  "keep.log",
  "keep.tmp",
  "node_modules/",
  "src/",
  "src/a.ts",
  "src/important.log",
  "src/sub/",
  "src/sub/build/",
  "src/sub/build/y.txt",
];

describe("ignore files", () => {
  it("list_dir skips what .gitignore, .ignore, nested files and .git/info/exclude exclude", async () => {
    const r = await list({ recursive: true });
    expect(r.ok).toBe(true);
    expect(r.parsed.stdout.split("\n")).toEqual(VISIBLE);
  });

  it("never lists .git, also with include_hidden", async () => {
    const r = await list({ include_hidden: true });
    expect(r.parsed.stdout.split("\n")).toEqual([
      ".gitignore",
      ".ignore",
      "keep.log",
      "keep.tmp",
      "node_modules/",
      "src/",
    ]);
  });

  it("include_ignored shows everything (and enters node_modules)", async () => {
    const r = await list({ recursive: true, include_ignored: true, include_hidden: true });
    const lines = r.parsed.stdout.split("\n");
    for (const path of [
      ".git/",
      ".git/HEAD",
      "dist/",
      "dist/out.js",
      "build/x.txt",
      "app.log",
      "other.tmp",
    ]) {
      expect(lines).toContain(path);
    }
    expect(lines).toContain("scratch/s.txt");
    expect(lines).toContain("local-only.txt");
    expect(lines).toContain("node_modules/pkg/index.js");
    expect(lines).toContain("src/generated/g.ts");
  });

  it("a directory named explicitly is listed although it is ignored; rules inside still apply", async () => {
    const r = await list({ path: "dist", recursive: true });
    expect(r.ok).toBe(true);
    expect(r.parsed.stdout.split("\n")).toEqual(["dist/out.js", "dist/sub/", "dist/sub/deep.js"]);
    const nested = await list({ path: "src", recursive: true });
    expect(nested.parsed.stdout).not.toContain("generated");
    expect(nested.parsed.stdout).not.toContain("other.log");
  });

  it("grep searches the same files, and everything with include_ignored", async () => {
    const r = await grep({});
    expect(files(r.parsed.stdout)).toEqual([
      "keep.log",
      "keep.tmp",
      "src/a.ts",
      "src/important.log",
      "src/sub/build/y.txt",
    ]);
    const all = await grep({ include_ignored: true });
    expect(files(all.parsed.stdout)).toEqual(
      expect.arrayContaining([
        "app.log",
        "build/x.txt",
        "dist/out.js",
        "node_modules/pkg/index.js",
        "scratch/s.txt",
      ]),
    );
    expect(all.parsed.artifacts).toMatchObject({ matches: 16 });
  });

  it("grep of an ignored directory named explicitly searches it", async () => {
    const r = await grep({ path: "dist" });
    expect(files(r.parsed.stdout)).toEqual(["dist/out.js", "dist/sub/deep.js"]);
  });

  it("list_dir of this repository does not list node_modules/ or dist/", async () => {
    const r = await list({}, REPO);
    expect(r.ok).toBe(true);
    const lines = r.parsed.stdout.split("\n");
    expect(lines).toContain("src/");
    expect(lines).toContain("package.json");
    expect(lines).not.toContain("node_modules/");
    expect(lines).not.toContain("dist/");
    const all = await list({ include_ignored: true }, REPO);
    expect(all.parsed.stdout.split("\n")).toEqual(expect.arrayContaining(["node_modules/", "dist/"]));
  });
});
