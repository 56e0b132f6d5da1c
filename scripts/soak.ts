/**
 * `npm run soak [-- RUNS [FIRST_SEED [CONCURRENCY]]] [--crash TASKS] [--crash-seed SEED]`: the
 * long fault soak (test/support/soak.ts), 1,000 runs by default, then the long crash soak of the
 * queue path (test/support/crash-soak.ts), 100 tasks by default (`--crash 0` skips it; `RUNS` 0
 * skips the fault soak: `npm run soak:crash -- --crash N` is that). Prints the counts; exits 1 when
 * any run broke an invariant (its seed is printed: `npm run soak -- 1 SEED`, or
 * `npm run soak:crash -- --crash N --crash-seed SEED`, runs it again). The crash soak starts the
 * built CLI (bin/eddy.js): the npm scripts build dist/ first.
 */
import { parseArgs } from "node:util";
import { crashSoak, formatCrashReport } from "../test/support/crash-soak.js";
import { formatReport, soak } from "../test/support/soak.js";

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: { crash: { type: "string", default: "100" }, "crash-seed": { type: "string" } },
});
const [runs = "1000", first = "1", concurrency = "4"] = positionals;
let failed = false;

if (Number(runs) > 0) {
  const started = Date.now();
  const report = await soak(Number(runs), Number(first), Number(concurrency));
  console.log(formatReport(report));
  console.log(`  wall time ${((Date.now() - started) / 1000).toFixed(1)} s`);
  failed ||= report.violations.length > 0;
}

const tasks = Number(values.crash);
if (tasks > 0) {
  const seed = Number(values["crash-seed"] ?? Date.now() % 1_000_000);
  const started = Date.now();
  const report = await crashSoak({
    tasks,
    seed,
    // About one break for every three tasks: mostly workers, then the coordinator and Redis.
    workerKills: Math.max(2, Math.round(tasks / 6)),
    coordinatorKills: Math.max(1, Math.round(tasks / 15)),
    redisRestarts: Math.max(1, Math.round(tasks / 20)),
    emptyRedisRestarts: 1,
    workers: 3,
    workerConcurrency: 3,
    log: (line) => console.log(`crash soak: ${line}`),
  });
  console.log(formatCrashReport(report));
  console.log(`  wall time ${((Date.now() - started) / 1000).toFixed(1)} s`);
  failed ||= report.violations.length > 0;
}
process.exitCode = failed ? 1 : 0;
