import {
  chmodSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import {
  CACHED_COMMANDS,
  type CodeCacheEnv,
  cacheKey,
  codeCacheFolder,
  commandKey,
  loadCli,
} from "./code-cache.js";
import { encodeCodeCache, readCodeCache } from "./code-cache-file.js";

const root = mkdtempSync(join(tmpdir(), "eddy-code-cache-"));
let count = 0;
afterAll(() => rmSync(root, { recursive: true, force: true }));

/**
 * A bundle of three chunks, as scripts/build.mjs makes them: `main.cjs` requires `chunk-A` at once
 * and `lazy-B` only when its command is given an argument; `main` answers what it saw.
 */
function bundle(): string {
  const dir = join(root, `bundle${count++}`);
  mkdirSync(dir);
  writeFileSync(
    join(dir, "main.cjs"),
    `"use strict";const a=require("./chunk-A.js");
exports.main=async(argv)=>{if(argv[0]==="url")return __eddyUrl;if(argv[0]==="import")return typeof (await __eddyImport("node:path")).join;
const b=argv.length>1?await Promise.resolve().then(()=>require("./lazy-B.js")):{value:0};
return a.value+b.value+(a.cycle()===a?100:0)};`,
  );
  writeFileSync(
    join(dir, "chunk-A.cjs"),
    `"use strict";exports.value=1;const m=require("./main.js");exports.cycle=()=>require("./chunk-A.js");`,
  );
  writeFileSync(join(dir, "lazy-B.cjs"), `"use strict";exports.value=10;`);
  return dir;
}

/** A fresh cache home, as `XDG_CACHE_HOME`. */
function env(extra: Partial<CodeCacheEnv> = {}): CodeCacheEnv {
  return { XDG_CACHE_HOME: join(root, `cache${count++}`), ...extra };
}

const importModule = (specifier: string) => import(specifier);

describe("loadCli", () => {
  it("links the chunks, gives each its URL and the launcher's import, and runs the command", async () => {
    const dir = bundle();
    const cli = loadCli(dir, ["run", "x"], env(), importModule);
    expect(await cli.main(["run", "x"])).toBe(111);
    expect(cli.chunks()).toEqual([
      { name: "main.cjs", cached: false },
      { name: "chunk-A.cjs", cached: false },
      { name: "lazy-B.cjs", cached: false },
    ]);
  });

  it("keeps the code after a good first start, and the next start of the command compiles nothing", async () => {
    const dir = bundle();
    const home = env();
    const first = loadCli(dir, ["run", "x"], home, importModule);
    await first.main(["run", "x"]);
    expect(first.keep(0)).toBe(true);
    const folder = codeCacheFolder(home) ?? "";
    const file = join(folder, `cli-${cacheKey(dir, home)}-run.v8`);
    expect([...readCodeCache(file).keys()]).toEqual(["main.cjs", "chunk-A.cjs", "lazy-B.cjs"]);
    expect(statSync(folder).mode & 0o777).toBe(0o700);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    const second = loadCli(dir, ["run", "x"], home, importModule);
    expect(await second.main(["run", "x"])).toBe(111);
    expect(second.chunks().every((chunk) => chunk.cached)).toBe(true);
    expect(second.keep(0)).toBe(false); // nothing new to keep
    // Another command has a file of its own.
    const other = loadCli(dir, ["replay"], home, importModule);
    expect(other.chunks().some((chunk) => chunk.cached)).toBe(false);
  });

  it("keeps nothing after a failed command, or with the cache turned off or untrusted", async () => {
    const dir = bundle();
    const home = env();
    const failed = loadCli(dir, ["run"], home, importModule);
    expect(failed.keep(1)).toBe(false);
    expect(loadCli(dir, ["run"], env({ NODE_DISABLE_COMPILE_CACHE: "1" }), importModule).keep(0)).toBe(false);
    expect(loadCli(dir, ["run"], { NODE_COMPILE_CACHE: "relative/dir" }, importModule).keep(0)).toBe(false);
    expect(loadCli(dir, ["run"], {}, importModule).keep(0)).toBe(false); // no home at all
    const open = join(root, `open${count++}`);
    mkdirSync(open);
    chmodSync(open, 0o777);
    expect(loadCli(dir, ["run"], { NODE_COMPILE_CACHE: open }, importModule).keep(0)).toBe(false);
    expect(readdirSync(open)).toEqual([]);
    const notAFolder = join(root, `file${count++}`);
    writeFileSync(notAFolder, "");
    expect(loadCli(dir, ["run"], { NODE_COMPILE_CACHE: notAFolder }, importModule).keep(0)).toBe(false);
  });

  it("recompiles a chunk whose file changed, and keeps the code of chunks this start did not load", async () => {
    const dir = bundle();
    const home = env();
    const first = loadCli(dir, ["run", "x"], home, importModule);
    await first.main(["run", "x"]);
    first.keep(0);
    writeFileSync(join(dir, "chunk-A.cjs"), `"use strict";exports.value=2;exports.cycle=()=>0;`);
    const second = loadCli(dir, ["run"], home, importModule);
    expect(await second.main(["run"])).toBe(2); // the new text runs, not the cached code
    expect(second.chunks()).toEqual([
      { name: "main.cjs", cached: true },
      { name: "chunk-A.cjs", cached: false },
    ]);
    expect(second.keep(0)).toBe(true);
    const file = join(codeCacheFolder(home) ?? "", `cli-${cacheKey(dir, home)}-run.v8`);
    expect([...readCodeCache(file).keys()].sort()).toEqual(["chunk-A.cjs", "lazy-B.cjs", "main.cjs"]);
    // A rebuild: the chunk this start does not load is gone; its old code is not carried on.
    rmSync(join(dir, "lazy-B.cjs"));
    writeFileSync(join(dir, "chunk-A.cjs"), `"use strict";exports.value=3;exports.cycle=()=>0;`);
    const third = loadCli(dir, ["run"], home, importModule);
    expect(await third.main(["run"])).toBe(3);
    expect(third.keep(0)).toBe(true);
    expect([...readCodeCache(file).keys()].sort()).toEqual(["chunk-A.cjs", "main.cjs"]);
  });

  it("takes no code V8 refuses (a file made for other text of the same size), and rewrites it", async () => {
    const dir = bundle();
    const home = env();
    const folder = codeCacheFolder(home) ?? "";
    mkdirSync(folder, { recursive: true, mode: 0o700 });
    const file = join(folder, `cli-${cacheKey(dir, home)}-run.v8`);
    const { size, mtimeMs } = statSync(join(dir, "main.cjs"));
    writeFileSync(
      file,
      encodeCodeCache([{ name: "main.cjs", size, mtimeMs, data: Buffer.from("not V8 code") }]),
      {
        mode: 0o600,
      },
    );
    const cli = loadCli(dir, ["run"], home, importModule);
    expect(await cli.main(["run"])).toBe(101);
    expect(cli.chunks()[0]).toEqual({ name: "main.cjs", cached: false });
    expect(cli.keep(0)).toBe(true);
    expect(readFileSync(file).includes("not V8 code")).toBe(false);
  });

  it("says what is wrong with a folder that holds no CLI bundle", () => {
    const dir = join(root, `empty${count++}`);
    mkdirSync(dir);
    writeFileSync(join(dir, "main.cjs"), `"use strict";exports.other=1;`);
    expect(() => loadCli(dir, [], env(), importModule)).toThrow(
      /holds no eddy CLI bundle: run npm run build/,
    );
  });

  it("gives a chunk its file URL and the launcher's import", async () => {
    const dir = bundle();
    const cli = loadCli(dir, [], env(), importModule);
    expect(await cli.main(["url"])).toBe(pathToFileURL(join(dir, "main.cjs")).href);
    expect(await cli.main(["import"])).toBe("function");
  });
});

describe("commandKey", () => {
  it("names the command, help for none, other for anything else", () => {
    expect(commandKey(["run", "hello"])).toBe("run");
    expect(commandKey(["--debug", "chat"])).toBe("chat");
    expect(commandKey([])).toBe("help");
    expect(commandKey(["--help"])).toBe("help");
    expect(commandKey(["../../x"])).toBe("other");
    expect(commandKey(["RUN"])).toBe("other");
    expect(commandKey([`run\u0000`])).toBe("other");
  });

  it("has a file for every command src/cli/main.ts defines", () => {
    const source = readFileSync(new URL("./main.ts", import.meta.url), "utf8");
    const defined = [...source.matchAll(/\.command\("([a-z]+)"\)/g)].map((m) => m[1]);
    // `show` is `eddy threads show`: it runs as `threads`.
    expect(defined.filter((name) => name !== "show").sort()).toEqual([...CACHED_COMMANDS].sort());
  });
});

describe("cacheKey", () => {
  it("differs by install and by V8 flags", () => {
    expect(cacheKey("/a", {})).toMatch(/^[0-9a-f]{24}$/);
    expect(cacheKey("/a", {})).not.toBe(cacheKey("/b", {}));
    expect(cacheKey("/a", {})).not.toBe(cacheKey("/a", { NODE_OPTIONS: "--max-old-space-size=100" }));
  });
});
