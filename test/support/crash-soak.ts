/**
 * The crash soak of the scale-out path: a real `redis-server` (append-only file, fsync always, so
 * a restart keeps every key), real `eddy batch --queue` coordinators and `eddy worker` processes
 * (bin/eddy.js), a scripted mock model whose every call is a shell command with a side effect that
 * counts itself — it appends its own marker (`fx-N`, unique to the call) to a file outside the
 * workspace. At seeded random points (after a random amount of progress, then a random delay) the
 * soak kills a worker (`kill -9`, a new one is started), kills the coordinator (`kill -9`, then the
 * same command again, as a user would), or restarts Redis (`kill -9`, then started on the same
 * port and data; optionally once on an empty folder: the coordinator queues the vanished jobs
 * again; a process started just as Redis went away exits 2, "cannot reach Redis", and is started
 * again as a user would). Then it checks, per task and per call:
 *
 * - exactly one line in results.jsonl per task (0 lost, 0 duplicated results);
 * - each marker at most once in the side-effect file (0 duplicated side effects); every marker
 *   there belongs to a call recorded (`tool_started`) in its task's final tape — unless Redis lost
 *   that tape (restarted empty); every call whose tape says it ran (`tool_ended`, not answered
 *   `interrupted`) left its marker; a call answered `interrupted` counts as not run again;
 * - no "internal error" (nor `internal_error`) in any process's output or in results.jsonl, and no
 *   stack trace on any stderr;
 * - every tape: `seq` contiguous, `run_ended` last and once, no call started twice, and it replays
 *   (without running a side effect again).
 *
 * No verdict depends on wall time: the soak waits for progress, and a hang is only declared after
 * `hangMs` without any (a generous guard). `test/crash-soak.e2e.test.ts` runs a short form;
 * `npm run soak` / `npm run soak:crash` (scripts/soak.ts) a long one.
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { ResultLine } from "../../src/batch/batch-dir.js";
import type { Frame } from "../../src/frames/frame.js";
import { createMockServer, type ScenarioItem, type ScenarioTurn } from "../../src/mock/index.js";
import { replayTape } from "../../src/replay/replay.js";
import { readTape, type Tape } from "../../src/replay/tape.js";
import { createBuiltinTools } from "../../src/tools/builtin/index.js";
import { createToolRegistry } from "../../src/tools/registry.js";
import { seededRandom } from "./chunking.js";
import { type CliProcess, startCli } from "./cli-process.js";
import { type RedisServer, startRedis } from "./redis.js";

/** What one crash soak does. */
export interface CrashSoakOptions {
  /** Tasks in the batch. */
  tasks: number;
  /** Seeds every choice (the scenario, where and what to break); printed so a failure can be run again. */
  seed: number;
  /** `kill -9` of a worker (a new one takes its place). */
  workerKills: number;
  /** `kill -9` of the coordinator (the same command is run again). */
  coordinatorKills: number;
  /** Redis killed and started again on the same data. */
  redisRestarts: number;
  /** Redis killed and started again empty (its jobs and tapes gone). @defaultValue 0 */
  emptyRedisRestarts?: number;
  /** Workers at a time. @defaultValue 2 */
  workers?: number;
  /** Runs at once per worker. @defaultValue 2 */
  workerConcurrency?: number;
  /** `eddy worker --stall-timeout`. @defaultValue 3000 */
  stallTimeoutMs?: number;
  /** A hang: this long without any progress (a side effect, a result, a line of output). @defaultValue 120000 */
  hangMs?: number;
  /** Told what happens, one line at a time. @defaultValue nothing */
  log?: (line: string) => void;
}

/** What a crash soak saw. */
export interface CrashSoakReport {
  seed: number;
  tasks: number;
  /** Runs of tasks, resumed runs included (each tape's run plus its `resumes`). */
  runs: number;
  resumedRuns: number;
  workerKills: number;
  coordinatorKills: number;
  redisRestarts: number;
  emptyRedisRestarts: number;
  /** eddy processes started (coordinators and workers). */
  processes: number;
  results: number;
  lost: number;
  duplicatedResults: number;
  byReason: Record<string, number>;
  /** Calls recorded as started in the final tapes. */
  recordedCalls: number;
  /** Calls answered `interrupted` on resume (not run again). */
  interruptedCalls: number;
  /** Lines in the side-effect file. */
  sideEffects: number;
  /** Markers found more than once (each extra time counts). */
  duplicatedSideEffects: number;
  /** Side effects whose call is in no final tape, because Redis was restarted empty under it. */
  sideEffectsLostWithRedis: number;
  internalErrors: number;
  invalidTapes: number;
  /** Everything that broke an invariant; empty when all held. */
  violations: string[];
}

