/**
 * `npm run bench -- startup`: how long the `eddy` command takes from exec to exit, against
 * `node -e 0` measured in the same rounds: `eddy --help`, `eddy --version`, `eddy run` against
 * `eddy mock` running in its own process (the README's prompt: 2 requests and a `read_file` call),
 * and the README's demo run (no provider configured: the embedded mock server), each with the CLI's
 * code cache written by an earlier start (src/cli/code-cache.ts), and `eddy run` once more without
 * it (a command's first start). Each command is a fresh process of the built CLI (`bin/eddy.js`,
 * so run `npm run build` first). Reported per
 * command: wall time and CPU time (user + system of the process, from this process's
 * `cutime`/`cstime` in /proc, 10 ms ticks), each as the median and as the median of per-round
 * ratios to `node -e 0`. On a loaded machine the CPU ratio is the steadier one.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import {
  type Benchmark,
  childrenCpuMs,
  collectGarbage,
  describeEnvironment,
  environment,
  type Headline,
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

const REPO = join(dirname(fileURLToPath(import.meta.url)), "../..");
const BIN = join(REPO, "bin/eddy.js");
const PROMPT = "What is in package.json?";
const BASELINE = "node -e 0";
/** The issue's goals, as ratios to `node -e 0` (wall time). */
const GOALS: Record<string, number> = { "eddy --help": 1.5, "eddy run (eddy mock)": 2.5 };
/** The commands README's row gives, in its words. */
const HEADLINE_NAMES: Record<string, string> = {
  "eddy --help": "`eddy --help`",
  "eddy run (eddy mock)": "`eddy run` against `eddy mock`",
  "eddy run (demo)": "the demo run (embedded mock)",
};

/** One command to time: node's arguments, and what its output must show (checked before timing). */
interface Command {
  name: string;
  args: string[];
  expect: (stdout: string) => boolean;
  /** Added to the environment of this command. */
  env?: NodeJS.ProcessEnv;
}

interface Exit {
  code: number | null;
  stdout: string;
  stderr: string;
}

function run(args: readonly string[], env: NodeJS.ProcessEnv): Promise<Exit> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, args, { cwd: REPO, env, stdio: ["ignore", "pipe", "pipe"] });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout.on("data", (b: Buffer) => out.push(b));
    child.stderr.on("data", (b: Buffer) => err.push(b));
    child.on("error", reject);
    child.on("close", (code) =>
      resolve({ code, stdout: Buffer.concat(out).toString(), stderr: Buffer.concat(err).toString() }),
    );
  });
}

/** The environment of every command: no provider configured, no colours, no user config file. */
function cleanEnv(configHome: string): NodeJS.ProcessEnv {
  // The code cache (src/cli/code-cache.ts) in a folder of the bench's own: the check run before the
  // rounds writes it, so the rounds measure the usual start, with the cache.
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    NO_COLOR: "1",
    XDG_CONFIG_HOME: configHome,
    XDG_CACHE_HOME: join(configHome, "cache"),
  };
  for (const name of [
    "OPENAI_API_KEY",
    "OPENAI_BASE_URL",
    "OPENRESPONSES_BASE_URL",
    "OPENRESPONSES_API_KEY",
    "EDDY_MODEL",
    "OTEL_EXPORTER_OTLP_ENDPOINT",
    "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
    "NODE_COMPILE_CACHE",
    "NODE_DISABLE_COMPILE_CACHE",
  ])
    delete env[name];
  return env;
}

/** `eddy mock` in its own process; resolves with its base URL once it listens. */
function startMock(env: NodeJS.ProcessEnv): Promise<{ url: string; child: ChildProcess }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, "mock"], {
      cwd: REPO,
      env,
      stdio: ["ignore", "pipe", "pipe"],
    });
    let seen = "";
    child.stdout.on("data", (b: Buffer) => {
      seen += b.toString();
      const url = /^(http:\/\/\S+)$/m.exec(seen)?.[1];
      if (url !== undefined) resolve({ url, child });
    });
    child.on("error", reject);
    child.on("exit", (code) => reject(new Error(`eddy mock exited (code ${code}) before listening`)));
  });
}

function commands(mockUrl: string, version: string): Command[] {
  return [
    { name: BASELINE, args: ["-e", "0"], expect: (out) => out === "" },
    { name: "eddy --help", args: [BIN, "--help"], expect: (out) => out.startsWith("Usage: eddy") },
    { name: "eddy --version", args: [BIN, "--version"], expect: (out) => out.trim() === version },
    {
      name: "eddy run (eddy mock)",
      args: [BIN, "run", "--base-url", mockUrl, "--model", "demo", PROMPT],
      expect: (out) => out.includes("package.json"),
    },
    { name: "eddy run (demo)", args: [BIN, "run", PROMPT], expect: (out) => out.includes("package.json") },
    {
      name: "eddy run (eddy mock), no code cache",
      args: [BIN, "run", "--base-url", mockUrl, "--model", "demo", PROMPT],
      expect: (out) => out.includes("package.json"),
      env: { NODE_DISABLE_COMPILE_CACHE: "1" },
    },
  ];
}

