// `npm run compliance [-- --strict --filter ID --verbose --json]`: runs the official Open Responses
// compliance suite against `eddy mock`. Builds dist/ when a source file is newer, starts
// `eddy mock --port 0` (the OS picks a free port; its first stdout line is the base URL; with
// `--strict`, `eddy mock --strict`), runs the suite's runner against it, stops the mock, and exits
// with the runner's status.
//
// The runner is the spec project's suite kept beside the repository (not vendored: it is
// third-party code run as is): COMPLIANCE_RUNNER, else ../shared/compliance/run.sh or
// ../../shared/compliance/run.sh from the repository root. Its first run installs bun and zod from
// the npm registry into a scratch folder, so only that run needs the network. Not part of
// `npm test`.
import { spawn, spawnSync } from "node:child_process";
import { existsSync, readdirSync, statSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const runner = findRunner();
if (runner === undefined) {
  const where = process.env.COMPLIANCE_RUNNER || "../shared/compliance/run.sh";
  console.error(
    `compliance: the suite runner was not found at ${where}; set COMPLIANCE_RUNNER=/path/to/run.sh`,
  );
  process.exit(2);
}

if (newest(join(root, "src")) > newest(join(root, "dist"))) {
  console.error("compliance: building dist/ (sources changed)");
  const build = spawnSync(process.execPath, [join(root, "scripts/build.mjs")], {
    cwd: root,
    stdio: "inherit",
  });
  if (build.status !== 0) process.exit(build.status ?? 1);
}

const strict = process.argv.includes("--strict");
const runnerArgs = process.argv.slice(2).filter((arg) => arg !== "--strict");
const mockArgs = ["mock", "--port", "0", ...(strict ? ["--strict"] : [])];
const mock = spawn(process.execPath, [join(root, "bin/eddy.js"), ...mockArgs], {
  cwd: root,
  stdio: ["ignore", "pipe", "pipe"],
});
const log = [];
createInterface({ input: mock.stderr }).on("line", (line) => log.push(line));
const exited = new Promise((done) => mock.once("exit", (code) => done(code)));
const url = await Promise.race([
  new Promise((done) => createInterface({ input: mock.stdout }).once("line", done)),
  exited.then(() => undefined),
]);
if (typeof url !== "string" || !url.startsWith("http")) {
  console.error(`compliance: eddy mock did not start\n${log.join("\n")}`);
  process.exit(2);
}

console.error(`compliance: eddy mock${strict ? " --strict" : ""} at ${url}; running ${runner}`);
const suite = spawn(runner, [url, ...runnerArgs], { cwd: root, stdio: "inherit" });
const status = await new Promise((done) => {
  suite.once("exit", (code, signal) => done(code ?? (signal === null ? 1 : 128)));
  suite.once("error", (error) => {
    console.error(`compliance: cannot run ${runner}: ${error.message}`);
    done(2);
  });
});
mock.kill("SIGINT");
await exited;
process.exit(status);

/** COMPLIANCE_RUNNER when set (and nothing else), else the shared folder beside the repository. */
function findRunner() {
  const chosen = process.env.COMPLIANCE_RUNNER;
  if (chosen !== undefined && chosen !== "") return existsSync(chosen) ? resolve(chosen) : undefined;
  const candidates = [
    resolve(root, "../shared/compliance/run.sh"),
    resolve(root, "../../shared/compliance/run.sh"),
  ];
  return candidates.find((path) => existsSync(path));
}

/** The newest modification time (ms) of the files under `dir` (0 when it does not exist). */
function newest(dir) {
  if (!existsSync(dir)) return 0;
  let latest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (!entry.isFile()) continue;
    latest = Math.max(latest, statSync(join(entry.parentPath ?? entry.path, entry.name)).mtimeMs);
  }
  return latest;
}
