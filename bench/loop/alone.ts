/**
 * The loop's "alone" cells: each contender in a node process of its own, alternating run by run
 * with floor-loop node:http against a replay server of its own (writes `event`). In the main
 * rotation nine contenders share one process, so each runs with the others' code in the CPU's
 * caches and the JIT's shared state; a program that uses eddy runs eddy's code and its own. This
 * measures the turn the way that program sees it, peers the same way (bench/README.md, "The turn").
 *
 * `measureAlone` (the parent) spawns this file once per contender; run as a script, it measures the
 * contender named in its arguments and prints one JSON line.
 */
import { execFile } from "node:child_process";
import { fileURLToPath } from "node:url";
import { median } from "../harness.js";

/** What one child reports: per round, median(contender) ÷ median(floor) and both medians (ns). */
export interface AloneResult {
  name: string;
  ratios: number[];
  contender: number[];
  floor: number[];
}

/** A contender's rounds, summarised: median ratio over rounds, its range, median times. */
export interface AloneSummary extends AloneResult {
  /** The median over rounds of the ratios. */
  median: number;
  min: number;
  max: number;
}

interface AlonePlan {
  rounds: number;
  runsPerRound: number;
  warmupRuns: number;
}

const SELF = fileURLToPath(import.meta.url);

/** Runs one child per contender, one after another. A child that fails throws with its stderr. */
export async function measureAlone(names: readonly string[], plan: AlonePlan): Promise<AloneSummary[]> {
  const out: AloneSummary[] = [];
  for (const name of names) {
    const args = [...process.execArgv, SELF, name, String(plan.rounds), String(plan.runsPerRound)];
    args.push(String(plan.warmupRuns));
    const stdout = await new Promise<string>((resolve, reject) => {
      execFile(process.execPath, args, { maxBuffer: 1 << 20 }, (err, so, se) =>
        err === null
          ? resolve(so)
          : reject(new Error(`alone cell ${name} failed: ${se.trim() || err.message}`)),
      );
    });
    const result = JSON.parse(stdout.trim().split("\n").at(-1) as string) as AloneResult;
    out.push({
      ...result,
      median: median(result.ratios),
      min: Math.min(...result.ratios),
      max: Math.max(...result.ratios),
    });
  }
  return out;
}

/** The child: the named contender and the floor, alternating in shuffled order, as measureLoop does. */
async function child(name: string, plan: AlonePlan): Promise<void> {
  const { startReplayServer } = await import("../provider/replay-server.js");
  const { FLOOR_LOOP_NODE, loopContenders } = await import("./contenders.js");
  const { measureLoop, roundMedians } = await import("./measure.js");
  const server = await startReplayServer(new URL("./responses.ts", import.meta.url), "event");
  try {
    const all = loopContenders(server.origin);
    const pick = (n: string) => {
      const c = all.find((x) => x.name === n);
      if (c === undefined) throw new Error(`no loop contender named ${JSON.stringify(n)}`);
      return c;
    };
    const samples = await measureLoop([pick(FLOOR_LOOP_NODE), pick(name)], { ...plan, seed: 11, server });
    const [floor, contender] = samples.map((s) => roundMedians(s, (r) => r.run)) as [number[], number[]];
    const ratios = contender.map((c, i) => c / (floor[i] as number));
    const result: AloneResult = { name, ratios, contender, floor };
    process.stdout.write(`${JSON.stringify(result)}\n`);
  } finally {
    await server.close();
  }
}

if (process.argv[1] === SELF) {
  const [name, rounds, runs, warmup] = process.argv.slice(2);
  await child(name as string, {
    rounds: Number(rounds),
    runsPerRound: Number(runs),
    warmupRuns: Number(warmup),
  });
  process.exit(0);
}
