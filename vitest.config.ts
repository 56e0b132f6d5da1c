import { availableParallelism } from "node:os";
import { defineConfig } from "vitest/config";
import { SlowFirstSequencer } from "./test/support/sequencer.js";

export default defineConfig({
  test: {
    include: ["src/**/*.test.ts", "test/**/*.test.ts"],
    globalSetup: ["test/global-setup.ts"],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: "forks",
    // Vitest's default is one worker fewer than the cores: one worker on a 2-core machine, so the
    // suite ran file after file while most end-to-end files wait on the processes they start.
    // Four files at a time on 2 cores (three before; with shared module caches four finished in
    // 252 s where three took 277-304 s: bench/README.md, "The test suite").
    maxWorkers: Math.max(4, availableParallelism()),
    // Files share their worker's module cache instead of importing eddy afresh each (about 0.6 s a
    // file, 200 files): the suite went from 393 s to 284 s on a quiet 2-core machine (bench/README.md,
    // "The test suite"). A test that changes process-wide state restores it (vi.unstubAllEnvs,
    // mockRestore); `npm run test:shuffled` runs the files in a random order to catch one that does not.
    isolate: false,
    // The slowest files first, from the last run's durations (test/support/sequencer.ts), or in a random
    // order for `npm run test:shuffled` (EDDY_TEST_ORDER=random).
    sequence:
      process.env.EDDY_TEST_ORDER === "random"
        ? { shuffle: { files: true, tests: false } }
        : { sequencer: SlowFirstSequencer },
  },
});
