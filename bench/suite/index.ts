/**
 * `npm run bench -- suite`: the README's test command (`npm test`: vitest, the type check and the
 * linter beside it) from start to exit, once, with what the rest of the machine did meanwhile — the
 * suite is CPU-bound on 2 cores, so the same commit's time moves with the host's load (bench/README.md,
 * "The test suite"). Reported: wall time, vitest's own duration, the suite's CPU (every process it
 * waited for), and from /proc/stat the CPU the whole machine used and the share the hypervisor took
 * (steal), so a slow run can be told from a loaded machine. Goal (issue 23): ≤ 5 minutes on 2 cores
 * when the machine is otherwise quiet. `--quick` runs one small test file through the same command.
 */
import { spawn } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { cpus } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import {
  type Benchmark,
  childrenCpuMs,
  describeEnvironment,
  environment,
  headlineLines,
  logEnd,
  markdownTable,
  num,
  textTable,
} from "../harness.js";

const REPO = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
const GOAL_SECONDS = 300;
const QUICK_FILES = ["src/util/abort.test.ts"];

/** The machine's CPU counters (the `cpu` line of /proc/stat), in clock ticks; undefined off Linux. */
function machineTicks(): { busy: number; steal: number; total: number } | undefined {
  if (!existsSync("/proc/stat")) return undefined;
  const line = readFileSync("/proc/stat", "utf8").split("\n")[0] ?? "";
  // user nice system idle iowait irq softirq steal …
  const v = line.trim().split(/\s+/).slice(1, 9).map(Number);
  if (v.length < 8 || v.some((x) => !Number.isFinite(x))) return undefined;
  const at = (i: number) => v[i] ?? 0;
  const busy = at(0) + at(1) + at(2) + at(5) + at(6);
  return { busy, steal: at(7), total: busy + at(3) + at(4) + at(7) };
}

interface SuiteRun {
  code: number;
  wallSeconds: number;
  output: string;
}

function runSuite(args: readonly string[]): Promise<SuiteRun> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const child = spawn("npm", ["test", ...(args.length > 0 ? ["--", ...args] : [])], {
      cwd: REPO,
      env: { ...process.env, NO_COLOR: "1", FORCE_COLOR: "0" },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let output = "";
    child.stdout.on("data", (b: Buffer) => {
      output += b.toString("utf8");
    });
    child.stderr.on("data", (b: Buffer) => {
      output += b.toString("utf8");
    });
    child.on("error", reject);
    child.on("close", (code) =>
      resolve({ code: code ?? 1, wallSeconds: (performance.now() - started) / 1000, output }),
    );
  });
}

