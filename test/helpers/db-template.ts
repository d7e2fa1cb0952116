/**
 * A migrated, empty database built ONCE per `vitest run` (test/global-setup.ts), so that test
 * files do not each pay PGlite's initdb (about 2 s of CPU per fresh in-memory database, far more
 * than the migrations themselves):
 * - `migrated.tar`: a `dumpDataDir()` tarball that {@link openMigratedPglite} loads into each
 *   in-memory PGlite it starts (every test database on PGlite runs, and the embedded databases
 *   that PostgreSQL runs also open; on PostgreSQL a schema per file is already cheap); a closed
 *   test database's instance is emptied and reused by the next one of the same worker (the pool
 *   below);
 * - `pgdata/`: a migrated PGlite data directory that {@link migratedDataDir} copies for the tests
 *   that start the CLI on an embedded database (every run: those tests use PGlite on both).
 * Tests about a fresh data directory (first start, initdb, locks) still create theirs from nothing.
 */
import { cpSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { inject } from 'vitest';
import { newMemoryPglite, pgliteDatabase, type Database } from '../../src/db/database.js';
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
  // initdb and the migrations in memory, then the tarball, then the directory from the tarball:
  // about half the time of initdb on disk and a second start to dump it.
  const memory = await newMemoryPglite();
  let blob: Blob;
  try {
    await migrate(pgliteDatabase(memory, async () => undefined));
    blob = await memory.dumpDataDir('none');
  } finally {
    await memory.close();
  }
  const tar = join(dir, 'migrated.tar');
  writeFileSync(tar, Buffer.from(await blob.arrayBuffer()));
  const dataDir = join(dir, 'pgdata');
  const onDisk = await PGlite.create({ dataDir, loadDataDir: blob });
  await onDisk.close();
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

// ---------------------------------------------------------------- a pool of PGlite instances
//
// Starting a PGlite, even from the template's tarball, costs about 0.5 s of CPU (the wasm
// postgres boots and unpacks the data directory). A worker runs many files one after the other
// (`isolate: false`), so a closed test database hands its instance back here and the next
// openMigratedPglite() takes it, emptied. An instance is only reused when it is exactly the
// migrated template again: its session state discarded, its schema's fingerprint (every relation,
// column, index, constraint, trigger, function, schema and setting) equal to a fresh instance's,
// and every table but schema_migrations truncated. A test that altered the schema (dropped a
// trigger to inject a fault, say) fails the fingerprint and its instance is really closed.

const idle: PGlite[] = [];
/** At most this many emptied instances wait in a worker (each holds its wasm heap). */
const IDLE_MAX = 2;
let fresh: { fingerprint: string; truncate: string } | null = null;
/** This worker's pool so far: instances started, taken from the pool, emptied into it, closed. */
export const pglitePool = { started: 0, reused: 0, recycled: 0, closed: 0 };

const FINGERPRINT_SQL = `
WITH u AS (SELECT oid FROM pg_namespace
           WHERE nspname NOT IN ('pg_catalog', 'information_schema') AND nspname NOT LIKE 'pg\\_%')
SELECT md5(string_agg(x, E'\\n' ORDER BY x)) AS fp FROM (
  SELECT 'n ' || nspname FROM pg_namespace WHERE oid IN (SELECT oid FROM u)
  UNION ALL SELECT 'e ' || extname || ' ' || extversion FROM pg_extension
  UNION ALL SELECT 'c ' || c.oid::regclass::text || ' ' || c.relkind::text || c.relpersistence::text || ' '
                   || coalesce(array_to_string(c.reloptions, ','), '') || ' ' || c.relrowsecurity
            FROM pg_class c WHERE c.relnamespace IN (SELECT oid FROM u)
  UNION ALL SELECT 'a ' || a.attrelid::regclass::text || ' ' || a.attname || ' '
                   || format_type(a.atttypid, a.atttypmod) || ' ' || a.attnotnull || ' '
                   || coalesce(pg_get_expr(d.adbin, d.adrelid), '')
            FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid
            LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
            WHERE c.relnamespace IN (SELECT oid FROM u) AND a.attnum > 0 AND NOT a.attisdropped
  UNION ALL SELECT 'i ' || pg_get_indexdef(i.indexrelid) FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
            WHERE c.relnamespace IN (SELECT oid FROM u)
  UNION ALL SELECT 'k ' || conrelid::regclass::text || ' ' || conname || ' ' || pg_get_constraintdef(oid)
                   || ' ' || convalidated
            FROM pg_constraint WHERE connamespace IN (SELECT oid FROM u)
  UNION ALL SELECT 't ' || tgrelid::regclass::text || ' ' || tgname || ' ' || tgenabled::text || ' '
                   || pg_get_triggerdef(oid)
            FROM pg_trigger WHERE NOT tgisinternal
  UNION ALL SELECT 'p ' || oid::regprocedure::text || ' ' || md5(prosrc) || ' ' || provolatile::text
            FROM pg_proc WHERE pronamespace IN (SELECT oid FROM u)
  UNION ALL SELECT 'v ' || c.oid::regclass::text || ' ' || md5(pg_get_viewdef(c.oid))
            FROM pg_class c WHERE c.relkind IN ('v', 'm') AND c.relnamespace IN (SELECT oid FROM u)
  UNION ALL SELECT 'r ' || polname FROM pg_policy
  UNION ALL SELECT 's ' || array_to_string(setconfig, ',') FROM pg_db_role_setting
  UNION ALL SELECT 'm ' || id FROM schema_migrations
) AS f(x)`;

async function fingerprint(pg: PGlite): Promise<string> {
  const { rows } = await pg.query<{ fp: string }>(FINGERPRINT_SQL);
  return rows[0]!.fp;
}

async function describeFresh(pg: PGlite): Promise<{ fingerprint: string; truncate: string }> {
  const { rows } = await pg.query<{ t: string | null }>(
    `SELECT string_agg(format('%I.%I', schemaname, tablename), ', ' ORDER BY tablename) AS t
       FROM pg_tables WHERE schemaname = 'public' AND tablename <> 'schema_migrations'`,
  );
  const tables = rows[0]?.t;
  if (!tables) throw new Error('the migrated template has no tables');
  return { fingerprint: await fingerprint(pg), truncate: `TRUNCATE ${tables} RESTART IDENTITY CASCADE` };
}

/** A closed test database's instance: emptied into the pool when it is the template again, else closed. */
async function recycle(pg: PGlite): Promise<void> {
  try {
    if (!fresh || idle.length >= IDLE_MAX) throw new Error('not pooled');
    // Fails inside an open transaction block: such an instance is closed, not reused.
    await pg.exec('DISCARD ALL');
    if ((await fingerprint(pg)) !== fresh.fingerprint) throw new Error('schema changed');
    await pg.exec(fresh.truncate);
    idle.push(pg);
    pglitePool.recycled++;
  } catch {
    pglitePool.closed++;
    await pg.close().catch(() => undefined);
  }
}

/**
 * A migrated in-memory PGlite: an emptied instance from this worker's pool, or one loaded from
 * the run's template (outside a run that built one: created and migrated from nothing).
 * migrate() runs either way: on a copy it only confirms that every migration is recorded.
 */
export async function openMigratedPglite(): Promise<Database> {
  let pg = idle.pop();
  if (pg) pglitePool.reused++;
  else {
    pg = await newMemoryPglite(migratedTarball() ?? undefined);
    pglitePool.started++;
  }
  const db = pgliteDatabase(pg, () => recycle(pg));
  try {
    await migrate(db);
    fresh ??= await describeFresh(pg);
  } catch (e) {
    await pg.close().catch(() => undefined);
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
