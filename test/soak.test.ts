/**
 * The quick fault soak (test/support/soak.ts): a few dozen agent runs against the mock server
 * with random faults and misbehaving tools, every invariant checked on every run. `npm run soak`
 * runs the long one.
 */
import { describe, expect, it } from "vitest";
import { formatReport, frameViolations, soak } from "./support/soak.js";

describe("fault soak (quick)", () => {
  it("60 runs: no invariant violated, every run ends with run_ended, every tape replays", {
    timeout: 240_000,
  }, async () => {
    const report = await soak(60, 1, 2);
    console.log(formatReport(report));
    expect(report.runs).toBe(60);
    expect(report.violations).toEqual([]);
    // The faults did something: some runs failed, some completed.
    expect(report.byReason.completed ?? 0).toBeGreaterThan(0);
    expect(Object.keys(report.byReason).length).toBeGreaterThan(1);
    // Every misbehaving tool ran and was cut or reported: a hanging one by its timeout.
    expect(report.byCall["hangs:failed"] ?? 0).toBeGreaterThan(0);
    expect(report.byCall["throws:failed"] ?? 0).toBeGreaterThan(0);
    expect(report.byCall["huge:ok"] ?? 0).toBeGreaterThan(0);
  });

  it("the checks catch a broken run", () => {
    const envelope = { run_id: "r", ts: 0 };
    const frames = [
      { ...envelope, seq: 0, type: "run_started" },
      { ...envelope, seq: 2, type: "tool_started", turn: 0, call_id: "c" },
      { ...envelope, seq: 3, type: "tool_started", turn: 0, call_id: "c" },
    ] as never[];
    expect(frameViolations(frames)).toEqual([
      "frame 1 has seq 2",
      "frame 2 has seq 3",
      "the last frame is not run_ended",
      "run_ended not exactly once",
      "a call was executed twice",
    ]);
  });
});