export const startupBenchmark: Benchmark = {
  name: "startup",
  title: "Start-up: the eddy command against node -e 0",
  async run(ctx) {
    const started = Date.now();
    const env0 = environment();
    if (!existsSync(join(REPO, "dist/cli/bundle/main.cjs")))
      throw new Error("dist/ is missing: run npm run build first");
    const rounds = ctx.quick ? 3 : 21;
    const configHome = mkdtempSync(join(tmpdir(), "eddy-bench-startup-"));
    const env = cleanEnv(configHome);
    const version = (JSON.parse(readFileSync(join(REPO, "package.json"), "utf8")) as { version: string })
      .version;
    ctx.log(`## ${startupBenchmark.title}\n${describeEnvironment(env0)}`);
    const mock = await startMock(env);
    try {
      const list = commands(mock.url, version);
      for (const c of list) {
        const exit = await run(c.args, { ...env, ...c.env });
        if (exit.code !== 0 || !c.expect(exit.stdout)) {
          throw new Error(`${c.name}: exit ${exit.code}, unexpected output:\n${exit.stdout}${exit.stderr}`);
        }
      }
      ctx.log(`checked: every command exits 0 with the expected output (eddy mock at ${mock.url})`);
      collectGarbage();
      const cpu = new Map<string, number[]>(list.map((c) => [c.name, []]));
      const samples = await runRounds(
        list.map((c) => ({
          name: c.name,
          run: async () => {
            const before = childrenCpuMs();
            await run(c.args, { ...env, ...c.env });
            cpu.get(c.name)?.push(childrenCpuMs() - before);
          },
        })),
        { rounds, warmup: 1, baseline: BASELINE },
      );
      return report(ctx, { started, env0, rounds, samples, cpu: warm(cpu) });
    } finally {
      mock.child.kill();
      rmSync(configHome, { recursive: true, force: true });
    }
  },
};

/** The CPU samples without the warm-up round's (runRounds runs every contender once per round). */
function warm(cpu: Map<string, number[]>): Map<string, number[]> {
  return new Map([...cpu].map(([name, values]) => [name, values.slice(1)]));
}

interface Measured {
  started: number;
  env0: ReturnType<typeof environment>;
  rounds: number;
  samples: Awaited<ReturnType<typeof runRounds>>;
  cpu: Map<string, number[]>;
}

function report(ctx: Parameters<Benchmark["run"]>[0], m: Measured): string {
  const baseCpu = m.cpu.get(BASELINE) ?? [];
  const rows = m.samples.map((s) => {
    const cpu = m.cpu.get(s.name) ?? [];
    const cpuRatios = cpu.map((v, i) => v / (baseCpu[i] ?? Number.NaN));
    return [
      s.name,
      num(median(s.times) / 1e6, 0),
      `${num(median(s.ratios), 2)}×`,
      num(median(cpu), 0),
      `${num(median(cpuRatios), 2)}×`,
      pct(relativeIqr(s.times)),
      String(s.times.length),
    ];
  });
  const header = ["command", "wall ms", "x node -e 0", "CPU ms", "CPU x node -e 0", "wall IQR", "rounds"];
  ctx.log(`\n${textTable(header, rows)}`);
  /** Median of the per-round wall-time ratios to `node -e 0` (the table's x node -e 0). */
  const ratioOf = (name: string) => median(m.samples.find((s) => s.name === name)?.ratios ?? []);
  const goals = new Map(
    Object.entries(GOALS).map(([name, goal]) => {
      const ratio = ratioOf(name);
      return [name, { goal, ratio, verdict: ratio <= goal ? "met" : "not met" }];
    }),
  );
  const verdict = [...goals].map(
    ([name, g]) => `${name}: ${num(g.ratio, 2)}× node -e 0 (goal ≤ ${g.goal}×): ${g.verdict}`,
  );
  const headline: Headline = {
    what: `start-up, exec to exit, against \`${BASELINE}\` in the same rounds (wall time)`,
    eddy: Object.entries(HEADLINE_NAMES)
      .map(([name, words]) => {
        const g = goals.get(name);
        return `${words} ${num(ratioOf(name), 2)}×${g === undefined ? "" : ` (goal ≤ ${g.goal}×: ${g.verdict})`}`;
      })
      .join("; "),
    peers: "—",
  };
  const { envEnd, seconds } = logEnd(ctx, m.started, verdict);
  return [
    `## ${startupBenchmark.title}`,
    "",
    describeEnvironment(m.env0),
    "",
    `Method: each command is a fresh \`node\` process (the built CLI, \`bin/eddy.js\`), from exec to exit, with stdout and stderr piped to the bench; no provider variables, no user config file, NO_COLOR. \`eddy run (eddy mock)\`: \`eddy run --base-url URL --model demo "${PROMPT}"\` against \`eddy mock\` started once in its own process (its CPU is not counted); \`eddy run (demo)\`: \`eddy run "${PROMPT}"\` with nothing configured (the embedded mock, in the same process). Both answers take 2 requests and 1 \`read_file\` call. One warm-up round, then ${m.rounds} rounds in shuffled order; ms = median; x = median of per-round ratios to \`node -e 0\`; CPU = user + system time of the process (10 ms ticks).`,
    "",
    markdownTable(header, rows),
    "",
    ...verdict.map((v) => `**${v}**`),
    "",
    `Wall time ${seconds.toFixed(0)} s; loadavg at end ${envEnd.loadavg}.`,
    "",
    headlineLines([headline], m.env0),
  ].join("\n");
}
