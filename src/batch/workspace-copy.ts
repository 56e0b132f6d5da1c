/**
 * A task's own copy of the workspace (`--workspace-per-task`, run-task.ts). Regular files and
 * folders are copied, symlinks as they are (the file tools refuse any that lead out of the copy);
 * special files — FIFOs, sockets, character and block devices — are not: `cpSync` cannot copy a
 * FIFO or a socket (the whole batch used to abort on one) and would read a device without end.
 * They are listed instead, so the task's result can say what its copy lacks.
 *
 * A copy that fails (a full disk, an unreadable file, a folder that cannot be made) removes what it
 * made and throws one line; the task fails with it, never the batch (`workspaceCopyFailed`).
 */
import { cpSync, lstatSync, rmSync } from "node:fs";
import { dirname, relative, sep } from "node:path";
import { EddyError } from "../errors.js";
import type { FrameError } from "../frames/frame.js";
import { makeDirSync } from "../util/make-dir.js";

/** What a copy left out. */
export interface WorkspaceCopy {
  /** Special files not copied, workspace-relative, `/`-separated, in the order met. */
  skipped: string[];
}

/**
 * Copies the workspace `from` to `to` (replacing what is there, creating its parent folder),
 * skipping special files (see the module comment).
 */
export function copyWorkspace(from: string, to: string): WorkspaceCopy {
  const skipped: string[] = [];
  try {
    rmSync(to, { recursive: true, force: true });
    makeDirSync(dirname(to));
    cpSync(from, to, {
      recursive: true,
      verbatimSymlinks: true,
      errorOnExist: true,
      force: false,
      filter: (source) => {
        const stats = lstatSync(source);
        if (stats.isFile() || stats.isDirectory() || stats.isSymbolicLink()) return true;
        skipped.push(relative(from, source).split(sep).join("/"));
        return false;
      },
    });
  } catch (err) {
    removeQuietly(to);
    const reason = (err as Error).message.split("\n")[0];
    throw new EddyError(
      "workspace_copy_failed",
      `cannot copy the workspace ${from} for the task: ${reason}`,
      {
        fault: "system",
        cause: err,
      },
    );
  }
  return { skipped };
}

function removeQuietly(path: string): void {
  try {
    rmSync(path, { recursive: true, force: true });
  } catch {
    // Nothing was made there (its parent is not a folder): nothing to remove.
  }
}

/** The error of a task whose workspace could not be made (`runTask` fails the task with it). */
export function workspaceCopyFailed(err: unknown): FrameError {
  const message = err instanceof Error ? (err.message.split("\n")[0] ?? err.name) : String(err);
  return EddyError.isInstance(err) && err.code === "workspace_copy_failed"
    ? { code: "workspace_copy_failed", message }
    : { code: "workspace_copy_failed", message: `cannot make the task's workspace: ${message}` };
}
