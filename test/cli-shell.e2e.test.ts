/**
 * `shell` through the built CLI: a background job a command leaves behind dies when the run ends
 * (`ToolRegistry.dispose()` in the CLI's finally), also when the run is cancelled; `--sandbox`
 * runs commands under bubblewrap (the workspace writable, the rest read-only, no network) and is
 * refused at start (exit 2, bwrap's reason) where bubblewrap cannot run.
 */
import { existsSync, mkdtempSync, readFileSync } from "node:fs";
import { homedir, tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { parseFrames } from "../src/frames/jsonl.js";
import { createMockServer, type MockServer } from "../src/mock/index.js";
import type { Scenario } from "../src/mock/scenario.js";
import { probeBubblewrap } from "../src/tools/builtin/index.js";
import { cleanEnv, runCli } from "./support/cli.js";
import { eventually, processesWith } from "./support/mcp.js";

let mock: MockServer | undefined;
afterEach(async () => {
  await mock?.close();
  mock = undefined;
});

const HAS_BWRAP = (await probeBubblewrap(process.env.PATH)).ok;
if (!HAS_BWRAP)
  console.warn("cli-shell.e2e.test.ts: bubblewrap cannot run here; the --sandbox runs are SKIPPED");

function workspace(): string {
  return mkdtempSync(join(tmpdir(), "eddy-shell-e2e-"));
}

const shell = (command: string, call_id: string) => ({
  type: "function_call" as const,
  name: "shell",
  arguments: { command },
  call_id,
});

async function startMock(scenario: Scenario): Promise<string> {
  mock = await createMockServer({ scenario });
  return mock.url;
}

/** A `sleep` with a duration no other process has, so it can be found in /proc. */
function uniqueSleep(): string {
  return `sleep 100${Math.random().toFixed(9).slice(1)}`;
}

describe("shell background jobs end with the run", () => {
  it("--allow-shell with `sleep 100 &`: the job runs during the run and is ended (SIGTERM first) when it ends", async () => {
    const sleep = uniqueSleep();
    // A job that says when it gets SIGTERM: the run's end releases it gracefully (dispose), not only
    // with the SIGKILL of the process-exit hook.
    const job = `bash -c 'trap "echo term > got-term; exit 0" TERM; ${sleep} & wait' >/dev/null 2>&1 &`;
    const cwd = workspace();
    const url = await startMock({
      turns: [
        { items: [shell(`${job} echo started`, "c1")] },
        {
          expect: { functionCallOutputs: "c1" },
          items: [shell(`pgrep -f "${sleep}" >/dev/null && echo alive`, "c2")],
        },
        { items: [{ type: "message", text: "done" }] },
      ],
    });
    const r = await runCli(["run", "--json", "--base-url", url, "--model", "m", "--allow-shell", "go"], {
      cwd,
    });
    expect(r.code).toBe(0);
    const ended = parseFrames(r.stdout).filter((f) => f.type === "tool_ended");
    expect(ended[1]?.output).toContain("alive"); // it outlived its command, as background jobs do
    expect(await eventually(() => processesWith(sleep).length === 0, 30_000)).toBe(true);
    expect(readFileSync(join(cwd, "got-term"), "utf8")).toBe("term\n");
  });

  it("also when the run is cancelled (SIGINT → 130)", async () => {
    const sleep = uniqueSleep();
    const url = await startMock({
      turns: [
        { items: [shell(`${sleep} & echo started`, "c1")] },
        { items: [shell("sleep 30", "c2")] },
        { items: [{ type: "message", text: "never" }] },
      ],
    });
    const r = await runCli(["run", "--base-url", url, "--model", "m", "--allow-shell", "go"], {
      cwd: workspace(),
      signalWhen: '→ shell {"command":"sleep 30"}',
    });
    expect(r.code).toBe(130);
    expect(await eventually(() => processesWith(sleep).length === 0, 30_000)).toBe(true);
  });
});

describe("--sandbox", () => {
  it("is refused at start with bubblewrap's reason where it cannot run (exit 2, nothing sent)", async () => {
    const url = await startMock({ turns: [{ items: [{ type: "message", text: "never" }] }] });
    const r = await runCli(["run", "--base-url", url, "--model", "m", "--allow-shell", "--sandbox", "x"], {
      cwd: workspace(),
      env: cleanEnv({ PATH: workspace() }), // no bwrap on this PATH
    });
    expect(r.code).toBe(2);
    expect(r.stderr.trim().split("\n")).toHaveLength(1);
    expect(r.stderr).toMatch(/--sandbox: the shell sandbox needs bubblewrap \(the bwrap command\)/);
    expect(mock?.requests).toHaveLength(0);
  });

  it.skipIf(!HAS_BWRAP)(
    "confines shell: the workspace is writable, the rest of the system is not; the tape replays",
    async () => {
      const cwd = workspace();
      // Outside the workspace and outside /tmp (which the sandbox replaces with a private one).
      const outside = join(homedir(), `eddy-sandbox-outside-${process.pid}-${Date.now()}`);
      const url = await startMock({
        turns: [
          { items: [shell(`echo inside > made.txt && touch ${outside}; echo "touch=$?"`, "c1")] },
          { items: [{ type: "message", text: "done" }] },
        ],
      });
      const tape = join(cwd, "sandbox.tape");
      const args = ["run", "--json", "--base-url", url, "--model", "m", "--allow-shell", "--sandbox"];
      const r = await runCli([...args, "--record", tape, "go"], { cwd });
      expect(r.code).toBe(0);
      expect(readFileSync(join(cwd, "made.txt"), "utf8")).toBe("inside\n");
      expect(existsSync(outside)).toBe(false);
      const output = parseFrames(r.stdout).find((f) => f.type === "tool_ended");
      expect(output?.type === "tool_ended" && output.output).toMatch(/touch=1/);
      const replay = await runCli(["replay", tape], { cwd });
      expect(replay.stdout).toMatch(/replay matches/);
      expect(replay.code).toBe(0);
    },
  );

  it("without --allow-shell it needs nothing (the sandbox only confines shell)", async () => {
    const url = await startMock({ turns: [{ items: [{ type: "message", text: "hi" }] }] });
    const r = await runCli(["run", "--base-url", url, "--model", "m", "--sandbox", "x"], {
      cwd: workspace(),
      env: cleanEnv({ PATH: workspace() }),
    });
    expect(r.code).toBe(0);
  });
});
