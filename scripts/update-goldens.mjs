// Regenerates the golden frame summaries of the real captures (test/golden/frames/**) by running
// the capture suite with UPDATE_GOLDENS=1; the suite formats what it writes with Biome.
// Review the diff before committing: a golden change is a change in what eddy emits.
//
// Usage: node scripts/update-goldens.mjs
import { spawnSync } from "node:child_process";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const result = spawnSync(
  process.execPath,
  [join(root, "node_modules/vitest/vitest.mjs"), "run", "test/captures.test.ts"],
  { cwd: root, stdio: "inherit", env: { ...process.env, UPDATE_GOLDENS: "1" } },
);
process.exitCode = result.status ?? 1;
