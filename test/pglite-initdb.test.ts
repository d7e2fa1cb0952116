/**
 * A new PGlite data folder is made by a short-lived child process (src/db/pglite-initdb.ts), so
 * the process that opens it never carries PGlite's initdb memory; an existing folder is reused;
 * a failing child is a clear error that leaves no half-made folder.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openDatabase } from '../src/db/database.js';
import {
  ensurePgliteDataDir,
  INITDB_SCRATCH,
  pgliteModuleUrl,
  PgliteInitError,
} from '../src/db/pglite-initdb.js';
import { tempDir } from './helpers/tmp.js';

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** A module the child imports instead of PGlite's: runs `prelude`, then re-exports PGlite. */
function wrapperModule(dir: string, prelude: string): string {
  const file = join(dir, 'wrapper.mjs');
  writeFileSync(
    file,
    `import { writeFileSync } from 'node:fs';\n${prelude}\nexport { PGlite } from ${JSON.stringify(pgliteModuleUrl())};\n`,
  );
  return `file://${file}`;
}

describe('PGlite data folder made in a child process', () => {
  it('a new folder is initialised by a child, then opened; a second open reuses it', async () => {
    const root = tempDir('repindex-initdb-');
    const marker = join(root, 'child.pid');
    const dir = join(root, 'data');
    const { mkdirSync } = await import('node:fs');
    mkdirSync(dir);
    const made = await ensurePgliteDataDir(
      dir,
      wrapperModule(root, `writeFileSync(${JSON.stringify(marker)}, String(process.pid));`),
    );
    expect(made).toBe(true);
    const childPid = Number(readFileSync(marker, 'utf8'));
    expect(childPid).not.toBe(process.pid);
    expect(alive(childPid)).toBe(false); // short-lived: gone once the folder is there
    expect(existsSync(join(dir, 'PG_VERSION'))).toBe(true);
    expect(existsSync(join(dir, INITDB_SCRATCH))).toBe(false);
    // An existing folder is not initialised again.
    expect(await ensurePgliteDataDir(dir)).toBe(false);

    const db = await openDatabase({ databaseUrl: null, dataDir: dir });
    await db.exec('CREATE TABLE kept (n int); INSERT INTO kept VALUES (42)');
    await db.close();
    const again = await openDatabase({ databaseUrl: null, dataDir: dir });
    expect(await again.query('SELECT n FROM kept')).toEqual([{ n: 42 }]);
    await again.close();
  });

  it('openDatabase on a folder that does not exist yet makes it and keeps its rows', async () => {
    const dir = join(tempDir('repindex-initdb-'), 'nested', 'data');
    const db = await openDatabase({ databaseUrl: null, dataDir: dir });
    await db.exec('CREATE TABLE kept (n int); INSERT INTO kept VALUES (7)');
    await db.close();
    expect(existsSync(join(dir, 'PG_VERSION'))).toBe(true);
    const again = await openDatabase({ databaseUrl: null, dataDir: dir });
    expect(await again.query('SELECT n FROM kept')).toEqual([{ n: 7 }]);
    // A data folder on disk runs with WAL buffers room for a whole batch (src/db/pglite.ts).
    expect(await again.query('SHOW wal_buffers')).toEqual([{ wal_buffers: '16MB' }]);
    expect(await again.query('SHOW full_page_writes')).toEqual([{ full_page_writes: 'off' }]);
    expect(await again.query('SHOW fsync')).toEqual([{ fsync: 'off' }]); // why full pages are not needed
    await again.close();
  });

  it('a child that fails is a clear error and leaves no database behind', async () => {
    const root = tempDir('repindex-initdb-');
    const dir = join(root, 'data');
    const { mkdirSync } = await import('node:fs');
    mkdirSync(dir);
    const missing = `file://${join(root, 'no-such-module.mjs')}`;
    const err = await ensurePgliteDataDir(dir, missing).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(PgliteInitError);
    expect((err as Error).message).toMatch(
      /^Could not create the PGlite data directory .*\/data \(initdb in a child process\): the child process exited with code 1: .*no-such-module/s,
    );
    expect(existsSync(join(dir, 'PG_VERSION'))).toBe(false);
    expect(existsSync(join(dir, INITDB_SCRATCH))).toBe(false);

    // Killed half way: the scratch folder goes, the next attempt succeeds.
    const killed = await ensurePgliteDataDir(
      dir,
      wrapperModule(root, "process.kill(process.pid, 'SIGKILL');"),
    ).catch((e: unknown) => e);
    expect((killed as Error).message).toMatch(/the child process was killed by SIGKILL/);
    expect(existsSync(join(dir, 'PG_VERSION'))).toBe(false);
    expect(await ensurePgliteDataDir(dir)).toBe(true);
    const db = await openDatabase({ databaseUrl: null, dataDir: dir });
    expect(await db.query('SELECT 1 AS one')).toEqual([{ one: 1 }]);
    await db.close();
  });
});
