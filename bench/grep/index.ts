/**
 * `npm run bench -- grep`: eddy's `grep` tool against ripgrep (`rg`, when installed) on this
 * repository's `node_modules`: a literal, a case-insensitive literal and a regular expression.
 * Both walk the same tree the same way (an explicitly named ignored directory is searched; nested
 * ignore files and hidden entries are honoured), and `max_results` is raised so eddy reads the
 * whole tree as rg does. Before timing, the matches of the two are compared (path:line sets).
 * rg runs on all cores; the `rg -j1` row is single-threaded, as eddy's search is (one worker).
 */
import { execFile } from "node:child_process";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { createBuiltinTools } from "../../src/tools/builtin/index.js";
import { executeToolCall } from "../../src/tools/execute.js";
import { createToolRegistry } from "../../src/tools/registry.js";
import {
  type Benchmark,
  type Contender,
  collectGarbage,
  describeEnvironment,
  environment,
  headlineLines,
  logEnd,
  markdownTable,
  median,
  num,
  pct,
  relativeIqr,
  runRounds,
  textTable,
} from "../harness.js";

const run = promisify(execFile);
const REPO = join(dirname(fileURLToPath(import.meta.url)), "../..");
const TARGET = "node_modules";
const MAX_RESULTS = 5000;

interface Case {
  label: string;
  pattern: string;
  regex: boolean;
  caseSensitive: boolean;
}

const CASES: readonly Case[] = [
  { label: "literal", pattern: "createParser", regex: false, caseSensitive: true },
  { label: "literal, case-insensitive", pattern: "eventsource", regex: false, caseSensitive: false },
  { label: "regex", pattern: "function\\s+\\w+Async\\(", regex: true, caseSensitive: true },
];

const registry = (() => {
  const b = createBuiltinTools();
  return createToolRegistry(b.tools, { disabled: b.disabled });
})();

/** eddy's grep as the model calls it; returns its `path:line:text` lines. */
async function eddyGrep(c: Case): Promise<string[]> {
  const args = {
    pattern: c.pattern,
    path: TARGET,
    regex: c.regex,
    case_sensitive: c.caseSensitive,
    max_results: MAX_RESULTS,
  };
  const r = await executeToolCall(
    registry,
    { callId: "bench", name: "grep", arguments: JSON.stringify(args) },
    { workspace: REPO, outputCapBytes: 64 * 1024 * 1024 },
  );
  const out = JSON.parse(r.output) as { ok: boolean; stdout: string; stderr: string };
  if (!r.ok) throw new Error(`eddy grep failed: ${out.stderr}`);
  return out.stdout === "" ? [] : out.stdout.split("\n");
}

/** ripgrep with its defaults (plus line numbers, no colour, no config file). */
async function rg(c: Case, threads?: number): Promise<string[]> {
  const args = ["--no-config", "-n", "--no-heading", "--color", "never"];
  if (!c.regex) args.push("-F");
  if (!c.caseSensitive) args.push("-i");
  if (threads !== undefined) args.push("-j", String(threads));
  args.push("-e", c.pattern, TARGET);
  try {
    const { stdout } = await run("rg", args, { cwd: REPO, maxBuffer: 256 * 1024 * 1024 });
    return stdout === "" ? [] : stdout.trimEnd().split("\n");
  } catch (error) {
    if ((error as { code?: unknown }).code === 1) return []; // no match
    throw error;
  }
}

async function hasRipgrep(): Promise<string | undefined> {
  try {
    const { stdout } = await run("rg", ["--version"]);
    return stdout.split("\n")[0];
  } catch {
    return undefined;
  }
}

const key = (line: string) => line.split(":", 2).join(":");

