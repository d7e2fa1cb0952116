import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // Builds dist/ when stale; a private TMPDIR per run, checked for leftovers at the end.
    globalSetup: ['test/global-setup.ts'],
    // Per file: fails a file whose child processes outlive it; resets the logger and removes the file's temp folders.
    setupFiles: ['test/setup-children.ts', 'test/setup-file-state.ts'],
    testTimeout: 60_000,
    // A file reading the demo index waits in its beforeAll until global setup has built it.
    hookTimeout: 300_000,
    // Global teardown drops the PostgreSQL fixtures (a DROP DATABASE waits for a checkpoint); past
    // this vitest abandons it silently, so test/global-setup.ts fails the run by name at 50 s.
    teardownTimeout: 60_000,
    pool: 'forks',
    // Files of one worker share its module instances (node_modules and src are loaded and PGlite's
    // wasm compiled once per worker, not once per file): about half the suite's CPU time. Nothing in
    // src keeps per-test state at module level that a test reads absolutely (metrics tests read
    // deltas); per-file hooks live in setupFiles, which run for every file.
    isolate: false,
    // Database-backed suites each open their own database; keep memory bounded on 2 cores.
    maxWorkers: 2,
    experimental: {
      // The transformed TypeScript modules are kept in node_modules/.experimental-vitest-cache,
      // keyed by each file's content, vitest's version, the config and the lockfile: a run on
      // unchanged files skips vite's transform (about 2 CPU-s).
      fsModuleCache: true,
    },
  },
});
