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
  },
});