const MARKER = /fx-\d+/;

/** Runs one crash soak (see the module comment). Never throws for a broken invariant: it is in `violations`. */
export async function crashSoak(options: CrashSoakOptions): Promise<CrashSoakReport> {
  const rnd = seededRandom(options.seed);
  const say = options.log ?? (() => {});
  const cwd = mkdtempSync(join(tmpdir(), "eddy-crash-soak-"));
  const world = await startWorld(cwd, options, rnd);
  const counts = { workerKills: 0, coordinatorKills: 0, redisRestarts: 0, emptyRedisRestarts: 0 };
  const violations: string[] = [];
  try {
    const schedule = shuffle(rnd, [
      ...Array<Action>(options.workerKills).fill("worker"),
      ...Array<Action>(options.coordinatorKills).fill("coordinator"),
      ...Array<Action>(options.redisRestarts).fill("redis"),
      ...Array<Action>(options.emptyRedisRestarts ?? 0).fill("redis-empty"),
    ]);
    // Spread the breaks over the first part of the batch's work (about three units, calls and
    // results, per task), so that they all happen before it ends.
    const step = Math.max(1, Math.floor((1.5 * options.tasks) / (schedule.length + 1)));
    for (const action of schedule) {
      const target = world.progress() + 1 + Math.floor(rnd() * step);
      const reached = await world.waitFor(() => world.progress() >= target || world.finished());
      if (!reached) throw new Hang(`before a ${action} break`);
      if (world.finished()) break;
      await sleep(Math.floor(rnd() * 400));
      say(`${action} break at progress ${world.progress()}`);
      await world.act(action, rnd);
      if (action === "coordinator") counts.coordinatorKills++;
      else if (action === "redis") counts.redisRestarts++;
      else if (action === "redis-empty") counts.emptyRedisRestarts++;
    }
    const ended = await world.waitFor(() => world.finished());
    if (!ended) throw new Hang("waiting for the coordinator to finish");
    const exit = world.coordinatorExit();
    if (exit !== 0 && exit !== 1)
      violations.push(`the coordinator exited ${exit}:\n${world.coordinator().stderr.slice(-2000)}`);
  } catch (err) {
    if (!(err instanceof Hang)) throw err;
    violations.push(
      `hang (${err.message}): no progress for ${options.hangMs ?? 120_000} ms\n${world.tails()}`,
    );
  } finally {
    await world.stop();
  }
  try {
    const report = await check(options, world, counts);
    report.violations.unshift(...violations);
    report.workerKills = world.workerKills();
    return report;
  } finally {
    rmSync(cwd, { recursive: true, force: true });
  }
}

type Action = "worker" | "coordinator" | "redis" | "redis-empty";

class Hang extends Error {}

/** The soak's running parts: Redis, the mock model, the coordinator and the workers. */
interface World {
  /** Workers killed so far (some while Redis was down). */
  workerKills(): number;
  /** Side effects so far plus results so far. */
  progress(): number;
  /** The current coordinator exited by itself. */
  finished(): boolean;
  coordinatorExit(): number | null;
  coordinator(): CliProcess;
  /** Resolves true once `test()` holds, false after `hangMs` without any progress. */
  waitFor(test: () => boolean): Promise<boolean>;
  act(action: Action, rnd: () => number): Promise<void>;
  /** Every eddy process started. */
  processes: CliProcess[];
  /** The last lines of each live process's stderr (for a hang's report). */
  tails(): string;
  stop(): Promise<void>;
  effects: string;
  out: string;
  workspace: string;
  taskIds: string[];
  /** Tasks without a result when Redis was restarted empty: their tapes (their calls' records) went with it. */
  emptied: Set<string>;
}

