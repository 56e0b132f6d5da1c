/**
 * `eddy resume TAPE`: continues a run whose process died, was cancelled, or waits for a deferred
 * approval, from its tape — the recorded turns and tool outputs are reproduced, not redone, and
 * the run goes on live (see src/batch/resume.ts). What to run (the spec) comes from the tape;
 * where requests go and what may run — `--allow-write`, `--allow-shell`, `--sandbox`, `--mcp`,
 * `--approve`, `--rerun-interrupted` — only from this invocation, as for `eddy run`: a tape whose
 * tools need a permission this invocation does not grant is refused (exit 2, naming the flag)
 * before anything runs. The tape's budgets are at most this invocation's (`--max-turns`,
 * `--max-tool-calls`, `--tool-concurrency`, `--max-output-tokens`, the config file, else the
 * defaults): one it asks above them is lowered, said in one line on stderr
 * (src/batch/resume-budgets.ts). `--decide CALL_ID=allow|deny` answers deferred approvals. The tape is
 * continued in place (`--record FILE` writes the resumed tape elsewhere); until the reproduced
 * part is written, the old tape stays as it was.
 *
 * Exit codes as `eddy run`; a run that already ended by itself is reported with its own code.
 */
import { resolve } from "node:path";
import { planResume, type ResumeOptions, resumeRun } from "../batch/resume.js";
import { resumeBudgets } from "../batch/resume-budgets.js";
import { createTapeFileWriter, type TapeWriter } from "../batch/tape-store.js";
import type { ThreadHold } from "../context/thread-hold.js";
import { createThreadStore, type ThreadStore } from "../context/threads.js";
import type { Frame } from "../frames/frame.js";
import type { BudgetOverrun } from "../loop/run-spec.js";
import { type ReservedTape, releaseTapeFile, reserveTapeFile } from "../replay/recorder.js";
import { readTape, type Tape, type TapeHeader } from "../replay/tape.js";
import { type EffectiveConfig, type RunFlags, resolveConfig } from "./config.js";
import { CANCELLED, exitCodeFor } from "./exit-codes.js";
import { ImageSaver } from "./hosted-items.js";
import { type OtelExport, otelRequested, startOtelExport } from "./otel.js";
import { assertReadyToRun, checkWorkspace, usageError } from "./preflight.js";
import {
  type CliIo,
  cancelOnSignal,
  humanRenderer,
  sideObservers,
  threadTapeName,
  waitForThread,
} from "./run-command.js";
import { BUDGET_FLAGS, hooksOf, policyOf, specOf } from "./run-settings.js";
import { closeTools, prepareTools, type RunTools, startTools } from "./run-tools.js";
import { mcpEventLine, RunView } from "./run-view.js";
import { TapeGuard } from "./tape-guard.js";
import { secretsOf, startTargetProvider, type TargetProvider } from "./target-provider.js";
import { type Styles, stylesFor, terminalSafe } from "./terminal.js";

/** Flags of `eddy resume`: where requests go and what this invocation allows (as `eddy run`), and output. */
export interface ResumeFlags extends RunFlags {
  json?: boolean;
  record?: string;
  /** `CALL_ID=allow|deny` or `all=allow|deny`, repeatable. */
  decide?: string[];
  rerunInterrupted?: boolean;
}

