/**
 * `eddy/replay`: tapes. A tape is the JSONL record of a run (a header with the run's options, then
 * every frame); `replayTape` re-runs it offline through the same loop and reports the first frame
 * that differs, if any.
 *
 * @example
 * ```ts
 * import { runAgent } from "eddy";
 * import { createTapeHeader, createTapeRecorder, readTape, replayTape } from "eddy/replay";
 *
 * const options = { provider, model: "gpt-5-mini", input: "hi", runId: "run_1" };
 * const recorder = createTapeRecorder("run.tape", createTapeHeader(options, { runId: "run_1", validate: true }));
 * const run = runAgent({ ...options, onFrame: recorder.observer });
 * for await (const _ of run);
 * recorder.close();
 * const { verdict } = await replayTape(readTape("run.tape"), { registry, workspace: "." });
 * ```
 *
 * @packageDocumentation
 */
export { createTapeHeader, type TapeHeaderExtras } from "../replay/header.js";
export { createTapeRecorder, type TapeRecorder } from "../replay/recorder.js";
export {
  compareFrames,
  type ReplayOptions,
  type ReplayOutcome,
  type ReplayVerdict,
  replayTape,
} from "../replay/replay.js";
export { parseTape, readTape, TAPE_FORMAT, type Tape, type TapeHeader } from "../replay/tape.js";
export { type UpgradeOptions, upgradeFrames } from "../replay/upgrade-frames.js";
