/**
 * End-to-end: `eddy run --record` killed with SIGKILL after its first tool call, then `eddy
 * resume TAPE`. The tool (shell, appending to a log) must not run again, the run must finish, the
 * tape must say where it resumed and still replay. Chained on the same provider, and stateless on
 * a provider that lost the response.
 */
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { createMockServer, type MockServer } from "../src/mock/index.js";
import type { Scenario } from "../src/mock/scenario.js";
import { readTape } from "../src/replay/tape.js";
import { runCli } from "./support/cli.js";
import { startCli, until } from "./support/cli-process.js";
import { type GateProxy, startGateProxy } from "./support/gate-proxy.js";

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0)) await c();
});

async function mock(scenario: Scenario): Promise<MockServer> {
  const server = await createMockServer({ scenario });
  cleanups.push(() => server.close());
  return server;
}

async function proxy(target: string): Promise<GateProxy> {
  const gate = await startGateProxy(target);
  cleanups.push(() => gate.stop());
  return gate;
}

const appendCall = (log: string): Scenario["turns"][number] => ({
  items: [{ type: "function_call", name: "shell", arguments: { command: `echo ran >> ${log}` } }],
});
const done: Scenario["turns"][number] = { items: [{ type: "message", text: "all done" }] };

/** Records a run that is killed (SIGKILL) while its second request waits: after its first tool call. */
async function killedAfterFirstTool() {
  const cwd = mkdtempSync(join(tmpdir(), "eddy-resume-e2e-"));
  const log = join(cwd, "..", `${cwd.split("/").at(-1)}.log`);
  const server = await mock({ turns: [appendCall(log), done] });
  const gate = await proxy(server.url);
  gate.close(1); // the second request waits
  const tape = join(cwd, "run.tape");
  const run = startCli(
    ["run", "--record", tape, "--allow-shell", "--base-url", gate.url, "--model", "m", "append to the log"],
    { cwd },
  );
  await until(() => gate.held === 1, "the second request");
  run.child.kill("SIGKILL");
  expect((await run.exited).signal).toBe("SIGKILL");
  await until(() => gate.held === 0, "the killed client's request to be dropped");
  gate.open();
  expect(readFileSync(log, "utf8")).toBe("ran\n");
  const crashed = readTape(tape);
  expect(crashed.frames.some((f) => f.type === "tool_ended")).toBe(true);
  expect(crashed.frames.some((f) => f.type === "run_ended")).toBe(false);
  return { cwd, log, tape, server, gate };
}

describe("eddy resume TAPE after SIGKILL (slow: spawns the CLI)", () => {
  it("takes its permissions from this invocation, not the tape: without --allow-shell it exits 2 naming it", async () => {
    const { cwd, log, tape, server, gate } = await killedAfterFirstTool();
    const sent = server.requests.length;
    const resumed = await runCli(["resume", tape, "--base-url", gate.url], { cwd });
    expect(resumed.code).toBe(2);
    expect(resumed.stderr).toContain("--allow-shell");
    expect(server.requests.length).toBe(sent);
    expect(readFileSync(log, "utf8")).toBe("ran\n");
  });

  it("continues chained on the same provider without running the recorded tool again", async () => {
    const { cwd, log, tape, server, gate } = await killedAfterFirstTool();
    const resumed = await runCli(["resume", tape, "--allow-shell", "--base-url", gate.url], { cwd });
    expect(resumed.stderr).toMatch(
      /resuming .*run\.tape at turn 1 \(\d+ of \d+ frames kept, 1 tool output reused, \d+ dropped\)/,
    );
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(resumed.stdout).toContain("all done");
    expect(readFileSync(log, "utf8")).toBe("ran\n");
    // The killed request never reached the model; the resumed one chained on the first response.
    expect(server.requests).toHaveLength(2);
    expect(JSON.stringify(server.requests[1])).toContain("previous_response_id");
    const after = readTape(tape);
    expect(after.header.resumes).toHaveLength(1);
    expect(after.header.resumes?.[0]).toMatchObject({ turn: 1, reused_tool_outputs: 1 });
    expect(after.frames.at(-1)).toMatchObject({
      type: "run_ended",
      reason: "completed",
      tool_calls: 1,
      turns: 2,
    });
    const replay = await runCli(["replay", tape], { cwd });
    expect(replay.stdout).toMatch(/replay matches/);
    expect(replay.code).toBe(0);
    // Nothing left to resume.
    const again = await runCli(["resume", tape, "--allow-shell", "--base-url", gate.url], { cwd });
    expect(again.stderr).toContain("the run already ended (completed)");
  }, 60_000);

  it("goes on statelessly from the recorded items when the provider lost the response", async () => {
    const { cwd, log, tape } = await killedAfterFirstTool();
    const fresh = await mock({ turns: [done] });
    const out = join(cwd, "resumed.tape");
    const resumed = await runCli(
      ["resume", tape, "--allow-shell", "--base-url", fresh.url, "--record", out, "--json"],
      {
        cwd,
      },
    );
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(resumed.stdout).toContain('"type":"mode_changed"');
    expect(readFileSync(log, "utf8")).toBe("ran\n");
    // The stateless resend carries the recorded call and its output.
    const resend = JSON.stringify(fresh.requests.at(-1));
    expect(resend).toContain('"type":"function_call_output"');
    expect(resend).toContain('"store":false');
    expect(readTape(out).frames.at(-1)).toMatchObject({ type: "run_ended", reason: "completed" });
    expect((await runCli(["replay", out], { cwd })).code).toBe(0);
    // --record elsewhere leaves the crashed tape as it was.
    expect(readTape(tape).frames.some((f) => f.type === "run_ended")).toBe(false);
  }, 60_000);
});
