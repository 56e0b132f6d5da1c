/**
 * eddy as users run it: the built package (dist/), rebuilt first when it is older than today's
 * sources (`scripts/build.mjs --if-changed`, the test suite's rule). The loop benchmarks time the
 * build, not the sources through tsx: tsx's transform names every function eddy creates per
 * request at run time (esbuild's `keepNames`), which cost ~9% of eddy's CPU per turn in-process
 * (bench/README.md, "The turn").
 */
import { spawnSync } from "node:child_process";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const REPO = join(dirname(fileURLToPath(import.meta.url)), "..");

const checked = new Set<string>();

/** Builds dist/ unless it was built from today's sources (checked once per process); throws when the build fails. */
export function ensureBuilt(root: string = REPO): void {
  if (checked.has(root)) return;
  const built = spawnSync(process.execPath, [join(root, "scripts/build.mjs"), "--if-changed"], {
    cwd: root,
    encoding: "utf8",
  });
  if (built.status !== 0)
    throw new Error(`npm run build failed (exit ${built.status}):\n${built.stderr || built.stdout}`);
  checked.add(root);
}

/** Imports `path` (e.g. `loop/run.js`) from dist/ of `root`, built first when stale. */
export async function importBuilt<T>(path: string, root: string = REPO): Promise<T> {
  ensureBuilt(root);
  return (await import(pathToFileURL(join(root, "dist", path)).href)) as T;
}
