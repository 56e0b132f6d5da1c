/**
 * Which entries a directory walk skips by default, the way ripgrep decides it: the rules of every
 * `.gitignore` and `.ignore` from the workspace root down to the entry's directory (a deeper file
 * wins over a shallower one, `.ignore` over `.gitignore` in the same directory, the last matching
 * rule within a file wins, `!rule` re-includes), the root's `.git/info/exclude`, and `.git`
 * itself. The gitignore pattern semantics are the `ignore` package's (the matcher
 * ESLint and Prettier use). Differences from ripgrep: the rules apply whether or not the workspace
 * is a git repository (as `rg --no-require-git`), and nothing above the workspace root is read
 * (no global excludes file).
 *
 * A path the caller names explicitly is searched even when it is ignored (`list_dir node_modules`
 * lists it, as `rg PATTERN node_modules` searches it): the rules that ignore the named directory
 * are set aside below it, the others (`*.log`) still apply.
 */

import type { FileHandle } from "node:fs/promises";
import { join } from "node:path";
import ignore, { type Ignore } from "ignore";
import { type AnchoredDir, errnoOf, openChildDir, openChildFile, openDir } from "../workspace-fs.js";

/** The per-directory ignore files, lowest precedence first. */
export const IGNORE_FILES = [".gitignore", ".ignore"] as const;

/** Ignore files larger than this are not read (a hostile multi-gigabyte `.gitignore` costs nothing). */
const MAX_IGNORE_FILE_BYTES = 1024 * 1024;

/** The ignore rules in force in one directory of a walk. Immutable: `with` returns new rules. */
export interface IgnoreRules {
  /** True when the entry at workspace-relative `display` is excluded (`isDir`: it is a directory). */
  ignores(display: string, isDir: boolean): boolean;
  /** These rules plus the rules of the directory `base` (workspace-relative), which take precedence. */
  with(base: string, text: string): IgnoreRules;
}

interface Layer {
  /** Workspace-relative directory the rules are relative to ("." for the root). */
  base: string;
  matcher: Ignore;
}

/** Rules with no ignore file read yet (only `.git` is excluded). */
export function emptyIgnoreRules(): IgnoreRules {
  return rulesOf([]);
}

function rulesOf(layers: readonly Layer[]): IgnoreRules {
  return {
    ignores(display, isDir) {
      // A `.git` directory, or the `.git` file of a worktree or submodule: version-control metadata.
      if (baseName(display) === ".git") return true;
      for (let i = layers.length - 1; i >= 0; i--) {
        const layer = layers[i] as Layer;
        const result = layer.matcher.test(relativeTo(layer.base, display) + (isDir ? "/" : ""));
        if (result.ignored) return true;
        if (result.unignored) return false;
      }
      return false;
    },
    with(base, text) {
      return rulesOf([...layers, { base, matcher: ignore().add(text) }]);
    },
  };
}

/**
 * The rules for a walk of the workspace directory `display` below `root` (real), or `undefined`
 * when the call asked to include ignored entries.
 */
export async function walkRules(
  root: string,
  display: string,
  includeIgnored: boolean,
  tool: string,
): Promise<IgnoreRules | undefined> {
  if (includeIgnored) return undefined;
  return rulesAbove(display, (base) =>
    openDir(root, base === "." ? root : join(root, base), { tool, display: base }),
  );
}

/**
 * The rules in force for a walk starting at `startDisplay`: those of every directory above it,
 * less the rules that would ignore the start itself or a directory on the way to it (it was named
 * explicitly). `openAncestor` opens a workspace-relative directory (checked inside the workspace).
 * The start's own ignore files are read by the walk.
 */
export async function rulesAbove(
  startDisplay: string,
  openAncestor: (display: string) => Promise<AnchoredDir>,
): Promise<IgnoreRules> {
  const parts = startDisplay === "." ? [] : startDisplay.split("/");
  let rules = emptyIgnoreRules();
  for (let i = 0; i < parts.length; i++) {
    const base = i === 0 ? "." : parts.slice(0, i).join("/");
    const dir = await openAncestor(base);
    let text: string | undefined;
    try {
      text = await readIgnoreText(dir, base, () => true);
    } finally {
      await dir.close();
    }
    if (text === undefined) continue;
    const kept = withoutRulesOnTheWay(text, base, parts);
    if (kept !== undefined) rules = rules.with(base, kept);
  }
  return rules;
}

/**
 * `text` without the rules that ignore a directory from below `base` down to the start (`parts`),
 * or `undefined` when that cannot be told apart (then the whole file is set aside there).
 */
function withoutRulesOnTheWay(text: string, base: string, parts: readonly string[]): string | undefined {
  let lines = text.split(/\r?\n/);
  const depth = base === "." ? 0 : base.split("/").length;
  for (;;) {
    const matcher = ignore().add(lines);
    let rule: string | undefined;
    for (let k = depth + 1; k <= parts.length && rule === undefined; k++) {
      const result = matcher.test(`${parts.slice(depth, k).join("/")}/`);
      if (result.ignored) rule = result.rule?.pattern ?? "";
    }
    if (rule === undefined) return lines.join("\n");
    const fewer = lines.filter((line) => line.trim() !== rule);
    if (fewer.length === lines.length) return undefined;
    lines = fewer;
  }
}

/**
 * The text of `dir`'s ignore files (the root's `.git/info/exclude` first), or `undefined` when it
 * has none. `has(name)` says whether an entry of that name exists (lets a walk skip the opens).
 * Symlinked ignore files are not followed, as git does not follow them.
 */
export async function readIgnoreText(
  dir: AnchoredDir,
  display: string,
  has: (name: string) => boolean,
): Promise<string | undefined> {
  const names: string[] = [];
  if (display === "." && has(".git")) names.push(".git/info/exclude");
  for (const name of IGNORE_FILES) if (has(name)) names.push(name);
  const texts: string[] = [];
  for (const name of names) {
    const text = await readSmallFile(dir, name);
    if (text !== undefined) texts.push(text);
  }
  return texts.length === 0 ? undefined : texts.join("\n");
}

/** Reads `path` (`/`-separated, below `dir`) without following a symlink at any step. */
async function readSmallFile(dir: AnchoredDir, path: string): Promise<string | undefined> {
  const parts = path.split("/");
  const name = parts.pop() as string;
  const opened: AnchoredDir[] = [];
  let handle: FileHandle;
  try {
    let at = dir;
    for (const part of parts) {
      at = await openChildDir(at, part);
      opened.push(at);
    }
    handle = await openChildFile(at, name);
  } catch (error) {
    // Missing, a symlink (ELOOP), or `.git` is a file (a worktree or submodule): no rules there.
    const code = errnoOf(error);
    if (code === "ENOENT" || code === "ELOOP" || code === "ENOTDIR" || code === "EACCES") return undefined;
    throw error;
  } finally {
    for (const d of opened) await d.close();
  }
  try {
    const stats = await handle.stat();
    if (!stats.isFile() || stats.size > MAX_IGNORE_FILE_BYTES) return undefined;
    return await handle.readFile("utf8");
  } finally {
    await handle.close();
  }
}

function relativeTo(base: string, display: string): string {
  return base === "." ? display : display.slice(base.length + 1);
}

function baseName(display: string): string {
  return display.slice(display.lastIndexOf("/") + 1);
}
