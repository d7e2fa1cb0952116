/**
 * Temporary folders that a test file removes again: `tempDir('repindex-cli-')` creates a folder
 * under the OS temp dir, and every folder created through it is deleted after the file's last
 * test (test/setup-file-state.ts, a setup file that vitest runs for every test file: test files
 * share one module instance per worker, so a hook registered here would run for the first only). Use it instead of a bare
 * `mkdtempSync`: the suite's global teardown fails the run when `repindex-*` folders remain.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const created: string[] = [];

export function tempDir(prefix = 'repindex-test-'): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  created.push(dir);
  return dir;
}

/** Removes every folder made by {@link tempDir} so far (run after each file's last test). */
export function removeTempDirs(): void {
  for (const d of created.splice(0)) rmSync(d, { recursive: true, force: true });
}
