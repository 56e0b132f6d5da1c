// Regenerates the goldens of the captured Chat Completions streams (test/golden/chat/**, one per
// test/fixtures/chat-captures/<provider>/<name>.chunks.txt) by running their suite with
// UPDATE_GOLDENS=1; the suite formats what it writes with Biome. Review the diff before
// committing: a golden change is a change in what eddy emits or assembles.
//
// Usage: node scripts/update-chat-goldens.mjs
import { spawnSync } from "node:child_process";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const result = spawnSync(
  process.execPath,
  [join(root, "node_modules/vitest/vitest.mjs"), "run", "test/chat-captures.test.ts"],
  { cwd: root, stdio: "inherit", env: { ...process.env, UPDATE_GOLDENS: "1" } },
);
process.exitCode = result.status ?? 1;
