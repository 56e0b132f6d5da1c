/**
 * `eddy/replay`: tapes. A tape is the JSONL record of a run (a header with the run's spec, then
 * every frame); `replayTape` re-runs it offline through the same loop and reports the first frame
 * that differs, if any.
 *
 * @example
 * ```ts
 * import { runAgent } from "eddy";
 * import { createTapeHeader, createTapeRecorder, readTape, replayTape } from "eddy/replay";
 *
 * let recorder: TapeRecorder | undefined;
 * const run = runAgent({ model: "gpt-5-mini", input: "hi" }, { provider, onFrame: (f) => recorder?.observer(f) });
 * recorder = createTapeRecorder("run.tape", createTapeHeader(run.spec, { provider }));
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
export {
  parseTape,
  readTape,
  TAPE_FORMAT,
  type Tape,
  type TapeHeader,
  type TapeProvider,
  type TapeResume,
} from "../replay/tape.js";
