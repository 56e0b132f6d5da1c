/**
 * Sessions: a conversation of turns on one thread (docs/architecture.md, "Sessions"). Each message
 * is a run — `runAgentOnThread` with the session's settings — so the thread, not the provider,
 * carries the conversation from turn to turn (a thread's past runs compile into the next run's
 * context), and every turn is recorded as a tape (`.eddy/tapes/THREAD/RUN_ID.tape`, also named in
 * the thread's log). One turn runs at a time: a message sent while one runs waits in a queue and
 * is sent when it ends. `steer` interrupts the running turn at its next safe point — once the
 * model's response is in and its calls are answered, before the next request — and sends its
 * message next; `cancel` stops the turn now (tools killed, every started call answered, the turn
 * recorded, the run ended `cancelled`). Between turns the model and the approval mode may change;
 * calls deferred (`approve: "defer"`) are decided later with `decide`, which resumes the turn from
 * its tape (src/batch/resume.ts); `undo` restores the files the last turn changed.
 *
 * `eddy chat` is a terminal over this; a server can put the same sessions behind HTTP.
 */
import { randomBytes, randomUUID } from "node:crypto";
import { basename, dirname, join } from "node:path";
import { resumeRun } from "../batch/resume.js";
import { createTapeFileWriter, type TapeWriter } from "../batch/tape-store.js";
import type { ThreadHold } from "../context/thread-hold.js";
import { checkThreadName, createThreadStore, type ThreadStore } from "../context/threads.js";
import { describeError, EddyError } from "../errors.js";
import type { FileChangeRecord, Frame } from "../frames/frame.js";
import type { ApprovalHandler } from "../loop/approvals.js";
import type { RunDeps, RunHandle, RunResult } from "../loop/options.js";
import { type ApproveMode, DEFAULT_POLICY, type Policy } from "../loop/policy.js";
import type { RunSpec, RunSpecInput } from "../loop/run-spec.js";
import { runAgentOnThread } from "../loop/thread-run.js";
import type { Usage } from "../protocol/types.js";
import { createTapeHeader } from "../replay/header.js";
import { TapeWriteGuard } from "../replay/recorder.js";
import { readTape, type TapeHeader } from "../replay/tape.js";
import { undoFileChanges } from "../tools/file-undo.js";
import { createToolRegistry, type ToolRegistry } from "../tools/registry.js";
import { hasControlChars } from "../util/control-chars.js";
import { makeDirSync } from "../util/make-dir.js";
import { realFolderSync } from "../util/state-dir.js";
import { Feed } from "./feed.js";
import { findWaitingRun, type WaitingRun } from "./waiting-run.js";

/** The settings every turn shares; each message becomes the turn's `input`. */
export type SessionSpec = Omit<RunSpecInput, "input" | "thread" | "run_id" | "context">;

/** Options of `createSession`. */
export interface SessionOptions {
  /** The settings of every turn (`setModel` changes `model` between turns). */
  spec: SessionSpec;
  /** What every turn runs with: provider, tools, policy, workspace… (a signal per turn is the session's). */
  deps: Omit<RunDeps, "signal" | "onFrame" | "onApproval" | "history">;
  /** The thread the turns continue. @defaultValue a new one, `chat-YYYYMMDD-HHMMSS-XXXX` */
  thread?: string;
  /** Where threads live. @defaultValue the workspace's `.eddy` */
  store?: ThreadStore;
  /** Folder for the turns' tapes (`THREAD/RUN_ID.tape` under it). @defaultValue `<workspace>/.eddy/tapes` */
  tapes?: string;
  /**
   * A turn's tape header, given the policy the turn runs under (the session's, as `setApprove` left
   * it). @defaultValue `createTapeHeader(spec, { provider, policy })`
   */
  tapeHeader?: (spec: RunSpec, policy: Policy) => TapeHeader;
  /**
   * Writes a turn's tape (`replaces`: the tape a continued turn's new one replaces once committed).
   * A write that throws (a full disk) stops the turn, which is still shown to its end.
   * @defaultValue `createTapeFileWriter` (a file, line by line)
   */
  tapeWriter?: (
    path: string,
    header: TapeHeader,
    secrets: readonly string[],
    replaces?: string,
  ) => TapeWriter;
  /** Asks about calls that need approval while the approval mode is `ask`. @defaultValue none (`ask` refused) */
  onApproval?: ApprovalHandler;
  /** Who holds the thread, for another process's `thread_busy` message. @defaultValue "eddy session" */
  holder?: string;
}

