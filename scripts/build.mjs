// Compiles src/ to dist/ with tsc, copies the generated ajv validators (plain JS + .d.ts: the
// protocol's and the built-in tools') next to their compiled importers, and bundles the run
// viewer's browser code (src/view/client/, with marked, DOMPurify and jsdiff) into the one script
// and stylesheet `eddy view` inlines in its pages.
// Then it bundles the CLI (dist/cli/main.js and everything it imports, zod and commander
// included) into dist/cli/bundle/: one CommonJS chunk per lazily loaded part, so a command loads a
// few files instead of about 300, each with V8's code cached between runs (docs/architecture.md,
// decisions #34 and #40 in docs/decisions.md).
// Used by `npm run build` (and so by `npm ci` through `prepare`) and by the test suite's global
// setup. Exits non-zero when tsc reports errors (the JS is emitted anyway) or the bundle fails.
// A successful build leaves the digest of its inputs in dist/.build-inputs (scripts/build-inputs.mjs);
// `--if-changed` builds only when today's inputs differ from it.
import { spawnSync } from "node:child_process";
import { copyFileSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { buildInputsDigest, builtDigest, STAMP } from "./build-inputs.mjs";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const inputs = buildInputsDigest(root);
if (process.argv.includes("--if-changed") && builtDigest(root) === inputs) process.exit(0);
rmSync(join(root, STAMP), { force: true });
const tsc = spawnSync(
  process.execPath,
  [join(root, "node_modules/typescript/bin/tsc"), "-p", "tsconfig.build.json"],
  {
    cwd: root,
    stdio: "inherit",
  },
);
for (const file of [
  "protocol/generated/response-validators.cjs",
  "protocol/generated/response-validators.d.cts",
  "protocol/generated/request-validators.cjs",
  "protocol/generated/request-validators.d.cts",
  "tools/builtin/generated/validators.js",
  "tools/builtin/generated/validators.d.ts",
]) {
  mkdirSync(dirname(join(root, "dist", file)), { recursive: true });
  copyFileSync(join(root, "src", file), join(root, "dist", file));
}

const { build, transform } = await import("esbuild");
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

// The CLI bundle, dist/cli/bundle/: one file per lazily loaded part (chunk), so a command loads
// a few files instead of about 300 (decision #34), each compiled by bin/eddy.js as a `vm.Script`
// with V8's code for it kept between runs (src/cli/code-cache.ts, decision #40). esbuild splits the
// CLI into ES module chunks; each is then turned into a CommonJS one (`.cjs`), because Node 20 can
// hand V8 cached code only for a script, and src/cli/code-cache.ts links them (`require("./x.js")`,
// lazily for `import("./x.js")`). Packages are left to node_modules (they load lazily, per
// feature) except the two every command uses, `ignore` (CommonJS: imported from an ES module it
// made Node compile and run its CommonJS export lexer in every run that offers the built-in tools;
// decision #34) and `canonicalize` (an ES module only, which a CommonJS chunk cannot require).
// Packages a feature loads lazily go through src/util/import-package.ts, swapped here for the
// launcher's `import()` (`__eddyImport`). Each compiled file's `import.meta.url` is rewritten to
// the URL it had in dist/ (relative to `__eddyUrl`, the chunk's own URL), so the paths it resolves
// from it (package.json, the viewer's assets, the generated validators, the tools worker) stay what
// they were. `require`, `__eddyUrl`, `__eddyImport` and `__eddyRequire` are given to each chunk by the
// loader.
const cliOut = join(root, "dist", "cli", "bundle");
const BUNDLED_PACKAGES = ["zod", "commander", "ignore", "canonicalize"];
const dependencies = Object.keys(JSON.parse(readFileSync(join(root, "package.json"), "utf8")).dependencies);
rmSync(cliOut, { recursive: true, force: true });
// The protocol's generated validators (CommonJS, 480 and 240 kB) are chunks too, copied beside the
// others, so their code is cached like the rest: src/protocol/validate.ts requires each with the
// first validation against one of its schemas, here through the chunk loader (`__eddyRequire`).
const VALIDATE = join(root, "dist/protocol/validate.js");
const VALIDATOR_CHUNKS = ["request-validators", "response-validators"];
function validatorsAsChunks(text) {
  let out = text.replace("createRequire(import.meta.url)", "__eddyRequire");
  for (const name of VALIDATOR_CHUNKS) out = out.replace(`"./generated/${name}.cjs"`, `"./${name}.js"`);
  if ((out.match(/__eddyRequire|"\.\/(request|response)-validators\.js"/g) ?? []).length !== 3)
    throw new Error("build: dist/protocol/validate.js no longer requires its validators as expected");
  return out;
}
const cli = await build({
  entryPoints: [join(root, "dist/cli/main.js")],
  outdir: cliOut,
  bundle: true,
  splitting: true,
  format: "esm",
  platform: "node",
  target: "node20",
  minify: true,
  metafile: true,
  write: false,
  logLevel: "error",
  legalComments: "eof",
  external: dependencies.filter((d) => !BUNDLED_PACKAGES.includes(d)).flatMap((d) => [d, `${d}/*`]),
  plugins: [
    {
      name: "import-package-from-launcher",
      setup(b) {
        b.onLoad({ filter: /[\\/]dist[\\/]util[\\/]import-package\.js$/ }, () => ({
          contents: "export function importPackage(specifier) { return __eddyImport(specifier); }",
          loader: "js",
        }));
      },
    },
    {
      // zod re-exports its ~50 message locales (`z.locales`) from its index: a third of its bundled
      // size, compiled at every start. eddy uses none but English (zod's default, set by zod
      // itself from `locales/en.js`), so in the CLI bundle `z.locales` holds `en` only.
      name: "zod-english-only",
      setup(b) {
        b.onResolve({ filter: /^\.\.\/locales\/index\.js$/ }, (args) =>
          /[\\/]node_modules[\\/]zod[\\/]/.test(args.importer)
            ? { path: "english-only", namespace: "zod-locales", pluginData: dirname(args.importer) }
            : undefined,
        );
        b.onLoad({ filter: /.*/, namespace: "zod-locales" }, (args) => ({
          contents: 'export { default as en } from "../locales/en.js";',
          resolveDir: args.pluginData,
          loader: "js",
        }));
      },
    },
    {
      name: "dist-import-meta-url",
      setup(b) {
        b.onLoad({ filter: /[\\/]dist[\\/].*\.js$/ }, async (args) => {
          let text = await readFile(args.path, "utf8");
          if (args.path === VALIDATE) text = validatorsAsChunks(text);
          const url = `new URL(${JSON.stringify(relative(cliOut, args.path).split("\\").join("/"))}, __eddyUrl).href`;
          return { contents: text.replaceAll("import.meta.url", url), loader: "js" };
        });
      },
    },
  ],
});
mkdirSync(cliOut, { recursive: true });
for (const file of cli.outputFiles ?? []) {
  const commonjs = await transform(file.text, {
    format: "cjs",
    platform: "node",
    target: "node20",
    minify: true,
    // `import("./chunk.js")` becomes a lazy `require`, which the loader links.
    supported: { "dynamic-import": false },
    logLevel: "error",
  });
  writeFileSync(file.path.replace(/\.js$/, ".cjs"), `"use strict";${commonjs.code}`);
}
// The loader bin/eddy.js runs first (src/cli/code-cache.ts and the few files it imports), one
// file: an ES module of its own costs Node's module loader a few milliseconds at every start.
await build({
  entryPoints: [join(root, "dist/cli/code-cache.js")],
  outfile: join(cliOut, "loader.mjs"),
  bundle: true,
  format: "esm",
  platform: "node",
  target: "node20",
  minify: true,
  logLevel: "error",
  legalComments: "eof",
});
// Which compiled files and packages each chunk holds (test/startup-modules.test.ts reads it).
const chunks = {};
for (const [out, meta] of Object.entries(cli.metafile.outputs)) {
  chunks[relative(cliOut, join(root, out)).replace(/\.js$/, ".cjs")] = Object.keys(meta.inputs).sort();
}
for (const name of VALIDATOR_CHUNKS) {
  copyFileSync(join(root, "dist/protocol/generated", `${name}.cjs`), join(cliOut, `${name}.cjs`));
  chunks[`${name}.cjs`] = [`dist/protocol/generated/${name}.cjs`];
}
writeFileSync(join(cliOut, "chunks.json"), `${JSON.stringify(chunks, null, 1)}\n`);
// The bundle must not call import() itself: a vm.Script cannot (src/util/import-package.ts).
const dynamic = Object.values(cli.metafile.outputs).flatMap((o) =>
  o.imports.filter((i) => i.kind === "dynamic-import" && i.external).map((i) => i.path),
);
process.exitCode = tsc.status ?? 1;
if (dynamic.length > 0) {
  console.error(`build: the CLI bundle imports ${dynamic.join(", ")} with import(); use importPackage`);
  process.exitCode = 1;
}
if (script === "" || /<\/script|<!--/i.test(script)) {
  console.error("build: the view page script is empty or still contains </script or <!--");
  process.exitCode = 1;
}
if (process.exitCode === 0) writeFileSync(join(root, STAMP), `${inputs}\n`);
