/**
 * The tape recorder: a frame observer that appends each frame to the tape as it is emitted, with
 * a synchronous write, so a crash or a kill leaves a valid prefix. Secrets never reach a tape:
 * frames carry none by construction, and as defence in depth any configured secret value found in
 * a line is replaced by `***` before it is written.
 */
import { closeSync, openSync, writeSync } from "node:fs";
import { EddyError } from "../errors.js";
import type { Frame } from "../frames/frame.js";
import { redactSecrets } from "../util/redact.js";
import type { TapeHeader } from "./tape.js";

/** Writes a tape as the run goes. */
export interface TapeRecorder {
  /** Pass as `onFrame` to `runAgent`. */
  observer: (frame: Frame) => void;
  close(): void;
}

/** A tape recorder writing to `path` (the header first, then each frame as it is emitted). */
export function createTapeRecorder(
  path: string,
  header: TapeHeader,
  secrets: readonly (string | undefined)[] = [],
): TapeRecorder {
  const fd = openTapeFile(path);
  const write = (value: unknown) => {
    writeSync(fd, `${redactSecrets(JSON.stringify(value), secrets)}\n`);
  };
  write(header);
  let open = true;
  return {
    observer: (frame) => {
      if (open) write(frame);
    },
    close: () => {
      if (!open) return;
      open = false;
      closeSync(fd);
    },
  };
}

/**
 * Opens `path` for writing a tape (created or truncated); a path that cannot be written is a user
 * error (`invalid_config`) naming the path and the reason.
 */
export function openTapeFile(path: string): number {
  try {
    return openSync(path, "w");
  } catch (err) {
    throw new EddyError(
      "invalid_config",
      `cannot write the tape ${path}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`,
      { fault: "user" },
    );
  }
}
