/**
 * Tapes (docs/decisions.md #9; docs/architecture.md, "The replay guarantee"): the JSONL record of a
 * run. Line 1 is a header (tape-header.ts) carrying the run's `RunSpec` and provider — never
 * secrets; then every frame of the run, one per line, written as the run goes so a crash leaves a
 * valid prefix.
 */
import { readFileSync } from "node:fs";
import { EddyError } from "../errors.js";
import type { Frame } from "../frames/frame.js";
import { asFrame, parseJsonl } from "../frames/jsonl.js";
import { checkTapeHeader, type TapeHeader } from "./tape-header.js";

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
  return { header, frames };
}

/** Reads and parses a tape file. */
export function readTape(path: string): Tape {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (err) {
    throw new EddyError(
      "tape_invalid",
      `cannot read tape ${path}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`,
      {
        fault: "user",
      },
    );
  }
  return parseTape(text, path);
}