export async function resumeCommand(path: string, flags: ResumeFlags, io: CliIo): Promise<number> {
  // Relative paths are from io.cwd, the command's directory (not the process's, in-process).
  const tape = readTape(resolve(io.cwd, path), path);
  const plan = planResume(tape);
  if (plan.status === "ended") {
    io.stderr.write(`eddy: ${path}: the run already ended (${plan.reason}); there is nothing to resume\n`);
    return exitCodeFor(plan.reason);
  }
  const { decide, config, budgets } = checkResume(path, tape, plan.point.at_seq, flags, io);
  const { styles, images, view } = resumeView(flags, io, config);
  const prepared = await prepareTools(config, io, (event) => view.say(mcpEventLine(event, styles)));
  const controller = new AbortController();
  const out = resolve(io.cwd, flags.record ?? path);
  // A tape that cannot be written stops the command here, before anything starts or is sent.
  const record = new ResumeTape(out, out === resolve(io.cwd, path));
  const tapeGuard = new TapeGuard(out, (reason) => controller.abort(reason));
  const removeSignal = cancelOnSignal(io, controller);
  let tools: RunTools | undefined;
  let target: TargetProvider | undefined;
  let otel: OtelExport | undefined;
  let thread: TapeThread | undefined;
  try {
    tools = await startTools(prepared, {
      config,
      io,
      styles,
      signal: controller.signal,
      hold: view,
      secrets: secretsOf(config),
    });
    if (tools === undefined) return CANCELLED;
    target = await startTargetProvider(config);
    if (otelRequested(flags.otel, io.env))
      otel = await startOtelExport({ env: io.env, providerName: target.provider.name, stderr: io.stderr });
    const secrets = [...secretsOf(config), ...tools.secrets];
    thread = await holdTapeThread(tape, config.workspace.value, controller.signal, view, styles);
    if (thread === "cancelled") return CANCELLED;
    // None of these can stop the tape, written first (docs/pitfalls.md #95).
    const others = sideObservers(otel, images, io, styles);
    const handle = resumeRun(tape, {
      provider: target.provider,
      registry: tools.registry,
      workspace: config.workspace.value,
      ...localRules(config, tools, flags, io.env),
      budgets,
      ...(Object.keys(decide).length === 0 ? {} : { decide }),
      signal: controller.signal,
      secrets,
      onFrame: (frame: Frame) => {
        tapeGuard.write(() => record.writer?.write(frame));
        others(frame);
        view.render(frame);
      },
      onResumed: () => record.writer?.commit(),
      ...(thread === undefined
        ? {}
        : { thread: { store: thread.store, tape: threadTapeName(config.workspace.value, out) } }),
    });
    record.start(handle.header, secrets);
    if (target.notice !== undefined) io.stderr.write(`${styles.dim(target.notice)}\n`);
    if (handle.lowered.length > 0) io.stderr.write(`${styles.yellow(loweredLine(path, handle.lowered))}\n`);
    io.stderr.write(`${styles.dim(describeResume(path, tape, handle.point))}\n`);
    for await (const _frame of handle) {
      // Rendered and recorded by onFrame.
    }
    return tapeGuard.exitCode((await handle.result).reason, (line) => view.say(line), styles);
  } finally {
    removeSignal();
    if (thread !== undefined && thread !== "cancelled") await thread.hold.release();
    await record.close();
    await otel?.shutdown();
    await target?.close();
    await closeTools(prepared, tools?.registry);
  }
}

/** What is checked before anything starts: the decisions, this invocation's settings, the sandbox, the budgets. */
function checkResume(path: string, tape: Tape, at: number, flags: ResumeFlags, io: CliIo) {
  const decide = parseDecisions(flags.decide ?? [], tape);
  // The tape's model names the provider route too (`profile/model`), unless --model says otherwise.
  const { spec } = tape.header;
  const config = resolveConfig(
    { ...flags, ...(flags.model === undefined && spec.model !== null ? { model: spec.model } : {}) },
    io.env,
    io.cwd,
  );
  checkWorkspace(config.workspace.value);
  assertReadyToRun(config, io.env);
  checkSandboxMatches(tape, config, path);
  // The invocation's budgets cap the tape's (a tape past them is refused here, not after tools start).
  const budgets = specOf(config);
  resumeBudgets(tape, at, budgets);
  return { decide, config, budgets };
}

type TapeThread = { store: ThreadStore; hold: ThreadHold } | "cancelled";

/**
 * A tape of a run on a thread: the thread held while the run goes on (waiting, as `eddy run
 * --thread` does, while a chat or another run holds it; Ctrl-C ends the wait), so its new outcome
 * lands in the thread's log after the runs before it. Undefined for a run on no thread.
 */
async function holdTapeThread(
  tape: Tape,
  workspace: string,
  signal: AbortSignal,
  view: RunView,
  styles: Styles,
): Promise<TapeThread | undefined> {
  const name = tape.header.spec.thread;
  if (name === undefined) return undefined;
  const store = createThreadStore({ workspace });
  try {
    const say = (line: string) => view.say(styles.dim(line));
    return { store, hold: await waitForThread(store, name, "eddy resume", signal, say) };
  } catch (err) {
    if (!signal.aborted) throw err;
    view.say(styles.yellow("■ cancelled before the run resumed"));
    return "cancelled";
  }
}

/**
 * The resumed run's tape, reserved before anything starts (`reserveTapeFile`). In place, the new
 * tape is written beside the old one and replaces it once it holds its frames.
 */
class ResumeTape {
  writer: TapeWriter | undefined;
  private readonly reserved: ReservedTape;

  constructor(
    private readonly out: string,
    private readonly inPlace: boolean,
  ) {
    this.reserved = reserveTapeFile(inPlace ? `${out}.resuming` : out);
  }

  start(header: TapeHeader, secrets: readonly string[]): void {
    const { path } = this.reserved;
    this.writer = createTapeFileWriter(
      path,
      header,
      secrets,
      this.inPlace ? this.out : undefined,
      this.reserved,
    );
  }

