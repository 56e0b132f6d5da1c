/**
 * The parameter schemas of the built-in tools, by tool name: what scripts/update-tool-validators.ts
 * compiles ahead of time and precompiled.ts registers.
 */
import type { JsonSchema } from "../tool.js";
import { applyPatchTool } from "./apply-patch.js";
import { grepTool } from "./grep.js";
import { listDirTool } from "./list-dir.js";
import { readFileTool } from "./read-file.js";
import { SHELL_PARAMETERS } from "./shell.js";
import { writeFileTool } from "./write-file.js";

/** Each built-in tool's `parameters` object (the very object its definition carries). */
export const BUILTIN_PARAMETERS = {
  read_file: readFileTool.parameters as JsonSchema,
  list_dir: listDirTool.parameters as JsonSchema,
  grep: grepTool.parameters as JsonSchema,
  write_file: writeFileTool.parameters as JsonSchema,
  apply_patch: applyPatchTool.parameters as JsonSchema,
  shell: SHELL_PARAMETERS as JsonSchema,
} as const;