/** vitest's summary: its Duration line and the Tests counts. */
export function vitestSummary(output: string): { seconds?: number; tests?: string } {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: ANSI colour codes, if any got through
  const plain = output.replace(/\u001b\[[0-9;]*m/g, "");
  const duration = /^\s*Duration\s+([\d.]+)\s*(ms|s)\b/m.exec(plain);
  const tests = /^\s*Tests\s+(.+)$/m.exec(plain);
  const summary: { seconds?: number; tests?: string } = {};
  if (duration?.[1] !== undefined) summary.seconds = Number(duration[1]) / (duration[2] === "ms" ? 1000 : 1);
  if (tests?.[1] !== undefined) summary.tests = tests[1].trim();
  return summary;
}

export const suiteBenchmark: Benchmark = {
  name: "suite",
  title: "The test suite: npm test",
  async run(ctx) {
    const started = Date.now();
    const env0 = environment();
    const cores = cpus().length;
    ctx.log(`## ${suiteBenchmark.title}\n${describeEnvironment(env0)}`);
    const args = ctx.quick ? QUICK_FILES : [];
    ctx.log(`running npm test${args.length > 0 ? ` -- ${args.join(" ")}` : ""} (this takes minutes)…`);
    const cpu0 = childrenCpuMs();
    const machine0 = machineTicks();
    const run = await runSuite(args);
    const cpu1 = childrenCpuMs();
    const machine1 = machineTicks();
    if (run.code !== 0) {
      ctx.log(run.output.slice(-4000));
      throw new Error(`npm test failed (exit ${run.code}): a suite that fails is not timed`);
    }
    const vitest = vitestSummary(run.output);
    const suiteCpu = Number.isFinite(cpu1 - cpu0) ? (cpu1 - cpu0) / 1000 : undefined;
    const ticks =
      machine0 === undefined || machine1 === undefined
        ? undefined
        : {
            busy: machine1.busy - machine0.busy,
            steal: machine1.steal - machine0.steal,
            total: machine1.total - machine0.total,
          };
    // /proc/stat counts USER_HZ ticks (100 a second) summed over every core.
    const machineBusy = ticks === undefined ? undefined : ticks.busy / 100;
    const others =
      machineBusy === undefined || suiteCpu === undefined ? undefined : Math.max(0, machineBusy - suiteCpu);
    const stealShare = ticks === undefined || ticks.total === 0 ? undefined : ticks.steal / ticks.total;
    const capacity = run.wallSeconds * cores;
    const header = ["what", "value"];
    const rows: string[][] = [
      ["npm test, start to exit", `${num(run.wallSeconds, 0)} s`],
      ["vitest's duration", vitest.seconds === undefined ? "—" : `${num(vitest.seconds, 0)} s`],
      ["tests", vitest.tests ?? "—"],
      [
        "the suite's CPU (user + system of every process it waited for)",
        suiteCpu === undefined
          ? "—"
          : `${num(suiteCpu, 0)} s (${num((100 * suiteCpu) / capacity, 0)}% of ${cores} cores)`,
      ],
      [
        "the rest of the machine's CPU meanwhile",
        others === undefined
          ? "—"
          : `${num(others, 0)} s (${num((100 * others) / capacity, 0)}% of ${cores} cores)`,
      ],
      [
        "CPU taken by the hypervisor (steal)",
        stealShare === undefined ? "—" : `${num(100 * stealShare, 1)}%`,
      ],
    ];
    ctx.log(`\n${textTable(header, rows)}`);
    const quiet = others === undefined ? undefined : others / capacity < 0.1;
    const met = run.wallSeconds <= GOAL_SECONDS;
    const verdict = ctx.quick
      ? [`quick: one file through npm test in ${num(run.wallSeconds, 0)} s (no verdict)`]
      : [
          `npm test: ${num(run.wallSeconds, 0)} s on ${cores} cores (goal ≤ ${GOAL_SECONDS} s when quiet): ${met ? "met" : "not met"}${
            quiet === undefined
              ? ""
              : quiet
                ? " (the machine was otherwise quiet)"
                : " (the machine was busy: see the rest's CPU)"
          }`,
        ];
    const { envEnd, seconds } = logEnd(ctx, started, verdict);
    const headline = {
      what: `\`npm test\` on ${cores} cores (vitest, type check and lint), start to exit${ctx.quick ? ` (quick: ${args.join(" ")})` : ""}`,
      eddy: `${num(run.wallSeconds, 0)} s${vitest.seconds === undefined ? "" : ` (vitest ${num(vitest.seconds, 0)} s)`}${
        ctx.quick ? "" : `; goal ≤ ${GOAL_SECONDS} s when quiet: ${met ? "met" : "not met"}`
      }${others === undefined ? "" : `; the rest of the machine used ${num((100 * others) / capacity, 0)}% of its CPU meanwhile`}`,
      peers: "—",
    };
    return [
      `## ${suiteBenchmark.title}`,
      "",
      describeEnvironment(env0),
      "",
      `Method: \`npm test\` once in this repository (its build already made, as after \`npm ci\`), stdout and stderr piped to the bench, NO_COLOR; wall time from spawn to exit; vitest's duration and counts from its summary; the suite's CPU = user + system time of every process it started and waited for (/proc/self/stat cutime + cstime); the machine's = the busy ticks of /proc/stat's \`cpu\` line over the same span (all cores), less the suite's; steal = the share of all ticks the hypervisor took.${ctx.quick ? ` Quick: only ${args.join(" ")}.` : ""}`,
      "",
      markdownTable(header, rows, [1]),
      "",
      ...verdict.map((v) => `**${v}**`),
      "",
      `Wall time ${seconds.toFixed(0)} s; loadavg at end ${envEnd.loadavg}.`,
      "",
      headlineLines([headline], env0),
    ].join("\n");
  },
};
