/**
 * `apply_patch {patch}`: add, update (and move) and delete files with one Codex-style patch
 * (`patch-parser.ts`). All or nothing: every path is checked and every new file content is
 * computed in memory first; only then are files written (atomically, one by one), and if a write
 * fails, the files already written are restored and the call fails with nothing changed.
 */
import { lstat } from "node:fs/promises";
import { dirname, join, relative } from "node:path";
import { EddyError } from "../../errors.js";
import { kindOf } from "../../util/regular-file.js";
import { fileChangeRecord } from "../file-changes.js";
import { type ToolDefinition, toolResult } from "../tool.js";
import { resolveWritableInWorkspace, toDisplay, type WorkspacePath, workspaceRoot } from "../workspace.js";
import {
  type AnchoredDir,
  lstatChild,
  openDirForWrite,
  openForRead,
  removeChildFile,
  removeChildTree,
  splitInside,
  writeChildAtomic,
} from "../workspace-fs.js";
import { describeFsError, fsFailure, toolFailure } from "./common.js";
import type { ChunksInput, ChunksOutcome } from "./patch-apply.js";
import { type PatchOperation, PatchSyntaxError, parsePatch } from "./patch-parser.js";
import { runInWorker } from "./worker-task.js";

/** Arguments of `apply_patch`. */
export interface ApplyPatchArgs {
  patch: string;
}

/** The planned state of one file: what it was (for rollback) and what it becomes (`null`: deleted). */
export interface FileChange {
  absolute: string;
  display: string;
  original: Buffer | null;
  next: string | null;
  /** Set on a file a `*** Move to:` took away: where its content went (display path). */
  movedTo?: string;
  /** Set on a move's destination: the file its content came from. */
  movedFrom?: FileChange;
}

/** The file operations `commitChanges` uses, on real paths (replaceable in tests to inject failures). */
export interface PatchIo {
  /** Replaces (or creates) a file atomically, keeping an existing file's permission bits. */
  write(absolute: string, content: string | Uint8Array): Promise<void>;
  /** Removes a file; a missing one is fine. */
  remove(absolute: string): Promise<void>;
  /** Creates a directory and its missing parents; returns the topmost one created, if any. */
  ensureDir(dir: string): Promise<string | undefined>;
  /** Removes a directory created by `ensureDir`, with its contents (on rollback). */
  removeTree(dir: string): Promise<void>;
}

/**
 * The real `PatchIo` for the workspace `root`: each operation happens inside its parent
 * directory, opened and checked component by component (`workspace-fs.ts`), so a directory
 * swapped for a symlink meanwhile cannot take a write or a removal outside the workspace.
 */
export function workspaceIo(root: string): PatchIo {
  const where = (absolute: string) => ({ tool: "apply_patch", display: toDisplay(relative(root, absolute)) });
  const inParent = async (absolute: string, use: (dir: AnchoredDir, name: string) => Promise<void>) => {
    const { parent, name } = splitInside(root, absolute);
    const { dir } = await openDirForWrite(root, parent, where(absolute), { create: false });
    try {
      await use(dir, name);
    } finally {
      await dir.close();
    }
  };
  return {
    write: (absolute, content) =>
      inParent(absolute, async (dir, name) => {
        const existing = await lstatChild(dir, name);
        const mode = existing?.isFile() ? existing.mode & 0o7777 : undefined;
        await writeChildAtomic(dir, name, content, mode);
      }),
    remove: (absolute) => inParent(absolute, removeChildFile),
    async ensureDir(absolute) {
      const rel = relative(root, absolute);
      const { dir, created } = await openDirForWrite(root, rel, where(absolute), { create: true });
      await dir.close();
      return created;
    },
    removeTree: (absolute) => inParent(absolute, removeChildTree),
  };
}

