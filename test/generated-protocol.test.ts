/**
 * The files in src/protocol/generated/ are derived from schemas/openresponses/openapi.json by
 * scripts/update-openresponses-types.mjs. This fails when they are stale (the spec or the
 * generator changed and nobody regenerated), so a hand edit or a forgotten regeneration shows up.
 */
import { spawnSync } from "node:child_process";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { expect, it } from "vitest";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..");

it("generated protocol files are up to date (scripts/update-openresponses-types --check)", () => {
  const result = spawnSync(
    process.execPath,
    [join(ROOT, "scripts/update-openresponses-types.mjs"), "--check"],
    {
      cwd: ROOT,
      encoding: "utf8",
    },
  );
  expect(result.stderr, "run scripts/update-openresponses-types and commit the result").toBe("");
  expect(result.status).toBe(0);
}, 60_000);
