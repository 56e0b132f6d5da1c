import { describe, expect, it } from "vitest";
import { parsePatch } from "../../tools/builtin/patch-parser.js";
import { answeredLocally, nativeCallInput, patchEnvelope, shellQuote } from "./native-calls.js";

describe("native call items as tool input", () => {
  it("apply-patch operations become one envelope the apply_patch parser reads", () => {
    expect(parsePatch(patchEnvelope({ type: "create_file", path: "a.md", diff: "+one\n+two\n" }))).toEqual([
      { kind: "add", path: "a.md", contents: "one\ntwo\n" },
    ]);
    expect(
      parsePatch(patchEnvelope({ type: "update_file", path: "a.md", diff: "@@\n-one\n+uno\n" })),
    ).toMatchObject([{ kind: "update", path: "a.md", chunks: [{ oldLines: ["one"], newLines: ["uno"] }] }]);
    expect(parsePatch(patchEnvelope({ type: "delete_file", path: "a.md" }))).toEqual([
      { kind: "delete", path: "a.md" },
    ]);
    expect(() => parsePatch(patchEnvelope({ type: "rename_file", path: "a.md" }))).toThrow(
      /expected "\*\*\* Add File: ".*Unsupported operation: \\"rename_file\\"/,
    );
  });

  it("a local_shell_call argv becomes one quoted command line with its env and working directory", () => {
    const input = nativeCallInput({
      type: "local_shell_call",
      action: {
        type: "exec",
        command: ["grep", "-n", "it's", "a b.txt"],
        env: { LANG: "C", "bad name": "x" },
        working_directory: "src",
        timeout_ms: 500,
      },
    });
    expect(input.name).toBe("shell");
    expect(JSON.parse(input.arguments)).toEqual({
      command: "LANG=C grep -n 'it'\\''s' 'a b.txt'",
      cwd: "src",
      timeout_ms: 500,
    });
    expect(shellQuote("plain/path-1.txt")).toBe("plain/path-1.txt");
  });

  it("a local_shell_call without an argv is no command, not its env alone (found by a probe: ok:true, nothing ran)", () => {
    for (const command of ["echo hi", [], [5], null]) {
      const input = nativeCallInput({
        type: "local_shell_call",
        action: { type: "exec", command, env: { X: "y" } },
      });
      expect(JSON.parse(input.arguments)).toEqual({ command: "" });
    }
  });

  it("a shell_call keeps its commands and limits; a hosted one is the provider's", () => {
    const item = {
      type: "shell_call",
      action: { commands: ["ls", 3, "pwd"], timeout_ms: 100, max_output_length: null },
    };
    expect(JSON.parse(nativeCallInput(item).arguments)).toEqual({ commands: ["ls", "pwd"], timeout_ms: 100 });
    expect(answeredLocally(item)).toBe(true);
    expect(answeredLocally({ ...item, environment: { type: "local" } })).toBe(true);
    expect(answeredLocally({ ...item, environment: { type: "container_auto" } })).toBe(false);
  });
});
