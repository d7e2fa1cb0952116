/**
 * A fresh, migrated database for one test file. Without TEST_DATABASE_URL it is an in-memory
 * PGlite loaded from the run's migrated template; with it (CI sets it to a PostgreSQL test database) it is a private schema on that
 * server, dropped again on close, so test files never see each other's rows.
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { openDatabase, type Database } from '../../src/db/database.js';
import { migrate } from '../../src/db/migrate.js';
import { openMigratedPglite } from './db-template.js';

// CI runs the suite a second time with DATABASE_URL (or TEST_DATABASE_URL) pointing at PostgreSQL.
export const testDatabaseUrl = process.env.TEST_DATABASE_URL || process.env.DATABASE_URL || null;
export const testDbKind: 'pglite' | 'postgres' = testDatabaseUrl ? 'postgres' : 'pglite';

export interface TestDatabase {
  db: Database;
  /** A DATABASE_URL that reaches the same data (null on PGlite: in memory, this process only). */
  url: string | null;
  close(): Promise<void>;
}

export async function openTestDatabase(): Promise<TestDatabase> {
  if (!testDatabaseUrl) {
    // The run's migrated template (helpers/db-template.ts) spares each file PGlite's initdb.
    const db = await openMigratedPglite();
    return { db, url: null, close: () => db.close() };
  }
  const schema = `t_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: testDatabaseUrl });
  await admin.connect();
  await admin.query(`CREATE SCHEMA ${schema}`);
  await admin.end();
  const u = new URL(testDatabaseUrl);
  u.searchParams.set('options', `-c search_path=${schema}`);
  const url = u.toString();
  const db = await openDatabase({ databaseUrl: url, dataDir: 'memory://' });
  await migrate(db);
  return {
    db,
    url,
    async close() {
      await db.close();
      const c = new pg.Client({ connectionString: testDatabaseUrl });
      await c.connect();
      await c.query(`DROP SCHEMA ${schema} CASCADE`);
      await c.end();
    },
  };
}
