#!/usr/bin/env node
// Thin launcher: the CLI is compiled to dist/ and bundled into dist/cli/bundle/ by `npm run build`
// (run automatically by `npm ci`/`npm install`; docs/architecture.md).
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";

const entry = new URL("../dist/cli/bundle/main.js", import.meta.url);
if (!existsSync(fileURLToPath(entry))) {
  process.stderr.write(
    "eddy: the CLI is not built yet (dist/ is missing). Run `npm run build` in the eddy package.\n",
  );
  process.exit(2);
}
const { main } = await import(entry.href);
process.exitCode = await main(process.argv.slice(2));
// The command is done and closed what it started within its budget (src/cli/shutdown.ts). Whatever
// still holds the event loop after that — a request a telemetry collector never answers — must not
// hold the exit; output still being written is waited for. The timer is unref'd: a process with
// nothing left to do exits at once, as before.
const leave = () => {
  if (process.stdout.writableLength > 0 || process.stderr.writableLength > 0) setTimeout(leave, 50).unref();
  else process.exit();
};
setTimeout(leave, 50).unref();
