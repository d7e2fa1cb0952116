/**
 * The test suite's pools of test databases: in-memory PGlite instances (helpers/db-template.ts)
 * and, on PostgreSQL runs, schemas (helpers/db.ts). A closed test database is reused by the next
 * one only when it is exactly the migrated template again. These tests hold it to that: no row, no session setting and no schema change crosses
 * from one test database to the next, and a closed handle stays closed.
 */
import { describe, expect, it } from 'vitest';
import type { Database } from '../src/db/database.js';
import { pgliteDatabase } from '../src/db/database.js';
import { migrate } from '../src/db/migrate.js';
import { ingestBatch } from '../src/indexer/ingest.js';
import { refreshAggregates } from '../src/store/aggregates-refresh.js';
import { openTestDatabase, testDbKind } from './helpers/db.js';
import {
  exportRowsFrom,
  newMigratedPglite,
  openMigratedPglite,
  pglitePool,
  readRows,
} from './helpers/db-template.js';
import { describeSchema, emptyTables, type CatalogQuery } from './helpers/db-reuse.js';
import { ownedAndRated } from './helpers/indexer-fixtures.js';
import { tempDir } from './helpers/tmp.js';

const count = async (db: Database, table: string) =>
  Number((await db.query<{ n: number }>(`SELECT count(*) AS n FROM ${table}`))[0]!.n);

describe('PGlite pool of the test suite', () => {
  it('hands the next test database an emptied instance: no row and no session setting crosses', async () => {
    const a = await openMigratedPglite();
    await a.query(`INSERT INTO chains (network, kind, chain_id) VALUES ('base', 'evm', 8453)`);
    await a.exec(`SET statement_timeout = 1234`);
    expect(await count(a, 'chains')).toBe(1);
    const before = { ...pglitePool };
    await a.close();
    expect(pglitePool.recycled).toBe(before.recycled + 1);

    const b = await openMigratedPglite();
    try {
      expect(pglitePool.reused).toBe(before.reused + 1);
      expect(await count(b, 'chains')).toBe(0);
      const [timeout] = await b.query<{ statement_timeout: string }>('SHOW statement_timeout');
      expect(timeout!.statement_timeout).toBe('0');
      // The migrations are all still recorded, so the instance is the migrated template again.
      expect(await count(b, 'schema_migrations')).toBeGreaterThan(0);
    } finally {
      await b.close();
    }
  });

  it('closes an instance whose schema a test changed instead of reusing it', async () => {
    const a = await openMigratedPglite();
    await a.exec('DROP TRIGGER live_ratings_ins ON ratings');
    await a.exec('CREATE TABLE left_behind (x int)');
    const before = { ...pglitePool };
    await a.close();
    expect(pglitePool.closed).toBe(before.closed + 1);
    expect(pglitePool.recycled).toBe(before.recycled);

    const b = await openMigratedPglite();
    try {
      const rows = await b.query(
        `SELECT tgname FROM pg_trigger WHERE tgname = 'live_ratings_ins'
         UNION ALL SELECT relname FROM pg_class WHERE relname = 'left_behind'`,
      );
      expect(rows).toEqual([{ tgname: 'live_ratings_ins' }]);
    } finally {
      await b.close();
    }
  });

  it('a closed handle refuses every call, although its instance lives on in the pool', async () => {
    const a = await openMigratedPglite();
    const reader = a.reader!();
    await a.close();
    await expect(a.query('SELECT 1')).rejects.toThrow('the database is closed');
    await expect(reader.query('SELECT 1')).rejects.toThrow('the database is closed');
    await expect(a.exec('SELECT 1')).rejects.toThrow('the database is closed');
    await expect(a.transaction(async (tx) => tx.query('SELECT 1'))).rejects.toThrow('the database is closed');
    // The next test database, on the same instance, works.
    const b = await openMigratedPglite();
    try {
      expect(await b.query<{ one: number }>('SELECT 1 AS one')).toEqual([{ one: 1 }]);
    } finally {
      await b.close();
    }
  });

  it('an instance closed inside an open transaction is not reused', async () => {
    const a = await openMigratedPglite();
    // A transaction block left open on the session (BEGIN without COMMIT).
    await a.exec('BEGIN');
    await a.query(`INSERT INTO chains (network, kind) VALUES ('x', 'evm')`);
    const before = { ...pglitePool };
    await a.close();
    expect(pglitePool.closed).toBe(before.closed + 1);
    const b = await openMigratedPglite();
    try {
      expect(await count(b, 'chains')).toBe(0);
    } finally {
      await b.close();
    }
  });
});

