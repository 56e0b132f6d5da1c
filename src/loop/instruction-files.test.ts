import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { findInstructionFiles, withInstructionFiles } from "./instruction-files.js";

describe("AGENTS.md instruction files", () => {
  it("reads the workspace's and its parents' up to the repository root, root first", () => {
    const root = mkdtempSync(join(tmpdir(), "eddy-agents-"));
    mkdirSync(join(root, "repo", ".git"), { recursive: true });
    mkdirSync(join(root, "repo", "pkg", "app"), { recursive: true });
    writeFileSync(join(root, "AGENTS.md"), "outside the repository: never read");
    writeFileSync(join(root, "repo", "AGENTS.md"), "repo rules");
    writeFileSync(join(root, "repo", "pkg", "AGENTS.md"), "  \n");
    writeFileSync(join(root, "repo", "pkg", "app", "AGENTS.md"), "app rules");
    const files = findInstructionFiles(join(root, "repo", "pkg", "app"));
    expect(files).toEqual([
      { path: join("..", "..", "AGENTS.md"), text: "repo rules" },
      { path: "AGENTS.md", text: "app rules" },
    ]);
    const spec = withInstructionFiles("Be brief.", files);
    expect(spec.instruction_files).toEqual([join("..", "..", "AGENTS.md"), "AGENTS.md"]);
    expect(spec.instructions).toBe(
      "Instructions from ../../AGENTS.md:\n\nrepo rules\n\nInstructions from AGENTS.md:\n\napp rules\n\nBe brief.",
    );
  });

  it("outside a repository, only the workspace's own file; none leaves the instructions as they are", () => {
    const dir = mkdtempSync(join(tmpdir(), "eddy-agents-"));
    expect(findInstructionFiles(dir)).toEqual([]);
    expect(withInstructionFiles("x", [])).toEqual({ instructions: "x" });
    writeFileSync(join(dir, "AGENTS.md"), "local");
    expect(findInstructionFiles(dir)).toEqual([{ path: "AGENTS.md", text: "local" }]);
  });
});

describe("AGENTS.md files are untrusted data", () => {
  it("follows a symlink only to a file inside the folders read; skips FIFOs and directories", () => {
    const root = mkdtempSync(join(tmpdir(), "eddy-agents-"));
    const repo = join(root, "repo");
    mkdirSync(join(repo, ".git"), { recursive: true });
    mkdirSync(join(repo, "app"), { recursive: true });
    writeFileSync(join(root, "secret.txt"), "a secret outside the repository");
    writeFileSync(join(repo, "RULES.md"), "repo rules through a link");
    symlinkSync(join(repo, "RULES.md"), join(repo, "AGENTS.md"));
    symlinkSync(join(root, "secret.txt"), join(repo, "app", "AGENTS.md"));
    expect(findInstructionFiles(join(repo, "app"))).toEqual([
      { path: join("..", "AGENTS.md"), text: "repo rules through a link" },
    ]);
    const fifo = mkdtempSync(join(tmpdir(), "eddy-agents-"));
    execFileSync("mkfifo", [join(fifo, "AGENTS.md")]);
    expect(findInstructionFiles(fifo)).toEqual([]);
    const folder = mkdtempSync(join(tmpdir(), "eddy-agents-"));
    mkdirSync(join(folder, "AGENTS.md"));
    expect(findInstructionFiles(folder)).toEqual([]);
  });

  it("says which files it left out or cut, and why (onSkipped); a missing or empty one is not said", () => {
    const root = mkdtempSync(join(tmpdir(), "eddy-agents-"));
    const repo = join(root, "repo");
    mkdirSync(join(repo, ".git"), { recursive: true });
    mkdirSync(join(repo, "a", "b", "c"), { recursive: true });
    writeFileSync(join(root, "secret.txt"), "outside");
    symlinkSync(join(root, "secret.txt"), join(repo, "AGENTS.md"));
    mkdirSync(join(repo, "a", "AGENTS.md"));
    execFileSync("mkfifo", [join(repo, "a", "b", "AGENTS.md")]);
    writeFileSync(join(repo, "a", "b", "c", "AGENTS.md"), "y".repeat(65 * 1024));
    const skipped: unknown[] = [];
    const files = findInstructionFiles(join(repo, "a", "b", "c"), { onSkipped: (s) => skipped.push(s) });
    expect(files.map((f) => f.path)).toEqual(["AGENTS.md"]);
    expect(skipped).toEqual([
      {
        path: join("..", "..", "..", "AGENTS.md"),
        reason: "a symlink to a file outside the folders read",
        cut: false,
      },
      { path: join("..", "..", "AGENTS.md"), reason: "not a regular file", cut: false },
      { path: join("..", "AGENTS.md"), reason: "not a regular file", cut: false },
      { path: "AGENTS.md", reason: "cut at 65536 bytes", cut: true },
    ]);
    const quiet: unknown[] = [];
    const empty = mkdtempSync(join(tmpdir(), "eddy-agents-"));
    findInstructionFiles(empty, { onSkipped: (s) => quiet.push(s) });
    writeFileSync(join(empty, "AGENTS.md"), "  \n");
    findInstructionFiles(empty, { onSkipped: (s) => quiet.push(s) });
    symlinkSync(join(empty, "gone"), join(empty, "x"));
    expect(quiet).toEqual([]);
  });

  it("cuts a large file at 64 KiB with a note", () => {
    const dir = mkdtempSync(join(tmpdir(), "eddy-agents-"));
    writeFileSync(join(dir, "AGENTS.md"), "x".repeat(70 * 1024));
    const [file] = findInstructionFiles(dir);
    expect(file?.text.length).toBeLessThan(66 * 1024);
    expect(file?.text).toMatch(/\[… cut at 65536 bytes\]$/);
  });

  it("a copy's own file comes from the copy, its parents' from the original; never the copy's parents", () => {
    const root = mkdtempSync(join(tmpdir(), "eddy-agents-"));
    mkdirSync(join(root, "repo", ".git"), { recursive: true });
    mkdirSync(join(root, "repo", "app"), { recursive: true });
    writeFileSync(join(root, "repo", "AGENTS.md"), "repo rules");
    writeFileSync(join(root, "repo", "app", "AGENTS.md"), "original app rules");
    const copies = mkdtempSync(join(tmpdir(), "eddy-copies-"));
    mkdirSync(join(copies, ".git"));
    writeFileSync(join(copies, "AGENTS.md"), "the copies folder's: never read");
    const copy = join(copies, "task-1");
    mkdirSync(copy);
    writeFileSync(join(copy, "AGENTS.md"), "the task's copy");
    expect(findInstructionFiles(copy, { copyOf: join(root, "repo", "app") })).toEqual([
      { path: join("..", "AGENTS.md"), text: "repo rules" },
      { path: "AGENTS.md", text: "the task's copy" },
    ]);
  });
});