/** How a turn ended. */
export interface TurnResult {
  /** 0, 1, … in the order turns ran (a `decide` continuation is a turn of its own). */
  turn: number;
  thread: string;
  /** The message sent (`decide`: the decisions, as `CALL_ID=allow …`). */
  message: string;
  run: RunResult;
  /** The turn's tape. */
  tape: string;
  /** Files the turn's tools changed, in order (what `undo` restores). */
  fileChanges: FileChangeRecord[];
}

/** What a session's iterator yields. */
export type SessionEvent =
  | { type: "turn_started"; turn: number; thread: string; message: string }
  | { type: "frame"; turn: number; frame: Frame }
  | { type: "turn_ended"; turn: number; result: TurnResult }
  | { type: "turn_failed"; turn: number; error: Error };

/** Token counts of one turn (`usage()`). */
export interface TurnUsage {
  turn: number;
  input_tokens: number;
  output_tokens: number;
  total_tokens: number;
}

/** Work waiting for its turn. */
interface Job {
  kind: "message" | "decide";
  message: string;
  decide?: Record<string, "allow" | "deny">;
  /** `decide`: the run it continues. */
  deferred?: Deferred;
  resolve: (result: TurnResult) => void;
  reject: (error: Error) => void;
}

/** The turn running now. */
interface Running {
  controller: AbortController;
  steer: boolean;
  sawCall: boolean;
}

/** A turn that ended, as the session keeps it. */
interface DoneTurn {
  result: TurnResult;
  decided: boolean;
  undone: boolean;
}

/** A run waiting for decisions that `decide` continues: a turn of this session, or the one it inherited. */
interface Deferred {
  tape: string;
  calls: string[];
  /** Marks it decided (its continuation is a turn of its own). */
  decided(): void;
}

/** A session of turns on one thread (see the module comment). */
export class Session {
  private spec: SessionSpec;
  private policy: Policy;
  private threadName: string;
  private readonly store: ThreadStore;
  private readonly workspace: string;
  private readonly feed = new Feed<SessionEvent>();
  private readonly queue: Job[] = [];
  private readonly done: DoneTurn[] = [];
  /** Errors of turns that failed (`turn_failed`), for `wasTurnFailure`. */
  private readonly failures = new WeakSet<Error>();
  private running: Running | undefined;
  private draining: Promise<void> | undefined;
  private closed = false;
  /** The hold on the thread the turns go to (context/thread-hold.ts), once taken. */
  private held: { name: string; hold: Promise<ThreadHold> } | undefined;
  /** The thread's last run from before this session, waiting for decisions (waiting-run.ts). */
  private earlier: (WaitingRun & { decided: boolean }) | { runId: string; problem: string } | undefined;

  constructor(private readonly options: SessionOptions) {
    this.spec = { ...options.spec };
    this.policy = options.deps.policy ?? DEFAULT_POLICY;
    this.workspace = options.deps.workspace ?? process.cwd();
    this.store = options.store ?? createThreadStore({ workspace: this.workspace });
    this.threadName = checkThreadName(options.thread ?? newThreadName());
  }

  /** The thread the next turn continues. */
  get thread(): string {
    return this.threadName;
  }

  /**
   * Holds the session's thread for this process (done by the first turn; `eddy chat` does it before
   * its first prompt): another process's session or run on it then gets `thread_busy`, as this one
   * does when another holds it. Let go when the thread changes or the session closes.
   */
  async hold(): Promise<void> {
    let fresh = false;
    if (this.held?.name !== this.threadName) {
      const previous = this.held;
      const holder = this.options.holder ?? "eddy session";
      this.held = { name: this.threadName, hold: this.store.hold(this.threadName, holder) };
      this.earlier = undefined;
      fresh = true;
      await previous?.hold.then((h) => h.release()).catch(() => {});
    }
    const held = this.held;
    try {
      await held.hold;
    } catch (err) {
      if (this.held === held) this.held = undefined;
      throw err;
    }
    // Held, so no other process changes the thread's last run from now on.
    if (fresh && !this.done.some((d) => d.result.thread === held.name)) {
      const found = await findWaitingRun(this.store, held.name, this.workspace);
      this.earlier = found === undefined || "problem" in found ? found : { ...found, decided: false };
    }
  }

