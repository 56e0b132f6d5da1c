// `npm test`: the type check and the linter run beside the test suite instead of before it (on 2
// cores the suite spends much of its time waiting on the processes it starts; measured in
// bench/README.md, "The test suite"). The suite's output streams as it comes; the checks' output is
// printed after it, each under its name. Exits non-zero when any of the three fails.
// Extra arguments go to vitest (`npm test -- src/loop`).
import { spawn } from "node:child_process";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const bin = (name) => join(root, "node_modules", ".bin", name);

/** Runs `command`; resolves with its exit code and, when `capture`, its output. */
function run(command, args, capture) {
  return new Promise((resolve) => {
    const child = spawn(command, args, {
      cwd: root,
      stdio: capture ? ["ignore", "pipe", "pipe"] : "inherit",
    });
    let output = "";
    if (capture) {
      child.stdout.on("data", (d) => (output += d));
      child.stderr.on("data", (d) => (output += d));
    }
    child.on("error", (error) => resolve({ code: 1, output: `${output}${error.message}\n` }));
    child.on("close", (code, signal) => resolve({ code: code ?? (signal ? 1 : 0), output }));
  });
}

// The type check runs TypeScript 7 (the native compiler, the `typescript-7` alias): the same checks as
// TypeScript 5 in about a third of the CPU time (bench/README.md, "The test suite"). TypeScript 5
// (`typescript`) still compiles the build and serves the tests that use the compiler API.
const tsc = join(root, "node_modules", "typescript-7", "bin", "tsc");
const checks = [
  ["typecheck", () => run(process.execPath, [tsc, "--noEmit", "-p", "tsconfig.json"], true)],
  [
    "typecheck (view client)",
    () => run(process.execPath, [tsc, "--noEmit", "-p", "src/view/client/tsconfig.json"], true),
  ],
  ["lint", () => run(bin("biome"), ["check", "."], true)],
];
// The checks run one after another (two tsc processes at once would take both cores from the suite).
const checked = (async () => {
  const results = [];
  for (const [name, start] of checks) results.push({ name, ...(await start()) });
  return results;
})();
const suite = await run(bin("vitest"), ["run", ...process.argv.slice(2)], false);
let failed = suite.code !== 0;
for (const { name, code, output } of await checked) {
  const verdict = code === 0 ? "passed" : `FAILED (exit ${code})`;
  process.stdout.write(`\n── ${name}: ${verdict}\n${code === 0 ? "" : output}`);
  if (code !== 0) failed = true;
}
process.exitCode = failed ? 1 : 0;
