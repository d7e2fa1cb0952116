import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    pool: 'forks',
    // Database-backed suites each open their own database; keep memory bounded on 2 cores.
    maxWorkers: 2,
  },
});
