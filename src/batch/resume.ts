/**
 * Resuming a run from its tape after the process died (SIGKILL, OOM, power) or the run was
 * cancelled: the run is rebuilt from the tape's header and driven through the replay machinery
 * (src/replay/*) up to the resume point — recorded responses and tool outputs, released where the
 * tape has them — and goes on live from there, in the same loop, with the same run id. So:
 *
 * - every tool call whose output is recorded is not run again (its recorded output is used);
 * - no response that was received in full is requested again: the resume point is after the last
 *   complete turn, or inside the unfinished turn when its response had ended (its calls without a
 *   recorded output then run);
 * - the next request continues from the last response — chained on its id, and when the provider
 *   no longer has it (`previous_response_not_found`), stateless from the history the replayed
 *   turns rebuilt (the loop's own fallback, docs/decisions.md #5);
 * - the resumed tape is the run's whole tape: the reproduced frames, then the live ones, so it
 *   replays like any other (`eddy replay`); its header's `resumes` says where it was resumed.
 *
 * A call that was running when the process died has no recorded output and runs again if the
 * model asks again: at-least-once for that call, exactly-once for every recorded one.
 */
import { EddyError } from "../errors.js";
import type { Frame, RunEndReason } from "../frames/frame.js";
import type { FrameObserver } from "../loop/frame-channel.js";
import type { RunHandle, ToolExecutor } from "../loop/options.js";
import { runAgent } from "../loop/run.js";
import type { Provider } from "../provider/provider.js";
import { createFrameGate } from "../replay/gate.js";
import { compareFrames, recordedToolExecutor, runOptionsFromTape } from "../replay/replay.js";
import { createReplayProvider, providerSegments } from "../replay/replay-provider.js";
import type { Tape, TapeHeader, TapeResume } from "../replay/tape.js";
import { executeToolCall } from "../tools/execute.js";
import type { ToolRegistry } from "../tools/registry.js";

/** End reasons that leave a run worth resuming: it was stopped from outside, not by its model or a limit. */
const RESUMABLE_ENDS: ReadonlySet<RunEndReason> = new Set(["cancelled", "provider_error"]);
/** `turn_ended` statuses of a turn that did not get its response (it is requested again). */
const UNFINISHED_TURNS: ReadonlySet<string> = new Set(["error", "cancelled"]);
/** Terminal events after which a response is complete (a `failed` one is retried, so it is not). */
const COMPLETE_RESPONSES: ReadonlySet<string> = new Set(["response.completed", "response.incomplete"]);

/** Where a tape can be resumed, or why it cannot. */
export type ResumePlan =
  | { status: "resumable"; point: Omit<TapeResume, "ts"> }
  | { status: "ended"; reason: RunEndReason };

/**
 * Where the run of `tape` would be resumed: after the last complete turn, or after everything
 * recorded when the unfinished turn's response had ended. A run that ended by itself (any reason
 * but `cancelled` or `provider_error`) is not resumable.
 */
export function planResume(tape: Tape): ResumePlan {
  const { frames } = tape;
  const ended = frames.find((f) => f.type === "run_ended");
  if (ended !== undefined && ended.type === "run_ended" && !RESUMABLE_ENDS.has(ended.reason))
    return { status: "ended", reason: ended.reason };
  // Nothing from the cancellation on is reusable: outputs after it say "cancelled".
  let cut = frames.findIndex((f) => f.type === "cancel_requested" || f.type === "run_ended");
  if (cut === -1) cut = frames.length;
  let lastTurn = -1;
  let turns = 0;
  for (let i = 0; i < cut; i++) {
    const f = frames[i] as Frame;
    if (f.type === "turn_ended" && !UNFINISHED_TURNS.has(f.status)) {
      lastTurn = i;
      turns = f.turn + 1;
    }
  }
  const firstRequest = indexAfter(frames, lastTurn, cut, (f) => f.type === "request_started");
  let at = firstRequest === -1 ? cut : firstRequest;
  if (firstRequest !== -1 && responseEnded(frames, lastTurn, cut)) at = cut;
  const count = (from: number, to: number) =>
    frames.slice(from, to).filter((f) => f.type === "tool_ended").length;
  return {
    status: "resumable",
    point: {
      at_seq: at,
      turn: turns,
      reused_tool_outputs: count(0, at),
      dropped_frames: frames.length - at,
      dropped_tool_outputs: count(at, cut),
    },
  };
}

/** True when the last attempt after `from` got a complete response before `to`. */
function responseEnded(frames: readonly Frame[], from: number, to: number): boolean {
  let lastAttempt = -1;
  for (let i = from + 1; i < to; i++) if (frames[i]?.type === "request_started") lastAttempt = i;
  if (lastAttempt === -1) return false;
  for (let i = lastAttempt + 1; i < to; i++) {
    const f = frames[i] as Frame;
    if (f.type !== "provider_event" || f.status !== "event") continue;
    const type = (f.data as { type?: unknown } | undefined)?.type;
    if (typeof type === "string" && COMPLETE_RESPONSES.has(type)) return true;
  }
  return false;
}

function indexAfter(frames: readonly Frame[], from: number, to: number, test: (f: Frame) => boolean): number {
  for (let i = from + 1; i < to; i++) if (test(frames[i] as Frame)) return i;
  return -1;
}

