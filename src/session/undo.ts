/**
 * Undo from a tape (`eddy undo TAPE`): the files the run's `write_file`/`apply_patch` calls
 * changed, read from its `tool_ended` frames' `file_changes`, restored by `undoFileChanges`
 * (src/tools/file-undo.ts: refused, nothing restored, when a file changed since). A tape is
 * untrusted input: every record is checked (shape, sizes, paths inside the workspace).
 */
import { EddyError } from "../errors.js";
import type { FileChangeRecord, Frame } from "../frames/frame.js";
import type { Tape } from "../replay/tape.js";
import { checkFileChanges, UNDO_MAX_CHANGES, undoFileChanges } from "../tools/file-undo.js";

/** The file changes a run's frames record, in order, checked (a bad record throws, naming it). */
export function fileChangesOf(frames: readonly Frame[]): FileChangeRecord[] {
  const changes: unknown[] = [];
  for (const frame of frames) {
    if (frame.type !== "tool_ended" || frame.file_changes === undefined) continue;
    if (!Array.isArray(frame.file_changes))
      throw new EddyError("invalid_argument", `undo: frame ${frame.seq}: file_changes is not a list`, {
        fault: "user",
      });
    changes.push(...frame.file_changes);
    if (changes.length > UNDO_MAX_CHANGES) break;
  }
  return checkFileChanges(changes);
}

/**
 * Restores, in `workspace`, the files the run of `tape` changed. Returns the restored paths
 * (none when the run changed no file). Throws `undo_conflict` when one changed since.
 *
 * @example
 * ```ts
 * const restored = await undoTape(readTape("run.tape"), process.cwd());
 * console.log(`restored ${restored.join(", ")}`);
 * ```
 */
export async function undoTape(tape: Tape, workspace: string): Promise<string[]> {
  const changes = fileChangesOf(tape.frames);
  if (changes.length === 0) return [];
  return undoFileChanges(changes, workspace);
}
