/**
 * A turn's footprint: how many distinct JavaScript functions one agent turn runs, and how many
 * calls it makes, eddy against floor-loop node:http over the loop bench's replay server (writes
 * `event`). Counted with V8's precise coverage (`Profiler.takePreciseCoverage`, call counts) over
 * `--runs` turns after a warm-up, so the figures are counts, not times: the same on a quiet and
 * on a loaded machine, and a change that cuts a layer shows as a smaller number at once, where the
 * loop bench's wall-time ratio needs many rounds to see a few per cent (bench/README.md, "The
 * turn's footprint").
 *
 * Over HTTP a turn's extra time goes with the code and data it touches, since every wait on the
 * socket leaves the caches cold (bench/README.md, "The turn"): this is the measure of that.
 *
 *   node --import tsx bench/loop/footprint.ts [--contenders floor,eddy] [--runs 20] [--warmup 300]
 *     [--top 25] [--base DIR] [--json]
 *
 * `--base DIR` adds eddy as built by another checkout (a `git worktree` with `node_modules`
 * linked, built with `npm run build`), counted in the same process, for a before/after.
 * `--contenders` takes floor, eddy, sdk (the `openai` SDK loop), agents (`@openai/agents`) and
 * sketch (the floor with eddy's obligations, bench/loop/obligations.ts, a redesign's lower bound); a
 * peer's own code counts under "dependencies". `npm run bench -- loop` runs this file
 * (`measureFootprint`: the floor and eddy in one process, each peer in one of its own) and
 * reports its table and a README row.
 */
import { execFile } from "node:child_process";
import { Session } from "node:inspector/promises";
import { tmpdir } from "node:os";
import { resolve } from "node:path";
import { fileURLToPath } from "node:url";
import type * as RunModule from "../../src/loop/run.js";
import type * as OpenResponsesModule from "../../src/provider/open-responses.js";
import type * as ToolModule from "../../src/tools/tool.js";
import { importBuilt } from "../built.js";
import { startReplayServer } from "../provider/replay-server.js";
import { AGENTS, EDDY_ON, FLOOR_LOOP_NODE, loopContenders, SDK_LOOP } from "./contenders.js";
import { MODEL, PROMPT } from "./responses.js";

function option(name: string, fallback: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return i < 0 ? fallback : (process.argv[i + 1] ?? fallback);
}

/** One contender's count: functions that ran at least once, and calls per turn, by where the code lives. */
export interface Footprint {
  name: string;
  functions: number;
  callsPerTurn: number;
  /** Per place (eddy's build, node's internals, a dependency, the bench): [functions, calls per turn]. */
  byPlace: Record<string, [number, number]>;
  /** Per module: [functions, calls per turn]. */
  byModule: Record<string, [number, number]>;
}

interface FootprintPlan {
  runs: number;
  warmup: number;
}

const SELF = fileURLToPath(import.meta.url);

/** The contenders `--contenders` names besides eddy. */
const PEERS = { floor: FLOOR_LOOP_NODE, sdk: SDK_LOOP, agents: AGENTS } as const;

/**
 * The loop bench's call: counts the floor and eddy in one node process, and each peer in one of
 * its own (`@openai/agents` turns on `AsyncLocalStorage`, whose hooks then run for every promise in
 * the process, and would be counted in everyone's turn; bench/README.md, "The turn").
 */
export async function measureFootprint(plan: FootprintPlan): Promise<Footprint[]> {
  const out: Footprint[] = [];
  for (const group of ["floor,eddy", "sdk", "agents"]) out.push(...(await countInChild(group, plan)));
  return out;
}

function countInChild(contenders: string, plan: FootprintPlan): Promise<Footprint[]> {
  const args = [...process.execArgv, SELF, "--contenders", contenders, "--json"];
  args.push("--runs", String(plan.runs), "--warmup", String(plan.warmup));
  return new Promise((resolvePromise, reject) => {
    execFile(process.execPath, args, { maxBuffer: 1 << 22 }, (err, stdout, stderr) => {
      if (err !== null) reject(new Error(`the footprint count failed: ${stderr.trim() || err.message}`));
      else resolvePromise(JSON.parse(stdout.trim().split("\n").at(-1) as string) as Footprint[]);
    });
  });
}

/** Where a script's code lives, from its URL. */
function placeOf(url: string): { place: string; module: string } {
  if (url.startsWith("node:")) return { place: "node", module: url };
  // A dependency's own build is under node_modules/…/dist/: looked for first.
  const modules = url.lastIndexOf("/node_modules/");
  if (modules !== -1) {
    const rest = url.slice(modules + 14).split("/");
    const pkg = rest[0]?.startsWith("@") ? `${rest[0]}/${rest[1]}` : (rest[0] ?? "?");
    return { place: "dependencies", module: pkg };
  }
  const dist = url.lastIndexOf("/dist/");
  if (dist !== -1) return { place: "eddy", module: `dist/${url.slice(dist + 6)}` };
  const bench = url.lastIndexOf("/bench/");
  return { place: "bench", module: bench === -1 ? url : url.slice(bench + 1) };
}

/** eddy's turn as the loop bench runs it, loaded from `root`'s build (this checkout's by default). */
async function eddyTurn(origin: string, root?: string): Promise<() => Promise<void>> {
  const { runAgent } = await importBuilt<typeof RunModule>("loop/run.js", root);
  const { createOpenResponsesProvider } = await importBuilt<typeof OpenResponsesModule>(
    "provider/open-responses.js",
    root,
  );
  const { defineTool } = await importBuilt<typeof ToolModule>("tools/tool.js", root);
  const { z } = await import("zod");
  const noop = defineTool({
    name: "noop",
    description: "Does nothing and answers ok.",
    parameters: z.object({ n: z.number() }),
    execute: async () => "ok",
  });
  const provider = createOpenResponsesProvider({ baseURL: origin });
  const workspace = tmpdir();
  return async () => {
    const handle = runAgent({ model: MODEL, input: PROMPT }, { provider, tools: [noop], workspace });
    for await (const _frame of handle);
    const result = await handle.result;
    if (result.reason !== "completed") throw new Error(`eddy: run ended ${result.reason}`);
  };
}

