/**
 * A migrated, empty database built ONCE per `vitest run` (test/global-setup.ts), or taken from the
 * build cache of an earlier run (helpers/build-cache.ts), so that test files do not each pay
 * PGlite's initdb (about 3 s of CPU per fresh in-memory database, far more than the migrations):
 * - `migrated.tar`: a `dumpDataDir()` tarball that {@link openMigratedPglite} loads into each
 *   in-memory PGlite it starts (every test database on PGlite runs, and the embedded databases
 *   that PostgreSQL runs also open; on PostgreSQL a schema per file is already cheap); a closed
 *   test database's instance is emptied and reused by the next one of the same worker (the pool
 *   below);
 * - `pgdata/`: a migrated PGlite data directory that {@link migratedDataDir} copies for the tests
 *   that start the CLI on an embedded database (every run: those tests use PGlite on both);
 * - `bare.tar`: the same database before the migrations ({@link bareTarball}), for the test that
 *   the migrations build the schema from nothing.
 * The tests about a brand-new data directory (the CLI's first start) still run initdb themselves.
 */
import { cpSync, existsSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { inject } from 'vitest';
import { newMemoryPglite, pgliteDatabase, type Database } from '../../src/db/database.js';
import { migrate } from '../../src/db/migrate.js';
import { noteWrite } from '../../src/db/write-epoch.js';
import { cacheKey, fromCache, packageVersion } from './build-cache.js';
import { describeSchema, resetForReuse, type CatalogQuery, type SchemaShape } from './db-reuse.js';

/** What global setup hands to the test files (vitest `provide`/`inject`: plain JSON). */
export interface DbTemplateRef {
  /** The migrated database dumped as a tarball (PGlite `dumpDataDir`). */
  tar: string;
  /** Migrated PGlite data directory to copy. */
  dataDir: string;
  /** The database after initdb, before any migration, dumped as a tarball. */
  bareTar: string;
}

declare module 'vitest' {
  export interface ProvidedContext {
    dbTemplate: DbTemplateRef | null;
  }
}

/**
 * Both templates under `dir` (global setup), from the build cache when the migrations, the code
 * that applies them and PGlite are unchanged since a previous run (helpers/build-cache.ts; the
 * build costs about 3.5 CPU-s, nearly all of it PGlite's initdb). Returns whether it was cached.
 */
export async function buildDbTemplates(dir: string): Promise<{ ref: DbTemplateRef; cached: boolean }> {
  const key = cacheKey(
    ['src/db/migrations', 'src/db/migrate.ts', 'src/db/database.ts', 'test/helpers/db-template.ts'],
    [packageVersion('@electric-sql/pglite')],
  );
  const cached = await fromCache('db-template', key, dir, buildTemplatesInto);
  return {
    ref: { tar: join(dir, 'migrated.tar'), dataDir: join(dir, 'pgdata'), bareTar: join(dir, 'bare.tar') },
    cached,
  };
}

async function buildTemplatesInto(dir: string): Promise<void> {
  mkdirSync(dir, { recursive: true });
  // initdb and the migrations in memory, then the tarball, then the directory from the tarball:
  // about half the time of initdb on disk and a second start to dump it.
  const memory = await newMemoryPglite();
  let blob: Blob;
  try {
    const bare = await memory.dumpDataDir('none');
    writeFileSync(join(dir, 'bare.tar'), Buffer.from(await bare.arrayBuffer()));
    await migrate(pgliteDatabase(memory, async () => undefined));
    blob = await memory.dumpDataDir('none');
  } finally {
    await memory.close();
  }
  writeFileSync(join(dir, 'migrated.tar'), Buffer.from(await blob.arrayBuffer()));
  const onDisk = await PGlite.create({ dataDir: join(dir, 'pgdata'), loadDataDir: blob });
  await onDisk.close();
}

/** The user tables of a migrated database whose rows make its content (not schema_migrations). */
const TABLES_SQL = `SELECT tablename AS t FROM pg_tables
                     WHERE schemaname = 'public' AND tablename <> 'schema_migrations' ORDER BY tablename`;

/**
 * Writes the rows of every table of the open PGlite instance `pg` into the folder `out`, one file
 * per table in COPY's binary format (exact for every type), for {@link openMigratedPglite} to load
 * into a migrated instance.
 */
export async function exportRowsFrom(pg: PGlite, out: string): Promise<void> {
  mkdirSync(out, { recursive: true });
  for (const { t } of (await pg.query<{ t: string }>(TABLES_SQL)).rows) {
    const r = await pg.query(`COPY "${t}" TO '/dev/blob' WITH (FORMAT binary)`);
    writeFileSync(join(out, `${t}.bin`), Buffer.from(await r.blob!.arrayBuffer()));
  }
}

/** Rows written by {@link exportRowsFrom}: table name → its binary COPY data. */
export function readRows(dir: string): Map<string, Blob> {
  return new Map(
    readdirSync(dir)
      .filter((f) => f.endsWith('.bin'))
      .map((f) => [f.slice(0, -4), new Blob([readFileSync(join(dir, f))])]),
  );
}

/**
 * Loads `rows` into an empty migrated instance exactly as they were: with the session in replica
 * mode, so that no trigger fires (the tables the triggers maintain are loaded as they were too)
 * and no foreign key is checked on the way (the rows came from a consistent database).
 */
async function loadRows(pg: PGlite, rows: Map<string, Blob>): Promise<void> {
  const tables = new Set((await pg.query<{ t: string }>(TABLES_SQL)).rows.map((r) => r.t));
  await pg.exec('SET session_replication_role = replica');
  try {
    for (const [t, blob] of rows) {
      if (!tables.has(t)) throw new Error(`the rows name a table the migrated schema lacks: ${t}`);
      await pg.query(`COPY "${t}" FROM '/dev/blob' WITH (FORMAT binary)`, [], { blob });
    }
  } finally {
    await pg.exec('RESET session_replication_role');
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

/** The run's database before any migration (null outside a run that built the template). */
export function bareTarball(): Blob | null {
  const r = ref();
  return r && existsSync(r.bareTar) ? new Blob([readFileSync(r.bareTar)]) : null;
}

function migratedTarball(): Blob | null {
  if (tarBlob !== undefined) return tarBlob;
  const r = ref();
  tarBlob = r && existsSync(r.tar) ? new Blob([readFileSync(r.tar)]) : null;
  return tarBlob;
}

/**
 * A new in-memory PGlite of its own (not from the pool), loaded from the run's migrated dump; its
 * owner closes it. Outside a run that built the template it starts empty (migrate it).
 */
export function newMigratedPglite(): Promise<PGlite> {
  return newMemoryPglite(migratedTarball() ?? undefined);
}

// ---------------------------------------------------------------- a pool of PGlite instances
//
// Starting a PGlite, even from the template's tarball, costs about 0.5 s of CPU (the wasm
// postgres boots and unpacks the data directory). A worker runs many files one after the other
// (`isolate: false`), so a closed test database hands its instance back here and the next
// openMigratedPglite() takes it, emptied. An instance is only reused when it is exactly the
// migrated template again: its session state discarded, its schema's fingerprint (every relation,
// column, index, constraint, trigger, function, schema and setting: helpers/db-reuse.ts) equal to
// a fresh instance's, and every table but schema_migrations that holds a row or drew an id
// truncated (helpers/db-reuse.ts emptyTables: the others are already as fresh). A test that altered the
// schema (dropped a trigger to inject a fault, say) fails the fingerprint and its instance is
// really closed.

const idle: PGlite[] = [];
/** At most this many emptied instances wait in a worker (each holds its wasm heap). */
const IDLE_MAX = 2;
let fresh: SchemaShape | null = null;
/** This worker's pool so far: instances started, taken from the pool, emptied into it, closed. */
export const pglitePool = { started: 0, reused: 0, recycled: 0, closed: 0 };

const rawQuery =
  (pg: PGlite): CatalogQuery =>
  async <T>(sql: string, params?: unknown[]) =>
    (await pg.query<T>(sql, params)).rows;

/** A closed test database's instance: emptied into the pool when it is the template again, else closed. */
async function recycle(pg: PGlite): Promise<void> {
  try {
    if (!fresh || idle.length >= IDLE_MAX) throw new Error('not pooled');
    // Fails inside an open transaction block: such an instance is closed, not reused.
    await pg.exec('DISCARD ALL');
    await resetForReuse(rawQuery(pg), fresh, null);
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
 * `rows` (from {@link readRows}): loaded into it, so that it holds a copy of the database they
 * were exported from (the demo index, helpers/demo.ts), without starting an instance for it.
 */
export async function openMigratedPglite(rows?: Map<string, Blob>): Promise<Database> {
  let pg = idle.pop();
  if (pg) pglitePool.reused++;
  else {
    pg = await newMemoryPglite(migratedTarball() ?? undefined);
    pglitePool.started++;
  }
  const db = pgliteDatabase(pg, () => recycle(pg));
  try {
    await migrate(db);
    fresh ??= await describeSchema(rawQuery(pg), 'public', null);
    if (rows) {
      await loadRows(pg, rows);
      noteWrite(); // as a write through the handle would (helpers that cache answers re-check)
    }
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