  /**
   * The thread's last run from before this session (another chat, `eddy run --thread`, a served
   * run) when it waits for decisions, found when the session takes its thread (`hold`): `decide`
   * continues it until this session runs a turn on the thread. `problem` says why it cannot be
   * continued (its tape is gone or records something else).
   */
  get inherited(): WaitingRun | { runId: string; problem: string } | undefined {
    const earlier = this.earlier;
    if (earlier === undefined || ("decided" in earlier && earlier.decided)) return undefined;
    if (this.done.some((d) => d.result.thread === this.threadName)) return undefined;
    if ("problem" in earlier) return earlier;
    return { runId: earlier.runId, tape: earlier.tape, calls: earlier.calls };
  }

  /** The model of the next turn. */
  get model(): string | null | undefined {
    return this.spec.model;
  }

  /** The approval mode of the next turn. */
  get approve(): ApproveMode {
    return this.policy.approve;
  }

  /** True while a turn runs. */
  get busy(): boolean {
    return this.running !== undefined;
  }

  /** Messages waiting for the running turn to end. */
  get queued(): readonly string[] {
    return this.queue.map((job) => job.message);
  }

  /** The turns that ended, oldest first. */
  get turns(): readonly TurnResult[] {
    return this.done.map((d) => d.result);
  }

  /** The tool names the turns offer (before `RunSpec.tools` selects among them). */
  get tools(): string[] {
    return this.registry().names();
  }

  /** Events of the turns from now on: each turn's start, its frames, its end (or failure). */
  events(): AsyncIterableIterator<SessionEvent> {
    return this.feed.subscribe();
  }

  /**
   * Sends `message` as the next turn: now when idle, else once the turns before it ended.
   * Resolves when its turn ends; rejects when it cannot start (bad settings) or is dropped (`close`, `clearQueue`).
   */
  send(message: string): Promise<TurnResult> {
    if (message.trim() === "") return Promise.reject(usage("the message is empty"));
    return this.enqueue({ kind: "message", message }, false);
  }

  /**
   * Sends `message` ahead of the queue, interrupting the running turn at its next safe point: once
   * its model response is in and the calls it made are answered (the run ends `cancelled` there,
   * recorded). A turn about to end by itself just ends. Idle: the same as `send`.
   */
  steer(message: string): Promise<TurnResult> {
    if (message.trim() === "") return Promise.reject(usage("the message is empty"));
    if (this.running !== undefined) this.running.steer = true;
    return this.enqueue({ kind: "message", message }, true);
  }

  /** Cancels the running turn now (it ends `cancelled`, recorded); queued messages stay queued. False when idle. */
  cancel(reason = "cancelled by the user"): boolean {
    if (this.running === undefined) return false;
    this.running.controller.abort(reason);
    return true;
  }

  /** Drops the queued messages (their `send` rejects) and returns them. */
  clearQueue(): string[] {
    const dropped = this.queue.splice(0);
    for (const job of dropped) job.reject(usage("the message was dropped before it was sent"));
    return dropped.map((job) => job.message);
  }

  /** The model of the turns from the next one on. */
  setModel(model: string): void {
    if (model.trim() === "") throw usage("the model name is empty");
    if (model.length > 256) throw usage(`the model name is ${model.length} characters long, more than 256`);
    if (hasControlChars(model))
      throw usage(`the model name ${JSON.stringify(model.slice(0, 80))} holds control characters`);
    this.spec = { ...this.spec, model };
  }

  /** The approval mode from the next turn on (`ask` needs `onApproval`). */
  setApprove(mode: ApproveMode): void {
    if (mode === "ask" && this.options.onApproval === undefined)
      throw usage("approve mode ask needs someone to ask: this session has no approval handler");
    this.policy = { ...this.policy, approve: mode };
  }

  /** Starts a new thread for the turns from now on (idle only). Returns its name. */
  newThread(name: string = newThreadName()): string {
    this.assertIdle("start a new thread");
    this.threadName = checkThreadName(name);
    return this.threadName;
  }

  /**
   * The calls the last turn left awaiting approval (`approve: "defer"`), not yet decided; before
   * the session's first turn on its thread, those of the run it inherited (`inherited`).
   */
  pending(): string[] {
    return this.deferred()?.calls ?? [];
  }

  /** The run `decide` continues: the last turn when it is on this thread, else the inherited run. */
  private deferred(): Deferred | undefined {
    const last = this.done.at(-1);
    if (last !== undefined && last.result.thread === this.threadName) {
      if (last.decided || last.result.run.reason !== "awaiting_approval") return undefined;
      const calls = last.result.run.pendingCalls ?? [];
      return { tape: last.result.tape, calls, decided: () => (last.decided = true) };
    }
    const earlier = this.earlier;
    if (earlier === undefined || "problem" in earlier || earlier.decided || this.inherited === undefined)
      return undefined;
    const calls = earlier.calls.map((c) => c.call_id);
    return { tape: earlier.tape, calls, decided: () => (earlier.decided = true) };
  }

