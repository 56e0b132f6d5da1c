/**
 * The runs `eddy serve` holds: started from a partial RunSpec merged over the server's own, checked
 * against the server's Policy (a request never widens it), recorded as tapes in the server's data
 * folder (`DATA/runs/ID.tape`), watched through their event logs (run-log.ts), cancelled, and —
 * when the policy defers approvals — decided and resumed from their tapes (batch/resume.ts). A
 * server started again finds its runs from their tapes: finished ones are readable, one whose
 * tape has no `run_ended` (the process died) is listed `interrupted`.
 */
import { randomUUID } from "node:crypto";
import { readdirSync } from "node:fs";
import { join } from "node:path";
import { resumeRun } from "../batch/resume.js";
import { fileTapeStore, type TapeStore, type TapeWriter } from "../batch/tape-store.js";
import type { ThreadHold } from "../context/thread-hold.js";
import { createThreadStore, type ThreadStore } from "../context/threads.js";
import { describeError, EddyError } from "../errors.js";
import type { Frame, McpServerSummary, RunEndedFrame, RunEndReason } from "../frames/frame.js";
import type { ToolHooks } from "../loop/hooks.js";
import { type InstructionFile, withInstructionFiles } from "../loop/instruction-files.js";
import type { RunDeps, RunHandle } from "../loop/options.js";
import { assertPolicy, type Policy } from "../loop/policy.js";
import { runAgent } from "../loop/run.js";
import {
  budgetOverruns,
  mergeRunSpecs,
  type PartialRunSpec,
  type RunSpec,
  resolveRunSpec,
} from "../loop/run-spec.js";
import { runAgentOnThread } from "../loop/thread-run.js";
import { httpProblem, invalidRequest, tooManyRequests } from "../mock/http-error.js";
import type { Usage } from "../protocol/types.js";
import type { Provider } from "../provider/provider.js";
import { createTapeHeader, type TapeHeaderExtras } from "../replay/header.js";
import { TapeWriteGuard } from "../replay/recorder.js";
import { readTape, type Tape, type TapeHeader } from "../replay/tape.js";
import { summarizeTape, type TapeSummary } from "../replay/tape-summary.js";
import type { ToolRegistry } from "../tools/registry.js";
import { safeJson } from "../util/control-chars.js";
import { createRunLog, LoadedFrames, type RunLog, storedRunLog } from "./run-log.js";

/** What the server's runs run with: its provider, tools, spec and policy (from its own invocation). */
export interface ServeRuntime {
  provider: Provider;
  /** The server's spec: a request's fields are merged over it. @defaultValue {} */
  spec?: PartialRunSpec;
  /** What the server allows; a request asking for more is refused (403). */
  policy: Policy;
  /** A fresh tool registry for one run (disposed when the run ends). */
  tools: () => ToolRegistry;
  /** Where runs work, and whose `.eddy/threads` the thread endpoints read. */
  workspace: string;
  /**
   * The server's data folder: the runs' tapes go to `DATA/runs/ID.tape`, those of the Open
   * Responses face's runs to `DATA/responses/RESPONSE-ID_….tape`.
   */
  dataDir: string;
  /** Values masked in every frame and tape. @defaultValue none */
  secrets?: readonly string[];
  /**
   * Where tapes are kept, given a folder of the data folder (`runs`, `responses`) and the secrets to
   * mask. @defaultValue `fileTapeStore` (files `DIR/ID.tape`)
   */
  tapeStore?: (dir: string, secrets: readonly string[]) => TapeStore;
  /**
   * Hears of a run whose tape could not be written (the run was cancelled): the full error, for the
   * server's operator; a client is told only its code. @defaultValue none
   */
  onTapeError?: (runId: string, error: unknown) => void;
  /**
   * Hears, at start, of a tape in `DATA/runs` the server does not list: a file not named like a run
   * it made, or one it cannot read (not a regular file, too large, not a tape): `reason` is one
   * line naming the file. The file stays where it is, untouched. @defaultValue none
   */
  onSkippedTape?: (file: string, reason: string) => void;
  mcpServers?: readonly McpServerSummary[];
  /**
   * Reads the AGENTS.md files of the server's workspace (`findInstructionFiles`) for each fresh run,
   * put before its instructions as `eddy run` puts them; a request never names files (its
   * `instruction_files` is dropped). Undefined with `--no-agents-md`. @defaultValue none read
   */
  instructionFiles?: (workspace: string) => readonly InstructionFile[];
  /** The server's tool-call hooks (the config file's `hooks`): every run's, a request never sets them. @defaultValue none */
  hooks?: ToolHooks;
  /** Recorded in every tape header (validation flag, provider profile name, MCP tools). @defaultValue none */
  tapeExtras?: Omit<TapeHeaderExtras, "provider" | "policy" | "mcpServers">;
  /** Runs going on at once; one more is refused with 429. @defaultValue 4 */
  maxConcurrentRuns?: number;
  /**
   * Longest a run (a resumed run: each segment) of the server, or of its Open Responses face, goes
   * on before the server cancels it (`cancel_requested` names the deadline; it ends `cancelled`):
   * a provider that trickles a byte now and then never trips its idle timeout, so without this
   * one run could hold a place of `maxConcurrentRuns` for ever. @defaultValue SERVE_RUN_TIMEOUT_MS (1 hour)
   */
  runTimeoutMs?: number;
  /** @defaultValue Date.now */
  clock?: () => number;
}

