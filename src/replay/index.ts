export { createFrameGate, type FrameGate } from "./gate.js";
export { createTapeHeader, type TapeHeaderExtras } from "./header.js";
export { createTapeRecorder, type TapeRecorder } from "./recorder.js";
export {
  compareFrames,
  type ReplayOptions,
  type ReplayOutcome,
  type ReplayVerdict,
  replayTape,
} from "./replay.js";
export { createReplayProvider, providerSegments } from "./replay-provider.js";
export { parseTape, readTape, TAPE_FORMAT, type Tape, type TapeHeader } from "./tape.js";
