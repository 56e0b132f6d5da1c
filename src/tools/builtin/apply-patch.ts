/**
 * `apply_patch {patch}`: add, update (and move) and delete files with one Codex-style patch
 * (`patch-parser.ts`). All or nothing: every path is checked and every new file content is
 * computed in memory first; only then are files written (atomically, one by one), and if a write
 * fails, the files already written are restored and the call fails with nothing changed.
 */
import { readFile, rm, stat } from "node:fs/promises";
import { dirname } from "node:path";
import { EddyError } from "../../errors.js";
import { type ToolDefinition, toolResult } from "../tool.js";
import { resolveInWorkspace, type WorkspacePath, workspaceRoot } from "../workspace.js";
import { ensureDir, writeFileAtomic } from "./atomic-write.js";
import { describeFsError, fsFailure, toolFailure } from "./common.js";
import { applyChunks, PatchMismatchError } from "./patch-apply.js";
import { PatchSyntaxError, parsePatch } from "./patch-parser.js";

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
}

/** The file operations `commitChanges` uses (replaceable in tests to inject failures). */
export interface PatchIo {
  write(absolute: string, content: string | Uint8Array): Promise<void>;
  remove(absolute: string): Promise<void>;
  ensureDir(dir: string): Promise<string | undefined>;
}

const defaultIo: PatchIo = {
  write: writeFileAtomic,
  remove: (absolute) => rm(absolute, { force: true }),
  ensureDir,
};

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
  async execute(args, { workspace }) {
    let ops: ReturnType<typeof parsePatch>;
    try {
      ops = parsePatch(args.patch);
    } catch (error) {
      if (error instanceof PatchSyntaxError) {
        throw toolFailure("tool_input_invalid", `apply_patch: invalid patch: ${error.message}`);
      }
      throw error;
    }
    const root = await workspaceRoot(workspace);
    const plan = new Map<string, FileChange>();
    const summary: string[] = [];

    const target = (path: string) => resolveInWorkspace(root, path, "apply_patch");
    const change = async (t: WorkspacePath): Promise<FileChange> => {
      const known = plan.get(t.absolute);
      if (known !== undefined) return known;
      const entry: FileChange = { absolute: t.absolute, display: t.display, original: null, next: null };
      if (t.exists) {
        try {
          if ((await stat(t.absolute)).isDirectory()) {
            throw toolFailure("tool_failed", `apply_patch: ${t.display} is a directory`);
          }
          entry.original = await readFile(t.absolute);
        } catch (error) {
          throw fsFailure("apply_patch", error, t.display);
        }
      }
      entry.next = entry.original === null ? null : entry.original.toString("utf8");
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
        entry.next = null;
        summary.push(`D ${t.display}`);
        continue;
      }
      if (entry.original?.subarray(0, 8192).includes(0)) {
        throw toolFailure("tool_failed", `apply_patch: ${t.display} is a binary file; it cannot be patched`);
      }
      let updated: string;
      try {
        updated = applyChunks(entry.next, op.chunks, t.display);
      } catch (error) {
        if (error instanceof PatchMismatchError) {
          throw toolFailure("tool_failed", `apply_patch: nothing was changed. ${error.message}`);
        }
        throw error;
      }
      if (op.moveTo === undefined) {
        entry.next = updated;
        summary.push(`M ${t.display}`);
        continue;
      }
      const destination = await change(await target(op.moveTo));
      entry.next = null;
      destination.next = updated;
      summary.push(`M ${t.display} -> ${destination.display}`);
    }

    await commitChanges([...plan.values()]);
    const changed = [...plan.values()].filter((c) => c.next !== (c.original?.toString("utf8") ?? null));
    return toolResult({
      ok: true,
      stdout: `Applied the patch:\n${summary.join("\n")}`,
      artifacts: { changed_files: changed.map((c) => c.display) },
    });
  },
};

/**
 * Writes every planned change; on the first failure restores what was already written (and
 * removes directories it created), then throws `tool_failed` saying nothing was changed.
 */
export async function commitChanges(changes: readonly FileChange[], io: PatchIo = defaultIo): Promise<void> {
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
  for (const dir of [...createdDirs].reverse())
    await rm(dir, { recursive: true, force: true }).catch(() => {});
  return failures;
}
