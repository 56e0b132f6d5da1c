/**
 * `write_file {path, content, append?}`: create or replace a file in the workspace, atomically
 * (temporary file in the same directory, then rename), creating missing parent directories inside
 * the workspace. `append: true` adds to the end instead (also atomically), which is how the model
 * writes a file too large for one call (pain point 39).
 */
import { readFile, stat } from "node:fs/promises";
import { dirname } from "node:path";
import { type ToolDefinition, toolResult } from "../tool.js";
import { resolveInWorkspace, workspaceRoot } from "../workspace.js";
import { ensureDir, writeFileAtomic } from "./atomic-write.js";
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
    const target = await resolveInWorkspace(await workspaceRoot(workspace), args.path, "write_file");
    if (target.display === ".") {
      throw toolFailure("tool_input_invalid", "write_file: path must name a file, not the workspace root");
    }
    try {
      let previous: Buffer | undefined;
      if (target.exists) {
        if ((await stat(target.absolute)).isDirectory()) {
          throw toolFailure("tool_failed", `write_file: ${target.display} is a directory`);
        }
        if (args.append === true) previous = await readFile(target.absolute);
      } else {
        await ensureDir(dirname(target.absolute));
      }
      const added = Buffer.from(args.content, "utf8");
      await writeFileAtomic(
        target.absolute,
        previous === undefined ? added : Buffer.concat([previous, added]),
      );
      const total = (previous?.length ?? 0) + added.length;
      const verb = !target.exists ? "created" : args.append === true ? "appended to" : "overwrote";
      return toolResult({
        ok: true,
        stdout: `${verb} ${target.display}: wrote ${added.length} bytes${args.append === true ? ` (file is now ${total} bytes)` : ""}`,
        artifacts: {
          path: target.display,
          bytes_written: added.length,
          bytes_total: total,
          created: !target.exists,
          append: args.append === true,
        },
      });
    } catch (error) {
      throw fsFailure("write_file", error, target.display);
    }
  },
};
