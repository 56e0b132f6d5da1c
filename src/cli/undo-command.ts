/**
 * `eddy undo TAPE`: restores the files the recorded run's `write_file`/`apply_patch` calls changed
 * (their `tool_ended.file_changes`), in the workspace — refused, nothing restored, when one changed
 * since (src/tools/file-undo.ts). The tape is untrusted: its records are checked before anything is
 * written (src/session/undo.ts).
 */
import { resolve } from "node:path";
import { readTape } from "../replay/tape.js";
import { undoTape } from "../session/undo.js";
import { SUCCESS } from "./exit-codes.js";
import { checkWorkspace } from "./preflight.js";
import type { CliIo } from "./run-command.js";
import { terminalSafe } from "./terminal.js";

/** Restores the tape's changes; prints what was restored (0), or nothing to undo (0). */
export async function undoCommand(tape: string, flags: { workspace?: string }, io: CliIo): Promise<number> {
  const workspace = resolve(io.cwd, flags.workspace ?? ".");
  checkWorkspace(workspace);
  const restored = await undoTape(readTape(resolve(io.cwd, tape), tape), workspace);
  io.stdout.write(
    restored.length === 0
      ? "nothing to undo: the run changed no file\n"
      : `restored ${restored.map((path) => terminalSafe(path, { oneLine: true })).join(", ")}\n`,
  );
  return SUCCESS;
}
