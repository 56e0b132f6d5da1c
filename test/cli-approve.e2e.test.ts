/**
 * `--approve` end to end through the built CLI. On a real pseudo-terminal (util-linux `script`,
 * test/support/pty.ts): the prompt shows the call (a write_file as a diff against the file), an
 * "n" reaches the model as a denial (the next request the mock receives), "y" lets the write
 * happen, Ctrl-C at the prompt cancels the run (exit 130). Piped (no TTY): `--allow-write` alone
 * runs writers without asking, `--approve ask` is a usage error, `--approve deny` refuses and the
 * tape replays with the recorded decisions.
 */
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { parseFrames } from "../src/frames/jsonl.js";
import { createMockServer, type MockServer } from "../src/mock/index.js";
import type { Scenario } from "../src/mock/scenario.js";
import type { JsonObject } from "../src/protocol/types.js";
import { cleanEnv, runCli } from "./support/cli.js";
import { assertFrameInvariants } from "./support/frames.js";
import { HAS_SCRIPT, runOnPty } from "./support/pty.js";

let server: MockServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

function workspace(): string {
  const dir = mkdtempSync(join(tmpdir(), "eddy-approve-"));
  writeFileSync(join(dir, "notes.txt"), "first line\nold line\n");
  return dir;
}

/** The model writes notes.txt, then answers; the second turn needs the call's output. */
async function writeScenario(): Promise<string> {
  const scenario: Scenario = {
    turns: [
      {
        items: [
          {
            type: "function_call",
            name: "write_file",
            arguments: { path: "notes.txt", content: "first line\nnew line\n" },
            call_id: "call_w",
          },
        ],
      },
      { expect: { functionCallOutputs: "call_w" }, items: [{ type: "message", text: "Finished." }] },
    ],
  };
  server = await createMockServer({ scenario });
  return server.url;
}

/** The function_call_output the model got for `callId` (from the requests the mock received). */
function outputSent(callId: string): { ok: boolean; error?: { code: string; message: string } } {
  for (const request of server?.requests ?? []) {
    for (const item of ((request.body as JsonObject).input ?? []) as JsonObject[]) {
      if (typeof item === "object" && item.type === "function_call_output" && item.call_id === callId)
        return JSON.parse(item.output as string);
    }
  }
  throw new Error(`no output for ${callId} reached the mock`);
}

const ptyEnv = () => cleanEnv({ NO_COLOR: "1", TERM: "xterm" });

describe.skipIf(!HAS_SCRIPT)("--approve ask on a pseudo-terminal", () => {
  it("is the default with --allow-write on a terminal: the prompt shows a diff, and 'n' reaches the model as a denial", async () => {
    const url = await writeScenario();
    const cwd = workspace();
    const tape = join(cwd, "denied.tape");
    const args = [
      "run",
      "--base-url",
      url,
      "--model",
      "m",
      "--allow-write",
      "--record",
      tape,
      "update the notes",
    ];
    const run = runOnPty(args, { cwd, env: ptyEnv() });
    await run.waitFor("Allow write_file?");
    // The prompt shows the call as a unified diff against the current file.
    expect(run.output).toContain("? write_file");
    expect(run.output).toMatch(/--- notes\.txt\n\s*\+\+\+ notes\.txt/);
    expect(run.output).toContain("-old line");
    expect(run.output).toContain("+new line");
    run.type("n\n");
    expect(await run.exited).toBe(0);
    expect(run.output).toContain("Finished.");
    expect(readFileSync(join(cwd, "notes.txt"), "utf8")).toBe("first line\nold line\n");
    const sent = outputSent("call_w");
    expect(sent.ok).toBe(false);
    expect(sent.error?.code).toBe("denied");
    expect(sent.error?.message).toMatch(/denied/);
    // The replay answers with the recorded decision (no terminal needed).
    const replay = await runCli(["replay", tape], { cwd });
    expect(replay.stdout).toMatch(/replay matches/);
    expect(replay.code).toBe(0);
  });

  it("'y' lets the call run; an unknown answer asks again", async () => {
    const url = await writeScenario();
    const cwd = workspace();
    const run = runOnPty(
      ["run", "--base-url", url, "--model", "m", "--allow-write", "--approve", "ask", "update the notes"],
      { cwd, env: ptyEnv() },
    );
    await run.waitFor("Allow write_file?");
    run.type("maybe\n");
    await run.waitFor("answer y, n or a");
    run.type("y\n");
    expect(await run.exited).toBe(0);
    expect(readFileSync(join(cwd, "notes.txt"), "utf8")).toBe("first line\nnew line\n");
    expect(outputSent("call_w").ok).toBe(true);
  });

  it("Ctrl-C at the prompt cancels the run (exit 130); nothing is written", async () => {
    const url = await writeScenario();
    const cwd = workspace();
    const tape = join(cwd, "run.tape");
    const run = runOnPty(
      ["run", "--base-url", url, "--model", "m", "--allow-write", "--record", tape, "update the notes"],
      { cwd, env: ptyEnv() },
    );
    await run.waitFor("Allow write_file?");
    run.type("\x03");
    expect(await run.exited).toBe(130);
    expect(readFileSync(join(cwd, "notes.txt"), "utf8")).toBe("first line\nold line\n");
    const frames = readFileSync(tape, "utf8").trim().split("\n").slice(1);
    expect(JSON.parse(frames.at(-1) as string)).toMatchObject({ type: "run_ended", reason: "cancelled" });
    const replay = await runCli(["replay", tape], { cwd });
    expect(replay.stdout).toMatch(/replay matches/);
    expect(replay.code).toBe(0);
  });
});