/** The default of `ServeRuntime.runTimeoutMs`: an hour. */
export const SERVE_RUN_TIMEOUT_MS = 3_600_000;

/**
 * Cancels `handle` once it has gone on for the server's `runTimeoutMs`; returns what stops that
 * clock (call it when the run has ended).
 */
export function runDeadline(runtime: ServeRuntime, handle: RunHandle): () => void {
  const ms = runtime.runTimeoutMs ?? SERVE_RUN_TIMEOUT_MS;
  const timer = setTimeout(
    () =>
      handle.cancel(`the run went on longer than this server allows (${ms} ms, eddy serve --run-timeout)`),
    ms,
  );
  timer.unref();
  return () => clearTimeout(timer);
}

/** How a served run stands: going on, ended (its `run_ended.reason`), or cut off by a server that died. */
export type RunStatus = "running" | "interrupted" | RunEndReason;

/** One run as the server holds it. */
export interface ServedRun {
  readonly id: string;
  status: RunStatus;
  readonly createdAt: number;
  /**
   * What the server needs of the run's spec (its model and thread); the whole spec is in its tape's
   * header. Keeping the spec held every run's input (up to the body limit) for the server's life:
   * 320 runs of 900 KB, 485 MB.
   */
  spec: RunLabel | undefined;
  /** Its events: in memory while it runs; read from its tape once it has ended (`storedRunLog`). */
  log: RunLog;
  ended?: RunEndedFrame;
  handle?: RunHandle;
  /** Decisions given so far for the pending calls (resumes once every one has one). */
  decisions: Record<string, "allow" | "deny">;
  /** Steering messages waiting for the run's next turn boundary (`RunDeps.steering`). */
  steering: string[];
  /**
   * Steering messages accepted while the run went on that never reached the model: the run ended
   * (cancelled, a limit, a failure, approval) before its next turn boundary. Shown in the run's
   * view as `undelivered_steering`, so a client knows which to send again.
   */
  undelivered?: string[];
  /** Settles once the current segment of the run has ended and its tape is closed. */
  done: Promise<void>;
}

/** The fields of a served run's spec the server keeps (`ServedRun.spec`). */
export type RunLabel = Pick<RunSpec, "model" | "thread">;

/** `spec`'s label: its model and thread, nothing else held. */
function labelOf(spec: RunSpec): RunLabel {
  return spec.thread === undefined ? { model: spec.model } : { model: spec.model, thread: spec.thread };
}

/** The public view of a run (`GET /v1/runs/ID`): no spec internals, no secrets. */
export interface RunView {
  id: string;
  status: RunStatus;
  created_at: number;
  model: string | null;
  thread: string | null;
  events: number;
  usage: Usage | null;
  turns: number;
  tool_calls: number;
  output_text: string;
  result?: unknown;
  error?: { code: string; message: string };
  pending_calls?: string[];
  /** Steering messages the run accepted but ended before sending (see `ServedRun.undelivered`). */
  undelivered_steering?: string[];
}

