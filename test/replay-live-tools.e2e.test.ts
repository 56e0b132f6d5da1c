/**
 * `eddy replay --live-tools` runs a tape's calls for real, so what they may do comes from this
 * command's own flags, never from the tape (a tape is untrusted: it may come from anywhere, and its
 * header's policy is only words). Found by a probe: a tape's shell call ran with no --allow-shell,
 * outside any sandbox, whatever its command.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { cleanEnv, runCli } from "./support/cli.js";
import { scenarioServer } from "./support/scenario-server.js";

const { serve, close } = scenarioServer();
afterAll(close);

/** A run allowed the shell, recorded: its call touched `marker`, which is removed again. */
async function recordShellTouch(): Promise<{ dir: string; marker: string; tape: string }> {
  const dir = mkdtempSync(join(tmpdir(), "eddy-replay-live-"));
  const marker = join(dir, "PWNED");
  const url = await serve({
    turns: [
      { items: [{ type: "function_call", name: "shell", arguments: { command: `touch ${marker}` } }] },
      { items: [{ type: "message", text: "done" }] },
    ],
  });
  const tape = join(dir, "run.tape");
  const recorded = await runCli(
    ["run", "--allow-shell", "--record", tape, "--base-url", url, "--model", "m", "go"],
    { cwd: dir, env: cleanEnv() },
  );
  expect(recorded.code).toBe(0);
  expect(existsSync(marker)).toBe(true);
  rmSync(marker);
  return { dir, marker, tape };
}

describe("eddy replay --live-tools", { timeout: 90_000 }, () => {
  it("runs a tape's shell and write calls only with this command's --allow-shell / --allow-write", async () => {
    const { dir, marker, tape } = await recordShellTouch();

    // The header says the run was allowed the shell; that grants this command nothing.
    expect(readFileSync(tape, "utf8")).toMatch(/"allowShell":true/);

    const refused = await runCli(["replay", "--live-tools", tape], { cwd: dir, env: cleanEnv() });
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(/running its tools live would run shell \(--allow-shell\)/);
    expect(existsSync(marker)).toBe(false);

    const offline = await runCli(["replay", tape], { cwd: dir, env: cleanEnv() });
    expect(offline.code).toBe(0);
    expect(existsSync(marker)).toBe(false);

    const allowed = await runCli(["replay", "--live-tools", "--allow-shell", tape], {
      cwd: dir,
      env: cleanEnv(),
    });
    expect(allowed.stdout).toMatch(/replay matches/);
    expect(existsSync(marker)).toBe(true);
  });

  it("a tape whose derived frames hide a shell call behind another name still cannot run it", async () => {
    const { dir, marker, tape } = await recordShellTouch();
    // Only eddy's own frames renamed: the provider's events, which the replay feeds back, still call shell.
    const lines = readFileSync(tape, "utf8").split("\n");
    const edited = lines.map((line) =>
      line.includes('"type":"tool_call"') ||
      line.includes('"type":"tool_started"') ||
      line.includes('"type":"tool_ended"')
        ? line
            .replace(/"name":"shell"/g, '"name":"read_file"')
            .replace(/"tool":"shell"/g, '"tool":"read_file"')
        : line,
    );
    writeFileSync(tape, edited.join("\n"));
    const r = await runCli(["replay", "--live-tools", tape], { cwd: dir, env: cleanEnv() });
    expect(r.code).not.toBe(0);
    expect(existsSync(marker)).toBe(false);
  });
});