/** Counts the functions and calls of `runs` turns of `turn`. */
async function count(session: Session, name: string, turn: () => Promise<unknown>, runs: number) {
  await session.post("Profiler.startPreciseCoverage", { callCount: true, detailed: false });
  await session.post("Profiler.takePreciseCoverage"); // resets the counts
  for (let i = 0; i < runs; i++) await turn();
  const { result } = await session.post("Profiler.takePreciseCoverage");
  await session.post("Profiler.stopPreciseCoverage");
  const footprint: Footprint = {
    name,
    functions: 0,
    callsPerTurn: 0,
    byPlace: {},
    byModule: {},
  };
  const add = (map: Record<string, [number, number]>, key: string, calls: number) => {
    const entry = map[key] ?? [0, 0];
    entry[0]++;
    entry[1] += calls;
    map[key] = entry;
  };
  for (const script of result) {
    const { place, module } = placeOf(script.url);
    for (const fn of script.functions) {
      const calls = fn.ranges[0]?.count ?? 0;
      // A script's top level (the unnamed function of the whole range) is not a call of the turn.
      if (calls === 0 || fn.functionName === "") continue;
      footprint.functions++;
      footprint.callsPerTurn += calls / runs;
      add(footprint.byPlace, place, calls / runs);
      add(footprint.byModule, module, calls / runs);
    }
  }
  return footprint;
}

/** The counts as a Markdown table (functions / calls a turn, in all and by place). */
export function footprintTable(footprints: readonly Footprint[]): string[] {
  const lines = [
    "| contender | functions run | calls a turn | eddy's code (functions / calls) | node's | dependencies' | the bench's |",
    "| :-- | --: | --: | --: | --: | --: | --: |",
  ];
  for (const f of footprints) {
    const cell = (place: string) => {
      const [fns, calls] = f.byPlace[place] ?? [0, 0];
      return `${fns} / ${calls.toFixed(0)}`;
    };
    const places = ["eddy", "node", "dependencies", "bench"].map(cell).join(" | ");
    lines.push(`| ${f.name} | ${f.functions} | ${f.callsPerTurn.toFixed(0)} | ${places} |`);
  }
  return lines;
}

/** eddy's modules by calls a turn, the `top` first (functions, calls). */
function moduleLines(footprints: readonly Footprint[], top: number): string[] {
  const lines: string[] = [];
  for (const f of footprints.filter((x) => x.name.startsWith("eddy"))) {
    lines.push("", `${f.name}, eddy's modules by calls a turn (functions, calls):`);
    const modules = Object.entries(f.byModule).filter(([m]) => m.startsWith("dist/"));
    modules.sort((a, b) => b[1][1] - a[1][1]);
    for (const [m, [fns, calls]] of modules.slice(0, top))
      lines.push(`  ${String(fns).padStart(4)} ${calls.toFixed(0).padStart(6)}  ${m}`);
  }
  return lines;
}

async function main(): Promise<void> {
  const runs = Number(option("runs", "20"));
  const warmup = Number(option("warmup", "300"));
  const top = Number(option("top", "25"));
  const base = process.argv.includes("--base") ? resolve(option("base", ".")) : undefined;
  const server = await startReplayServer(new URL("./responses.ts", import.meta.url), "event");
  const session = new Session();
  session.connect();
  try {
    const all = loopContenders(server.origin);
    const peer = (name: string) => {
      const found = all.find((c) => c.name === name);
      if (found === undefined) throw new Error(`no loop contender named ${name}`);
      return { name, turn: () => found.run(() => {}) };
    };
    const contenders: { name: string; turn: () => Promise<unknown> }[] = [];
    for (const key of option("contenders", "floor,eddy").split(",")) {
      if (key === "eddy") contenders.push({ name: EDDY_ON, turn: await eddyTurn(server.origin) });
      else if (key === "sketch") {
        const { withObligations } = await import("./obligations.js");
        const sketch = withObligations(server.origin, true);
        contenders.push({ name: sketch.name, turn: () => sketch.run(() => {}) });
      } else if (key in PEERS) contenders.push(peer(PEERS[key as keyof typeof PEERS]));
      else
        throw new Error(
          `--contenders: no contender ${JSON.stringify(key)} (floor, eddy, sdk, agents, sketch)`,
        );
    }
    if (base !== undefined)
      contenders.push({ name: `${EDDY_ON} at --base`, turn: await eddyTurn(server.origin, base) });
    for (let i = 0; i < warmup; i++) for (const c of contenders) await c.turn();
    await session.post("Profiler.enable");
    const footprints: Footprint[] = [];
    for (const c of contenders) footprints.push(await count(session, c.name, c.turn, runs));
    if (process.argv.includes("--json")) {
      process.stdout.write(`${JSON.stringify(footprints)}\n`);
      return;
    }
    console.log(`a turn's footprint: ${runs} turns after ${warmup} warm-up turns each, writes event`);
    console.log([...footprintTable(footprints), ...moduleLines(footprints, top)].join("\n"));
  } finally {
    session.disconnect();
    await server.close();
  }
}

if (process.argv[1] === SELF) {
  await main();
  process.exit(0);
}
