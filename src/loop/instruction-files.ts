/**
 * AGENTS.md (docs/architecture.md, "Composing runs"): instruction files from the workspace and
 * its parent folders up to the repository root (the nearest folder with a `.git`; outside a
 * repository, the workspace alone). They are added to the instructions in a fixed order — the
 * repository root's first, the workspace's own last (nearer files refine farther ones), then the
 * run's own instructions — and `run_started.instruction_files` lists them (paths relative to the
 * workspace). The CLI (`eddy run`, and each task of `eddy batch` and `eddy worker` in its own
 * workspace) reads them unless `--no-agents-md`; a program calls these itself. The files are
 * untrusted: only regular files, bounded, symlinks only to files inside the folders read.
 */
import {
  closeSync,
  constants,
  existsSync,
  fstatSync,
  lstatSync,
  openSync,
  readSync,
  realpathSync,
} from "node:fs";
import { dirname, join, relative } from "node:path";
import { isInside } from "../tools/workspace.js";

/** The file name looked for in each folder. */
export const INSTRUCTION_FILE_NAME = "AGENTS.md";

/** Largest instruction file read (a bigger one is cut, with a note). */
const MAX_BYTES = 64 * 1024;

/** Opened without following a last-component symlink, non-blocking (a FIFO opens at once), never as the terminal. */
const O_READ =
  constants.O_RDONLY | (constants.O_NONBLOCK ?? 0) | (constants.O_NOCTTY ?? 0) | (constants.O_NOFOLLOW ?? 0);

/** One instruction file: its path relative to the workspace, and its text. */
export interface InstructionFile {
  path: string;
  text: string;
}

/** Options of `findInstructionFiles`. */
export interface FindInstructionFilesOptions {
  /**
   * The folder `workspace` is a copy of (a batch task's own workspace, `--workspace-per-task`):
   * the parents' files are read above it, the workspace's own from the copy — never from the
   * copy's parents (a temporary folder that is not the user's). @defaultValue none
   */
  copyOf?: string;
  /**
   * Told of each AGENTS.md that is there but is not read whole — left out (not a regular file, a
   * symlink to outside the folders read, unreadable) or cut at 64 KiB — so the user learns what
   * the model does not see. @defaultValue none
   */
  onSkipped?: (skipped: SkippedInstructionFile) => void;
}

/** An AGENTS.md that was left out or cut: its path (as `InstructionFile.path`) and why. */
export interface SkippedInstructionFile {
  path: string;
  /** Why: `not a regular file`, `a symlink to a file outside the folders read`, … or `cut at 65536 bytes`. */
  reason: string;
  /** True when the file was read in part (cut), false when it was left out. */
  cut: boolean;
}

/**
 * The AGENTS.md files of `workspace` and its parents up to the repository root, root first.
 * Empty files are left out. The files are untrusted data: only regular files are read (a FIFO, a
 * device or a directory named AGENTS.md is skipped), at most 64 KiB of each, and a symlink is
 * followed only to a file inside the top folder read (the repository root, else the workspace).
 */
export function findInstructionFiles(
  workspace: string,
  options: FindInstructionFilesOptions = {},
): InstructionFile[] {
  const origin = options.copyOf ?? workspace;
  const folders: string[] = [];
  let dir = origin;
  for (;;) {
    folders.push(dir);
    if (existsSync(join(dir, ".git"))) break;
    const parent = dirname(dir);
    if (parent === dir) {
      folders.splice(1); // outside a repository: the workspace alone
      break;
    }
    dir = parent;
  }
  const top = folders[folders.length - 1] as string;
  // A copy's own file is the copy's (what its task sees); the parents are the original's.
  folders[0] = workspace;
  const files: InstructionFile[] = [];
  for (const folder of folders.reverse()) {
    const own = folder === workspace;
    // A copy's own symlink may point only inside the copy; any other only inside the top folder.
    const within = own && options.copyOf !== undefined ? workspace : top;
    const read = readInstructionFile(join(folder, INSTRUCTION_FILE_NAME), within);
    if (read === undefined) continue;
    const path = own ? INSTRUCTION_FILE_NAME : relative(origin, join(folder, INSTRUCTION_FILE_NAME));
    if (read.skipped !== undefined) {
      options.onSkipped?.({ path, reason: read.skipped, cut: read.text !== undefined });
    }
    if (read.text === undefined || read.text.trim() === "") continue;
    files.push({ path, text: read.text.trim() });
  }
  return files;
}

/**
 * One instruction file: undefined when there is none; else its text (cut past 64 KiB, with a
 * note) and, when it was not read whole, why (`skipped`): a symlink whose target is outside
 * `within`, anything but a regular file, or a file that cannot be opened or read.
 */
function readInstructionFile(path: string, within: string): { text?: string; skipped?: string } | undefined {
  let target = path;
  try {
    if (lstatSync(path).isSymbolicLink()) {
      try {
        target = realpathSync(path);
      } catch {
        return { skipped: "a symlink to nothing" };
      }
      if (!isInside(realpathSync(within), target))
        return { skipped: "a symlink to a file outside the folders read" };
    }
  } catch {
    return undefined; // not there
  }
  let fd: number;
  try {
    fd = openSync(target, O_READ);
  } catch (err) {
    return { skipped: `it cannot be opened (${(err as NodeJS.ErrnoException).code ?? "error"})` };
  }
  try {
    if (!fstatSync(fd).isFile()) return { skipped: "not a regular file" };
    const buffer = Buffer.alloc(MAX_BYTES + 1);
    let length = 0;
    for (;;) {
      const n = readSync(fd, buffer, length, buffer.length - length, null);
      if (n === 0) break;
      length += n;
      if (length === buffer.length) break;
    }
    const text = buffer.subarray(0, Math.min(length, MAX_BYTES)).toString("utf8");
    if (length <= MAX_BYTES) return { text };
    return { text: `${text}\n[… cut at ${MAX_BYTES} bytes]`, skipped: `cut at ${MAX_BYTES} bytes` };
  } catch (err) {
    return { skipped: `it cannot be read (${(err as NodeJS.ErrnoException).code ?? "error"})` };
  } finally {
    closeSync(fd);
  }
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
