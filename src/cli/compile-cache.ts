/**
 * Node's compile cache for the CLI (Node 22.1+, `module.enableCompileCache`): the code of the
 * packages the CLI loads from node_modules, compiled once, is kept in `<eddy's cache
 * directory>/compile-cache` (cache-dir.ts) and reused by the next start. eddy's own chunks have a
 * cache of their own in the same folder, on every Node (code-cache.ts, docs/decisions.md #40).
 * Loaded by bin/eddy.js before the CLI, only where the API exists.
 *
 * The folder is made here first (`makeDirSync`, mode 0700): Node's own folder creation never ends
 * for a folder procfs will not make (docs/pitfalls.md #70), and a `HOME` is not always sane. No
 * folder, no cache: the run is as fast as without one. `NODE_COMPILE_CACHE` (Node's own choice of
 * folder) and `NODE_DISABLE_COMPILE_CACHE=1` are left to Node.
 */
import { makeDirSync } from "../util/make-dir.js";
import { type CacheDirEnv, compileCacheDir } from "./cache-dir.js";

/** The environment the cache reads. */
export interface CompileCacheEnv extends CacheDirEnv {
  NODE_COMPILE_CACHE?: string | undefined;
  NODE_DISABLE_COMPILE_CACHE?: string | undefined;
}

/**
 * Turns the cache on through `enable` (`module.enableCompileCache`) in eddy's cache directory;
 * returns the folder used, or undefined when there is none (no usable home, a folder that cannot
 * be made, the cache turned off or placed by the user's own `NODE_COMPILE_CACHE`).
 */
export function enableCompileCache(
  env: CompileCacheEnv,
  enable: (dir: string) => unknown,
): string | undefined {
  if (env.NODE_COMPILE_CACHE || env.NODE_DISABLE_COMPILE_CACHE) return undefined;
  const dir = compileCacheDir(env);
  if (dir === undefined) return undefined;
  try {
    makeDirSync(dir, 0o700);
    enable(dir);
    return dir;
  } catch {
    return undefined;
  }
}
