import { execFileSync } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { EffectiveConfig } from "./config.js";
import { instructionReaderOf, skippedNotice } from "./run-settings.js";

describe("instructionReaderOf", () => {
  it("says an AGENTS.md it left out once, however many runs read it (a batch's tasks)", () => {
    const dir = mkdtempSync(join(tmpdir(), "eddy-reader-"));
    execFileSync("mkfifo", [join(dir, "AGENTS.md")]);
    const said: string[] = [];
    const read = instructionReaderOf(
      { agentsMd: { value: true, source: "default" } } as EffectiveConfig,
      (l) => said.push(l),
    );
    for (let i = 0; i < 3; i++) expect(read?.(dir)).toEqual([]);
    expect(said).toEqual(["eddy: AGENTS.md is left out of the instructions: not a regular file\n"]);
    expect(
      instructionReaderOf({ agentsMd: { value: false, source: "flag" } } as EffectiveConfig),
    ).toBeUndefined();
  });

  it("a path that holds control characters is shown inert, on one line", () => {
    const line = skippedNotice({
      path: "../x\u001b[2J\n/AGENTS.md",
      reason: "not a regular file",
      cut: false,
    });
    expect(line).not.toContain("\u001b");
    expect(line.trimEnd()).not.toContain("\n");
  });
});
