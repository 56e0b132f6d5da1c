import { availableParallelism } from "node:os";
import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["src/**/*.test.ts", "test/**/*.test.ts"],
    globalSetup: ["test/global-setup.ts"],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: "forks",
    // Vitest's default is one worker fewer than the cores: one worker on a 2-core machine, so the
    // suite ran file after file while most end-to-end files wait on the processes they start.
    // Three files at a time on 2 cores (measured: bench/README.md, "The test suite").
    maxWorkers: Math.max(3, availableParallelism() - 1),
  },
});
