/**
 * `npm run soak [-- RUNS [FIRST_SEED [CONCURRENCY]]]`: the long fault soak (test/support/soak.ts),
 * 1,000 runs by default. Prints the counts; exits 1 when any run broke an invariant (its seed is
 * printed: `npm run soak -- 1 SEED` runs it again).
 */
import { formatReport, soak } from "../test/support/soak.js";

const [runs = "1000", first = "1", concurrency = "4"] = process.argv.slice(2);
const started = Date.now();
const report = await soak(Number(runs), Number(first), Number(concurrency));
console.log(formatReport(report));
console.log(`  wall time ${((Date.now() - started) / 1000).toFixed(1)} s`);
process.exitCode = report.violations.length === 0 ? 0 : 1;
