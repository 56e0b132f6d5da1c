/**
 * End-to-end: how long the end of a run takes (docs/architecture.md, "The CLI contract": a process
 * exits within 2 s of SIGINT/SIGTERM; docs/pitfalls.md #64). The built CLI, real child processes:
 * an OTLP collector that accepts connections and never answers, an MCP server that ignores SIGTERM
 * and keeps a child. The closes share one budget and run at once (src/cli/shutdown.ts), so none of
 * their own timeouts is waited out — the exporter's 5 s, the MCP close grace step after step.
 *
 * No verdict here rests on a tight time: the bounds are far above what the shutdown takes now
 * (about 1.5 s from the signal) and below what the waits it no longer makes would add up to, so
 * they hold on a machine at load average 10. The precise timings are a bench row
 * (`npm run bench -- shutdown`, bench/README.md).
 */
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { parseFrames } from "../src/frames/jsonl.js";
import { createMockServer, type MockServer } from "../src/mock/index.js";
import type { Scenario } from "../src/mock/scenario.js";
import { cleanEnv, runCli } from "./support/cli.js";
import { startCli, until } from "./support/cli-process.js";
import { assertFrameInvariants } from "./support/frames.js";
import { isAlive, MCP_TEST_SERVER, newMarker, processesWith } from "./support/mcp.js";
import { type SilentCollector, startSilentCollector } from "./support/otlp-receiver.js";

/** What the exporter's own shutdown timeout alone took before the shared budget (src/cli/otel.ts). */
const EXPORTER_TIMEOUT_MS = 5000;

let server: MockServer | undefined;
let collector: SilentCollector | undefined;
afterEach(async () => {
  await server?.close();
  await collector?.close();
  server = undefined;
  collector = undefined;
});

function workspace(): string {
  const dir = mkdtempSync(join(tmpdir(), "eddy-shutdown-"));
  writeFileSync(join(dir, "package.json"), `${JSON.stringify({ name: "demo-app" })}\n`);
  return dir;
}

async function mock(scenario: Scenario): Promise<string> {
  server = await createMockServer({ scenario });
  return server.url;
}

/** An answer that stalls after a few events: the run is busy when the signal comes. */
const stalling: Scenario = {
  turns: [
    {
      items: [{ type: "message", text: "a slow answer that takes its time" }],
      faults: { stallAfterEvents: { afterEvents: 5, ms: 30_000 } },
    },
  ],
};

const otelEnv = (url: string) => cleanEnv({ OTEL_EXPORTER_OTLP_ENDPOINT: url });

const collectorLines = (stderr: string) => stderr.split("\n").filter((l) => l.includes("OTLP collector"));

describe("the end of a run: one shared, bounded shutdown", () => {
  it("SIGINT with --otel and a collector that never answers: exit 130, well before the exporter's 5 s, said once", async () => {
    collector = await startSilentCollector();
    const url = await mock(stalling);
    const r = await runCli(["run", "--otel", "--json", "--base-url", url, "--model", "m", "hi"], {
      cwd: workspace(),
      env: otelEnv(collector.url),
      signalWhen: '"type":"output_text_delta"',
    });
    expect(r.code).toBe(130);
    const frames = parseFrames(r.stdout);
    assertFrameInvariants(frames);
    expect(frames.at(-1)).toMatchObject({ reason: "cancelled" });
    // Before: the exporter's 5 s shutdown, then its request held the process until it timed out.
    expect(r.exitAfterSignalMs).toBeLessThan(EXPORTER_TIMEOUT_MS - 500);
    expect(collector.requests).toBeGreaterThan(0); // the spans were sent; no answer came
    expect(collectorLines(r.stderr)).toHaveLength(1);
    expect(collectorLines(r.stderr)[0]).toMatch(
      new RegExp(`the OTLP collector at ${collector.url}/v1/traces did not answer within \\d+ ms`),
    );
  });

  it("a run that completes is not held by a collector that never answers; the problem is said once", async () => {
    collector = await startSilentCollector();
    const url = await mock({ turns: [{ items: [{ type: "message", text: "done" }] }] });
    const cli = startCli(["run", "--otel", "--json", "--base-url", url, "--model", "m", "hi"], {
      cwd: workspace(),
      env: otelEnv(collector.url),
    });
    await until(() => cli.stdout.includes('"type":"run_ended"'), "run_ended");
    const ended = performance.now();
    const { code } = await cli.exited;
    const heldMs = performance.now() - ended;
    expect(code).toBe(0);
    expect(isAlive(cli.child.pid as number)).toBe(false);
    // Before: held 6–8 s in silence (the 5 s shutdown timeout, then the request still open).
    expect(heldMs).toBeLessThan(EXPORTER_TIMEOUT_MS - 500);
    expect(collectorLines(cli.stderr)).toHaveLength(1);
  });

  it("SIGINT with an MCP server that ignores SIGTERM and keeps a child, and a silent collector: exit 130, nothing left", async () => {
    collector = await startSilentCollector();
    const marker = newMarker();
    const url = await mock({
      turns: [
        {
          items: [
            { type: "function_call", name: "stubborn__slow", arguments: { ms: 30_000 }, call_id: "call_s" },
          ],
        },
        { items: [{ type: "message", text: "never" }] },
      ],
    });
    const mcp = `stubborn=${process.execPath} ${MCP_TEST_SERVER} --marker ${marker} --stubborn`;
    const r = await runCli(["run", "--otel", "--base-url", url, "--model", "m", "--mcp", mcp, "go"], {
      cwd: workspace(),
      env: otelEnv(collector.url),
      signalWhen: "→ stubborn__slow",
      timeoutMs: 30_000,
    });
    expect(r.code).toBe(130);
    // The server and its child are gone (SIGKILL for the group once the budget ran out).
    expect(processesWith(marker)).toEqual([]);
    // Before: the exporter's 5 s, then the MCP close's graces one after another (about 3.4 s).
    expect(r.exitAfterSignalMs).toBeLessThan(EXPORTER_TIMEOUT_MS - 500);
    expect(collectorLines(r.stderr)).toHaveLength(1);
  });
});
