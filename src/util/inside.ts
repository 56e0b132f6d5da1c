/**
 * Whether a path lies inside a folder, by its real path. The file tools confine the model's paths
 * with it (src/tools/workspace.ts), and `eddy view DIR` confines the tapes a folder names or links
 * to (src/view/batch.ts, src/view/load.ts): a page made from a folder is shared, so a tape outside
 * it must not end up in the page (docs/pitfalls.md, "A folder's tapes stay in the folder").
 */
import { lstatSync, realpathSync } from "node:fs";
import { basename, dirname, isAbsolute, join, relative, resolve, sep } from "node:path";

/** True when `candidate` is `root` or below it (both absolute; compared as written, no symlinks resolved). */
export function isInside(root: string, candidate: string): boolean {
  const rel = relative(root, candidate);
  return rel === "" || (!rel.startsWith(`..${sep}`) && rel !== ".." && !isAbsolute(rel));
}

/**
 * The real path of `path` (symlinks resolved) when it lies inside the real path of the folder
 * `dir`, else undefined. A path that does not exist is judged by its nearest existing ancestor (the
 * missing rest joined on), so what is outside is refused alike whether it exists or not: the answer
 * never tells whether a file outside `dir` exists. A dangling symlink, a symlink loop or a component
 * that cannot be looked up is refused too.
 */
export function realPathInside(dir: string, path: string): string | undefined {
  let root: string;
  try {
    root = realpathSync(dir);
  } catch {
    return undefined;
  }
  const missing: string[] = [];
  let current = resolve(dir, path);
  for (;;) {
    try {
      const real = join(realpathSync(current), ...missing);
      return isInside(root, real) ? real : undefined;
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if ((code !== "ENOENT" && code !== "ENOTDIR") || isSymlink(current)) return undefined;
    }
    const parent = dirname(current);
    if (parent === current) return undefined;
    missing.unshift(basename(current));
    current = parent;
  }
}

function isSymlink(path: string): boolean {
  try {
    return lstatSync(path).isSymbolicLink();
  } catch {
    return false;
  }
}
