/**
 * A migrated, empty database built ONCE per `vitest run` (test/global-setup.ts), so that test
 * files do not each pay PGlite's initdb (about 2 s of CPU per fresh in-memory database, far more
 * than the migrations themselves):
 * - `migrated.tar`: a `dumpDataDir()` tarball that {@link openMigratedPglite} loads into each
 *   in-memory PGlite (every test database on PGlite runs, and the embedded databases that
 *   PostgreSQL runs also open; on PostgreSQL a schema per file is already cheap);
 * - `pgdata/`: a migrated PGlite data directory that {@link migratedDataDir} copies for the tests
 *   that start the CLI on an embedded database (every run: those tests use PGlite on both).
 * Tests about a fresh data directory (first start, initdb, locks) still create theirs from nothing.
 */
import { cpSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { inject } from 'vitest';
import { openDatabase, type Database } from '../../src/db/database.js';
import { migrate } from '../../src/db/migrate.js';

/** What global setup hands to the test files (vitest `provide`/`inject`: plain JSON). */
export interface DbTemplateRef {
  /** The migrated database dumped as a tarball (PGlite `dumpDataDir`). */
  tar: string;
  /** Migrated PGlite data directory to copy. */
  dataDir: string;
}

declare module 'vitest' {
  export interface ProvidedContext {
    dbTemplate: DbTemplateRef | null;
  }
}

/** Builds both templates under `dir` (global setup). */
export async function buildDbTemplates(dir: string): Promise<DbTemplateRef> {
  mkdirSync(dir, { recursive: true });
  const dataDir = join(dir, 'pgdata');
  const onDisk = await openDatabase({ databaseUrl: null, dataDir });
  try {
    await migrate(onDisk);
  } finally {
    await onDisk.close();
  }
  const tar = join(dir, 'migrated.tar');
  await dumpDataDirTo(dataDir, tar);
  return { tar, dataDir };
}

/** Writes the PGlite data directory `dataDir` (closed) to `file` as a `dumpDataDir()` tarball. */
export async function dumpDataDirTo(dataDir: string, file: string): Promise<void> {
  const raw = await PGlite.create({ dataDir });
  try {
    const blob = await raw.dumpDataDir('none');
    writeFileSync(file, Buffer.from(await blob.arrayBuffer()));
  } finally {
    await raw.close();
  }
}

function ref(): DbTemplateRef | null {
  try {
    return inject('dbTemplate') ?? null;
  } catch {
    return null; // outside a vitest worker
  }
}

let tarBlob: Blob | null | undefined;

function migratedTarball(): Blob | null {
  if (tarBlob !== undefined) return tarBlob;
  const r = ref();
  tarBlob = r && existsSync(r.tar) ? new Blob([readFileSync(r.tar)]) : null;
  return tarBlob;
}

/**
 * A migrated in-memory PGlite: loaded from the run's template, or (outside a run that built one)
 * created and migrated from nothing. migrate() runs either way: on a copy it only confirms that
 * every migration is recorded.
 */
export async function openMigratedPglite(): Promise<Database> {
  const tar = migratedTarball();
  const db = await openDatabase({
    databaseUrl: null,
    dataDir: 'memory://',
    ...(tar ? { loadDataDir: tar } : {}),
  });
  try {
    await migrate(db);
  } catch (e) {
    await db.close();
    throw e;
  }
  return db;
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