/** The server's runs (see the module comment). */
export interface RunService {
  readonly runtime: ServeRuntime;
  readonly threads: ThreadStore;
  /** Starts a run from a request's partial spec (already checked by the caller). */
  start(request: PartialRunSpec): Promise<ServedRun>;
  get(id: string): ServedRun | undefined;
  list(): ServedRun[];
  cancel(id: string): ServedRun;
  /**
   * Records a decision for a pending call; the run resumes once every pending call has one (a run
   * on a thread another process holds: `thread_busy`, the decision not kept).
   */
  decide(id: string, callId: string, decision: "allow" | "deny"): Promise<ServedRun>;
  /** Queues a message for a running run's next turn boundary (409 when it is not running). */
  steer(id: string, message: string): ServedRun;
  /** Resumes an `interrupted` run from its tape under the server's policy (409 when it is not interrupted). */
  resume(id: string): Promise<ServedRun>;
  view(run: ServedRun): RunView;
  /** Runs going on now. */
  running(): number;
  /** Cancels every running run and waits until their tapes are closed. */
  shutdown(reason?: string): Promise<void>;
}

/** Run ids the server makes (and the only ones its routes accept). */
export const RUN_ID_PATTERN = /^run_[A-Za-z0-9]{1,64}$/;

/** The tapes of the server's runs, in its data folder; a folder it cannot make is the user's to fix. */
function openTapes(runtime: ServeRuntime): TapeStore {
  const dir = join(runtime.dataDir, "runs");
  try {
    return (runtime.tapeStore ?? fileTapeStore)(dir, runtime.secrets ?? []);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException | null)?.code;
    if (typeof code !== "string") throw err;
    throw new EddyError(
      "invalid_config",
      `cannot create the data folder ${dir} (${code}): eddy serve keeps its runs' tapes there; choose another with --data-dir (ServeRuntime.dataDir)`,
      { fault: "user" },
    );
  }
}

/** The server's runs, with those its data folder's tapes hold already. */
export function createRunService(runtime: ServeRuntime): RunService {
  const tapes = openTapes(runtime);
  const threads = createThreadStore({ workspace: runtime.workspace });
  const runs = new Map<string, ServedRun>();
  const loaded = new LoadedFrames((path) => readTape(path).frames);
  for (const run of restoreRuns(join(runtime.dataDir, "runs"), loaded, runtime.onSkippedTape))
    runs.set(run.id, run);
  const clock = runtime.clock ?? Date.now;
  const running = () => [...runs.values()].filter((r) => r.status === "running").length;
  const ctx: ServiceContext = { runtime, tapes, threads, runs, clock, running, loaded };
  return {
    runtime,
    threads,
    start: (request) => startRun(ctx, request),
    get: (id) => (RUN_ID_PATTERN.test(id) ? runs.get(id) : undefined),
    list: () => [...runs.values()].sort((a, b) => b.createdAt - a.createdAt),
    cancel: (id) => cancelRun(ctx, id),
    decide: (id, callId, decision) => decideCall(ctx, id, callId, decision),
    steer: (id, message) => steerRun(ctx, id, message),
    resume: (id) => resumeInterrupted(ctx, id),
    view: viewOf,
    running,
    async shutdown(reason = "the server is shutting down") {
      const going = [...runs.values()].filter((r) => r.status === "running");
      for (const run of going) run.handle?.cancel(reason);
      await Promise.all(going.map((r) => r.done));
    },
  };
}

interface ServiceContext {
  runtime: ServeRuntime;
  tapes: TapeStore;
  threads: ThreadStore;
  runs: Map<string, ServedRun>;
  clock: () => number;
  running: () => number;
  /** Frames of ended runs read back from their tapes (the last few kept). */
  loaded: LoadedFrames;
}

/** 429 when the server runs as many runs as it may. */
function assertRoom(ctx: ServiceContext): void {
  const max = ctx.runtime.maxConcurrentRuns ?? 4;
  if (ctx.running() >= max)
    throw tooManyRequests(
      "too_many_runs",
      `this server runs at most ${max} runs at once; retry when one has ended`,
      2,
    );
}

/**
 * 400 naming every budget `request` asks above the server's (its `--max-turns`, …, or the default it
 * left alone; `budgetOverruns`): a client asking for more than the server gives is told so, not
 * lowered behind its back. Asking for less, or leaving a budget out, is honoured
 * (docs/decisions.md #41).
 */
function assertWithinBudgets(request: PartialRunSpec, local: PartialRunSpec): void {
  const overruns = budgetOverruns(request, local);
  const first = overruns[0];
  if (first === undefined) return;
  const each = overruns.map(
    (o) =>
      `${o.field} ${o.asked} is above this server's limit of ${o.limit} (ask for at most ${o.limit}, or leave ${o.field} out to run with ${o.limit})`,
  );
  throw invalidRequest(each.join("; "), first.field, "budget_above_limit");
}

