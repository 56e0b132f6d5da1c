/**
 * A deterministic depth-first directory walk for `list_dir` and `grep`: entries of each directory
 * sorted by name (code-unit order), each directory followed by its contents. Every directory is
 * held open while its entries are used and each child is opened *inside* it without following a
 * symlink (`workspace-fs.ts`), so a directory swapped for a symlink mid-walk cannot lead the walk
 * out of the workspace. Symlinks are reported, never followed. Hidden entries, ignored entries
 * (`ignore-rules.ts`) and the skip-list directories (`node_modules`: listed, not entered) are
 * pruned unless asked for.
 */
import type { Dirent } from "node:fs";
import { readdir } from "node:fs/promises";
import { TOOL_DEFAULTS } from "../defaults.js";
import { type AnchoredDir, openChildDir } from "../workspace-fs.js";
import { compareNames, describeFsError, throwIfAborted } from "./common.js";
import { type IgnoreRules, readIgnoreText } from "./ignore-rules.js";

/** One entry met by the walk. */
export interface WalkEntry {
  /** The directory holding the entry (open while the entry is being handled). */
  parent: AnchoredDir;
  /** The entry's name in `parent`. */
  name: string;
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
  /**
   * The ignore rules in force above the start directory; the walk adds each directory's own.
   * `undefined`: nothing is ignored and the skip-list directories are entered too.
   */
  ignore: IgnoreRules | undefined;
  /** Descend into a directory? (Called after the hidden, ignore and skip-list checks.) */
  descend?: (entry: WalkEntry) => boolean;
  signal: AbortSignal;
  /** Told about directories that cannot be read; the walk goes on without them. */
  onError: (message: string) => void;
  /**
   * Told about entries skipped because their name is not valid UTF-8 (a path the tools could not
   * name back: it would read as U+FFFD and then not be found), the name shown with `\xNN` escapes.
   */
  onSkip: (message: string) => void;
}

/** Walks below the open directory `start`, whose workspace-relative path is `startDisplay`. */
export async function* walk(
  start: AnchoredDir,
  startDisplay: string,
  options: WalkOptions,
): AsyncGenerator<WalkEntry> {
  yield* walkDir(start, startDisplay, 1, options.ignore, options);
}

async function* walkDir(
  dir: AnchoredDir,
  display: string,
  depth: number,
  inherited: IgnoreRules | undefined,
  options: WalkOptions,
): AsyncGenerator<WalkEntry> {
  throwIfAborted(options.signal);
  let dirents: Dirent[];
  try {
    dirents = namedDirents(
      await readdir(dir.ref, { withFileTypes: true, encoding: "buffer" }),
      display,
      options,
    );
  } catch (error) {
    options.onError(`cannot read ${describeFsError(error, display)}`);
    return;
  }
  dirents.sort((a, b) => compareNames(a.name, b.name));
  let rules = inherited;
  if (rules !== undefined) {
    const names = new Set(dirents.map((d) => d.name));
    const text = await readIgnoreText(dir, display, (name) => names.has(name));
    if (text !== undefined) rules = rules.with(display, text);
  }
  for (const dirent of dirents) {
    if (!options.includeHidden && dirent.name.startsWith(".")) continue;
    const entry: WalkEntry = {
      parent: dir,
      name: dirent.name,
      display: display === "." ? dirent.name : `${display}/${dirent.name}`,
      kind: kindOf(dirent),
      depth,
    };
    if (rules?.ignores(entry.display, entry.kind === "dir")) continue;
    yield entry;
    if (
      entry.kind !== "dir" ||
      depth >= options.maxDepth ||
      (rules !== undefined && TOOL_DEFAULTS.skipDirs.includes(dirent.name)) ||
      !(options.descend?.(entry) ?? true)
    ) {
      continue;
    }
    let child: AnchoredDir;
    try {
      child = await openChildDir(dir, dirent.name);
    } catch (error) {
      options.onError(`cannot read ${describeFsError(error, entry.display)}`);
      continue;
    }
    try {
      yield* walkDir(child, entry.display, depth + 1, rules, options);
    } finally {
      await child.close();
    }
  }
}

/**
 * The entries whose names are valid UTF-8, with their names as strings; the others are reported
 * to `onSkip` and left out (docs/pitfalls.md #80).
 */
function namedDirents(raw: Dirent<Buffer>[], display: string, options: WalkOptions): Dirent[] {
  const named: Dirent[] = [];
  for (const dirent of raw) {
    const name = dirent.name.toString("utf8");
    if (!Buffer.from(name, "utf8").equals(dirent.name)) {
      const shown = escapeBytes(dirent.name);
      options.onSkip(
        `skipped ${display === "." ? shown : `${display}/${shown}`}: its name is not valid UTF-8`,
      );
      continue;
    }
    named.push(Object.assign(dirent, { name }) as unknown as Dirent);
  }
  return named;
}

/** A name's printable ASCII as it is, every other byte as `\xNN`. */
function escapeBytes(bytes: Buffer): string {
  let out = "";
  for (const b of bytes)
    out +=
      b >= 0x20 && b < 0x7f && b !== 0x5c ? String.fromCharCode(b) : `\\x${b.toString(16).padStart(2, "0")}`;
  return out;
}

function kindOf(dirent: Dirent): WalkEntry["kind"] {
  if (dirent.isSymbolicLink()) return "symlink";
  if (dirent.isDirectory()) return "dir";
  if (dirent.isFile()) return "file";
  return "other";
}
