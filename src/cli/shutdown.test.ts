import { describe, expect, it } from "vitest";
import { type Closer, closeAllBy, SHUTDOWN_BUDGET, type ShutdownClock } from "./shutdown.js";

/** A clock whose one wait the test releases; it records every wait asked for. */
function fakeClock(now = 1000) {
  const waits: number[] = [];
  let release: () => void = () => {};
  const clock: ShutdownClock = {
    now: () => now,
    wait(ms) {
      waits.push(ms);
      const done = new Promise<void>((resolve) => {
        release = resolve;
      });
      return { done, cancel: () => {} };
    },
  };
  return { clock, waits, fire: () => release() };
}

const never = (): Promise<unknown> => new Promise(() => {});
/** A closer that notes its start in `log` and never finishes. */
const hanging = (name: string, log: string[]): Closer => ({
  name,
  close: (deadline) => {
    log.push(`${name} by ${deadline}`);
    return never();
  },
});

describe("closeAllBy: every close at once, one deadline", () => {
  it("starts every closer at once and waits for the deadline once, not for a closer's own timeout", async () => {
    const { clock, waits, fire } = fakeClock(1000);
    const started: string[] = [];
    const closers: Closer[] = [
      // An exporter whose collector never answers: its own 5 s timeout is never waited out.
      hanging("otel", started),
      hanging("mcp", started),
      { name: "provider", close: async () => started.push("provider") },
    ];
    const deadline = 1000 + SHUTDOWN_BUDGET.afterSignalMs;
    const report = closeAllBy(closers, deadline, clock);
    expect(started).toEqual([`otel by ${deadline}`, `mcp by ${deadline}`, "provider"]);
    fire();
    const { late, results } = await report;
    expect(waits).toEqual([SHUTDOWN_BUDGET.afterSignalMs]);
    expect(late.sort()).toEqual(["mcp", "otel"]);
    expect(results.has("provider")).toBe(true);
  });

  it("returns as soon as every closer is done, with their results; a failing one counts as done", async () => {
    const { clock } = fakeClock();
    const report = await closeAllBy(
      [
        { name: "otel", close: async () => "eddy: a problem" },
        { name: "tools", close: async () => Promise.reject(new Error("x")) },
      ],
      5000,
      clock,
    );
    expect(report.late).toEqual([]);
    expect(report.results.get("otel")).toBe("eddy: a problem");
    expect(report.results.get("tools")).toBeUndefined();
  });

  it("a deadline already past still gives every closer its start (and its SIGKILL) before returning", async () => {
    const { clock, waits, fire } = fakeClock(9000);
    let killed = false;
    const report = closeAllBy(
      [
        {
          name: "mcp",
          close: () => {
            killed = true;
            return never();
          },
        },
      ],
      8000,
      clock,
    );
    expect(killed).toBe(true);
    fire();
    expect((await report).late).toEqual(["mcp"]);
    expect(waits).toEqual([-1000]);
  });
});
