/**
 * A fresh, migrated database for one test file. Without TEST_DATABASE_URL it is an in-memory
 * PGlite loaded from the run's migrated template; with it (CI sets it to a PostgreSQL test database) it is a private schema on that
 * server, emptied for the next test database of the worker or dropped on close (below), so test
 * files never see each other's rows.
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { openDatabase, type Database } from '../../src/db/database.js';
import { migrate } from '../../src/db/migrate.js';
import { inject } from 'vitest';
import { describeSchema, resetForReuse, type CatalogQuery, type SchemaShape } from './db-reuse.js';
import { openMigratedPglite } from './db-template.js';

declare module 'vitest' {
  export interface ProvidedContext {
    /** This run's tag: its PostgreSQL test schemas are named `t_<tag>_…` (global teardown drops them). */
    runTag: string;
  }
}

// CI runs the suite a second time with DATABASE_URL (or TEST_DATABASE_URL) pointing at PostgreSQL.
export const testDatabaseUrl = process.env.TEST_DATABASE_URL || process.env.DATABASE_URL || null;
export const testDbKind: 'pglite' | 'postgres' = testDatabaseUrl ? 'postgres' : 'pglite';

export interface TestDatabase {
  db: Database;
  /** A DATABASE_URL that reaches the same data (null on PGlite: in memory, this process only). */
  url: string | null;
  close(): Promise<void>;
}

// ---------------------------------------------------------------- PostgreSQL: a pool of schemas
//
// Creating a schema and running every migration in it costs about 0.4 s of server time. As on
// PGlite (helpers/db-template.ts), a closed test database's schema goes back to its worker's pool
// when its fingerprint equals a freshly migrated one's (helpers/db-reuse.ts), emptied; else it is
// dropped. Schemas are named after the run (`t_<run>_…`), and global teardown drops the ones the
// workers' pools still hold.

const idleSchemas: string[] = [];
const IDLE_MAX = 2;
let freshSchema: SchemaShape | null = null;

/** The prefix of this run's test schemas (global setup provides it; else this process's own). */
export function testSchemaPrefix(): string {
  let tag: string | undefined;
  try {
    tag = inject('runTag');
  } catch {
    // outside a vitest worker
  }
  return `t_${tag ?? randomBytes(3).toString('hex')}_`;
}

/** Runs `fn` on a fresh connection to the PostgreSQL test database, closed afterwards. */
export async function admin<T>(fn: (c: pg.Client) => Promise<T>): Promise<T> {
  const c = new pg.Client({ connectionString: testDatabaseUrl! });
  await c.connect();
  try {
    return await fn(c);
  } finally {
    await c.end();
  }
}

const inSchema =
  (c: pg.Client): CatalogQuery =>
  async <T>(sql: string, params?: unknown[]) =>
    (await c.query(sql, params)).rows as T[];

async function recycleSchema(schema: string): Promise<void> {
  await admin(async (c) => {
    try {
      if (!freshSchema || idleSchemas.length >= IDLE_MAX) throw new Error('not pooled');
      await c.query(`SET search_path TO ${schema}`);
      await resetForReuse(inSchema(c), freshSchema, schema);
      idleSchemas.push(schema);
    } catch {
      await c.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    }
  });
}

export async function openTestDatabase(): Promise<TestDatabase> {
  if (!testDatabaseUrl) {
    // The run's migrated template (helpers/db-template.ts) spares each file PGlite's initdb.
    const db = await openMigratedPglite();
    return { db, url: null, close: () => db.close() };
  }
  let schema = idleSchemas.pop();
  if (!schema) {
    schema = `${testSchemaPrefix()}${randomBytes(6).toString('hex')}`;
    await admin((c) => c.query(`CREATE SCHEMA ${schema}`));
  }
  const u = new URL(testDatabaseUrl);
  u.searchParams.set('options', `-c search_path=${schema}`);
  const url = u.toString();
  const db = await openDatabase({ databaseUrl: url, dataDir: 'memory://' });
  try {
    await migrate(db);
    freshSchema ??= await admin(async (c) => {
      await c.query(`SET search_path TO ${schema}`);
      return describeSchema(inSchema(c), schema, schema);
    });
  } catch (e) {
    await db.close();
    await admin((c) => c.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`));
    throw e;
  }
  let closed: Promise<void> | null = null;
  return {
    db,
    url,
    close() {
      closed ??= db.close().then(() => recycleSchema(schema));
      return closed;
    },
  };
}