  async close(): Promise<void> {
    if (this.writer !== undefined) await this.writer.close();
    else releaseTapeFile(this.reserved);
  }
}

/** What this invocation gives the resumed run, never the tape: its policy, approval handler and hook commands. */
function localRules(
  config: EffectiveConfig,
  tools: RunTools,
  flags: ResumeFlags,
  env: CliIo["env"],
): Pick<ResumeOptions, "policy" | "onApproval" | "hooks"> {
  const hooks = hooksOf(config, env)?.(config.workspace.value);
  return {
    policy: policyOf(config, tools.approveMode, { rerunInterrupted: flags.rerunInterrupted === true }),
    ...(tools.onApproval === undefined ? {} : { onApproval: tools.onApproval }),
    ...(hooks === undefined ? {} : { hooks }),
  };
}

/** The resumed run's view: frames as JSONL with --json, else the human view (images saved to the workspace). */
function resumeView(flags: ResumeFlags, io: CliIo, config: EffectiveConfig) {
  const styles = stylesFor(io.stderr, io.env);
  const images = new ImageSaver(config.workspace.value);
  const view =
    flags.json === true
      ? RunView.json(io.stdout, io.stderr, styles)
      : RunView.human(humanRenderer(io, styles, config, images), io.stderr, styles);
  return { styles, images, view };
}

/**
 * `--decide CALL_ID=allow|deny` (and `all=…`): each id must be a call the tape's run is waiting
 * for, each decision allow or deny.
 */
function parseDecisions(specs: readonly string[], tape: Tape): Record<string, "allow" | "deny"> {
  const ended = tape.frames.find((f) => f.type === "run_ended");
  const pending = ended?.type === "run_ended" ? (ended.pending_calls ?? []) : [];
  const out: Record<string, "allow" | "deny"> = {};
  for (const spec of specs) {
    const eq = spec.lastIndexOf("=");
    const id = spec.slice(0, eq);
    const decision = spec.slice(eq + 1);
    if (eq <= 0 || (decision !== "allow" && decision !== "deny"))
      throw usageError(
        `--decide must be CALL_ID=allow or CALL_ID=deny (or all=…), got ${JSON.stringify(spec)}`,
      );
    if (id !== "all" && !pending.includes(id))
      throw usageError(
        `--decide ${id}: the tape's run is not waiting for that call (${pending.length === 0 ? "it waits for none" : `it waits for ${pending.join(", ")}`})`,
      );
    out[id] = decision;
  }
  return out;
}

/** `shell` is described differently under `--sandbox`: the resumed run must declare it as recorded. */
function checkSandboxMatches(tape: Tape, config: EffectiveConfig, path: string): void {
  const offersShell = (tape.header.spec.tools ?? []).includes("shell");
  const recorded = tape.header.policy?.sandbox === true;
  const local = config.sandbox.value && config.allowShell.value;
  if (!offersShell || recorded === local) return;
  throw usageError(
    recorded
      ? `${path} ran its shell under --sandbox: resume it with --sandbox too`
      : `${path} ran its shell without --sandbox: resume it without --sandbox (or start a new run)`,
  );
}

function describeResume(
  path: string,
  tape: Tape,
  point: { at_seq: number; turn: number; reused_tool_outputs: number; dropped_frames: number },
): string {
  const kept = `${point.at_seq} of ${tape.frames.length} frames kept`;
  const reused = `${point.reused_tool_outputs} tool output${point.reused_tool_outputs === 1 ? "" : "s"} reused`;
  const torn = tape.torn === true ? "; its torn last line, cut by the process's end, was dropped" : "";
  return `eddy: resuming ${path} at turn ${point.turn} (${kept}, ${reused}, ${point.dropped_frames} dropped${torn})`;
}

/**
 * One line saying which budgets the tape asked above this invocation's and what the run has
 * instead (as `eddy batch` says it of its tasks), with the flags that raise them.
 */
function loweredLine(path: string, lowered: readonly BudgetOverrun[]): string {
  const asked = lowered.map((o) => `${o.field} ${o.asked}`).join(", ");
  const given = lowered.map((o) => `${o.field} ${o.limit}`).join(", ");
  const flags = lowered.flatMap((o) => BUDGET_FLAGS[o.field] ?? []);
  const how = flags.length === 0 ? "" : ` (give ${flags.join(", ")} to allow more)`;
  return terminalSafe(
    `eddy: ${path} asks ${asked}, more than this invocation allows: it runs with ${given}${how}`,
    { oneLine: true },
  );
}
