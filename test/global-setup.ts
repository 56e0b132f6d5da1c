/**
 * Builds dist/ once before the suite, so end-to-end tests always spawn the CLI compiled from the
 * sources under test (never a stale build). Type errors do not stop the build (tsc still emits);
 * `npm test` reports them in its type-check step.
 */
import { spawnSync } from "node:child_process";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

export default function setup(): void {
  const root = join(dirname(fileURLToPath(import.meta.url)), "..");
  spawnSync(process.execPath, [join(root, "scripts/build.mjs")], { cwd: root, stdio: "pipe" });
}
