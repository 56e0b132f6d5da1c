/**
 * The CLI's code cache, end to end (src/cli/code-cache.ts): the built CLI keeps V8's code after a
 * good first start, reuses it, and survives any cache folder or file it is given, with the same
 * output and no word on stderr.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { readCodeCache } from "../src/cli/code-cache-file.js";
import { cleanEnv, runCli } from "./support/cli.js";

const root = mkdtempSync(join(tmpdir(), "eddy-code-cache-e2e-"));
let count = 0;
afterAll(() => rmSync(root, { recursive: true, force: true }));

async function version(env: Record<string, string>) {
  const result = await runCli(["--version"], { env: cleanEnv(env) });
  expect(result.stderr).toBe("");
  expect(result.code).toBe(0);
  return result.stdout;
}

describe("the built CLI's code cache", () => {
  it("is written by the first start, read by the next, and rewritten when damaged", async () => {
    const home = join(root, `home${count++}`);
    const expected = await version({ XDG_CACHE_HOME: home });
    const folder = join(home, "eddy", "compile-cache");
    const files = readdirSync(folder);
    expect(files).toHaveLength(1);
    const file = join(folder, files[0] ?? "");
    expect(file).toMatch(/cli-[0-9a-f]{24}-help\.v8$/);
    expect(readCodeCache(file).has("main.cjs")).toBe(true);
    const written = statSync(file).mtimeMs;
    expect(await version({ XDG_CACHE_HOME: home })).toBe(expected);
    expect(statSync(file).mtimeMs).toBe(written); // taken as it was: nothing to rewrite
    const bytes = readFileSync(file);
    bytes[bytes.length - 100] = (bytes[bytes.length - 100] ?? 0) ^ 0xff;
    writeFileSync(file, bytes, { mode: 0o600 });
    expect(await version({ XDG_CACHE_HOME: home })).toBe(expected);
    expect(readCodeCache(file).has("main.cjs")).toBe(true); // whole again
  });

  it("runs the same with a cache folder that is a file, turned off, or relative", async () => {
    const file = join(root, `file${count++}`);
    writeFileSync(file, "not a folder");
    const expected = await version({ XDG_CACHE_HOME: join(root, `home${count++}`) });
    expect(await version({ XDG_CACHE_HOME: file })).toBe(expected);
    expect(readFileSync(file, "utf8")).toBe("not a folder");
    const off = join(root, `home${count++}`);
    expect(await version({ XDG_CACHE_HOME: off, NODE_DISABLE_COMPILE_CACHE: "1" })).toBe(expected);
    expect(() => statSync(join(off, "eddy", "compile-cache"))).toThrow();
    expect(await version({ NODE_COMPILE_CACHE: "relative/dir" })).toBe(expected);
  });
});
