import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
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
