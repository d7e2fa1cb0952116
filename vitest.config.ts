import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // Builds dist/ when stale; a private TMPDIR per run, checked for leftovers at the end.
    globalSetup: ['test/global-setup.ts'],
    // Fails a file whose child processes outlive it.
    setupFiles: ['test/setup-children.ts'],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    pool: 'forks',
    // Database-backed suites each open their own database; keep memory bounded on 2 cores.
    maxWorkers: 2,
  },
});
