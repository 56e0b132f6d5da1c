// Starts the slowest test files first. Vitest orders files by the durations it cached from the last
// run (node_modules/.vite), but a fresh clone has no cache, and then it goes by file size: the browser,
// CLI end-to-end and packed-package files (50-80 s each) could start last and leave three of the four
// workers idle at the end (a working copy took 252 s, fresh clones 277-318 s: bench/README.md,
// "The test suite"). test/durations.json (written by `npm run test:durations` from the cache) gives
// each file's last known duration; the cache, when there is one, still wins, and failed files still
// run first.
import { readFileSync } from "node:fs";
import { relative } from "node:path";
import type { TestSpecification } from "vitest/node";
import { BaseSequencer } from "vitest/node";

/** Seconds per file (path relative to the repository root), from test/durations.json. */
export function knownDurations(
  file: URL = new URL("../durations.json", import.meta.url),
): Map<string, number> {
  const known = new Map<string, number>();
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(file, "utf8"));
  } catch {
    return known; // no table: the cache or file size decides, as vitest does by default
  }
  if (parsed === null || typeof parsed !== "object" || Array.isArray(parsed)) return known;
  for (const [path, seconds] of Object.entries(parsed)) {
    if (typeof seconds === "number" && Number.isFinite(seconds) && seconds >= 0) known.set(path, seconds);
  }
  return known;
}

export interface FileEstimate {
  /** Path relative to the repository root, forward slashes. */
  path: string;
  /** Duration in ms from vitest's cache, if it has one. */
  cachedMs?: number;
  failed?: boolean;
  size: number;
}

/** Failed first, then the longest expected duration (the cache's, else the table's), then larger files. */
export function slowestFirst<F extends FileEstimate>(files: readonly F[], known: Map<string, number>): F[] {
  const expected = (f: FileEstimate) => f.cachedMs ?? (known.get(f.path) ?? 0) * 1000;
  return [...files].sort(
    (a, b) =>
      Number(b.failed ?? false) - Number(a.failed ?? false) || expected(b) - expected(a) || b.size - a.size,
  );
}

export class SlowFirstSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const cache = this.ctx.cache;
    const root = this.ctx.config.root;
    const estimates = files.map((spec) => {
      const path = relative(root, spec.moduleId).split("\\").join("/");
      const key = `${spec.project.name}:${path}`;
      const result = cache.getFileTestResults(key);
      return {
        spec,
        path,
        cachedMs: result?.duration,
        failed: result?.failed,
        size: cache.getFileStats(key)?.size ?? 0,
      };
    });
    return slowestFirst(estimates, knownDurations()).map((e) => e.spec);
  }
}
