// `npm run test:durations`: writes test/durations.json, each test file's duration in seconds from
// vitest's cache of the last run (node_modules/.vite/vitest/*/results.json), so a fresh clone, which
// has no cache, can still start its slowest files first (test/support/sequencer.ts). Files under a
// second are left out (their order does not matter). Run it after a full `npm test`.
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";

const root = join(import.meta.dirname, "..");
const cacheDir = join(root, "node_modules", ".vite", "vitest");
let results;
try {
  const [dir] = readdirSync(cacheDir);
  results = JSON.parse(readFileSync(join(cacheDir, dir, "results.json"), "utf8")).results;
} catch (error) {
  console.error(`no vitest cache in ${cacheDir} (${error.message}): run npm test first`);
  process.exit(1);
}
const table = {};
for (const [key, { duration }] of [...results].sort((a, b) => b[1].duration - a[1].duration)) {
  if (!(duration >= 1000)) continue;
  table[key.slice(key.indexOf(":") + 1)] = Math.round(duration / 100) / 10;
}
writeFileSync(join(root, "test", "durations.json"), `${JSON.stringify(table, null, 2)}\n`);
console.log(`test/durations.json: ${Object.keys(table).length} files of ${results.length}`);
