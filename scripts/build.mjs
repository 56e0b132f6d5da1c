// Compiles src/ to dist/ with tsc and copies the generated ajv validators (plain JS + .d.ts) next to
// their compiled importers. Used by `npm run build` (and so by `npm ci` through `prepare`) and by
// the test suite's global setup. Exits non-zero when tsc reports errors (the JS is emitted anyway).
import { spawnSync } from "node:child_process";
import { copyFileSync, mkdirSync } from "node:fs";
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
const generated = "protocol/generated";
mkdirSync(join(root, "dist", generated), { recursive: true });
for (const file of ["validators.js", "validators.d.ts"]) {
  copyFileSync(join(root, "src", generated, file), join(root, "dist", generated, file));
}
process.exitCode = tsc.status ?? 1;
