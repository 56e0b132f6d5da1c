/**
 * No timer of the OpenAI Agents SDK outlives an interop file (test/support/agents-tracing.ts,
 * docs/pitfalls.md #118).
 */
import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { setDefaultOpenAITracingExporter, setTracingDisabled } from "@openai/agents";
import { afterEach, describe, expect, it, vi } from "vitest";
import { shutdownAgentsTracing } from "../support/agents-tracing.js";
import { ROOT } from "../support/cli.js";

afterEach(() => {
  vi.useRealTimers();
});

describe("the Agents SDK's trace export loop", () => {
  it("is running after the SDK sets its default processor (tracing disabled too), and shutdownAgentsTracing leaves no timer of it", async () => {
    setTracingDisabled(true);
    vi.useFakeTimers();
    // What importing @openai/agents does (its index sets the default exporter), here under fake
    // timers so the loop's timer can be counted: the processor it replaces is shut down by the SDK.
    setDefaultOpenAITracingExporter();
    expect(vi.getTimerCount()).toBe(1);
    // The loop reschedules itself: left running, every 5 s has a next one.
    await vi.advanceTimersByTimeAsync(60_000);
    expect(vi.getTimerCount()).toBe(1);

    await shutdownAgentsTracing();
    expect(vi.getTimerCount()).toBe(0);
    // What a later file with fake timers does: it finishes instead of "Aborting after running 10000 timers".
    await vi.runAllTimersAsync();
    expect(vi.getTimerCount()).toBe(0);
  });

  it("every test file that imports @openai/agents stops the loop after its tests", () => {
    const files = ["src", "test"].flatMap((dir) =>
      readdirSync(join(ROOT, dir), { recursive: true, encoding: "utf8" })
        .filter((f) => f.endsWith(".test.ts"))
        .map((f) => join(ROOT, dir, f)),
    );
    const importing = files.filter((f) => /from "@openai\/agents(-core)?"/.test(readFileSync(f, "utf8")));
    expect(importing.length).toBeGreaterThanOrEqual(3);
    const here = relative(ROOT, import.meta.filename);
    const missing = importing
      .map((f) => relative(ROOT, f))
      .filter(
        (f) => f !== here && !readFileSync(join(ROOT, f), "utf8").includes("stopAgentsTracingAfterAll();"),
      );
    expect(missing).toEqual([]);
  });
});