/** The `apply_patch` tool. */
export const applyPatchTool: ToolDefinition<ApplyPatchArgs> = {
  name: "apply_patch",
  description: [
    "Edit files in the workspace with one patch, applied all or nothing. Format:",
    "*** Begin Patch",
    "*** Add File: path/new.txt",
    "+each line of the new file starts with +",
    "*** Update File: path/old.txt",
    "*** Move to: path/renamed.txt   (optional)",
    "@@ a line near the change, to locate it (optional)",
    " unchanged context line (starts with a space)",
    "-line to remove",
    "+line to add",
    "*** Delete File: path/gone.txt",
    "*** End Patch",
    "Give about 3 lines of context around each change; context and '-' lines must match the file.",
  ].join("\n"),
  parameters: {
    type: "object",
    properties: {
      patch: {
        type: "string",
        minLength: 1,
        description: "The whole patch, from *** Begin Patch to *** End Patch.",
      },
    },
    required: ["patch"],
    additionalProperties: false,
  },
  async execute(args, { workspace, signal }) {
    const ops = parseOrRefuse(args.patch);
    const root = await workspaceRoot(workspace);
    const { changes, summary } = await planPatch(ops, root, signal);
    await commitChanges(changes, workspaceIo(root));
    const changed = changes.filter((c) => c.next !== (c.original?.toString("utf8") ?? null));
    return toolResult({
      ok: true,
      stdout: `Applied the patch:\n${summary.join("\n")}`,
      artifacts: { changed_files: changed.map((c) => c.display) },
      fileChanges: changed.map((c) => fileChangeRecord(c.display, c.original, c.next)),
    });
  },
};

/** What a patch will do: each file's planned change (in the order first touched) and a summary line per operation. */
export interface PatchPlan {
  changes: FileChange[];
  summary: string[];
}

/**
 * Plans `ops` against the files in the workspace `root`, in memory: the operations chain (an Add
 * then an Update of one file updates the added text; a move carries the updated text). Nothing is
 * written. Throws `tool_failed` naming the file for an operation that cannot apply. The approval
 * view (src/cli/approval-view.ts) shows this same plan, so what is approved is what is applied.
 */
export async function planPatch(
  ops: readonly PatchOperation[],
  root: string,
  signal: AbortSignal,
): Promise<PatchPlan> {
  const plan = new Map<string, FileChange>();
  const summary: string[] = [];
  const target = (path: string) => resolveWritableInWorkspace(root, path, "apply_patch");
  const change = async (t: WorkspacePath): Promise<FileChange> => {
    const known = plan.get(t.absolute);
    if (known !== undefined) return known;
    const original = t.exists ? await readOriginal(root, t) : null;
    const entry: FileChange = {
      absolute: t.absolute,
      display: t.display,
      original,
      next: original === null ? null : original.toString("utf8"),
    };
    plan.set(t.absolute, entry);
    return entry;
  };
  for (const op of ops) {
    const t = await target(op.path);
    const entry = await change(t);
    if (op.kind === "add") {
      entry.next = op.contents;
      summary.push(`A ${t.display}`);
      continue;
    }
    if (entry.next === null) {
      const hint = op.kind === "update" ? "; to create it use *** Add File" : "";
      throw toolFailure("tool_failed", `apply_patch: ${t.display}: no such file${hint}`);
    }
    if (op.kind === "delete") {
      await refuseSymlink(root, t, "delete");
      entry.next = null;
      summary.push(`D ${t.display}`);
      continue;
    }
    const updated = await updatedText(entry, op, signal);
    if (op.moveTo === undefined) {
      entry.next = updated;
      summary.push(`M ${t.display}`);
      continue;
    }
    await refuseSymlink(root, t, "move");
    const to = await target(op.moveTo);
    await refuseSymlink(root, to, "move onto");
    const destination = await change(to);
    entry.next = null;
    entry.movedTo = destination.display;
    destination.next = updated;
    destination.movedFrom = entry;
    summary.push(`M ${t.display} -> ${destination.display}`);
  }
  return { changes: [...plan.values()], summary };
}

/** The text of `entry` with the hunks of `op` applied; throws `tool_failed` when they do not fit. */
async function updatedText(
  entry: FileChange,
  op: Extract<PatchOperation, { kind: "update" }>,
  signal: AbortSignal,
): Promise<string> {
  if (entry.original?.subarray(0, 8192).includes(0)) {
    throw toolFailure("tool_failed", `apply_patch: ${entry.display} is a binary file; it cannot be patched`);
  }
  // Finding the hunks costs up to (file lines × hunk lines): a large file and a long hunk would
  // block the event loop, so it runs in the tools worker, where a cancellation can stop it.
  const applied = await runInWorker<ChunksOutcome>(
    "apply_chunks",
    { content: entry.next ?? "", chunks: op.chunks, path: entry.display } satisfies ChunksInput,
    signal,
  );
  if ("mismatch" in applied) {
    throw toolFailure("tool_failed", `apply_patch: nothing was changed. ${applied.mismatch}`);
  }
  return applied.updated;
}

