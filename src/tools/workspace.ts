/**
 * Workspace confinement for the file tools. A path from the model is workspace-relative; it is
 * refused (`path_outside_workspace`) when it is absolute, when `..` takes it above the root, or when
 * its real path (symlinks resolved with `realpath`) leaves the root. For a path that does not exist
 * yet, the nearest existing ancestor is resolved instead, so a symlinked parent cannot smuggle a
 * new file out. This check gives the model a clear refusal; it is not what keeps the tools inside:
 * between a check and a use a local process could swap a component for a symlink, so the tools
 * open what they use through `workspace-fs.ts`, which checks the opened object itself.
 */
import { constants } from "node:fs";
import { access, lstat, realpath } from "node:fs/promises";
import { isAbsolute, join, relative, resolve, sep } from "node:path";
import { EddyError } from "../errors.js";
import { isInside } from "../util/inside.js";

/** A path inside the workspace. */
export interface WorkspacePath {
  /** Real absolute path (symlinks resolved; for a missing path, the resolved ancestor plus the rest). */
  absolute: string;
  /** The path as the model should see it: workspace-relative, `/`-separated, normalized ("." for the root). */
  display: string;
  /** Whether something exists at the path. */
  exists: boolean;
}

/**
 * The real path of the workspace root; throws `invalid_config` when it is not a directory, or when
 * it cannot be listed and entered (then every file tool would fail with "permission denied").
 */
export async function workspaceRoot(workspace: string): Promise<string> {
  let root: string;
  try {
    root = await realpath(workspace);
    if (!(await lstat(root)).isDirectory()) throw new Error("not a directory");
  } catch (error) {
    throw new EddyError("invalid_config", `the workspace ${workspace} is not an existing directory`, {
      fault: "user",
      cause: error,
    });
  }
  try {
    await access(root, constants.R_OK | constants.X_OK);
  } catch (error) {
    throw new EddyError(
      "invalid_config",
      `the workspace ${workspace} cannot be read (permission denied); choose a directory you can read`,
      { fault: "user", cause: error },
    );
  }
  return root;
}

/**
 * Resolves `path` (workspace-relative; `""` and `"."` mean the root) against the workspace `root`
 * (already real). Throws `path_outside_workspace` when it would leave the root and
 * `tool_input_invalid` for a path that is not a usable string.
 */
export async function resolveInWorkspace(root: string, path: string, tool: string): Promise<WorkspacePath> {
  if (path.includes("\0")) {
    throw new EddyError("tool_input_invalid", `${tool}: the path contains a NUL character`, {
      fault: "model",
    });
  }
  if (isAbsolute(path) || /^[a-zA-Z]:[\\/]/.test(path) || /^~($|[\\/])/.test(path)) {
    throw outsideWorkspace(
      tool,
      path,
      "absolute paths are not allowed; give a path relative to the workspace root",
    );
  }
  const lexical = resolve(root, path);
  const display = toDisplay(relative(root, lexical));
  if (!isInside(root, lexical)) {
    throw outsideWorkspace(tool, path, "it is outside the workspace (`..` goes above the root)");
  }
  const real = await realOrAncestor(lexical, tool, path);
  if (!isInside(root, real.absolute)) {
    throw outsideWorkspace(tool, path, "it resolves through a symlink to a location outside the workspace");
  }
  return { absolute: real.absolute, display, exists: real.exists };
}

/**
 * `resolveInWorkspace` for a path a tool is about to write, create, move or delete: also refused
 * (`path_protected`) inside a `.git` folder or file anywhere in the workspace — version-control
 * metadata, where a written hook or `core.fsmonitor` runs code on the user's next git command, so a
 * write there would turn `--allow-write` into running commands — and inside the workspace's own
 * `.eddy/` (eddy's threads, tapes and locks: a forged thread record or waiting run). Checked on the
 * real path, so a symlink to either is refused too (docs/pitfalls.md #91).
 */
export async function resolveWritableInWorkspace(
  root: string,
  path: string,
  tool: string,
): Promise<WorkspacePath> {
  const target = await resolveInWorkspace(root, path, tool);
  const parts = relative(root, target.absolute).split(sep);
  const git = parts.findIndex((p) => p.toLowerCase() === ".git");
  const why =
    git !== -1
      ? "it is inside .git (version-control metadata: a hook or config written there runs code on the next git command)"
      : parts[0]?.toLowerCase() === ".eddy"
        ? "it is inside .eddy (eddy's own threads, tapes and locks)"
        : undefined;
  if (why === undefined) return target;
  throw new EddyError(
    "path_protected",
    `${tool}: refused ${JSON.stringify(path)}: ${why}; eddy's file tools never write there. Ask the user to make that change.`,
    { fault: "model", details: { path } },
  );
}

/** True when `candidate` is `root` or below it (src/util/inside.ts). */
export { isInside };

/** A workspace-relative path with `/` separators ("." for the root). */
export function toDisplay(rel: string): string {
  if (rel === "") return ".";
  return sep === "/" ? rel : rel.split(sep).join("/");
}

/**
 * The real path of `absolute`, or, when it does not exist, the real path of its nearest existing
 * ancestor joined with the missing rest. A dangling symlink on the way is refused: writing through
 * it would create its target wherever it points.
 */
async function realOrAncestor(
  absolute: string,
  tool: string,
  path: string,
): Promise<{ absolute: string; exists: boolean }> {
  const missing: string[] = [];
  let current = absolute;
  for (;;) {
    try {
      const real = await realpath(current);
      return {
        absolute: missing.length === 0 ? real : join(real, ...missing.reverse()),
        exists: missing.length === 0,
      };
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === "ENOTDIR") {
        throw new EddyError(
          "tool_failed",
          `${tool}: ${path}: a parent of this path is a file, not a directory`,
          {
            fault: "model",
          },
        );
      }
      if (code !== "ENOENT") throw error;
      if (await isSymlink(current)) {
        throw outsideWorkspace(tool, path, "it goes through a symlink whose target does not exist");
      }
      const parent = resolve(current, "..");
      if (parent === current) throw error;
      missing.push(current.slice(parent.length).replace(/^[\\/]/, ""));
      current = parent;
    }
  }
}

async function isSymlink(path: string): Promise<boolean> {
  try {
    return (await lstat(path)).isSymbolicLink();
  } catch {
    return false;
  }
}

/** The `path_outside_workspace` error for `path`, saying `why`. */
export function outsideWorkspace(tool: string, path: string, why: string): EddyError {
  return new EddyError(
    "path_outside_workspace",
    `${tool}: refused ${JSON.stringify(path)}: ${why}. Paths are relative to the workspace root.`,
    { fault: "model", details: { path } },
  );
}
