// Compiles src/ to dist/ with tsc, copies the generated ajv validators (plain JS + .d.ts: the
// protocol's and the built-in tools') next to their compiled importers, and bundles the run
// viewer's browser code (src/view/client/, with marked, DOMPurify and jsdiff) into the one script
// and stylesheet `eddy view` inlines in its pages.
// Used by `npm run build` (and so by `npm ci` through `prepare`) and by the test suite's global
// setup. Exits non-zero when tsc reports errors (the JS is emitted anyway) or the bundle fails.
import { spawnSync } from "node:child_process";
import { copyFileSync, mkdirSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const tsc = spawnSync(
  process.execPath,
  [join(root, "node_modules/typescript/bin/tsc"), "-p", "tsconfig.build.json"],
  {
    cwd: root,
    stdio: "inherit",
  },
);
for (const file of [
  "protocol/generated/validators.cjs",
  "protocol/generated/validators.d.cts",
  "tools/builtin/generated/validators.js",
  "tools/builtin/generated/validators.d.ts",
]) {
  mkdirSync(dirname(join(root, "dist", file)), { recursive: true });
  copyFileSync(join(root, "src", file), join(root, "dist", file));
}

const { build } = await import("esbuild");
const viewOut = join(root, "dist", "view", "client");
const common = { bundle: true, minify: true, logLevel: "warning", legalComments: "eof" };
const bundled = await build({
  ...common,
  entryPoints: [join(root, "src/view/client/main.ts")],
  outfile: join(viewOut, "page.js"),
  write: false,
  format: "iife",
  platform: "browser",
  // DecompressionStream (the page's run payloads) is in every browser since these versions.
  target: ["chrome80", "firefox113", "safari16.4"],
});
// The script is inlined in a <script> element, which "</script" would end and "<!--" would put in
// the escaped parsing state. Both occur only inside string and regex literals of the bundled
// libraries (DOMPurify, marked), where \x3C means "<" alike.
const script = (bundled.outputFiles?.[0]?.text ?? "").replace(/<(?=\/script|!--)/gi, "\\x3C");
mkdirSync(viewOut, { recursive: true });
writeFileSync(join(viewOut, "page.js"), script);
await build({
  ...common,
  entryPoints: [join(root, "src/view/client/page.css")],
  outfile: join(viewOut, "page.css"),
});
if (script === "" || /<\/script|<!--/i.test(script)) {
  console.error("build: the view page script is empty or still contains </script or <!--");
  process.exitCode = 1;
} else {
  process.exitCode = tsc.status ?? 1;
}
