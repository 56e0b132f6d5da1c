/**
 * eddy's per-user cache directory: `$XDG_CACHE_HOME/eddy`, else `~/.cache/eddy`. What lives there
 * is rebuilt when missing: the `eddy doctor` reports (doctor-cache.ts) and the compiled code of the
 * CLI (code-cache.ts, compile-cache.ts; docs/decisions.md #40). A relative `XDG_CACHE_HOME` is ignored, as
 * the XDG base directory specification asks: it would put the cache in whatever directory eddy
 * was started from (a workspace, a repository).
 *
 * No imports but node's `path`: the launcher loads this file before the CLI itself.
 */
import { isAbsolute, join } from "node:path";

/** The environment variables the directory comes from. */
export interface CacheDirEnv {
  XDG_CACHE_HOME?: string | undefined;
  HOME?: string | undefined;
  USERPROFILE?: string | undefined;
}

/** The directory, or undefined when the environment names no usable cache or home directory. */
export function eddyCacheDir(env: CacheDirEnv): string | undefined {
  const xdg = env.XDG_CACHE_HOME;
  if (xdg !== undefined && isAbsolute(xdg)) return join(xdg, "eddy");
  const home = env.HOME || env.USERPROFILE;
  return home !== undefined && isAbsolute(home) ? join(home, ".cache", "eddy") : undefined;
}

/** The folder of the CLI's compiled code (code-cache.ts, compile-cache.ts): `compile-cache` in eddy's. */
export function compileCacheDir(env: CacheDirEnv): string | undefined {
  const base = eddyCacheDir(env);
  return base === undefined ? undefined : join(base, "compile-cache");
}