describe("--approve without a terminal", () => {
  it("--allow-write alone runs writers without asking (auto is the default when piped)", async () => {
    const url = await writeScenario();
    const cwd = workspace();
    const r = await runCli(["run", "--json", "--base-url", url, "--model", "m", "--allow-write", "update"], {
      cwd,
    });
    expect(r.code).toBe(0);
    const frames = parseFrames(r.stdout);
    assertFrameInvariants(frames);
    expect(frames.some((f) => f.type === "approval_requested")).toBe(false);
    expect(readFileSync(join(cwd, "notes.txt"), "utf8")).toBe("first line\nnew line\n");
  });

  it("--approve ask is a usage error (exit 2, one line) before anything is sent", async () => {
    const url = await writeScenario();
    const r = await runCli(
      ["run", "--base-url", url, "--model", "m", "--allow-write", "--approve", "ask", "x"],
      {
        cwd: workspace(),
      },
    );
    expect(r.code).toBe(2);
    expect(r.stderr.trim().split("\n")).toHaveLength(1);
    expect(r.stderr).toMatch(/--approve ask needs a terminal/);
    expect(server?.requests).toHaveLength(0);
  });

  it("approve: ask in the config file without a terminal is a usage error naming the file", async () => {
    const url = await writeScenario();
    const cwd = workspace();
    writeFileSync(join(cwd, "eddy.config.json"), JSON.stringify({ approve: "ask" }));
    const r = await runCli(["run", "--base-url", url, "--model", "m", "x"], { cwd });
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/approve: "ask" \(.*eddy\.config\.json\) needs a terminal/);
  });

  it("--approve deny refuses the write, the model reads the denial, and the tape replays", async () => {
    const url = await writeScenario();
    const cwd = workspace();
    const tape = join(cwd, "deny.tape");
    const r = await runCli(
      ["run", "--base-url", url, "--model", "m", "--allow-write", "--approve", "deny", "--record", tape, "x"],
      { cwd },
    );
    expect(r.code).toBe(0);
    expect(r.stderr).toMatch(/✗ write_file .*denied/);
    expect(readFileSync(join(cwd, "notes.txt"), "utf8")).toBe("first line\nold line\n");
    expect(outputSent("call_w").error?.code).toBe("denied");
    const replay = await runCli(["replay", tape], { cwd });
    expect(replay.stdout).toMatch(/replay matches/);
    expect(replay.code).toBe(0);
  });

  it("--approve is checked: an unknown mode is a usage error", async () => {
    const r = await runCli(["run", "--approve", "sometimes", "x"], { cwd: workspace() });
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/--approve must be ask or auto or deny or defer \(got "sometimes"\)/);
  });
});