export const grepBenchmark: Benchmark = {
  name: "grep",
  title: "grep vs ripgrep on node_modules",
  async run(ctx) {
    const started = Date.now();
    const env = environment();
    const rgVersion = await hasRipgrep();
    const rounds = ctx.quick ? 2 : 7;
    const cases = ctx.quick ? CASES.slice(0, 1) : CASES;
    ctx.log(`## grep vs ripgrep on ${TARGET}\n${describeEnvironment(env)}`);
    if (rgVersion === undefined) ctx.log("rg is not installed (Debian: apt-get install ripgrep): eddy only");

    const rows: string[][] = [];
    const checks: string[] = [];
    for (const c of cases) {
      const eddyLines = await eddyGrep(c);
      const contenders: Contender[] = [{ name: "eddy grep", run: () => eddyGrep(c).then(() => {}) }];
      if (rgVersion !== undefined) {
        const rgLines = await rg(c);
        const eddyKeys = new Set(eddyLines.map(key));
        const rgKeys = new Set(rgLines.map(key));
        const onlyRg = [...rgKeys].filter((k) => !eddyKeys.has(k));
        const onlyEddy = [...eddyKeys].filter((k) => !rgKeys.has(k));
        checks.push(
          `${c.label}: eddy ${eddyKeys.size} matching lines, rg ${rgKeys.size}; only rg ${onlyRg.length}, only eddy ${onlyEddy.length}` +
            (onlyRg.length + onlyEddy.length === 0
              ? " (identical)"
              : ` (e.g. ${[...onlyRg, ...onlyEddy].slice(0, 3).join(", ")})`),
        );
        contenders.unshift(
          { name: "rg", run: () => rg(c).then(() => {}) },
          { name: "rg -j1", run: () => rg(c, 1).then(() => {}) },
        );
      } else {
        checks.push(`${c.label}: eddy ${eddyLines.length} matching lines`);
      }
      ctx.log(checks[checks.length - 1] as string);
      collectGarbage();
      const samples = await runRounds(contenders, {
        rounds,
        warmup: 1,
        baseline: rgVersion === undefined ? "eddy grep" : "rg",
      });
      for (const s of samples) {
        rows.push([
          c.label,
          s.name,
          num(median(s.times) / 1e6, 0),
          rgVersion === undefined ? "-" : `${num(median(s.ratios), 2)}×`,
          pct(relativeIqr(s.times)),
          String(s.times.length),
        ]);
      }
    }
    const header = ["case", "contender", "ms/search", "x rg", "IQR", "rounds"];
    ctx.log(`\n${textTable(header, rows)}`);
    const eddyRatios = rows.filter((r) => r[1] === "eddy grep").map((r) => `${r[0]} ${r[3]}`);
    const verdict = [
      rgVersion === undefined
        ? "rg not installed: no ratio"
        : `eddy grep vs rg (all cores), median of per-round ratios: ${eddyRatios.join(", ")}`,
    ];
    const { envEnd, seconds } = logEnd(ctx, started, verdict);
    return [
      `## ${grepBenchmark.title}`,
      "",
      describeEnvironment(env),
      "",
      `Method: ${TARGET} of this repository (searched as an explicitly named path, so its own nested ignore files apply; hidden files skipped by both); eddy's \`grep\` tool called through \`executeToolCall\` with max_results ${MAX_RESULTS} (so it reads the whole tree, as rg does) and its search in the tools worker thread (reused across calls); rg ${rgVersion ?? "(not installed)"} with \`--no-config -n\` (\`-F\` for literals, \`-i\` case-insensitive), on all cores and with \`-j1\`. One warm-up round, then ${rounds} rounds in shuffled order; ms = median; x rg = median of per-round ratios. The file cache is warm after the warm-up. eddy skips files over 8 MiB, rg does not.`,
      "",
      "Matches compared before timing (path:line sets):",
      "",
      ...checks.map((c) => `- ${c}`),
      "",
      markdownTable(header, rows, [1]),
      "",
      ...verdict.map((v) => `**${v}**`),
      "",
      `Wall time ${seconds.toFixed(0)} s; loadavg at end ${envEnd.loadavg}.`,
      "",
      headlineLines(
        [
          {
            // The verdict's ratios (median of per-round ratios to rg on all cores), one per case.
            what: `\`grep\` tool on this repository's \`node_modules\` (${cases.map((c) => c.label).join(" / ")})`,
            eddy:
              rgVersion === undefined
                ? `${rows
                    .filter((r) => r[1] === "eddy grep")
                    .map((r) => `${r[2]} ms`)
                    .join(" / ")} per search (rg not installed: no ratio)`
                : `${rows
                    .filter((r) => r[1] === "eddy grep")
                    .map((r) => r[3])
                    .join(" / ")} ripgrep's time`,
            peers:
              rgVersion === undefined
                ? "—"
                : `\`rg\` ${rgVersion.split(" ")[1] ?? rgVersion} on all cores = 1×`,
          },
        ],
        env,
      ),
    ].join("\n");
  },
};
