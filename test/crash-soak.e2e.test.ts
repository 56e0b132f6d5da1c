/**
 * The crash soak, short form (test/support/crash-soak.ts): a queue batch of a few tasks whose
 * every call appends its own marker to a file outside the workspace, on a real redis-server with
 * real `eddy batch --queue` and `eddy worker` processes, while the soak kills two workers and the
 * coordinator (`kill -9`) and restarts Redis once (same data). Every task has exactly one result,
 * no side effect ran twice, nothing printed an internal error, every tape is whole and replays.
 * `npm run soak:crash` runs the long form. `EDDY_CRASH_SEED=S` runs this one with another seed.
 */
import { describe, expect, it } from "vitest";
import { crashSoak, formatCrashReport, tapeViolations } from "./support/crash-soak.js";
import { HAVE_REDIS } from "./support/redis.js";

const SEED = Number(process.env.EDDY_CRASH_SEED ?? 7);

describe.skipIf(!HAVE_REDIS)("crash soak (short form; slow: redis-server and eddy processes killed)", () => {
  it(`seed ${SEED}: 8 tasks, 2 workers and the coordinator killed, Redis restarted: 0 lost, 0 duplicated, 0 internal errors`, async () => {
    const report = await crashSoak({
      tasks: 8,
      seed: SEED,
      workerKills: 2,
      coordinatorKills: 1,
      redisRestarts: 1,
      log: (line) => console.log(`crash soak: ${line}`),
    });
    console.log(formatCrashReport(report));
    expect(report.violations, `seed ${SEED}`).toEqual([]);
    expect(report.results).toBe(8);
    expect(report.lost).toBe(0);
    expect(report.duplicatedResults).toBe(0);
    expect(report.duplicatedSideEffects).toBe(0);
    expect(report.internalErrors).toBe(0);
    // The breaks happened (the batch did not finish before them) and the calls did run.
    expect(report.workerKills + report.coordinatorKills + report.redisRestarts).toBeGreaterThan(0);
    expect(report.sideEffects).toBeGreaterThan(0);
  }, 240_000);

  it("the tape checks catch a broken tape", () => {
    const envelope = { run_id: "r", ts: 0 };
    const frames = [
      { ...envelope, seq: 0, type: "run_started" },
      { ...envelope, seq: 1, type: "tool_started", turn: 0, call_id: "c" },
      { ...envelope, seq: 3, type: "tool_started", turn: 0, call_id: "c" },
    ] as never[];
    expect(tapeViolations(frames)).toEqual([
      "frame 2 has seq 3",
      "the last frame is not run_ended",
      "run_ended not exactly once",
      "a call was started twice",
    ]);
  });
});
