/**
 * Tapes (docs/decisions.md #9; docs/architecture.md, "The replay guarantee"): the JSONL record of a
 * run. Line 1 is a header (tape-header.ts) carrying the run's `RunSpec` and provider — never
 * secrets; then every frame of the run, one per line, written as the run goes so a crash leaves a
 * valid prefix. A tape of an older format is read in today's shape: its header mapped
 * (tape-header.ts), its frames given the derived frames (upgrade-frames.ts).
 */
import { EddyError } from "../errors.js";
import type { Frame } from "../frames/frame.js";
import { asFrame, eachJsonlRecord } from "../frames/jsonl.js";
import { readRegularTextSync } from "../util/regular-file.js";
import { checkTapeHeader, type TapeHeader } from "./tape-header.js";
import { DERIVED_FRAMES_FORMAT, upgradeFrames } from "./upgrade-frames.js";

export { TAPE_FORMAT, type TapeHeader, type TapeProvider, type TapeResume } from "./tape-header.js";

/** A parsed tape: its header and the run's frames. */
export interface Tape {
  header: TapeHeader;
  frames: Frame[];
  /** The file ended inside a line (a write the process died in): that line was dropped. */
  torn?: true;
}

/** Parses a tape. A bad line, a missing header or a newer format is a clear `EddyError` (exit 2 in the CLI). */
export function parseTape(text: string, source = "tape"): Tape {
  let header: TapeHeader | undefined;
  let frames: Frame[] = [];
  let torn = false;
  try {
    // Each line is checked as it is read: a bad one ends the read there (a 250 MB file of short
    // bad lines was parsed whole first, into GBs; docs/pitfalls.md #63).
    const read = eachJsonlRecord(text, { allowPartialLastLine: true }, (record) => {
      if (header === undefined) {
        header = checkTapeHeader(record.value, source);
        return;
      }
      const frame = asFrame(record);
      if (frame.seq !== frames.length) throw seqError(source, frames.length, frame.seq);
      frames.push(frame);
    });
    torn = read.partialLastLine;
  } catch (err) {
    if (EddyError.isInstance(err) && err.code === "frame_invalid")
      throw new EddyError("tape_invalid", `${source}: ${err.message}`, { fault: "user", cause: err });
    throw err;
  }
  if (header === undefined)
    throw new EddyError("tape_invalid", emptyTapeMessage(text, source), { fault: "user" });
  // Tapes from before the derived frames get them, derived as a run derives them today.
  if (header.format < DERIVED_FRAMES_FORMAT) {
    frames = upgradeFrames(frames, header.provider.wire === undefined ? {} : { wire: header.provider.wire });
  }
  return torn ? { header, frames, torn: true } : { header, frames };
}

function seqError(source: string, index: number, seq: number): EddyError {
  return new EddyError(
    "tape_invalid",
    `${source}: frame ${index} has seq ${seq} (seq must be contiguous from 0)`,
    {
      fault: "user",
    },
  );
}

/** Why a tape without a header is refused: empty, or its one line cut before its end. */
function emptyTapeMessage(text: string, source: string): string {
  return text.trim() === ""
    ? `${source}: the tape is empty`
    : `${source}: the tape's first line (its header) is cut short: the file ends inside it`;
}

/** The largest tape read (only a regular file is read: src/util/regular-file.ts). */
export const TAPE_MAX_BYTES = 256 * 1024 * 1024;

/**
 * Reads and parses a tape file (a regular file of at most `TAPE_MAX_BYTES`). Errors name it `name`:
 * the path as the user gave it, where `path` was resolved from the command's directory.
 */
export function readTape(path: string, name = path): Tape {
  return parseTape(readTapeFileText(path, name), name);
}

/** The text of the tape file at `path`: a regular file, at most `TAPE_MAX_BYTES`, else `tape_invalid`. */
export function readTapeFileText(path: string, name = path): string {
  return readRegularTextSync(path, { what: "tape", maxBytes: TAPE_MAX_BYTES, code: "tape_invalid", name });
}
