/**
 * Loads the CLI bundle with V8's code kept from an earlier start (docs/decisions.md #40).
 * bin/eddy.js runs the CLI from dist/cli/bundle/: CommonJS chunks made by scripts/build.mjs, one per
 * lazily loaded part. Each chunk a command loads is compiled here as a `vm.Script`, the one way
 * Node 20 lets a program hand V8 code compiled before. After a command that had to compile some
 * chunk afresh ends well, V8's code for every chunk it loaded (each chunk's top level and every
 * function the command ran) is kept in `<folder>/cli-<key>-<command>.v8` (code-cache-file.ts), and
 * the next start of the same command compiles almost nothing: `eddy run` starts about a third
 * sooner (bench/README.md, "Start-up"). One file per command, because each runs different code.
 * Node 22's own compile cache (compile-cache.ts) still covers the packages loaded from node_modules.
 *
 * The folder is the compile cache's: `NODE_COMPILE_CACHE`, else `<eddy's cache folder>/compile-cache`
 * (cache-dir.ts); `NODE_DISABLE_COMPILE_CACHE=1` turns both off. The key names this install (the
 * bundle's folder), Node's version and V8's flags; a chunk's code is used only while its file has
 * the size and modification time it had when the code was made. Any problem means no cache, never
 * a failed or slower command.
 *
 * The chunks are linked as CommonJS modules: `require("./chunk-….js")` loads a chunk (once), any
 * other `require` is Node's, from the bundle's folder. Each chunk is also given `__eddyImport`
 * (the launcher's `import()`, src/util/import-package.ts), `__eddyUrl` (its own file URL) and
 * `__eddyRequire` (this `require`, by a name esbuild leaves alone: the protocol's validators are
 * chunks required by src/protocol/validate.ts, scripts/build.mjs).
 *
 * No imports of eddy's but the cache's own files, cache-dir.ts and make-dir.ts: the launcher loads
 * this before the CLI.
 */
import { createHash } from "node:crypto";
import { closeSync, fstatSync, openSync, readFileSync, statSync } from "node:fs";
import { createRequire } from "node:module";
import { isAbsolute, join } from "node:path";
import { pathToFileURL } from "node:url";
import { Script } from "node:vm";
import { makeDirSync } from "../util/make-dir.js";
import { type CacheDirEnv, compileCacheDir } from "./cache-dir.js";
import {
  type CachedChunk,
  pruneCodeCache,
  readCodeCache,
  trustedFolder,
  writeCodeCache,
} from "./code-cache-file.js";

/** The environment the cache reads. */
export interface CodeCacheEnv extends CacheDirEnv {
  NODE_COMPILE_CACHE?: string | undefined;
  NODE_DISABLE_COMPILE_CACHE?: string | undefined;
  NODE_OPTIONS?: string | undefined;
}

/** The commands with a cache file of their own (src/cli/main.ts); any other is `other`. */
export const CACHED_COMMANDS: readonly string[] = [
  "run",
  "chat",
  "undo",
  "replay",
  "mock",
  "threads",
  "batch",
  "worker",
  "resume",
  "serve",
  "view",
  "doctor",
  "config",
];

/** The entry chunk's name as chunks require it. */
const ENTRY = "./main.js";
/** A chunk, as another chunk requires it (scripts/build.mjs). */
const CHUNK_ID = /^\.\/([\w-]{1,100})\.js$/;

/** The folder of the cache, or undefined when there is none or it is turned off. */
export function codeCacheFolder(env: CodeCacheEnv): string | undefined {
  if (env.NODE_DISABLE_COMPILE_CACHE) return undefined;
  const own = env.NODE_COMPILE_CACHE;
  if (own) return isAbsolute(own) ? own : undefined;
  return compileCacheDir(env);
}

/** The command `argv` runs, as it names its cache file: `help` for none, `other` for an unknown one. */
export function commandKey(argv: readonly string[]): string {
  const word = argv.find((arg) => !arg.startsWith("-"));
  if (word === undefined) return "help";
  return CACHED_COMMANDS.includes(word) ? word : "other";
}

/** What V8's code depends on besides the chunks' text: this install, Node (and so V8) and V8's flags. */
export function cacheKey(bundleDir: string, env: CodeCacheEnv): string {
  const runtime = [bundleDir, process.version, process.arch, process.execArgv, env.NODE_OPTIONS ?? ""];
  return createHash("sha256").update(JSON.stringify(runtime)).digest("hex").slice(0, 24);
}

/** A chunk a command loaded, and whether V8 took its cached code. */
interface LoadedChunk {
  name: string;
  size: number;
  mtimeMs: number;
  script: Script;
  cached: boolean;
}

/** The bundle's chunks, each compiled (with its cached code, if any) and run the first time it is required. */
class Chunks {
  private readonly modules = new Map<string, { exports: unknown }>();
  readonly loaded: LoadedChunk[] = [];
  private readonly nodeRequire: NodeJS.Require;