/**
 * 400 for a budget above the server's, 429 when the server runs as many runs as it may, 403 beyond
 * its policy, else the run, started.
 */
async function startRun(ctx: ServiceContext, request: PartialRunSpec): Promise<ServedRun> {
  const { runtime } = ctx;
  const local = runtime.spec ?? {};
  assertWithinBudgets(request, local);
  assertRoom(ctx);
  const id = `run_${randomUUID().replace(/-/g, "")}`;
  const spec = resolveRunSpec(
    { ...withServerInstructions(runtime, mergeRunSpecs(local, request)), run_id: id },
    "request body",
  );
  const registry = runtime.tools();
  try {
    assertPolicy(
      spec.tools ?? registry.names(),
      runtime.policy,
      "this server does not allow it",
      spec.hosted_tools,
    );
  } catch (err) {
    await registry.dispose();
    throw err;
  }
  const run: ServedRun = {
    id,
    status: "running",
    createdAt: ctx.clock(),
    spec,
    log: createRunLog(),
    decisions: {},
    steering: [],
    done: Promise.resolve(),
  };
  const tape = tapeSink(run, runtime.onTapeError);
  const deps: RunDeps = {
    ...depsOf(runtime, registry),
    onFrame: (f) => deliver(run, tape, f),
    steering: () => run.steering.splice(0),
  };
  let handle: RunHandle;
  // A run on a thread holds it while it runs: a chat or a run of another process on it is refused.
  let hold: ThreadHold | undefined;
  try {
    if (spec.thread !== undefined) hold = await ctx.threads.hold(spec.thread, "eddy serve");
    handle =
      spec.thread === undefined
        ? runAgent(spec, deps)
        : await runAgentOnThread(spec, deps, {
            store: ctx.threads,
            tape: ctx.tapes.location(id),
            held: true,
          });
  } catch (err) {
    await hold?.release();
    await registry.dispose();
    throw err;
  }
  run.spec = labelOf(handle.spec);
  // A run on a thread has emitted its first frames by now (they wait in the sink).
  let writer: TapeWriter;
  try {
    writer = ctx.tapes.open(id, tapeHeaderOf(runtime, handle.spec), "now");
  } catch (err) {
    await abandoned(handle, err);
    await hold?.release();
    await registry.dispose();
    throw err;
  }
  openTape(tape, writer);
  ctx.runs.set(id, run);
  const stop = runDeadline(runtime, handle);
  run.done = drive(run, handle, writer, registry, (closed) => {
    if (closed && tape.guard.problem === undefined) storeFinishedLog(ctx, run);
  })
    .finally(stop)
    .finally(() => hold?.release().catch(() => {}));
  return run;
}

/**
 * A fresh run that ended, its tape whole: its frames leave memory and are read back from the tape
 * when a watcher asks (`storedRunLog`), as a restarted server reads them — a long-lived server held
 * every frame of every run it had served. Only for tapes in the data folder's files, and only for
 * a fresh run's log, whose event ids are its tape's `seq`s (a resumed run's log is not the tape's
 * frames: `deliver` renumbers them, so its `seq`s cannot tell).
 */
function storeFinishedLog(ctx: ServiceContext, run: ServedRun): void {
  if (ctx.runtime.tapeStore !== undefined) return;
  const { log } = run;
  if (log.frames.at(-1)?.seq !== log.count - 1) return;
  const path = ctx.tapes.location(run.id);
  run.log = storedRunLog(log.count, () => ctx.loaded.frames(path));
}

/**
 * A fresh run's spec with the server's AGENTS.md files before its instructions (as `eddy run`
 * adds them), read now so an edited file counts from the next run on; whatever the request claimed
 * as `instruction_files` is dropped: which files are read is the server's to say.
 */
export function withServerInstructions(runtime: ServeRuntime, spec: PartialRunSpec): PartialRunSpec {
  const { instruction_files: _claimed, ...own } = spec;
  if (runtime.instructionFiles === undefined) return own;
  return { ...own, ...withInstructionFiles(own.instructions, runtime.instructionFiles(runtime.workspace)) };
}

