/**
 * Every file tool refuses to leave the workspace: absolute paths, `..` escapes, symlinks whose real
 * path is outside (also as the parent of a file that does not exist yet), dangling symlinks.
 */
import { readdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { allBuiltins, createSandbox, runTool, type Sandbox } from "../test-support/workspace.js";

let box: Sandbox;
const registry = allBuiltins();

beforeAll(async () => {
  box = await createSandbox();
  await box.files({ "inside.txt": "inside\n", "sub/file.txt": "sub\n" });
  await box.link("out", box.outside); // a directory symlink leaving the workspace
  await box.link("s.txt", join(box.outside, "secret.txt")); // a file symlink leaving the workspace
  await box.link("dangling", join(box.outside, "not-yet.txt")); // a dangling symlink pointing outside
  await box.link("inner-link", "sub"); // a symlink that stays inside (allowed)
});
afterAll(() => box.cleanup());

type PathKind =
  | "absolute"
  | "dotdot"
  | "nested dotdot"
  | "symlinked dir"
  | "symlinked file"
  | "new file in symlinked dir"
  | "dangling symlink";

/** A path of each kind, for a tool that wants a file or a directory. */
function pathFor(kind: PathKind, want: "file" | "dir"): string {
  switch (kind) {
    case "absolute":
      return want === "file" ? join(box.outside, "secret.txt") : box.outside;
    case "dotdot":
      return want === "file" ? "../outside/secret.txt" : "..";
    case "nested dotdot":
      return want === "file" ? "sub/../../outside/secret.txt" : "sub/../../outside";
    case "symlinked dir":
      return want === "file" ? "out/secret.txt" : "out";
    case "symlinked file":
      return "s.txt";
    case "new file in symlinked dir":
      return want === "file" ? "out/new/created.txt" : "out/new";
    case "dangling symlink":
      return "dangling";
  }
}

const patch = (body: string) => `*** Begin Patch\n${body}\n*** End Patch`;

const cases: [string, PathKind[], (p: string) => Record<string, unknown>, "file" | "dir"][] = [
  [
    "read_file",
    ["absolute", "dotdot", "nested dotdot", "symlinked dir", "symlinked file"],
    (p) => ({ path: p }),
    "file",
  ],
  ["list_dir", ["absolute", "dotdot", "nested dotdot", "symlinked dir"], (p) => ({ path: p }), "dir"],
  [
    "grep",
    ["absolute", "dotdot", "nested dotdot", "symlinked dir", "symlinked file"],
    (p) => ({ pattern: "secret", path: p }),
    "file",
  ],
  [
    "write_file",
    [
      "absolute",
      "dotdot",
      "nested dotdot",
      "symlinked dir",
      "symlinked file",
      "new file in symlinked dir",
      "dangling symlink",
    ],
    (p) => ({ path: p, content: "pwned\n" }),
    "file",
  ],
  [
    "apply_patch (add)",
    [
      "absolute",
      "dotdot",
      "nested dotdot",
      "symlinked dir",
      "symlinked file",
      "new file in symlinked dir",
      "dangling symlink",
    ],
    (p) => ({ patch: patch(`*** Add File: ${p}\n+pwned`) }),
    "file",
  ],
  [
    "apply_patch (update)",
    ["absolute", "dotdot", "symlinked dir", "symlinked file"],
    (p) => ({ patch: patch(`*** Update File: ${p}\n@@\n-outside secret\n+pwned`) }),
    "file",
  ],
  [
    "apply_patch (delete)",
    ["absolute", "dotdot", "symlinked dir", "symlinked file"],
    (p) => ({ patch: patch(`*** Delete File: ${p}`) }),
    "file",
  ],
  [
    "apply_patch (move to)",
    ["absolute", "dotdot", "symlinked dir", "new file in symlinked dir", "dangling symlink"],
    (p) => ({ patch: patch(`*** Update File: inside.txt\n*** Move to: ${p}\n@@\n-inside\n+moved`) }),
    "file",
  ],
  [
    "shell (cwd)",
    ["absolute", "dotdot", "nested dotdot", "symlinked dir"],
    (p) => ({ command: "pwd; ls", cwd: p }),
    "dir",
  ],
];

const table = cases.flatMap(([label, kinds, args, want]) =>
  kinds.map((kind) => [label, kind, args, want] as const),
);

describe("workspace confinement", () => {
  it.each(table)("%s refuses a path that is %s", async (label, kind, args, want) => {
    const name = label.split(" ")[0] ?? label;
    const r = await runTool(registry, box.root, name, args(pathFor(kind, want)));
    expect(r.ok).toBe(false);
    expect(r.error?.code).toBe("path_outside_workspace");
    expect(r.exitCode).toBe(1);
    expect(r.error?.message).toMatch(/Paths are relative to the workspace root/);
    // Nothing outside was read or touched.
    expect(r.output).not.toContain("outside secret");
    expect(await readdir(box.outside)).toEqual(["secret.txt"]);
    expect(await readFile(join(box.outside, "secret.txt"), "utf8")).toBe("outside secret\n");
    expect(await readFile(join(box.root, "inside.txt"), "utf8")).toBe("inside\n");
  });

  it.each([
    ["read_file", { path: "inner-link/file.txt" }],
    ["list_dir", { path: "inner-link" }],
    ["grep", { pattern: "sub", path: "inner-link" }],
    ["read_file", { path: "sub/../inside.txt" }],
  ])("%s follows a symlink that stays inside (%j)", async (name, args) => {
    const r = await runTool(registry, box.root, name, args);
    expect(r.ok).toBe(true);
  });

  it("list_dir and grep never follow symlinks while walking", async () => {
    const listing = await runTool(registry, box.root, "list_dir", { recursive: true });
    expect(listing.parsed.stdout.split("\n")).toContain("out");
    expect(listing.parsed.stdout).not.toContain("secret.txt");
    const found = await runTool(registry, box.root, "grep", { pattern: "outside secret" });
    expect(found.parsed.stdout).toBe("");
  });
});
