import { describe, expect, it } from "vitest";
import { NOT_APPLICABLE, NOT_WITH_QUEUE, type RunningCommand } from "../src/cli/flag-scope.js";
import { main } from "../src/cli/main.js";
import type { CliIo } from "../src/cli/run-command.js";

/**
 * Every `eddy run` flag is either applied by batch, worker and resume or refused by name
 * (src/cli/flag-scope.ts): enumerated from the commands' own option lists, so a flag added to
 * `eddy run` later cannot be silently dropped by the others.
 */

async function cli(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const out: string[] = [];
  const err: string[] = [];
  const io: CliIo = {
    stdout: { write: (s: string) => out.push(s) },
    stderr: { write: (s: string) => err.push(s) },
    readStdin: async () => "",
    stdinIsTTY: false,
    env: {},
    cwd: "/nonexistent-eddy-flag-scope",
    onSignal: () => () => {},
  };
  const code = await main(args, io);
  return { code, stdout: out.join(""), stderr: err.join("") };
}

/** The long flags a command's --help lists, with whether each takes a value. */
async function flagsOf(command: string): Promise<Map<string, boolean>> {
  const help = (await cli([command, "--help"])).stdout;
  const flags = new Map<string, boolean>();
  for (const line of help.split("\n")) {
    const m = /^ {2}(--[a-z-]+)( <[^>]+>)?/.exec(line);
    if (m !== null) flags.set(m[1] as string, m[2] !== undefined);
  }
  flags.delete("--help");
  return flags;
}

/** A value each flag's parser accepts, so the refusal is about scope, not the value. */
const VALUES: Record<string, string> = {
  "--base-url": "http://127.0.0.1:9/v1",
  "--api": "responses",
  "--transport": "sse",
  "--provider": "openai",
  "--tools-on-follow-up": "first",
  "--history-strategy": "native",
  "--truncation-threshold": "1000",
  "--reasoning-effort": "low",
  "--reasoning-summary": "auto",
  "--verbosity": "low",
  "--max-output-tokens": "100",
  "--service-tier": "auto",
  "--include": "reasoning.encrypted_content",
  "--metadata": "a=b",
  "--tool": "web_search",
  "--approve": "auto",
  "--on-limit": "answer",
  "--mcp": "srv=true",
  "--temperature": "1",
  "--top-p": "1",
};

const POSITIONAL: Record<RunningCommand, string[]> = {
  batch: ["batch", "/nonexistent/tasks.jsonl", "--out", "/nonexistent/out"],
  worker: ["worker", "--queue", "redis://127.0.0.1:9"],
  resume: ["resume", "/nonexistent/run.tape"],
  chat: ["chat"],
  serve: ["serve"],
};

function argsFor(flag: string, takesValue: boolean): string[] {
  return takesValue ? [flag, VALUES[flag] ?? "1"] : [flag];
}

describe("eddy run's flags on the other commands that start runs", () => {
  const commands: RunningCommand[] = ["batch", "worker", "resume", "chat", "serve"];

  it.each(commands)("eddy %s accepts every eddy run flag (applied or refused by name)", async (command) => {
    const run = await flagsOf("run");
    const other = await flagsOf(command);
    expect(run.size).toBeGreaterThan(40);
    const missing = [...run.keys()].filter((flag) => !other.has(flag));
    expect(missing).toEqual([]);
    // The table names only real flags: a renamed flag cannot leave a stale entry behind.
    const stale = Object.keys(NOT_APPLICABLE[command]).filter((flag) => !run.has(flag));
    expect(stale).toEqual([]);
  });

  const refused = commands.flatMap((command) =>
    Object.keys(NOT_APPLICABLE[command]).map((flag) => [command, flag] as const),
  );

  it.each(refused)("eddy %s %s is a usage error naming the flag", async (command, flag) => {
    const takes = (await flagsOf("run")).get(flag) ?? false;
    const { code, stderr } = await cli([...POSITIONAL[command], ...argsFor(flag, takes)]);
    expect(stderr).toContain(`${flag} does not apply to eddy ${command}`);
    expect(code).toBe(2);
  });

  it.each(Object.keys(NOT_WITH_QUEUE))(
    "eddy batch --queue %s is refused: the workers own it",
    async (flag) => {
      const takes = (await flagsOf("run")).get(flag) ?? false;
      const { code, stderr } = await cli([
        ...POSITIONAL.batch,
        "--queue",
        "redis://127.0.0.1:9",
        ...argsFor(flag, takes),
      ]);
      expect(stderr).toContain(`${flag} does not apply to eddy batch --queue`);
      expect(code).toBe(2);
    },
  );

  it("a flag that applies is not refused by scope (it reaches the command)", async () => {
    const { stderr } = await cli([...POSITIONAL.resume, "--allow-shell", "--sandbox"]);
    expect(stderr).not.toContain("does not apply");
    expect(stderr).toContain("/nonexistent/run.tape");
  });
});

describe("--no-agents-md", () => {
  it.each(["batch", "worker", "serve"] as const)(
    "applies to eddy %s (each task's or run's AGENTS.md is read as eddy run reads it)",
    async (command) => {
      // (serve is given a workspace that does not exist, so it stops after the scope check.)
      const extra = command === "serve" ? ["--workspace", "/nonexistent/ws"] : [];
      const { stderr } = await cli([...POSITIONAL[command], ...extra, "--no-agents-md"]);
      expect(stderr).not.toContain("does not apply");
      expect(stderr).not.toBe("");
    },
  );
});