async function startWorld(cwd: string, options: CrashSoakOptions, rnd: () => number): Promise<World> {
  const workspace = join(cwd, "workspace");
  mkdirSync(workspace);
  writeFileSync(join(workspace, "package.json"), '{"name": "crash-soak"}\n');
  const effects = join(cwd, "side-effects.log");
  writeFileSync(effects, "");
  const out = join(cwd, "out");
  const taskIds = Array.from({ length: options.tasks }, (_, i) => `t${i}`);
  writeFileSync(
    join(cwd, "tasks.jsonl"),
    taskIds.map((id, i) => `${JSON.stringify({ id, prompt: `crash soak task ${i}` })}\n`).join(""),
  );
  const server = await createMockServer({ scenario: { turns: scenarioTurns(options.tasks, rnd, effects) } });
  let dataDir = mkdtempSync(join(tmpdir(), "eddy-crash-soak-redis-"));
  let redis: RedisServer = await startRedis({ dataDir });
  const dataDirs = [dataDir];
  const emptied = new Set<string>();
  const processes: CliProcess[] = [];
  const workers: CliProcess[] = [];
  const startWorker = () => {
    const w = startCli(
      [
        "worker",
        "--queue",
        redis.url,
        "--base-url",
        server.url,
        "--model",
        "m",
        "--allow-shell",
        "--concurrency",
        String(options.workerConcurrency ?? 2),
        "--stall-timeout",
        String(options.stallTimeoutMs ?? 3000),
        "--workspace",
        workspace,
      ],
      { cwd },
    );
    processes.push(w);
    workers.push(w);
  };
  const startCoordinator = () => {
    const c = startCli(
      [
        "batch",
        "tasks.jsonl",
        "--out",
        "out",
        "--queue",
        redis.url,
        "--max-tool-calls",
        "3",
        "--workspace-per-task",
      ],
      { cwd },
    );
    processes.push(c);
    return c;
  };
  for (let i = 0; i < (options.workers ?? 2); i++) startWorker();
  let coordinator = startCoordinator();
  const lineCount = (path: string) =>
    existsSync(path)
      ? readFileSync(path, "utf8")
          .split("\n")
          .filter((l) => l !== "").length
      : 0;
  const progress = () => lineCount(effects) + lineCount(join(out, "results.jsonl"));
  const activity = () => progress() + processes.reduce((n, p) => n + p.stdout.length + p.stderr.length, 0);
  const alive = (p: CliProcess) => p.child.exitCode === null && p.child.signalCode === null;
  const kill = async (p: CliProcess) => {
    if (alive(p)) p.child.kill("SIGKILL");
    await p.exited;
  };
  // A process started just before Redis went away fails its start check (exit 2, "cannot reach
  // Redis"): it is started again, as a user or a supervisor would.
  const unreachable = (p: CliProcess) => p.child.exitCode === 2 && /cannot reach Redis/.test(p.stderr);
  const heal = () => {
    if (unreachable(coordinator)) coordinator = startCoordinator();
    for (const w of workers.filter(unreachable)) {
      workers.splice(workers.indexOf(w), 1);
      startWorker();
    }
  };
  let workerKills = 0;
  const killWorker = async (rnd: () => number) => {
    const live = workers.filter(alive);
    const victim = live[Math.floor(rnd() * live.length)];
    if (victim !== undefined) await kill(victim);
    workerKills++;
    startWorker();
  };
  return {
    workerKills: () => workerKills,
    progress,
    finished: () => !alive(coordinator),
    coordinatorExit: () => coordinator.child.exitCode,
    coordinator: () => coordinator,
    async waitFor(test) {
      let last = activity();
      let lastChange = Date.now();
      for (;;) {
        heal();
        if (test()) return true;
        await sleep(50);
        const now = activity();
        if (now !== last) {
          last = now;
          lastChange = Date.now();
        } else if (Date.now() - lastChange > (options.hangMs ?? 120_000)) return false;
      }
    },
    async act(action, rnd) {
      if (action === "worker") await killWorker(rnd);
      else if (action === "coordinator") {
        await kill(coordinator);
        coordinator = startCoordinator();
      } else {
        await redis.kill();
        const down = 200 + Math.floor(rnd() * 1000);
        if (rnd() < 0.5) {
          // A machine lost with Redis: a worker dies while Redis is away (the runs went on meanwhile).
          await sleep(down);
          await killWorker(rnd);
        } else await sleep(down);
        if (action === "redis-empty") {
          const done = new Set(readResults(out, []).map((l) => l.id));
          for (const id of taskIds) if (!done.has(id)) emptied.add(id);
          dataDir = mkdtempSync(join(tmpdir(), "eddy-crash-soak-redis-"));
          dataDirs.push(dataDir);
        }
        redis = await startRedis({ port: redis.port, dataDir });
      }
    },
    processes,
    tails: () =>
      processes
        .filter(alive)
        .map((p) => `--- ${p.child.spawnargs.slice(2, 3).join(" ")} ${p.child.pid}:\n${p.stderr.slice(-800)}`)
        .join("\n"),
    async stop() {
      for (const p of processes) await kill(p);
      await redis.kill();
      await server.close();
      for (const dir of dataDirs) rmSync(dir, { recursive: true, force: true });
      // The workers' per-task copies of the workspace (kept for the tasks that did not complete).
      const batch = join(out, "batch.json");
      if (existsSync(batch)) {
        const id = (JSON.parse(readFileSync(batch, "utf8")) as { id: string }).id;
        rmSync(join(tmpdir(), `eddy-batch-${id}`), { recursive: true, force: true });
      }
    },
    effects,
    out,
    workspace,
    taskIds,
    emptied,
  };
}

