import { mkdtempSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { trustCommand } from "./config-command.js";
import type { CliIo } from "./run-command.js";

function io(cwd: string): CliIo {
  const sink = { write: () => true } as unknown as CliIo["stdout"];
  const home = mkdtempSync(join(tmpdir(), "eddy-trust-home-"));
  return {
    stdout: sink,
    stderr: sink,
    readStdin: async () => "",
    stdinIsTTY: false,
    env: { HOME: home, XDG_CONFIG_HOME: join(home, ".config") },
    cwd,
    onSignal: () => () => {},
  };
}

describe("eddy config --trust with no file to trust", () => {
  it("names a missing file, and a dangling symlink as one: its target and what to do", () => {
    const empty = mkdtempSync(join(tmpdir(), "eddy-trust-"));
    expect(() => trustCommand({}, io(empty))).toThrow(/--trust: there is no .*eddy\.config\.json to trust$/);
    const linked = mkdtempSync(join(tmpdir(), "eddy-trust-"));
    symlinkSync("shared/\u001b[31meddy.json", join(linked, "eddy.config.json"));
    let message = "";
    try {
      trustCommand({}, io(linked));
    } catch (err) {
      message = (err as Error).message;
    }
    expect(message).toMatch(
      /^--trust: .*eddy\.config\.json is a symlink to "shared\/.*eddy\.json", which does not exist \(a dangling link\): point it at the config file to trust, or replace it with the file itself, then run eddy config --trust again$/,
    );
    expect(message).not.toContain("\u001b");
  });
});
