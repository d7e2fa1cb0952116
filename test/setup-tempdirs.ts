/**
 * Loaded in every test file (vitest setupFiles): after the file's last test, the temporary
 * folders it made through helpers/tmp.ts are removed.
 */
import { afterAll } from 'vitest';
import { removeTempDirs } from './helpers/tmp.js';

afterAll(removeTempDirs);