/**
 * The model's script, shared by every request in arrival order: mostly shell calls (one or two in
 * a response), each appending its own marker — `fx-N`, never used twice — to the side-effect
 * file with its task's id, between two short sleeps so a kill can land before or after the effect; some turns
 * answer "done". A run also ends `max_tool_calls` at its fourth call (`--max-tool-calls 3`).
 */
function scenarioTurns(tasks: number, rnd: () => number, effects: string): ScenarioTurn[] {
  let marker = 0;
  const call = (): ScenarioItem => ({
    type: "function_call",
    name: "shell",
    // The task's own workspace copy is named after it: the line says whose call it was.
    arguments: { command: `sleep 0.05; echo "fx-${marker++} \${PWD##*/}" >> ${effects}; sleep 0.05` },
  });
  const turns: ScenarioTurn[] = [];
  // Far more turns than the batch needs, resumed and requested-again turns included.
  for (let i = 0; i < tasks * 8 + 40; i++) {
    const r = rnd();
    if (r < 0.25) turns.push({ items: [{ type: "message", text: "done" }] });
    else turns.push({ items: r < 0.85 ? [call()] : [call(), call()] });
  }
  turns.push({ items: [{ type: "message", text: "done (the script ran out)" }], repeat: true });
  return turns;
}

interface CallRecord {
  task: string;
  started: boolean;
  /** `tool_ended` ok: the command ran to its end. */
  ran: boolean;
  interrupted: boolean;
  /** The `tool_ended` output, for a violation's message. */
  output?: string;
}

async function check(
  options: CrashSoakOptions,
  world: World,
  counts: Pick<CrashSoakReport, "workerKills" | "coordinatorKills" | "redisRestarts" | "emptyRedisRestarts">,
): Promise<CrashSoakReport> {
  const violations: string[] = [];
  const report: CrashSoakReport = {
    seed: options.seed,
    tasks: options.tasks,
    runs: 0,
    resumedRuns: 0,
    ...counts,
    processes: world.processes.length,
    results: 0,
    lost: 0,
    duplicatedResults: 0,
    byReason: {},
    recordedCalls: 0,
    interruptedCalls: 0,
    sideEffects: 0,
    duplicatedSideEffects: 0,
    sideEffectsLostWithRedis: 0,
    internalErrors: 0,
    invalidTapes: 0,
    violations,
  };
  const lines = readResults(world.out, violations);
  report.results = lines.length;
  for (const id of world.taskIds) {
    const n = lines.filter((l) => l.id === id).length;
    if (n === 0) report.lost++;
    if (n > 1) report.duplicatedResults += n - 1;
  }
  for (const line of lines) report.byReason[line.reason] = (report.byReason[line.reason] ?? 0) + 1;
  if (report.lost > 0) violations.push(`${report.lost} tasks without a result`);
  if (report.duplicatedResults > 0) violations.push(`${report.duplicatedResults} duplicated results`);

  const effectsBefore = readFileSync(world.effects, "utf8");
  const calls = new Map<string, CallRecord>();
  for (const line of lines) {
    const tape = await checkTape(line, world, violations, report);
    if (tape !== undefined) recordCalls(tape, line.id, calls);
  }
  if (readFileSync(world.effects, "utf8") !== effectsBefore)
    violations.push("replaying the tapes ran a side effect");
  countSideEffects(effectsBefore, calls, world.emptied, report);
  countInternalErrors(world, report);
  return report;
}

