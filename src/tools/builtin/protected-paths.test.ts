/**
 * The writing file tools never write into `.git` (anywhere in the workspace) or the workspace's own
 * `.eddy/`: a hook written under `.git/hooks` runs on the user's next git command, so a write there
 * would turn `--allow-write` into running commands; `.eddy/` holds eddy's threads and tapes
 * (tools/workspace.ts resolveWritableInWorkspace). Reading them stays allowed.
 */
import { existsSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { fileChangeRecord } from "../file-changes.js";
import { undoFileChanges } from "../file-undo.js";
import { allBuiltins, createSandbox, runTool, type Sandbox } from "../test-support/workspace.js";

let box: Sandbox;
const registry = allBuiltins();

beforeEach(async () => {
  box = await createSandbox();
  await box.files({
    ".git/config": "[core]\n",
    ".git/hooks/README": "hooks\n",
    "sub/.git": "gitdir: ../.git/worktrees/sub\n",
    ".eddy/threads/main.jsonl": "",
    "notes.txt": "notes\n",
  });
  await box.link("g", ".git");
});
afterEach(() => box.cleanup());

const refused = [
  ".git/hooks/pre-commit",
  ".git/config",
  "sub/.git",
  ".GIT/hooks/x",
  "g/hooks/pre-commit",
  "./x/../.git/info/exclude",
  ".eddy/threads/main.jsonl",
  ".eddy/waiting.json",
];

describe("protected paths", () => {
  it.each(refused)("write_file refuses %s, and writes nothing", async (path) => {
    const r = await runTool(registry, box.root, "write_file", { path, content: "#!/bin/sh\ntouch PWNED\n" });
    expect(r.ok).toBe(false);
    expect(r.error?.code).toBe("path_protected");
    expect(r.error?.message).toMatch(/eddy's file tools never write there/);
    expect(existsSync(join(box.root, ".git/hooks/pre-commit"))).toBe(false);
    expect(readFileSync(join(box.root, ".git/config"), "utf8")).toBe("[core]\n");
    expect(readFileSync(join(box.root, ".eddy/threads/main.jsonl"), "utf8")).toBe("");
  });

  it("apply_patch refuses adding, updating, deleting or moving into them", async () => {
    const patches = [
      "*** Begin Patch\n*** Add File: .git/hooks/pre-commit\n+touch PWNED\n*** End Patch",
      "*** Begin Patch\n*** Update File: .git/config\n@@\n-[core]\n+[core]\n+\tfsmonitor = touch PWNED\n*** End Patch",
      "*** Begin Patch\n*** Delete File: .eddy/threads/main.jsonl\n*** End Patch",
      "*** Begin Patch\n*** Update File: notes.txt\n*** Move to: .git/hooks/post-merge\n@@\n-notes\n+touch PWNED\n*** End Patch",
    ];
    for (const patch of patches) {
      const r = await runTool(registry, box.root, "apply_patch", { patch });
      expect(r.error?.code, patch).toBe("path_protected");
    }
    expect(readFileSync(join(box.root, ".git/config"), "utf8")).toBe("[core]\n");
    expect(readFileSync(join(box.root, "notes.txt"), "utf8")).toBe("notes\n");
    expect(existsSync(join(box.root, ".eddy/threads/main.jsonl"))).toBe(true);
    expect(existsSync(join(box.root, ".git/hooks/post-merge"))).toBe(false);
  });

  it("names that only look alike are written, and reading .git stays allowed", async () => {
    for (const path of [".gitignore", ".github/workflows/ci.yml", "docs/.git-notes", "sub/.eddy/x.txt"]) {
      const r = await runTool(registry, box.root, "write_file", { path, content: "ok\n" });
      expect(r.ok, path).toBe(true);
    }
    const read = await runTool(registry, box.root, "read_file", { path: ".git/config" });
    expect(read.ok).toBe(true);
  });

  it("eddy undo of a hostile tape's records does not create a hook either", async () => {
    mkdirSync(join(box.root, "plain"), { recursive: true });
    writeFileSync(join(box.root, "plain/a.txt"), "after");
    // "The run deleted .git/hooks/pre-commit": undoing it would write the recorded content back.
    const records = [fileChangeRecord(".git/hooks/pre-commit", Buffer.from("touch PWNED\n"), null)];
    await expect(undoFileChanges(records, box.root)).rejects.toThrow(/inside \.git/);
    expect(existsSync(join(box.root, ".git/hooks/pre-commit"))).toBe(false);
    symlinkSync(".git", join(box.root, "g2"));
    const viaLink = [fileChangeRecord("g2/hooks/pre-commit", Buffer.from("touch PWNED\n"), null)];
    await expect(undoFileChanges(viaLink, box.root)).rejects.toThrow(/inside \.git/);
  });
});
