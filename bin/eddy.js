#!/usr/bin/env node
// Thin launcher: the CLI is compiled to dist/ and bundled into dist/cli/bundle/ by `npm run build`
// (run automatically by `npm ci`/`npm install`; docs/architecture.md), and loaded by
// src/cli/code-cache.ts with V8's code kept from an earlier start (docs/decisions.md #40).
import { existsSync } from "node:fs";
import module from "node:module";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const bundle = fileURLToPath(new URL("../dist/cli/bundle", import.meta.url));
if (!existsSync(join(bundle, "main.cjs"))) {
  process.stderr.write(
    "eddy: the CLI is not built yet (dist/ is missing). Run `npm run build` in the eddy package.\n",
  );
  process.exit(2);
}
// Node 22.1+ keeps the compiled code of the packages the CLI loads between runs
// (src/cli/compile-cache.ts); Node 20 has no such cache and loads nothing for it.
if (typeof module.enableCompileCache === "function") {
  try {
    const cache = await import(new URL("../dist/cli/compile-cache.js", import.meta.url).href);
    cache.enableCompileCache(process.env, (dir) => module.enableCompileCache(dir));
  } catch {
    // No cache: the run is as fast as without one, no slower.
  }
}
// src/cli/code-cache.ts, bundled into one file (scripts/build.mjs).
const { loadCli } = await import(new URL("../dist/cli/bundle/loader.mjs", import.meta.url).href);
const argv = process.argv.slice(2);
// The packages a feature loads lazily are imported from here (src/util/import-package.ts).
const cli = loadCli(bundle, argv, process.env, (specifier) => import(specifier));
process.exitCode = await cli.main(argv);
cli.keep(process.exitCode);
// The command is done and closed what it started within its budget (src/cli/shutdown.ts). Whatever
// still holds the event loop after that — a request a telemetry collector never answers — must not
// hold the exit; output still being written is waited for. The timer is unref'd: a process with
// nothing left to do exits at once, as before.
const leave = () => {
  if (process.stdout.writableLength > 0 || process.stderr.writableLength > 0) setTimeout(leave, 50).unref();
  else process.exit();
};
setTimeout(leave, 50).unref();
