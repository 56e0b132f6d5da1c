/**
 * `eddy run --json`: stdout carries frames and nothing else, and a run that fails also says why on
 * stderr, in one line (it used to exit 1 with stderr empty, the reason only inside a frame).
 */
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { runCli } from "./support/cli.js";
import { startRawServer } from "./support/raw-server.js";

const servers: { close(): Promise<void> }[] = [];
afterAll(async () => {
  for (const s of servers) await s.close();
});

describe("eddy run --json on a failed run", () => {
  it("an HTML page instead of an event stream: exit 1, frames on stdout, the reason on stderr", async () => {
    const server = await startRawServer([
      { headers: { "content-type": "text/html" }, body: ["<html><body>Sign in</body></html>"] },
    ]);
    servers.push(server);
    const cwd = mkdtempSync(join(tmpdir(), "eddy-json-failure-"));
    writeFileSync(join(cwd, "package.json"), "{}\n");
    const r = await runCli(["run", "--json", "--base-url", server.url, "--model", "m", "hi"], { cwd });
    expect(r.code).toBe(1);
    const frames = r.stdout
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as { type: string; reason?: string; error?: { message: string } });
    const ended = frames.at(-1);
    expect(ended?.type).toBe("run_ended");
    const lines = r.stderr.trim().split("\n");
    expect(lines).toHaveLength(1);
    expect(lines[0]).toBe(`eddy: ${ended?.reason}: ${ended?.error?.message}`);
    expect(lines[0]).toMatch(/text\/html/);
  });
});