/** What every run of the server runs with: its provider, policy, workspace, secrets, MCP servers and hooks. */
export function depsOf(runtime: ServeRuntime, registry: ToolRegistry): RunDeps {
  const deps: RunDeps = {
    provider: runtime.provider,
    tools: registry,
    policy: runtime.policy,
    workspace: runtime.workspace,
  };
  if (runtime.secrets !== undefined) deps.secrets = runtime.secrets;
  if (runtime.mcpServers !== undefined) deps.mcpServers = runtime.mcpServers;
  if (runtime.hooks !== undefined) deps.hooks = runtime.hooks;
  return deps;
}

/** The tape header of a run of the server (its provider, policy and MCP servers recorded for audit). */
export function tapeHeaderOf(
  runtime: ServeRuntime,
  spec: RunSpec,
  extras: Pick<TapeHeaderExtras, "clientTools"> = {},
): TapeHeader {
  return createTapeHeader(spec, {
    ...runtime.tapeExtras,
    ...extras,
    provider: runtime.provider,
    policy: runtime.policy,
    ...(runtime.mcpServers === undefined ? {} : { mcpServers: runtime.mcpServers }),
  });
}

/**
 * A segment's tape: its writer (once open), the frames that came before it opened (a run on a
 * thread starts while its header is still being made), and the guard that cancels the run when a
 * write fails.
 */
interface TapeSink {
  writer: TapeWriter | undefined;
  early: Frame[];
  guard: TapeWriteGuard;
}

/** The segment's tape is open: the frames that came before go on it first. */
function openTape(tape: TapeSink, writer: TapeWriter): void {
  for (const frame of tape.early.splice(0)) tape.guard.write(() => writer.write(frame));
  tape.writer = writer;
}

/** The tape of a segment of `run` (a fresh run, or one resumed after a decision). */
function tapeSink(run: ServedRun, onError: ServeRuntime["onTapeError"]): TapeSink {
  return {
    writer: undefined,
    early: [],
    guard: new TapeWriteGuard((problem, error) => {
      onError?.(run.id, error);
      run.handle?.cancel(`eddy serve could not record this run's tape: ${problem}`);
    }),
  };
}

/**
 * A frame of a served run: onto its tape, then to its watchers. A tape that cannot be written (a
 * full disk) stops the run — a served run is never left unrecorded — while its watchers still get
 * every frame to `run_ended`. In the log a frame's `seq` is its position: a resumed run's tape
 * numbers its new frames from the resume point, before frames its watchers already saw (the
 * `run_ended: awaiting_approval`), so there they are renumbered to go on after the log's last.
 */
function deliver(run: ServedRun, tape: TapeSink, frame: Frame, skipBelow = 0): void {
  if (tape.writer !== undefined) tape.guard.write(() => tape.writer?.write(frame));
  else tape.early.push(frame);
  if (frame.seq < skipBelow) return;
  const seq = run.log.count;
  const logged = frame.seq === seq ? frame : ({ ...frame, seq } as Frame);
  if (logged.type === "run_ended") run.ended = logged;
  run.log.append(logged);
}

/**
 * Runs the handle to its end, then records how it ended and closes the tape; `ended` hears whether
 * the tape closed without a lost write.
 */
async function drive(
  run: ServedRun,
  handle: RunHandle,
  writer: TapeWriter,
  registry: ToolRegistry,
  ended?: (recorded: boolean) => void,
) {
  run.handle = handle;
  let recorded = true;
  try {
    for await (const _ of handle);
    await handle.result;
  } catch {
    // The run's own failure is in its frames (run_ended); a resume that does not reproduce is too.
  } finally {
    await writer.close().catch(() => {
      recorded = false;
    });
    await registry.dispose();
    delete run.handle;
    run.status = run.ended?.reason ?? "failed";
    run.decisions = {};
    if (run.steering.length > 0) run.undelivered = [...(run.undelivered ?? []), ...run.steering];
    run.steering = [];
    run.log.close();
    ended?.(recorded);
  }
}

function mustGet(ctx: ServiceContext, id: string): ServedRun {
  const run = RUN_ID_PATTERN.test(id) ? ctx.runs.get(id) : undefined;
  if (run === undefined)
    throw httpProblem({
      status: 404,
      error: {
        type: "not_found",
        code: "run_not_found",
        message: `no run ${safeJson(id)} on this server`,
        param: null,
      },
    });
  return run;
}