  /**
   * Decides the calls the last turn deferred (`{CALL_ID: "allow" | "deny"}`, `all` for the rest)
   * and continues that turn from its tape: as a turn of its own, queued like a message. Calls not
   * decided go to the approval mode.
   */
  decide(decisions: Record<string, "allow" | "deny">): Promise<TurnResult> {
    const deferred = this.deferred();
    const pending = deferred?.calls ?? [];
    if (deferred === undefined || pending.length === 0)
      return Promise.reject(usage("no call is waiting for a decision"));
    const unknown = Object.keys(decisions).find((id) => id !== "all" && !pending.includes(id));
    if (unknown !== undefined)
      return Promise.reject(
        usage(`${unknown} is not waiting for a decision (waiting: ${pending.join(", ")})`),
      );
    const message = Object.entries(decisions)
      .map(([id, d]) => `${id}=${d}`)
      .join(" ");
    return this.enqueue({ kind: "decide", message, decide: { ...decisions }, deferred }, false);
  }

  /**
   * Restores the files the last turn that changed files (and was not undone yet) changed. Refused
   * (`undo_conflict`, nothing restored) when one changed since. Returns the turn and the paths.
   */
  async undo(): Promise<{ turn: number; restored: string[] }> {
    this.assertIdle("undo");
    const last = [...this.done].reverse().find((d) => !d.undone && d.result.fileChanges.length > 0);
    if (last === undefined) throw usage("nothing to undo: no turn of this session changed a file");
    const restored = await undoFileChanges(last.result.fileChanges, this.workspace);
    last.undone = true;
    return { turn: last.result.turn, restored };
  }

  /** Token counts, per turn and in total. */
  usage(): { turns: TurnUsage[]; total: Omit<TurnUsage, "turn"> } {
    const turns = this.done.map(({ result }) => usageOf(result.turn, result.run.usage));
    const sum = (key: keyof Omit<TurnUsage, "turn">) => turns.reduce((n, t) => n + t[key], 0);
    return {
      turns,
      total: {
        input_tokens: sum("input_tokens"),
        output_tokens: sum("output_tokens"),
        total_tokens: sum("total_tokens"),
      },
    };
  }

  /**
   * Whether `error` (a rejection of `send`, `steer` or `decide`) is a turn's failure, told to the
   * event iterators as `turn_failed` too — not a refusal before any turn started. A caller that
   * shows both shows such an error once.
   */
  wasTurnFailure(error: unknown): boolean {
    return error instanceof Error && this.failures.has(error);
  }

  /** Resolves once no turn runs and none is queued. */
  async whenIdle(): Promise<void> {
    while (this.draining !== undefined) await this.draining;
  }

  /** Cancels the running turn, drops the queue and ends the event iterators once the turn is recorded. */
  async close(): Promise<void> {
    this.closed = true;
    this.clearQueue();
    this.cancel("the session was closed");
    await this.draining;
    await this.held?.hold.then((h) => h.release()).catch(() => {});
    this.feed.close();
  }

  private enqueue(
    fields: Pick<Job, "kind" | "message" | "decide" | "deferred">,
    front: boolean,
  ): Promise<TurnResult> {
    if (this.closed) return Promise.reject(usage("the session is closed"));
    const promise = new Promise<TurnResult>((resolve, reject) => {
      const job: Job = { ...fields, resolve, reject };
      if (front) this.queue.unshift(job);
      else this.queue.push(job);
    });
    // A caller that does not await its send must not crash the process when the turn fails.
    promise.catch(() => {});
    this.startDraining();
    return promise;
  }

  private startDraining(): void {
    this.draining ??= this.drain().finally(() => {
      this.draining = undefined;
      // A message sent as the last turn ended (after the loop's last look at the queue).
      if (this.queue.length > 0) this.startDraining();
    });
  }

  private async drain(): Promise<void> {
    for (let job = this.queue.shift(); job !== undefined; job = this.queue.shift()) {
      const turn = this.done.length;
      try {
        job.resolve(await this.runJob(job, turn));
      } catch (error) {
        const err = error instanceof Error ? error : new Error(String(error));
        this.feed.push({ type: "turn_failed", turn, error: err });
        this.failures.add(err);
        job.reject(err);
      } finally {
        this.running = undefined;
      }
    }
  }

