/**
 * Builds dist/ once before the suite, so end-to-end tests always spawn the CLI compiled from the
 * sources under test (never a stale build) — unless dist/ was built from exactly today's sources
 * (`--if-changed`: the digest in dist/.build-inputs, scripts/build-inputs.mjs), as right after
 * `npm ci`, whose `prepare` builds it. Type errors do not stop the build (tsc still emits);
 * `npm test` reports them in its type-check step.
 */
import { spawnSync } from "node:child_process";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

export default function setup(): void {
  const root = join(dirname(fileURLToPath(import.meta.url)), "..");
  spawnSync(process.execPath, [join(root, "scripts/build.mjs"), "--if-changed"], {
    cwd: root,
    stdio: "pipe",
  });
}
