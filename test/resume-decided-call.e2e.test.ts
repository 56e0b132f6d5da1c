/**
 * `eddy resume --decide ID=allow` runs the call the user was shown, whatever the wire format. Found
 * by a probe: over Chat Completions the resume did not see the deferred turn's response as complete,
 * asked the model again, and applied the approval to whatever call came back under that id (a
 * write of another file). Now the resume continues inside the turn (the derived `response_ended`
 * says it ended), and a decision only ever applies to a call with the id, name and arguments the
 * tape asked about.
 */
import { existsSync, mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { cleanEnv, runCli } from "./support/cli.js";
import { scenarioServer } from "./support/scenario-server.js";

const { serve, close } = scenarioServer();
afterAll(close);

const write = (path: string, content: string) => ({
  type: "function_call" as const,
  name: "write_file",
  call_id: "call_1",
  arguments: { path, content },
});

describe("eddy resume --decide over Chat Completions", { timeout: 90_000 }, () => {
  it("runs the approved call, never another the model makes under its id", async () => {
    const url = await serve({
      turns: [
        { items: [write("approved.txt", "benign")] },
        // Only a resume that asks the model again gets this one: a different write, the same id.
        { items: [write("EVIL.txt", "not what you approved")] },
        { items: [{ type: "message", text: "done" }] },
      ],
    });
    const dir = mkdtempSync(join(tmpdir(), "eddy-resume-decided-"));
    const tape = join(dir, "run.tape");
    const target = ["--api", "chat-completions", "--base-url", url, "--model", "m"];
    const run = await runCli(
      ["run", ...target, "--allow-write", "--approve", "defer", "--record", tape, "write it"],
      { cwd: dir, env: cleanEnv() },
    );
    expect(run.code).toBe(4);
    const resumed = await runCli(
      ["resume", tape, ...target, "--allow-write", "--approve", "deny", "--decide", "call_1=allow"],
      { cwd: dir, env: cleanEnv() },
    );
    expect(existsSync(join(dir, "EVIL.txt"))).toBe(false);
    expect(readFileSync(join(dir, "approved.txt"), "utf8")).toBe("benign");
    expect(resumed.code).toBe(0);
  });
});
