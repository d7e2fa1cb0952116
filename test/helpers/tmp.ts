/**
 * Temporary folders that a test file removes again: `tempDir('repindex-cli-')` creates a folder
 * under the OS temp dir, and every folder created through it is deleted after the file's last
 * test (an `afterAll` registered when this module is imported). Use it instead of a bare
 * `mkdtempSync`: the suite's global teardown fails the run when `repindex-*` folders remain.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll } from 'vitest';

const created: string[] = [];

export function tempDir(prefix = 'repindex-test-'): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  created.push(dir);
  return dir;
}

/** Removes every folder made by {@link tempDir} so far (also run after the file's last test). */
export function removeTempDirs(): void {
  for (const d of created.splice(0)) rmSync(d, { recursive: true, force: true });
}

afterAll(removeTempDirs);