function conflict(message: string): EddyError {
  return httpProblem({
    status: 409,
    error: { type: "invalid_request_error", code: "conflict", message, param: null },
  });
}

function cancelRun(ctx: ServiceContext, id: string): ServedRun {
  const run = mustGet(ctx, id);
  if (run.status !== "running") throw conflict(`run ${id} is not running (it is ${run.status})`);
  run.handle?.cancel("cancelled by a client of eddy serve");
  return run;
}

/** Records a decision; once every pending call has one, the run goes on from its tape. */
async function decideCall(
  ctx: ServiceContext,
  id: string,
  callId: string,
  decision: "allow" | "deny",
): Promise<ServedRun> {
  const run = mustGet(ctx, id);
  const pending = run.ended?.pending_calls ?? [];
  if (run.status !== "awaiting_approval")
    throw conflict(`run ${id} is not awaiting approval (it is ${run.status})`);
  if (!pending.includes(callId))
    throw httpProblem({
      status: 400,
      error: {
        type: "invalid_request_error",
        code: "unknown_call",
        // Both ids are others' text (the client's, the model's): C1 and direction characters escaped.
        message: `call_id: run ${id} has no call ${safeJson(callId)} awaiting approval (pending: ${pending.map((c) => safeJson(c)).join(", ")})`,
        param: "call_id",
      },
    });
  run.decisions[callId] = decision;
  if (pending.every((c) => run.decisions[c] !== undefined))
    await resume(ctx, run).catch((err: unknown) => {
      delete run.decisions[callId];
      throw err;
    });
  return run;
}

/** Steering messages one run may have waiting (429 beyond). */
const MAX_STEERING = 16;

function steerRun(ctx: ServiceContext, id: string, message: string): ServedRun {
  const run = mustGet(ctx, id);
  if (run.status !== "running" || run.handle === undefined)
    throw conflict(`run ${id} is not running (it is ${run.status}): a message can only steer a running run`);
  if (run.steering.length >= MAX_STEERING)
    throw tooManyRequests(
      "too_many_steering_messages",
      `run ${id} has ${MAX_STEERING} steering messages waiting for its next turn; wait for them to be sent`,
      2,
    );
  run.steering.push(message);
  return run;
}

/** An `interrupted` run (the server died mid-run) resumed from its tape under the server's policy. */
async function resumeInterrupted(ctx: ServiceContext, id: string): Promise<ServedRun> {
  const run = mustGet(ctx, id);
  if (run.status !== "interrupted")
    throw conflict(
      `run ${id} is not interrupted (it is ${run.status}): only a run the server died in can be resumed${run.status === "awaiting_approval" ? " (decide its pending calls instead)" : ""}`,
    );
  assertRoom(ctx);
  await resume(ctx, run);
  return run;
}

/**
 * The tape of a run to resume. One that no longer reads is the server's problem, not the client's:
 * a 500 whose reason (with the data folder's path) goes to the server's log only.
 */
function recordedTape(ctx: ServiceContext, id: string): Tape {
  try {
    return readTape(ctx.tapes.location(id));
  } catch (err) {
    throw new EddyError("tape_invalid", `run ${id} cannot be resumed: ${describeError(err)}`, {
      fault: "system",
      cause: err,
    });
  }
}

/**
 * The run of its tape resumed under the server's policy: an `awaiting_approval` one with its
 * decisions, an interrupted one with the at-most-once rule for calls that had started
 * (batch/resume.ts). Its new frames are appended to its event log after those it has. A run on a
 * thread holds it again while it goes on, and appends its new outcome to the thread's log.
 */
