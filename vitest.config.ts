import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts', 'client/**/*.test.ts'],
    // Long-poll tests hold requests open for a poll timeout; keep it short in
    // tests (each sets its own) but allow slow CI machines some room.
    testTimeout: 30_000,
    hookTimeout: 30_000,
    // Four files at a time on two cores: many files spend much of their
    // time waiting (on a poll timeout held through nginx, a cluster worker
    // restarting, docker-compose or a build in a child process), and the
    // files beside them use the cores they leave idle. On two cores three
    // at a time still left them idle part of the run, and five gained
    // little over four. The suites' timing bounds hold at four (CI runs it
    // so) and were checked at five as well, for room.
    fileParallelism: true,
    maxWorkers: 4,
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
