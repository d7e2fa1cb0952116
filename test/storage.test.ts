/**
 * The same migrations and the same queries give the same results on PGlite and PostgreSQL.
 * The PostgreSQL half needs TEST_DATABASE_URL (CI sets it); the PGlite half always runs.
 */
import { describe, expect, it } from 'vitest';
import { openDatabase, type Database } from '../src/db/database.js';
import { migrate, migrationFiles } from '../src/db/migrate.js';
import { openTestDatabase, testDatabaseUrl } from './helpers/db.js';
import { bareTarball, migratedDataDir, openMigratedPglite } from './helpers/db-template.js';
import { tempDir } from './helpers/tmp.js';

async function exercise(db: Database) {
  await db.query(`INSERT INTO chains (network, kind, chain_id, enabled) VALUES ('base', 'evm', 8453, true)`);
  await db.query(
    `INSERT INTO agents (network, agent_id, minter, owner, owner_block, owner_log_index) VALUES ($1, $2, $3, $4, $5, $6)`,
    ['base', '7', '0xminter', '0xowner', 10, 0],
  );
  const insertRating = (tx: string, li: number, value: string) =>
    db.query(
      `INSERT INTO ratings (network, tx_hash, log_index, agent_id, rater, feedback_index, value_raw, value_decimals, value,
                            tag1, block_number, block_time)
       VALUES ($1, $2, $3, '7', '0xrater', 1, $4, 0, $4, $5, 12, $6)
       ON CONFLICT (network, tx_hash, log_index) DO NOTHING`,
      ['base', tx, li, value, '<script>"\'', new Date('2026-10-01T00:00:00Z')],
    );
  await insertRating('0xaa', 0, '87');
  await insertRating('0xaa', 0, '87'); // idempotent
  await insertRating('0xaa', 1, '0');
  await insertRating('0xbb', 0, '170141183460469231731687303715884105727'); // int128 max
  // A rolled-back transaction leaves nothing behind.
  await expect(
    db.transaction(async (tx) => {
      await tx.query(`UPDATE ratings SET revoked = true WHERE tx_hash = '0xaa'`);
      throw new Error('boom');
    }),
  ).rejects.toThrow('boom');
  const rows = await db.query(
    `SELECT network, tx_hash, log_index, value, tag1, block_number, block_time, revoked, feedback_index
       FROM ratings ORDER BY tx_hash, log_index`,
  );
  const agg = await db.query(
    `SELECT count(*) AS n, count(DISTINCT rater) AS raters, sum(value) AS total, avg(value::float8) AS mean_small
       FROM ratings WHERE value <= 100`,
  );
  const owners = await db.query(
    `SELECT a.owner, count(r.*) AS ratings FROM agents a JOIN ratings r USING (network, agent_id) GROUP BY a.owner`,
  );
  const lock = await db.tryWithLock('x', async () => (await db.tryWithLock('x', async () => 1)).acquired);
  return { rows, agg, owners, lock };
}

describe('storage', () => {
  it('migrations are idempotent and create the schema', async () => {
    // A database straight after initdb (the run's, spared a new initdb's 3 CPU-s; else a new one).
    const bare = bareTarball();
    const db = await openDatabase({
      databaseUrl: null,
      dataDir: 'memory://',
      ...(bare ? { loadDataDir: bare } : {}),
    });
    expect(await db.query(`SELECT count(*)::int AS n FROM pg_tables WHERE schemaname = 'public'`)).toEqual([
      { n: 0 },
    ]);
    expect(await migrate(db)).toEqual(migrationFiles());
    expect(await migrate(db)).toEqual([]);
    const tables = await db.query<{ table_name: string }>(
      `SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema() ORDER BY 1`,
    );
    expect(tables.map((t) => t.table_name)).toEqual(
      expect.arrayContaining([
        'agents',
        'chains',
        'ownership_transfers',
        'payment_receipts',
        'ratings',
        'revocations',
        'snapshot_receipts',
      ]),
    );
    await db.close();
  });

  it('normalizes driver types: int8 → number, NUMERIC → exact string, timestamptz → Date', async () => {
    const t = await openTestDatabase();
    const r = await exercise(t.db);
    expect(r.rows).toHaveLength(3);
    expect(r.rows[0]).toMatchObject({
      log_index: 0,
      value: '87',
      block_number: 12,
      revoked: false,
      feedback_index: '1',
    });
    expect(r.rows[0]!.block_time).toBeInstanceOf(Date);
    expect(r.rows[2]!.value).toBe('170141183460469231731687303715884105727');
    expect(r.agg[0]).toMatchObject({ n: 2, raters: 1, total: '87' });
    expect(r.owners).toEqual([{ owner: '0xowner', ratings: 3 }]);
    // the inner attempt fails while the outer holds the lock
    expect(r.lock).toEqual({ acquired: true, value: false });
    await t.close();
  });

  it.skipIf(!testDatabaseUrl)('gives identical results on PGlite and PostgreSQL', async () => {
    const lite = await openMigratedPglite();
    const pgT = await openTestDatabase();
    expect(pgT.db.kind).toBe('postgres');
    const a = await exercise(lite);
    const b = await exercise(pgT.db);
    expect(b).toEqual(a);
    await lite.close();
    await pgT.close();
  });

  it('refuses a second process on the same PGlite data directory', async () => {
    const dir = migratedDataDir(tempDir('repindex-lock-'));
    const first = await openDatabase({ databaseUrl: null, dataDir: dir });
    await expect(openDatabase({ databaseUrl: null, dataDir: dir })).rejects.toThrow(
      /in use by another repindex process/,
    );
    await first.close();
    const again = await openDatabase({ databaseUrl: null, dataDir: dir });
    await again.close();
  });
});

describe('data directory lock', () => {
  it('takes over a lock whose holder died, and refuses one whose holder lives', async () => {
    const { mkdirSync, writeFileSync } = await import('node:fs');
    const { join } = await import('node:path');
    const { spawnSync } = await import('node:child_process');
    const dir = migratedDataDir(tempDir('repindex-stale-'));
    // A lock as a killed process leaves it: fresh lock directory, pid file of a dead process.
    const dead = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], {
      encoding: 'utf8',
    });
    mkdirSync(join(dir, '.repindex.lock'));
    writeFileSync(join(dir, '.repindex.pid'), dead.stdout);
    const db = await openDatabase({ databaseUrl: null, dataDir: dir });
    await db.close();
    // A live holder (this very test process, via a pid file naming our parent) is respected.
    mkdirSync(join(dir, '.repindex.lock'));
    writeFileSync(join(dir, '.repindex.pid'), String(process.ppid));
    await expect(openDatabase({ databaseUrl: null, dataDir: dir })).rejects.toThrow(
      /in use by another repindex process/,
    );
  });
});