async function resume(ctx: ServiceContext, run: ServedRun): Promise<void> {
  const { runtime } = ctx;
  const recorded = recordedTape(ctx, run.id);
  const before = run.status;
  // Running from now: a second decision or resume arriving while the thread is taken is a 409.
  run.status = "running";
  const thread = recorded.header.spec.thread;
  let hold: ThreadHold | undefined;
  try {
    if (thread !== undefined) hold = await ctx.threads.hold(thread, "eddy serve");
  } catch (err) {
    run.status = before;
    throw err;
  }
  const registry = runtime.tools();
  const tape = tapeSink(run, runtime.onTapeError);
  let skipBelow = Number.POSITIVE_INFINITY;
  let handle: ReturnType<typeof resumeRun>;
  try {
    handle = resumeRun(recorded, {
      provider: runtime.provider,
      registry,
      workspace: runtime.workspace,
      policy: runtime.policy,
      // Its tape is the server's own, but it lies on disk: its budgets stay within the server's.
      budgets: runtime.spec ?? {},
      decide: { ...run.decisions },
      ...(runtime.secrets === undefined ? {} : { secrets: runtime.secrets }),
      ...(runtime.hooks === undefined ? {} : { hooks: runtime.hooks }),
      onFrame: (f) => deliver(run, tape, f, skipBelow),
      onResumed: () => tape.writer?.commit(),
      steering: () => run.steering.splice(0),
      thread: { store: ctx.threads, tape: ctx.tapes.location(run.id) },
    });
  } catch (err) {
    run.status = before;
    void registry.dispose();
    await hold?.release();
    throw err;
  }
  // Reproduced frames (below the resume point) are in the log already.
  skipBelow = handle.point.at_seq;
  let writer: TapeWriter;
  try {
    writer = ctx.tapes.open(run.id, handle.header, "on_commit");
  } catch (err) {
    skipBelow = Number.POSITIVE_INFINITY; // the abandoned part never reaches the run's log
    await abandoned(handle, err);
    run.status = before;
    await registry.dispose();
    await hold?.release();
    throw err;
  }
  openTape(tape, writer);
  delete run.ended;
  run.log.reopen();
  const stop = runDeadline(runtime, handle);
  run.done = drive(run, handle, writer, registry)
    .finally(stop)
    .finally(() => hold?.release().catch(() => {}));
}

/**
 * A run started whose tape could not be opened: cancelled before it asks or does anything and
 * waited for, never left running unrecorded (the request that started it fails with the error).
 */
async function abandoned(handle: RunHandle, err: unknown): Promise<void> {
  handle.cancel(`its tape could not be opened: ${describeError(err)}`);
  await handle.result.catch(() => {});
}

function viewOf(run: ServedRun): RunView {
  const ended = run.ended;
  const view: RunView = {
    id: run.id,
    status: run.status,
    created_at: run.createdAt,
    model: run.spec?.model ?? null,
    thread: run.spec?.thread ?? null,
    events: run.log.count,
    usage: ended?.usage ?? null,
    turns: ended?.turns ?? 0,
    tool_calls: ended?.tool_calls ?? 0,
    output_text: ended?.output_text ?? "",
  };
  if (ended?.result !== undefined) view.result = ended.result;
  if (ended?.error !== undefined) view.error = { code: ended.error.code, message: ended.error.message };
  if (ended?.pending_calls !== undefined) view.pending_calls = ended.pending_calls;
  if (run.undelivered !== undefined) view.undelivered_steering = [...run.undelivered];
  return view;
}

/**
 * The runs whose tapes are in `dir`, listed from each tape's summary (its header and ends,
 * replay/tape-summary.ts): their frames are read only when a watcher asks for them (`loaded`). A
 * tape that cannot be listed is left out, and named to `onSkipped`.
 */
function restoreRuns(
  dir: string,
  loaded: LoadedFrames,
  onSkipped: ServeRuntime["onSkippedTape"],
): ServedRun[] {
  let names: string[];
  try {
    names = readdirSync(dir).filter((n) => n.endsWith(".tape"));
  } catch {
    return [];
  }
  const found: ServedRun[] = [];
  for (const name of names) {
    const id = name.slice(0, -".tape".length);
    const path = join(dir, name);
    if (!RUN_ID_PATTERN.test(id)) {
      onSkipped?.(path, `${path}: its name is not that of a run this server makes (run_ID.tape)`);
      continue;
    }
    let summary: TapeSummary;
    try {
      summary = summarizeTape(path);
    } catch (err) {
      onSkipped?.(path, describeError(err));
      continue;
    }
    found.push(restoredRun(id, summary, () => loaded.frames(path)));
  }
  return found;
}

function restoredRun(id: string, summary: TapeSummary, load: () => Frame[]): ServedRun {
  const ended = summary.last?.type === "run_ended" ? summary.last : undefined;
  const run: ServedRun = {
    id,
    status: ended?.reason ?? "interrupted",
    createdAt: summary.first?.ts ?? 0,
    spec: labelOf(summary.header.spec),
    log: storedRunLog(summary.frames, load),
    decisions: {},
    steering: [],
    done: Promise.resolve(),
  };
  if (ended !== undefined) run.ended = ended;
  return run;
}