function readResults(out: string, violations: string[]): ResultLine[] {
  const path = join(out, "results.jsonl");
  if (!existsSync(path)) {
    violations.push("no results.jsonl");
    return [];
  }
  const lines: ResultLine[] = [];
  for (const text of readFileSync(path, "utf8").split("\n")) {
    if (text === "") continue;
    try {
      lines.push(JSON.parse(text) as ResultLine);
    } catch {
      violations.push(`results.jsonl has an unreadable line: ${text.slice(0, 120)}`);
    }
  }
  return lines;
}

/** Reads, checks and replays one result's tape; counts its runs. */
async function checkTape(
  line: ResultLine,
  world: World,
  violations: string[],
  report: CrashSoakReport,
): Promise<Tape | undefined> {
  const bad = (why: string) => {
    report.invalidTapes++;
    violations.push(`task ${line.id}: ${why}`);
  };
  if (typeof line.tape !== "string") {
    bad(`no tape (reason ${line.reason}, ${line.error?.message ?? "no error"})`);
    return undefined;
  }
  let tape: Tape;
  try {
    tape = readTape(join(world.out, line.tape));
  } catch (err) {
    bad(`the tape does not read: ${(err as Error).message}`);
    return undefined;
  }
  const resumes = tape.header.resumes?.length ?? 0;
  report.runs += 1 + resumes;
  report.resumedRuns += resumes;
  for (const problem of tapeViolations(tape.frames)) bad(problem);
  const { tools, disabled } = createBuiltinTools({ allowShell: true });
  try {
    const { verdict } = await replayTape(tape, {
      registry: createToolRegistry(tools, { disabled }),
      workspace: world.workspace,
    });
    if (!verdict.match) bad(`the tape does not replay (at frame ${verdict.index})`);
  } catch (err) {
    bad(`the replay threw: ${(err as Error).message}`);
  }
  return tape;
}

/** The invariants of any finished tape, resumed or not. */
export function tapeViolations(frames: readonly Frame[]): string[] {
  const out: string[] = [];
  const gap = frames.findIndex((f, i) => f.seq !== i);
  if (gap !== -1) out.push(`frame ${gap} has seq ${frames[gap]?.seq}`);
  if (frames.at(-1)?.type !== "run_ended") out.push("the last frame is not run_ended");
  if (frames.filter((f) => f.type === "run_ended").length !== 1) out.push("run_ended not exactly once");
  const started = frames.flatMap((f) => (f.type === "tool_started" ? [`${f.turn}:${f.call_id}`] : []));
  if (new Set(started).size !== started.length) out.push("a call was started twice");
  return out;
}

/** Each call's marker, and whether its tape says it started, ran, or was answered `interrupted`. */
function recordCalls(tape: Tape, task: string, calls: Map<string, CallRecord>): void {
  const markerOf = new Map<string, string>();
  for (const f of tape.frames) {
    const key = "call_id" in f ? `${f.turn}:${f.call_id}` : "";
    if (f.type === "tool_call") {
      const marker = f.arguments.match(MARKER)?.[0];
      if (marker !== undefined) markerOf.set(key, marker);
    } else if (f.type === "tool_started" || f.type === "tool_ended") {
      const marker = markerOf.get(key);
      if (marker === undefined) continue;
      const record = calls.get(marker) ?? { task, started: false, ran: false, interrupted: false };
      if (f.type === "tool_started") record.started = true;
      else {
        record.output = f.output;
        if (/"code":"interrupted"/.test(f.output)) record.interrupted = true;
        else if (f.ok) record.ran = true;
      }
      calls.set(marker, record);
    }
  }
}

