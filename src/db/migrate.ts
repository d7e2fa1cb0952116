/**
 * Applies the plain-SQL migrations in src/db/migrations in file-name order, each once, each in its
 * own transaction. The same files run on PGlite and PostgreSQL; running twice is harmless.
 *
 * Every step runs under one lock, the bookkeeping table's creation included: each step is a
 * transaction that first takes the same transaction-scoped advisory lock (`MIGRATION_LOCK`), so
 * processes started together on one database (replicas of a rollout) take turns. Concurrent
 * `CREATE TABLE IF NOT EXISTS` of one table is not safe in PostgreSQL (both see no table, one
 * fails on the catalog's unique index); under the lock the second sees the first's table.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Database, Queryable } from './database.js';

const MIGRATIONS_DIR = join(dirname(fileURLToPath(import.meta.url)), 'migrations');
const MIGRATION_LOCK = 80048004;

export function migrationFiles(): string[] {
  return readdirSync(MIGRATIONS_DIR)
    .filter((f) => f.endsWith('.sql'))
    .sort();
}

/** One migration step: a transaction holding the migration lock from its first statement. */
function underLock<R>(db: Database, fn: (tx: Queryable) => Promise<R>): Promise<R> {
  return db.transaction(async (tx) => {
    await tx.query('SELECT pg_advisory_xact_lock($1)', [MIGRATION_LOCK]);
    return fn(tx);
  });
}

/** Returns the ids of the migrations applied by this call (empty when already up to date). */
export async function migrate(db: Database): Promise<string[]> {
  await underLock(db, (tx) =>
    tx.exec(
      'CREATE TABLE IF NOT EXISTS schema_migrations (id TEXT PRIMARY KEY, applied_at TIMESTAMPTZ NOT NULL DEFAULT now())',
    ),
  );
  const applied: string[] = [];
  for (const file of migrationFiles()) {
    const sql = readFileSync(join(MIGRATIONS_DIR, file), 'utf8');
    const did = await underLock(db, async (tx) => {
      const done = await tx.query('SELECT 1 FROM schema_migrations WHERE id = $1', [file]);
      if (done.length > 0) return false;
      await tx.exec(sql);
      await tx.query('INSERT INTO schema_migrations (id) VALUES ($1)', [file]);
      return true;
    });
    if (did) applied.push(file);
  }
  return applied;
}