  private async runJob(job: Job, turn: number): Promise<TurnResult> {
    await this.hold();
    const running: Running = { controller: new AbortController(), steer: false, sawCall: false };
    this.running = running;
    this.feed.push({ type: "turn_started", turn, thread: this.threadName, message: job.message });
    const outcome =
      job.kind === "decide"
        ? await this.resumeTurn(job, running)
        : await this.messageTurn(job.message, running);
    const result: TurnResult = { turn, thread: this.threadName, message: job.message, ...outcome.result };
    job.deferred?.decided();
    this.done.push({ result, decided: false, undone: false });
    this.feed.push({ type: "turn_ended", turn, result });
    return result;
  }

  /** A message as a run on the thread, recorded as a tape. */
  private async messageTurn(message: string, running: Running) {
    const runId = `run_${randomUUID().replace(/-/g, "")}`;
    const tape = this.tapePath(runId);
    const recording = this.recording(running);
    const handle = await runAgentOnThread(
      { ...this.spec, input: message, thread: this.threadName, run_id: runId },
      this.turnDeps(running, recording.observe),
      // The session holds its thread (hold) for all its turns.
      { store: this.store, tape, held: true },
    );
    const header = (this.options.tapeHeader ?? this.defaultHeader())(handle.spec, this.policy);
    await startRecording(handle, () => recording.start(this.tapeWriter(tape, header, this.secrets())));
    try {
      for await (const _frame of handle) {
        // Frames reach the feed and the tape through onFrame.
      }
      const run = await handle.result;
      return { result: { run, tape, fileChanges: recording.fileChanges } };
    } finally {
      await recording.close();
    }
  }

  /** The deferred run continued from its tape with decisions; its outcome appended to the thread. */
  private async resumeTurn(job: Job, running: Running) {
    const tape = (job.deferred as Deferred).tape;
    const recording = this.recording(running);
    const handle = resumeRun(readTape(tape), {
      provider: this.options.deps.provider,
      registry: this.registry(),
      workspace: this.workspace,
      policy: this.policy,
      ...(this.policy.approve === "ask" && this.options.onApproval !== undefined
        ? { onApproval: this.options.onApproval }
        : {}),
      decide: job.decide ?? {},
      // The tape lies on disk between turns: its budgets stay within the session's.
      budgets: this.spec,
      signal: running.controller.signal,
      secrets: this.secrets(),
      onFrame: recording.observe,
      onResumed: () => recording.commit(),
      // Its outcome goes to the thread's log once it ends (batch/resume.ts).
      thread: { store: this.store, tape },
    });
    // Reproduced frames go to the new tape, not to the feed again: they were shown in their turn.
    recording.showFrom(handle.point.at_seq);
    await startRecording(handle, () =>
      recording.start(this.tapeWriter(`${tape}.resuming`, handle.header, this.secrets(), tape)),
    );
    try {
      for await (const _frame of handle) {
        // As in messageTurn.
      }
      const run = await handle.result;
      return { result: { run, tape, fileChanges: recording.fileChanges } };
    } finally {
      await recording.close();
    }
  }

  /** The writer of a turn's tape (`SessionOptions.tapeWriter`). */
  private tapeWriter(path: string, header: TapeHeader, secrets: readonly string[], replaces?: string) {
    return (this.options.tapeWriter ?? createTapeFileWriter)(path, header, secrets, replaces);
  }

  /** Records a turn's frames (buffered until the tape is open), collects file changes, steers, feeds. */
  private recording(running: Running) {
    const turn = this.done.length;
    const buffered: Frame[] = [];
    const fileChanges: FileChangeRecord[] = [];
    let writer: TapeWriter | undefined;
    let shownFrom = 0;
    // A turn that cannot be recorded (a full disk) does not go on; it is still shown to its end.
    const tape = new TapeWriteGuard((problem) =>
      running.controller.abort(`could not record this turn's tape: ${problem}`),
    );
    const observe = (frame: Frame) => {
      if (writer !== undefined) tape.write(() => writer?.write(frame));
      else buffered.push(frame);
      if (frame.seq < shownFrom) return;
      if (frame.type === "tool_ended" && frame.file_changes !== undefined)
        fileChanges.push(...frame.file_changes);
      this.steerAt(frame, running);
      this.feed.push({ type: "frame", turn, frame });
    };
    return {
      observe,
      fileChanges,
      showFrom: (seq: number) => {
        shownFrom = seq;
      },
      start: (w: TapeWriter) => {
        writer = w;
        for (const frame of buffered.splice(0)) tape.write(() => w.write(frame));
      },
      commit: () => writer?.commit(),
      close: async () => {
        await writer?.close();
      },
    };
  }

