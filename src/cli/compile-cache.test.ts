import { mkdtempSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { type CompileCacheEnv, enableCompileCache } from "./compile-cache.js";

const home = mkdtempSync(join(tmpdir(), "eddy-compile-cache-"));
afterAll(() => rmSync(home, { recursive: true, force: true }));

/** What `enableCompileCache` asked Node for. */
function attempt(env: CompileCacheEnv) {
  const asked: string[] = [];
  const dir = enableCompileCache(env, (d) => asked.push(d));
  return { dir, asked };
}

describe("the CLI's compile cache", () => {
  it("lives in eddy's cache directory, made private (0700) before Node is asked", () => {
    const { dir, asked } = attempt({ HOME: home });
    const expected = join(home, ".cache", "eddy", "compile-cache");
    expect(dir).toBe(expected);
    expect(asked).toEqual([expected]);
    expect(statSync(expected).mode & 0o777).toBe(0o700);
    expect(attempt({ XDG_CACHE_HOME: join(home, "xdg"), HOME: home }).asked).toEqual([
      join(home, "xdg", "eddy", "compile-cache"),
    ]);
  });

  it("is left to Node when the user placed or turned off the cache", () => {
    expect(attempt({ HOME: home, NODE_COMPILE_CACHE: join(home, "own") }).asked).toEqual([]);
    expect(attempt({ HOME: home, NODE_DISABLE_COMPILE_CACHE: "1" }).asked).toEqual([]);
  });

  it("is not used without a usable home: none, a relative one, a file, a folder procfs will not make", () => {
    const file = join(home, "a-file");
    writeFileSync(file, "");
    const envs: CompileCacheEnv[] = [
      {},
      { HOME: "relative" },
      { XDG_CACHE_HOME: "rel", HOME: "" },
      { HOME: file },
      { HOME: "/proc/eddy-nope" },
    ];
    for (const env of envs) expect(attempt(env)).toEqual({ dir: undefined, asked: [] });
  });

  it("a failing Node call leaves the run as it was", () => {
    expect(
      enableCompileCache({ HOME: home }, () => {
        throw new Error("no cache");
      }),
    ).toBeUndefined();
  });
});
