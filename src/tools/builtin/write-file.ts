/**
 * `write_file {path, content, append?}`: create or replace a file in the workspace, atomically
 * (temporary file in the same directory, then rename), creating missing parent directories inside
 * the workspace. Every step happens inside a checked directory descriptor (`workspace-fs.ts`), so
 * a directory swapped for a symlink meanwhile cannot redirect the write outside. `append: true` adds to the end instead (also atomically), which is how the model
 * writes a file too large for one call (docs/pitfalls.md #39).
 */
import { FILE_CHANGE_CONTENT_CAP, fileChangeRecord } from "../file-changes.js";
import { type ToolDefinition, toolResult } from "../tool.js";
import { outsideWorkspace, resolveWritableInWorkspace, workspaceRoot } from "../workspace.js";
import {
  lstatChild,
  openDirForWrite,
  readChildFile,
  splitInside,
  writeChildAtomic,
} from "../workspace-fs.js";
import { fsFailure, toolFailure } from "./common.js";

/** Arguments of `write_file`. */
export interface WriteFileArgs {
  path: string;
  content: string;
  append?: boolean;
}

/** The `write_file` tool. */
export const writeFileTool: ToolDefinition<WriteFileArgs> = {
  name: "write_file",
  description:
    "Create or overwrite a text file in the workspace with the given content (parent directories are created). " +
    "With append:true, add the content to the end of the file instead (creating it if needed); use this to write a " +
    "large file in several calls. For small edits to an existing file prefer apply_patch.",
  parameters: {
    type: "object",
    properties: {
      path: { type: "string", minLength: 1, description: "File path relative to the workspace root." },
      content: { type: "string", description: "The full text to write (or to append)." },
      append: { type: "boolean", description: "Append instead of replacing. Default false." },
    },
    required: ["path", "content"],
    additionalProperties: false,
  },
  async execute(args, { workspace }) {
    const root = await workspaceRoot(workspace);
    const target = await resolveWritableInWorkspace(root, args.path, "write_file");
    if (target.display === ".") {
      throw toolFailure("tool_input_invalid", "write_file: path must name a file, not the workspace root");
    }
    const where = { tool: "write_file", display: target.display };
    // `target.absolute` is the real path (a symlink that stays inside is written through). The
    // write happens inside its parent directory, opened and checked component by component.
    const { parent, name } = splitInside(root, target.absolute);
    try {
      const { dir } = await openDirForWrite(root, parent, where, { create: true });
      try {
        const existing = await lstatChild(dir, name);
        if (existing?.isSymbolicLink()) {
          throw outsideWorkspace("write_file", args.path, "it was replaced by a symlink while being written");
        }
        if (existing?.isDirectory()) {
          throw toolFailure("tool_failed", `write_file: ${target.display} is a directory`);
        }
        const append = args.append === true;
        // Read before the write whenever it exists: the change record (undo) keeps what it was.
        // (A file over the record's cap is not read just for that: its change is recorded as omitted.)
        const readIt = existing !== undefined && (append || existing.size <= FILE_CHANGE_CONTENT_CAP);
        const original = readIt ? await readChildFile(dir, name) : existing === undefined ? null : undefined;
        const previous = append ? (original ?? undefined) : undefined;
        const added = Buffer.from(args.content, "utf8");
        const mode = existing === undefined ? undefined : existing.mode & 0o7777;
        const written = previous === undefined ? added : Buffer.concat([previous, added]);
        await writeChildAtomic(dir, name, written, mode);
        const total = written.length;
        const created = existing === undefined;
        const verb = created ? "created" : append ? "appended to" : "overwrote";
        return toolResult({
          ok: true,
          stdout: `${verb} ${target.display}: wrote ${added.length} bytes${append ? ` (file is now ${total} bytes)` : ""}`,
          artifacts: {
            path: target.display,
            bytes_written: added.length,
            bytes_total: total,
            created,
            append,
          },
          fileChanges: [
            original === undefined
              ? { path: target.display, encoding: "utf8", omitted: "too_large" }
              : fileChangeRecord(target.display, original, written),
          ],
        });
      } finally {
        await dir.close();
      }
    } catch (error) {
      throw fsFailure("write_file", error, target.display);
    }
  },
};