function countSideEffects(
  effects: string,
  calls: Map<string, CallRecord>,
  emptied: ReadonlySet<string>,
  report: CrashSoakReport,
): void {
  const seen = new Map<string, number>();
  const taskOf = new Map<string, string>();
  for (const line of effects.split("\n")) {
    const [marker, task = "?"] = line.split(" ");
    if (marker === undefined || marker === "") continue;
    seen.set(marker, (seen.get(marker) ?? 0) + 1);
    taskOf.set(marker, task);
  }
  report.sideEffects = [...seen.values()].reduce((a, b) => a + b, 0);
  report.recordedCalls = [...calls.values()].filter((c) => c.started).length;
  report.interruptedCalls = [...calls.values()].filter((c) => c.interrupted).length;
  for (const [marker, n] of seen) {
    if (n > 1) {
      report.duplicatedSideEffects += n - 1;
      report.violations.push(`side effect ${marker} ran ${n} times (task ${taskOf.get(marker)})`);
    }
    const call = calls.get(marker);
    if (call !== undefined && call.task !== taskOf.get(marker))
      report.violations.push(
        `side effect ${marker} ran in task ${taskOf.get(marker)}, its tape is task ${call.task}'s`,
      );
    if (call?.started !== true) {
      if (emptied.has(taskOf.get(marker) ?? "")) report.sideEffectsLostWithRedis += n;
      else
        report.violations.push(
          `side effect ${marker} of task ${taskOf.get(marker)} ran but no tape records its call`,
        );
    }
  }
  for (const [marker, call] of calls) {
    if (call.ran && !seen.has(marker))
      report.violations.push(
        `task ${call.task}: call ${marker} is recorded as run but left no side effect: ${call.output?.slice(0, 300)}`,
      );
  }
}

function countInternalErrors(world: World, report: CrashSoakReport): void {
  const texts = world.processes.flatMap((p) => [p.stdout, p.stderr]);
  const results = join(world.out, "results.jsonl");
  if (existsSync(results)) texts.push(readFileSync(results, "utf8"));
  for (const text of texts) {
    const n = text.match(/internal error|internal_error/gi)?.length ?? 0;
    report.internalErrors += n;
    if (n > 0) report.violations.push(`internal error in output:\n${text.slice(-1500)}`);
  }
  for (const p of world.processes) {
    if (/Unhandled error event|^\s+at .+:\d+:\d+\)?$/m.test(p.stderr))
      report.violations.push(`a stack trace on stderr:\n${p.stderr.slice(-1500)}`);
  }
}

function shuffle<T>(rnd: () => number, xs: T[]): T[] {
  for (let i = xs.length - 1; i > 0; i--) {
    const j = Math.floor(rnd() * (i + 1));
    [xs[i], xs[j]] = [xs[j] as T, xs[i] as T];
  }
  return xs;
}

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

/** The report as a few lines (the seed first: `--seed` it to run the same soak again). */
export function formatCrashReport(r: CrashSoakReport): string {
  const reasons = Object.entries(r.byReason)
    .map(([k, v]) => `${k} ${v}`)
    .join(", ");
  return [
    `crash soak seed ${r.seed}: ${r.tasks} tasks, ${r.runs} runs (${r.resumedRuns} resumed), ${r.processes} eddy processes`,
    `  breaks: ${r.workerKills} worker kill -9, ${r.coordinatorKills} coordinator kill -9, ${r.redisRestarts} Redis restarts (same data), ${r.emptyRedisRestarts} Redis restarts (empty)`,
    `  results ${r.results} (${reasons}), lost ${r.lost}, duplicated ${r.duplicatedResults}`,
    `  calls recorded ${r.recordedCalls}, answered interrupted ${r.interruptedCalls}; side effects ${r.sideEffects}, duplicated ${r.duplicatedSideEffects}, lost with an emptied Redis ${r.sideEffectsLostWithRedis}`,
    `  internal errors ${r.internalErrors}, invalid tapes ${r.invalidTapes}, violations ${r.violations.length}`,
    ...r.violations.slice(0, 20).map((v) => `  ✗ ${v}`),
  ].join("\n");
}
