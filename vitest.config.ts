import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts', 'client/**/*.test.ts'],
    // Long-poll tests hold requests open for a poll timeout; keep it short in
    // tests (each sets its own) but allow slow CI machines some room.
    testTimeout: 30_000,
    hookTimeout: 30_000,
    // Suites that start several server processes compete for two cores.
    fileParallelism: true,
    maxWorkers: 2,
    // Each worker process runs file after file and keeps the modules it has
    // loaded, instead of loading vitest, the server and its dependencies
    // afresh for every file: that reloading was most of the suite's CPU
    // beyond the tests' own. The suites share no state but what they close
    // or restore; test/helpers/no-leaks.ts fails a file that leaves fake
    // timers on or changes process.env.
    isolate: false,
    setupFiles: ['test/helpers/no-leaks.ts'],
    globalSetup: ['test/helpers/global-build.ts'],
  },
});
