/**
 * Tapes (docs/decisions.md #9; docs/architecture.md, "The replay guarantee"): the JSONL record of a
 * run. Line 1 is a header (tape-header.ts) carrying the run's `RunSpec` and provider — never
 * secrets; then every frame of the run, one per line, written as the run goes so a crash leaves a
 * valid prefix. A tape of an older format is read in today's shape: its header mapped
 * (tape-header.ts), its frames given the derived frames (upgrade-frames.ts).
 */
import { EddyError } from "../errors.js";
import type { Frame } from "../frames/frame.js";
import { asFrame, parseJsonl } from "../frames/jsonl.js";
import { readRegularTextSync } from "../util/regular-file.js";
import { checkTapeHeader, type TapeHeader } from "./tape-header.js";
import { DERIVED_FRAMES_FORMAT, upgradeFrames } from "./upgrade-frames.js";

export { TAPE_FORMAT, type TapeHeader, type TapeProvider, type TapeResume } from "./tape-header.js";

/** A parsed tape: its header and the run's frames. */
export interface Tape {
  header: TapeHeader;
  frames: Frame[];
}

/** Parses a tape. A bad line, a missing header or a newer format is a clear `EddyError` (exit 2 in the CLI). */
export function parseTape(text: string, source = "tape"): Tape {
  let records: ReturnType<typeof parseJsonl>;
  try {
    records = parseJsonl(text, { allowPartialLastLine: true });
  } catch (err) {
    throw new EddyError("tape_invalid", `${source}: ${(err as Error).message}`, {
      fault: "user",
      cause: err,
    });
  }
  const first = records[0];
  if (first === undefined)
    throw new EddyError("tape_invalid", `${source}: the tape is empty`, { fault: "user" });
  const header = checkTapeHeader(first.value, source);
  let frames: Frame[];
  try {
    frames = records.slice(1).map(asFrame);
  } catch (err) {
    throw new EddyError("tape_invalid", `${source}: ${(err as Error).message}`, {
      fault: "user",
      cause: err,
    });
  }
  frames.forEach((f, i) => {
    if (f.seq !== i) {
      throw new EddyError(
        "tape_invalid",
        `${source}: frame ${i} has seq ${f.seq} (seq must be contiguous from 0)`,
        { fault: "user" },
      );
    }
  });
  // Tapes from before the derived frames get them, derived as a run derives them today.
  if (header.format < DERIVED_FRAMES_FORMAT) {
    frames = upgradeFrames(frames, header.provider.wire === undefined ? {} : { wire: header.provider.wire });
  }
  return { header, frames };
}

/** The largest tape read (only a regular file is read: src/util/regular-file.ts). */
export const TAPE_MAX_BYTES = 256 * 1024 * 1024;

/** Reads and parses a tape file (a regular file of at most `TAPE_MAX_BYTES`). */
export function readTape(path: string): Tape {
  return parseTape(readTapeFileText(path), path);
}

/** The text of the tape file at `path`: a regular file, at most `TAPE_MAX_BYTES`, else `tape_invalid`. */
export function readTapeFileText(path: string): string {
  return readRegularTextSync(path, { what: "tape", maxBytes: TAPE_MAX_BYTES, code: "tape_invalid" });
}
