// Records every module the process loads, one file URL a line, in the file named by
// EDDY_MODULE_LOG (test/startup-modules.test.ts: `NODE_OPTIONS=--import=<this file>`). ES modules
// are recorded by a load hook (module-log-hooks.mjs); CommonJS modules required by other CommonJS
// modules never reach that hook, so the require cache is written too when the process exits, with
// node's own modules the process loaded, one `node:<id>` a line (from `process.moduleLoadList`:
// undici, behind fetch's `Request`/`Response`/`Headers`, is one of them).
import { appendFileSync } from "node:fs";
import { createRequire, register } from "node:module";
import { pathToFileURL } from "node:url";

const out = process.env.EDDY_MODULE_LOG;
if (out !== undefined && out !== "") {
  register(new URL("./module-log-hooks.mjs", import.meta.url), { data: { out } });
  const cache = createRequire(import.meta.url).cache;
  process.on("exit", () => {
    const lines = Object.keys(cache).map((path) => `${pathToFileURL(path).href}\n`);
    for (const entry of process.moduleLoadList) {
      const id = /^NativeModule (.+)$/.exec(entry)?.[1];
      if (id !== undefined) lines.push(`node:${id}\n`);
    }
    appendFileSync(out, lines.join(""));
  });
}