  /** Steering: the run is cancelled once a turn that made calls has ended (its calls are answered). */
  private steerAt(frame: Frame, running: Running): void {
    if (frame.type === "tool_call") running.sawCall = true;
    if (frame.type !== "turn_ended") return;
    if (running.steer && running.sawCall)
      queueMicrotask(() => running.controller.abort("interrupted to send a steering message"));
    running.sawCall = false;
  }

  private turnDeps(running: Running, onFrame: (frame: Frame) => void): RunDeps {
    const deps: RunDeps = {
      ...this.options.deps,
      policy: this.policy,
      workspace: this.workspace,
      signal: running.controller.signal,
      onFrame,
    };
    if (this.policy.approve === "ask") {
      if (this.options.onApproval === undefined)
        throw usage("approve mode ask needs someone to ask: this session has no approval handler");
      deps.onApproval = this.options.onApproval;
    }
    return deps;
  }

  private defaultHeader(): (spec: RunSpec, policy: Policy) => TapeHeader {
    return (spec, policy) => createTapeHeader(spec, { provider: this.options.deps.provider, policy });
  }

  private tapePath(runId: string): string {
    const { tapes } = this.options;
    if (tapes !== undefined) {
      const dir = join(tapes, this.threadName);
      makeDirSync(dir);
      return join(dir, `${runId}.tape`);
    }
    // The store's own folder, in the workspace: a symlink there (a cloned repository's) is refused,
    // not followed, as the thread store refuses one (src/util/state-dir.ts).
    const dir = realFolderSync(dirname(this.store.root), [
      basename(this.store.root),
      "tapes",
      this.threadName,
    ]);
    return join(dir, `${runId}.tape`);
  }

  private registry(): ToolRegistry {
    const tools = this.options.deps.tools;
    if (tools === undefined) return createToolRegistry([]);
    return Array.isArray(tools) ? createToolRegistry(tools) : (tools as ToolRegistry);
  }

  private secrets(): string[] {
    return [...(this.options.deps.secrets ?? []), ...(this.options.deps.provider.secrets ?? [])];
  }

  private assertIdle(what: string): void {
    if (this.running !== undefined || this.queue.length > 0)
      throw usage(`cannot ${what} while a turn runs: wait for it to end or cancel it`);
  }
}

/**
 * A session of turns on one thread (see `Session`). Nothing starts until the first `send`.
 *
 * @example
 * ```ts
 * const session = createSession({ spec: { model: "gpt-5-mini" }, deps: { provider, tools } });
 * (async () => {
 *   for await (const e of session.events())
 *     if (e.type === "frame" && e.frame.type === "output_text_delta") process.stdout.write(e.frame.delta);
 * })();
 * await session.send("My name is Ada.");
 * const { run } = await session.send("What is my name?"); // the thread carries the first turn
 * console.log(run.outputText, session.usage().total);
 * await session.close();
 * ```
 */
export function createSession(options: SessionOptions): Session {
  return new Session(options);
}

/** `chat-YYYYMMDD-HHMMSS-XXXX` (UTC). */
export function newThreadName(now: Date = new Date()): string {
  const stamp = now.toISOString().replace(/[-:]/g, "").replace("T", "-").slice(0, 15);
  return `chat-${stamp}-${randomBytes(2).toString("hex")}`;
}

function usageOf(turn: number, u: Usage | null | undefined): TurnUsage {
  return {
    turn,
    input_tokens: u?.input_tokens ?? 0,
    output_tokens: u?.output_tokens ?? 0,
    total_tokens: u?.total_tokens ?? 0,
  };
}

function usage(message: string): EddyError {
  return new EddyError("invalid_argument", message, { fault: "user" });
}

/**
 * Opens a turn's tape for a run that has started: a tape that cannot be opened cancels the run
 * before it asks or runs anything, and the turn fails with the error — never a run going on
 * unrecorded.
 */
async function startRecording(handle: RunHandle, open: () => void): Promise<void> {
  try {
    open();
  } catch (err) {
    handle.cancel(`could not open this turn's tape: ${describeError(err)}`);
    for await (const _frame of handle) {
      // Drained: the cancelled run ends.
    }
    await handle.result.catch(() => {});
    throw err;
  }
}
