/**
 * AGENTS.md (docs/architecture.md, "Composing runs"): instruction files from the workspace and
 * its parent folders up to the repository root (the nearest folder with a `.git`; outside a
 * repository, the workspace alone). They are added to the instructions in a fixed order — the
 * repository root's first, the workspace's own last (nearer files refine farther ones), then the
 * run's own instructions — and `run_started.instruction_files` lists them (paths relative to the
 * workspace). The CLI reads them unless `--no-agents-md`; a program calls these itself.
 */
import { existsSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative } from "node:path";

/** The file name looked for in each folder. */
export const INSTRUCTION_FILE_NAME = "AGENTS.md";

/** Largest instruction file read (a bigger one is cut, with a note). */
const MAX_BYTES = 64 * 1024;

/** One instruction file: its path relative to the workspace, and its text. */
export interface InstructionFile {
  path: string;
  text: string;
}

/**
 * The AGENTS.md files of `workspace` and its parents up to the repository root, root first.
 * Empty files are left out.
 */
export function findInstructionFiles(workspace: string): InstructionFile[] {
  const folders: string[] = [];
  let dir = workspace;
  for (;;) {
    folders.push(dir);
    if (existsSync(join(dir, ".git"))) break;
    const parent = dirname(dir);
    if (parent === dir) return readAll(workspace, [workspace]);
    dir = parent;
  }
  return readAll(workspace, folders.reverse());
}

function readAll(workspace: string, folders: readonly string[]): InstructionFile[] {
  const files: InstructionFile[] = [];
  for (const folder of folders) {
    const path = join(folder, INSTRUCTION_FILE_NAME);
    let text: string;
    try {
      if (!statSync(path).isFile()) continue;
      const raw = readFileSync(path);
      text = raw.subarray(0, MAX_BYTES).toString("utf8");
      if (raw.length > MAX_BYTES) text += `\n[… cut at ${MAX_BYTES} bytes]`;
    } catch {
      continue;
    }
    if (text.trim() === "") continue;
    files.push({ path: relative(workspace, path) || INSTRUCTION_FILE_NAME, text: text.trim() });
  }
  return files;
}

/**
 * The instructions with the files before them, each headed by its path: the spec's
 * `instructions` and `instruction_files` for a run that uses them.
 */
export function withInstructionFiles(
  instructions: string | undefined,
  files: readonly InstructionFile[],
): { instructions?: string; instruction_files?: string[] } {
  if (files.length === 0) return instructions === undefined ? {} : { instructions };
  const parts = files.map((f) => `Instructions from ${f.path}:\n\n${f.text}`);
  if (instructions !== undefined && instructions !== "") parts.push(instructions);
  return { instructions: parts.join("\n\n"), instruction_files: files.map((f) => f.path) };
}
