/**
 * A deterministic depth-first directory walk for `list_dir` and `grep`: entries of each directory
 * sorted by name (code-unit order), each directory followed by its contents. Symlinks are reported
 * but never followed, so a walk cannot leave the workspace. Hidden entries and the skip-list
 * directories (`node_modules`, `.git`) are pruned unless asked for.
 */
import type { Dirent } from "node:fs";
import { readdir } from "node:fs/promises";
import { join } from "node:path";
import { TOOL_DEFAULTS } from "../defaults.js";
import { compareNames, describeFsError, throwIfAborted } from "./common.js";

/** One entry met by the walk. */
export interface WalkEntry {
  /** Absolute path (below the real workspace root). */
  absolute: string;
  /** Workspace-relative, `/`-separated path. */
  display: string;
  kind: "file" | "dir" | "symlink" | "other";
  /** 1 for the children of the start directory. */
  depth: number;
}

/** Options of `walk`. */
export interface WalkOptions {
  /** Deepest level yielded (1 = only the start directory's children). */
  maxDepth: number;
  /** Yield and descend into dot-entries. */
  includeHidden: boolean;
  /** Descend into a directory? (Called after the hidden and skip-list checks.) */
  descend?: (entry: WalkEntry) => boolean;
  signal: AbortSignal;
  /** Told about directories that cannot be read; the walk goes on without them. */
  onError?: (message: string) => void;
}

/** Walks below `start` (absolute) whose workspace-relative path is `startDisplay`. */
export async function* walk(
  start: string,
  startDisplay: string,
  options: WalkOptions,
): AsyncGenerator<WalkEntry> {
  yield* walkDir(start, startDisplay, 1, options);
}

async function* walkDir(
  dir: string,
  display: string,
  depth: number,
  options: WalkOptions,
): AsyncGenerator<WalkEntry> {
  throwIfAborted(options.signal);
  let dirents: Dirent[];
  try {
    dirents = await readdir(dir, { withFileTypes: true });
  } catch (error) {
    options.onError?.(`cannot read ${describeFsError(error, display)}`);
    return;
  }
  dirents.sort((a, b) => compareNames(a.name, b.name));
  for (const dirent of dirents) {
    if (!options.includeHidden && dirent.name.startsWith(".")) continue;
    const entry: WalkEntry = {
      absolute: join(dir, dirent.name),
      display: display === "." ? dirent.name : `${display}/${dirent.name}`,
      kind: dirent.isSymbolicLink()
        ? "symlink"
        : dirent.isDirectory()
          ? "dir"
          : dirent.isFile()
            ? "file"
            : "other",
      depth,
    };
    yield entry;
    if (
      entry.kind === "dir" &&
      depth < options.maxDepth &&
      !TOOL_DEFAULTS.skipDirs.includes(dirent.name) &&
      (options.descend?.(entry) ?? true)
    ) {
      yield* walkDir(entry.absolute, entry.display, depth + 1, options);
    }
  }
}
