/**
 * A bench's PostgreSQL database: a private schema of the server at `url`, created with a random
 * name, migrated, and dropped by `close` (after the database is closed). One place for the benches
 * that run beside PGlite on the same DATABASE_URL.
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { openDatabase, type Database } from '../src/db/database.js';
import { migrate } from '../src/db/migrate.js';

export async function openPrivateSchema(
  url: string,
  prefix = 'bench',
): Promise<{ db: Database; close: () => Promise<void> }> {
  const schema = `${prefix}_${randomBytes(4).toString('hex')}`;
  const admin = new pg.Client({ connectionString: url });
  await admin.connect();
  await admin.query(`CREATE SCHEMA ${schema}`);
  const drop = async () => {
    await admin.query(`DROP SCHEMA ${schema} CASCADE`);
    await admin.end();
  };
  const u = new URL(url);
  u.searchParams.set('options', `-c search_path=${schema}`);
  const db = await openDatabase({ databaseUrl: u.toString(), dataDir: 'memory://' });
  try {
    await migrate(db);
  } catch (e) {
    await db.close();
    await drop();
    throw e;
  }
  return {
    db,
    close: async () => {
      try {
        await db.close();
      } finally {
        await drop();
      }
    },
  };
}
