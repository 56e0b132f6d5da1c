// What dist/ is built from, as one digest: every file under src/ that the build reads (tests
// excluded), the build script itself, the TypeScript configs and the lockfile (esbuild bundles
// zod and commander from node_modules). `scripts/build.mjs` writes the digest it built from to
// dist/.build-inputs when it succeeds; the test suite's global setup (test/global-setup.ts)
// rebuilds only when the digest of today's files differs, so `npm ci && npm test` builds once
// (npm ci's `prepare`) and an edited source is never tested against a stale build.
import { createHash } from "node:crypto";
import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";

/** Where the digest of a successful build is kept. */
export const STAMP = join("dist", ".build-inputs");

const ROOT_FILES = [
  "scripts/build.mjs",
  "scripts/build-inputs.mjs",
  "tsconfig.json",
  "tsconfig.build.json",
  "package.json",
  "package-lock.json",
];

/** True for a file under src/ that is not part of the build's input (test files). */
function isTest(path) {
  return path.endsWith(".test.ts") || path.includes("/test-support/");
}

/** The digest of the build's inputs under `root` (sha256, hex). */
export function buildInputsDigest(root) {
  const files = readdirSync(join(root, "src"), { recursive: true, withFileTypes: true })
    .filter((d) => d.isFile())
    .map((d) =>
      relative(root, join(d.parentPath ?? d.path, d.name))
        .split("\\")
        .join("/"),
    )
    .filter((p) => !isTest(p));
  const hash = createHash("sha256");
  for (const path of [...ROOT_FILES, ...files.sort()]) {
    hash.update(`${path}\0`);
    try {
      hash.update(readFileSync(join(root, path)));
    } catch {
      hash.update("\0missing\0");
    }
    hash.update("\0");
  }
  return hash.digest("hex");
}

/** The digest dist/ was last built from, or undefined when it was not built or the build failed. */
export function builtDigest(root) {
  try {
    return readFileSync(join(root, STAMP), "utf8").trim();
  } catch {
    return undefined;
  }
}