  constructor(
    private readonly dir: string,
    private readonly cache: ReadonlyMap<string, CachedChunk>,
    private readonly importModule: ImportModule,
  ) {
    this.nodeRequire = createRequire(join(dir, "main.cjs"));
  }

  require(id: string): unknown {
    const chunk = CHUNK_ID.exec(id);
    return chunk === null ? this.nodeRequire(id) : this.load(`${chunk[1]}.cjs`);
  }

  private load(name: string): unknown {
    const known = this.modules.get(name);
    if (known !== undefined) return known.exports; // loaded, or being loaded (a cycle)
    const file = join(this.dir, name);
    const fd = openSync(file, "r");
    let text: string;
    let stats: { size: number; mtimeMs: number };
    try {
      stats = fstatSync(fd);
      text = readFileSync(fd, "utf8");
    } finally {
      closeSync(fd);
    }
    const entry = this.cache.get(name);
    const cachedData = entry?.size === stats.size && entry.mtimeMs === stats.mtimeMs ? entry.data : undefined;
    const script = new Script(
      `(function (exports, require, module, __filename, __dirname, __eddyImport, __eddyUrl, __eddyRequire) {${text}\n})`,
      { filename: file, ...(cachedData === undefined ? {} : { cachedData }) },
    );
    const cached = cachedData !== undefined && !script.cachedDataRejected;
    this.loaded.push({ name, size: stats.size, mtimeMs: stats.mtimeMs, script, cached });
    const module = { exports: {} };
    this.modules.set(name, module);
    const run = script.runInThisContext() as (...args: unknown[]) => void;
    const require = (id: string) => this.require(id);
    run(
      module.exports,
      require,
      module,
      file,
      this.dir,
      this.importModule,
      pathToFileURL(file).href,
      require,
    );
    return module.exports;
  }
}

/** Whether the chunk file `chunk` was made from is still there as it was (a rebuild replaces them). */
function unchanged(dir: string, chunk: CachedChunk): boolean {
  try {
    const stats = statSync(join(dir, chunk.name));
    return stats.size === chunk.size && stats.mtimeMs === chunk.mtimeMs;
  } catch {
    return false;
  }
}

/** How the bundle reaches `import()`, which code compiled as a `vm.Script` cannot call. */
export type ImportModule = (specifier: string) => Promise<unknown>;

/** The CLI, loaded and ready, and what to do once its command has ended. */
export interface LoadedCli {
  /** src/cli/main.ts `main`. */
  main(argv: string[]): Promise<number>;
  /** The chunks loaded so far, and whether V8 took each one's cached code. */
  chunks(): { name: string; cached: boolean }[];
  /**
   * Keeps V8's code for the next start of this command, when some chunk had none (or V8 refused
   * it) and the command ended with `exitCode` 0 (a failed command ran too little to be worth
   * keeping). The code of chunks this start did not load is kept as it was while their files are
   * unchanged (a rebuild's new chunks do not pile up beside the old). Returns whether a file was
   * written.
   */
  keep(exitCode: number): boolean;
}

/**
 * Loads the CLI from the bundle folder `dir` for the command in `argv`, with the cached code when
 * there is some; `importModule` is the launcher's `import()`.
 */
export function loadCli(
  dir: string,
  argv: readonly string[],
  env: CodeCacheEnv,
  importModule: ImportModule,
): LoadedCli {
  const folder = codeCacheFolder(env);
  const key = cacheKey(dir, env);
  const path = folder === undefined ? undefined : join(folder, `cli-${key}-${commandKey(argv)}.v8`);
  const cache =
    path !== undefined && folder !== undefined && trustedFolder(folder) ? readCodeCache(path) : new Map();
  const chunks = new Chunks(dir, cache, importModule);
  const { main } = chunks.require(ENTRY) as { main?: LoadedCli["main"] };
  if (typeof main !== "function") throw new Error(`${dir} holds no eddy CLI bundle: run npm run build`);
  return {
    main,
    chunks: () => chunks.loaded.map(({ name, cached }) => ({ name, cached })),
    keep(exitCode) {
      if (exitCode !== 0 || folder === undefined || path === undefined) return false;
      if (chunks.loaded.every((chunk) => chunk.cached)) return false;
      try {
        makeDirSync(folder, 0o700);
      } catch {
        return false;
      }
      if (!trustedFolder(folder)) return false;
      const kept: CachedChunk[] = chunks.loaded.map(({ name, size, mtimeMs, script }) => ({
        name,
        size,
        mtimeMs,
        data: script.createCachedData(),
      }));
      const names = new Set(kept.map((chunk) => chunk.name));
      for (const chunk of cache.values())
        if (!names.has(chunk.name) && unchanged(dir, chunk)) kept.push(chunk);
      const written = writeCodeCache(path, kept);
      if (written) pruneCodeCache(folder, key);
      return written;
    },
  };
}