describe('emptying a closed test database (helpers/db-reuse.ts)', () => {
  it('truncates exactly the tables a test left a row in or drew an id for, restarting the id', async () => {
    const db = await openMigratedPglite();
    const q: CatalogQuery = async <T>(sql: string, params?: unknown[]) =>
      (await db.query(sql, params)) as T[];
    const files = async () =>
      Object.fromEntries(
        (
          await db.query<{ t: string; f: string }>(
            `SELECT relname AS t, pg_relation_filenode(oid)::text AS f FROM pg_class
              WHERE relnamespace = 'scratch'::regnamespace AND relkind = 'r'`,
          )
        ).map((r) => [r.t, r.f]),
      );
    try {
      await db.exec(`CREATE SCHEMA scratch; SET search_path TO scratch;
        CREATE TABLE parent (id int PRIMARY KEY);
        CREATE TABLE child (p int REFERENCES parent (id));
        CREATE TABLE counted (id int GENERATED ALWAYS AS IDENTITY, v text);
        CREATE TABLE untouched (x int);
        CREATE TABLE schema_migrations (id text PRIMARY KEY)`);
      const shape = await describeSchema(q, 'scratch', 'scratch');
      expect(await q(shape.dirty)).toEqual([]);

      // A row in parent and child; counted drew an id and is empty again.
      await db.exec(`INSERT INTO parent VALUES (1); INSERT INTO child VALUES (1);
        INSERT INTO counted (v) VALUES ('a'); DELETE FROM counted`);
      const dirty = (await q<{ t: string }>(shape.dirty)).map((r) => r.t).sort();
      expect(dirty).toEqual(['child', 'counted', 'parent']);
      const before = await files();
      await emptyTables(q, shape);
      const after = await files();
      expect(after['untouched']).toBe(before['untouched']);
      for (const t of dirty) expect(after[t]).not.toBe(before[t]);
      expect(await q(shape.dirty)).toEqual([]);
      await db.exec(`INSERT INTO counted (v) VALUES ('b')`);
      expect(await db.query('SELECT id FROM counted')).toEqual([{ id: 1 }]);

      // A row in the referenced table alone: CASCADE empties the table that references it too.
      await db.exec(`TRUNCATE counted RESTART IDENTITY; INSERT INTO parent VALUES (2)`);
      await emptyTables(q, shape);
      expect(await count(db, 'parent')).toBe(0);
      expect(await q(shape.dirty)).toEqual([]);
    } finally {
      await db.exec('RESET search_path; DROP SCHEMA IF EXISTS scratch CASCADE');
      await db.close();
    }
  });
});

describe('copies loaded from exported rows (the demo index on PGlite)', () => {
  /** Every user table's rows, in a stable order. */
  async function everyRow(db: Database): Promise<Record<string, string[]>> {
    const tables = await db.query<{ t: string }>(
      `SELECT tablename AS t FROM pg_tables WHERE schemaname = 'public' ORDER BY 1`,
    );
    const out: Record<string, string[]> = {};
    for (const { t } of tables) {
      const rows = await db.query(`SELECT * FROM "${t}"`);
      out[t] = rows
        .map((r) => JSON.stringify(r, (_k, v: unknown) => (typeof v === 'bigint' ? `${v}n` : v)))
        .sort();
    }
    return out;
  }

  it('holds exactly the rows of the source, trigger-maintained tables included (no trigger fires twice)', async () => {
    // As the demo fixture does: an in-memory instance loaded from the migrated dump, its rows
    // exported while it is open.
    const pg = await newMigratedPglite();
    const source = pgliteDatabase(pg, async () => undefined);
    const out = tempDir('repindex-rows-');
    const cp = (network: string) => ({ network, lastScannedBlock: 5, headAtLastSync: 5, caughtUp: false });
    let copy: Database | null = null;
    try {
      await migrate(source);
      await source.query(
        `INSERT INTO chains (network, kind, chain_id) VALUES ('base', 'evm', 8453), ('celo', 'evm', 42220)`,
      );
      await ingestBatch(source, ownedAndRated('base', '0xaa', '0xcc', '80'), cp('base'));
      await ingestBatch(source, ownedAndRated('celo', '0xbb', '0xcc', '-7'), cp('celo'));
      await refreshAggregates(source);
      await exportRowsFrom(pg, out);

      copy = await openMigratedPglite(readRows(out));
      const expected = await everyRow(source);
      // The triggers of the ingest filled their tables in the source; a load that fired them
      // again would show here as doubled or extra rows.
      expect(expected['live_agent_rater']!.length).toBeGreaterThan(0);
      expect(expected['ratings']).toHaveLength(2);
      expect(expected['agg_wallet']!.length).toBeGreaterThan(0);
      expect(await everyRow(copy)).toEqual(expected);
      // The copy is an ordinary database afterwards: its triggers fire again.
      await ingestBatch(
        copy,
        ownedAndRated('base', '0xaa', '0xdd', '10')
          .slice(1)
          .map((e) => ({ ...e, txHash: '0xbase03' })),
        cp('base'),
      );
      expect(await count(copy, 'live_agent_rater')).toBe(expected['live_agent_rater']!.length + 1);
    } finally {
      await copy?.close();
      await pg.close();
    }
  });
});

describe.skipIf(testDbKind !== 'postgres')('PostgreSQL schema pool of the test suite', () => {
  const schemaOf = (url: string | null) => new URL(url!).searchParams.get('options');

  it('hands the next test database the emptied schema of a closed one', async () => {
    const a = await openTestDatabase();
    await a.db.query(`INSERT INTO chains (network, kind, chain_id) VALUES ('base', 'evm', 8453)`);
    await a.close();
    const b = await openTestDatabase();
    try {
      expect(schemaOf(b.url)).toBe(schemaOf(a.url));
      expect(await count(b.db, 'chains')).toBe(0);
      expect(await count(b.db, 'schema_migrations')).toBeGreaterThan(0);
    } finally {
      await b.close();
    }
  });

  it('drops a schema a test changed instead of reusing it', async () => {
    const a = await openTestDatabase();
    await a.db.exec('CREATE TABLE left_behind (x int)');
    await a.close();
    const b = await openTestDatabase();
    try {
      expect(schemaOf(b.url)).not.toBe(schemaOf(a.url));
      expect(await b.db.query(`SELECT 1 FROM pg_class WHERE relname = 'left_behind'`)).toEqual([]);
    } finally {
      await b.close();
    }
  });
});
