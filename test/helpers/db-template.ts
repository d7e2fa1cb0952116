/**
 * A migrated, empty database built ONCE per `vitest run` (test/global-setup.ts), so that test
 * files do not each pay PGlite's initdb (about 2 s of CPU per fresh in-memory database, far more
 * than the migrations themselves):
 * - `migrated.tar`: a `dumpDataDir()` tarball that {@link openTestDatabase} loads into each
 *   in-memory PGlite (PGlite runs only; on PostgreSQL a schema per file is already cheap);
 * - `pgdata/`: a migrated PGlite data directory that {@link migratedDataDir} copies for the tests
 *   that start the CLI on an embedded database (every run: those tests use PGlite on both).
 * Tests about a fresh data directory (first start, initdb, locks) still create theirs from nothing.
 */
import { cpSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { inject } from 'vitest';
import { openDatabase } from '../../src/db/database.js';
import { migrate } from '../../src/db/migrate.js';

/** What global setup hands to the test files (vitest `provide`/`inject`: plain JSON). */
export interface DbTemplateRef {
  /** Migrated in-memory PGlite dumped as a tarball; null when the run is on PostgreSQL. */
  tar: string | null;
  /** Migrated PGlite data directory to copy. */
  dataDir: string;
}

declare module 'vitest' {
  export interface ProvidedContext {
    dbTemplate: DbTemplateRef | null;
  }
}

/** Builds both templates under `dir` (global setup). `withTar`: also the in-memory tarball. */
export async function buildDbTemplates(dir: string, withTar: boolean): Promise<DbTemplateRef> {
  mkdirSync(dir, { recursive: true });
  const dataDir = join(dir, 'pgdata');
  const onDisk = await openDatabase({ databaseUrl: null, dataDir });
  try {
    await migrate(onDisk);
  } finally {
    await onDisk.close();
  }
  let tar: string | null = null;
  if (withTar) {
    const raw = await PGlite.create({ dataDir });
    try {
      const blob = await raw.dumpDataDir('none');
      tar = join(dir, 'migrated.tar');
      writeFileSync(tar, Buffer.from(await blob.arrayBuffer()));
    } finally {
      await raw.close();
    }
  }
  return { tar, dataDir };
}

function ref(): DbTemplateRef | null {
  try {
    return inject('dbTemplate') ?? null;
  } catch {
    return null; // outside a vitest worker
  }
}

let tarBlob: Blob | null | undefined;

/** The migrated tarball for an in-memory PGlite, or null (then the caller starts from nothing). */
export function migratedTarball(): Blob | null {
  if (tarBlob !== undefined) return tarBlob;
  const r = ref();
  tarBlob = r?.tar && existsSync(r.tar) ? new Blob([readFileSync(r.tar)]) : null;
  return tarBlob;
}

/**
 * A migrated PGlite data directory at `target` (which must not exist yet), copied from the run's
 * template; falls back to an empty directory that the CLI initialises itself.
 */
export function migratedDataDir(target: string): string {
  const r = ref();
  if (r && existsSync(r.dataDir)) cpSync(r.dataDir, target, { recursive: true });
  else mkdirSync(target, { recursive: true });
  return target;
}
