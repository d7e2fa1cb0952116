/**
 * Loaded in every test file (vitest setupFiles). The files of one worker share its module
 * instances (`isolate: false` in vitest.config.ts), so process-wide state one file changed is put
 * back for the next here:
 * - before the file's first test, the process logger is the default one again (a file that
 *   captured or silenced the log does not do so for the files after it);
 * - after its last test, the temporary folders it made through helpers/tmp.ts are removed.
 * Metrics counters stay process-wide: tests read their deltas.
 */
import { afterAll, beforeAll } from 'vitest';
import { configureLogging } from '../src/log.js';
import { removeTempDirs } from './helpers/tmp.js';

beforeAll(() => {
  configureLogging();
});
afterAll(removeTempDirs);