/** The patch's operations; a syntax error is the model's (`tool_input_invalid`). */
function parseOrRefuse(patch: string): ReturnType<typeof parsePatch> {
  try {
    return parsePatch(patch);
  } catch (error) {
    if (error instanceof PatchSyntaxError) {
      throw toolFailure("tool_input_invalid", `apply_patch: invalid patch: ${error.message}`);
    }
    throw error;
  }
}

/**
 * Refuses to delete or move a symlink, or to move a file onto one. The patch names the link, but
 * its operations act on the real path (the file the link points to): deleting would remove that
 * file and leave the link dangling — which `eddy undo` cannot restore (file-undo.ts refuses a path
 * through a dangling link) — and a move would overwrite it. Updating or adding through a link that
 * stays inside writes the file it points to, as `write_file` does (docs/pitfalls.md).
 */
async function refuseSymlink(root: string, t: WorkspacePath, what: "delete" | "move" | "move onto") {
  const link = await lstat(join(root, t.display)).then(
    (s) => s.isSymbolicLink(),
    () => false,
  );
  if (!link) return;
  const real = toDisplay(relative(root, t.absolute));
  throw toolFailure(
    "tool_failed",
    `apply_patch: ${t.display} is a symlink (to ${real}); a patch does not ${what} a symlink, since that would change ${real}, not the link. Patch ${real} by its own path, or change the link with the shell tool`,
  );
}

/** The bytes of an existing file the patch touches (a directory, a FIFO or a device is refused). */
async function readOriginal(root: string, t: WorkspacePath): Promise<Buffer> {
  try {
    const opened = await openForRead(root, t.absolute, { tool: "apply_patch", display: t.display });
    try {
      if (opened.stats.isDirectory()) {
        throw toolFailure("tool_failed", `apply_patch: ${t.display} is a directory`);
      }
      // A FIFO or a device would read as empty (or forever): only a regular file is patched.
      if (!opened.stats.isFile()) {
        throw toolFailure(
          "tool_failed",
          `apply_patch: ${t.display} is ${kindOf(opened.stats)}, not a regular file; a patch only changes regular files`,
        );
      }
      return await opened.handle.readFile();
    } finally {
      await opened.handle.close();
    }
  } catch (error) {
    throw fsFailure("apply_patch", error, t.display);
  }
}

/**
 * Writes every planned change; on the first failure restores what was already written (and
 * removes directories it created), then throws `tool_failed` saying nothing was changed.
 */
export async function commitChanges(changes: readonly FileChange[], io: PatchIo): Promise<void> {
  const done: FileChange[] = [];
  const createdDirs: string[] = [];
  for (const c of changes) {
    if (c.next === (c.original?.toString("utf8") ?? null)) continue; // unchanged
    try {
      if (c.next === null) {
        await io.remove(c.absolute);
      } else {
        if (c.original === null) {
          const created = await io.ensureDir(dirname(c.absolute));
          if (created !== undefined) createdDirs.push(created);
        }
        await io.write(c.absolute, c.next);
      }
      done.push(c);
    } catch (error) {
      const failures = await rollback(done, createdDirs, io);
      const restored =
        failures.length === 0
          ? "nothing was changed (files already written were restored)"
          : `restoring also failed for: ${failures.join(", ")}`;
      throw new EddyError(
        "tool_failed",
        `apply_patch: writing ${describeFsError(error, c.display)}; ${restored}`,
        { fault: "system" },
      );
    }
  }
}

async function rollback(
  done: readonly FileChange[],
  createdDirs: readonly string[],
  io: PatchIo,
): Promise<string[]> {
  const failures: string[] = [];
  for (const c of [...done].reverse()) {
    try {
      if (c.original === null) await io.remove(c.absolute);
      else await io.write(c.absolute, c.original);
    } catch {
      failures.push(c.display);
    }
  }
  for (const dir of [...createdDirs].reverse()) await io.removeTree(dir).catch(() => {});
  return failures;
}