/** Options of `resumeRun`. */
export interface ResumeOptions {
  /** The live provider for the requests after the resume point. */
  provider: Provider;
  /** The tools the recorded run offered (the same names, so the requests match). */
  registry: ToolRegistry;
  workspace: string;
  /** @defaultValue none */
  signal?: AbortSignal;
  /** More values to mask in every frame. @defaultValue none */
  secrets?: readonly string[];
  /** Sees every frame, the reproduced ones included (record them: they are the resumed tape). @defaultValue none */
  onFrame?: FrameObserver;
  /**
   * Called once the run has reproduced every reusable frame of the tape, before anything live:
   * from then on the new tape holds all the old one had worth keeping (replace the old one now).
   * @defaultValue none
   */
  onResumed?: (point: TapeResume) => void;
}

/** A resumed run: a run handle, where it resumed, and the header its tape should have. */
export interface ResumeHandle extends RunHandle {
  readonly point: TapeResume;
  /** The tape's header with this resumption added to `resumes`. */
  readonly header: TapeHeader;
}

/**
 * Resumes the run of `tape` (see the module comment). Throws a user error when the run already
 * ended by itself. `result` rejects with `replay_mismatch` when the tape does not reproduce (the
 * tools or settings differ from the recorded run's); the old tape is then still the truth.
 *
 * @example
 * ```ts
 * const tape = readTape("run.tape");
 * const run = resumeRun(tape, { provider, registry, workspace: process.cwd(), onFrame: recorder.observer });
 * for await (const frame of run) if (frame.type === "output_text_delta") process.stdout.write(frame.delta);
 * console.log((await run.result).reason, "resumed at frame", run.point.at_seq);
 * ```
 */
export function resumeRun(tape: Tape, options: ResumeOptions): ResumeHandle {
  const plan = planResume(tape);
  if (plan.status === "ended") {
    throw new EddyError(
      "invalid_argument",
      `the run already ended (${plan.reason}); there is nothing to resume`,
      { fault: "user" },
    );
  }
  const point: TapeResume = { ...plan.point, ts: Date.now() };
  const prefix: Tape = { header: tape.header, frames: tape.frames.slice(0, point.at_seq) };
  const gate = createFrameGate();
  const controller = new AbortController();
  const onAbort = () => controller.abort(options.signal?.reason);
  if (options.signal?.aborted) onAbort();
  else options.signal?.addEventListener("abort", onAbort, { once: true });

  const runOptions = runOptionsFromTape(prefix, {
    provider: resumingProvider(prefix, gate, options.provider),
    gate,
    registry: options.registry,
    workspace: options.workspace,
    signal: controller.signal,
    executeTool: recordedToolExecutor(prefix, gate, {
      registry: options.registry,
      onMissing: liveExecutor(tape.header, options.registry),
    }),
  });
  if (options.secrets !== undefined) runOptions.secrets = options.secrets;
  let diverged: ReturnType<typeof compareFrames> | undefined;
  runOptions.onFrame = (frame) => {
    gate.observer(frame);
    let complete = false;
    if (frame.seq < point.at_seq && diverged === undefined) {
      const verdict = compareFrames([prefix.frames[frame.seq] as Frame], [frame]);
      if (!verdict.match) {
        diverged = { ...verdict, index: frame.seq };
        controller.abort("the tape does not reproduce, so the run cannot be resumed");
      } else complete = frame.seq === point.at_seq - 1;
    } else complete = point.at_seq === 0 && frame.seq === 0;
    options.onFrame?.(frame);
    // After the observer: the new tape holds the last reproduced frame before it replaces the old one.
    if (complete) options.onResumed?.(point);
  };
  const handle = runAgent(runOptions);
  const result = handle.result.then((r) => {
    options.signal?.removeEventListener("abort", onAbort);
    if (diverged !== undefined && !diverged.match) {
      throw new EddyError(
        "replay_mismatch",
        `the tape does not reproduce at frame ${diverged.index} (expected ${diverged.expected?.type ?? "nothing"}, got ${diverged.actual?.type ?? "nothing"}): resume it with the tools and settings it was recorded with`,
        { fault: "user" },
      );
    }
    return r;
  });
  // A rejection nobody awaited yet must not crash the process before the caller gets to it.
  result.catch(() => {});
  return {
    runId: handle.runId,
    result,
    point,
    header: { ...tape.header, resumes: [...(tape.header.resumes ?? []), point] },
    cancel: (reason) => controller.abort(reason ?? "cancelled"),
    [Symbol.asyncIterator]: () => handle[Symbol.asyncIterator](),
  };
}

/** The recorded requests of `prefix` first (played from the tape), then `live` ones. */
function resumingProvider(prefix: Tape, gate: ReturnType<typeof createFrameGate>, live: Provider): Provider {
  const capabilities = prefix.header.provider.capabilities;
  const replayed = createReplayProvider(prefix, gate, capabilities);
  const recorded = providerSegments(prefix).length;
  let streams = 0;
  const provider: Provider = {
    name: live.name,
    // The recorded capabilities shape the request bodies, so the live requests are built the same way.
    capabilities,
    stream: (request, options) => (streams++ < recorded ? replayed : live).stream(request, options),
  };
  return live.secrets === undefined ? provider : { ...provider, secrets: live.secrets };
}

/** Runs a call the tape has no output for, with the recorded run's tool settings. */
function liveExecutor(header: TapeHeader, registry: ToolRegistry): ToolExecutor {
  return (call, context) => {
    const options: Parameters<typeof executeToolCall>[2] = {
      signal: context.signal,
      workspace: context.workspace,
    };
    if (header.options.tool_timeout_ms !== undefined) options.timeoutMs = header.options.tool_timeout_ms;
    if (header.options.tool_output_cap_bytes !== undefined)
      options.outputCapBytes = header.options.tool_output_cap_bytes;
    return executeToolCall(registry, call, options);
  };
}
