/**
 * Plans kept warm: `query(sql, params, {prepare: true})` runs a named prepared statement (on
 * PostgreSQL per pooled connection, on PGlite once in its one session). It must answer exactly what
 * the plain query answers, with the same type parsing, stay correct when the session forgets the
 * statement, fail like the plain query on bad input and leave the session usable, and never run
 * inside another caller's open transaction.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../src/db/database.js';
import { openTestDatabase, testDbKind, type TestDatabase } from './helpers/db.js';

const SQL = `SELECT $1::text AS t, $2::bigint AS big, $3::numeric AS dec, $4::timestamptz AS at,
                    ($5::text IS NULL) AS was_null, count(*) AS n FROM chains WHERE network <> $1`;
const PARAMS = ['base', '9007199254740993', '100.000000000000000001', new Date('2026-01-02T03:04:05Z'), null];

let t: TestDatabase;
let db: Database;

beforeAll(async () => {
  t = await openTestDatabase();
  db = t.db;
  await db.query(
    `INSERT INTO chains (network, kind, chain_id) VALUES ('base', 'evm', 8453), ('celo', 'evm', 42220)`,
  );
});
afterAll(async () => {
  await t.close();
});

describe(`prepared statements (${testDbKind})`, () => {
  it('answer exactly what the plain statement answers, parsed the same way', async () => {
    const plain = await db.query(SQL, PARAMS);
    for (let k = 0; k < 7; k++) expect(await db.query(SQL, PARAMS, { prepare: true })).toEqual(plain);
    expect(plain[0]).toMatchObject({
      t: 'base',
      big: 9007199254740993n,
      dec: '100.000000000000000001',
      n: 1,
    });
    expect((plain[0]!.at as Date).toISOString()).toBe('2026-01-02T03:04:05.000Z');
    // a different parameter gets its own answer from the same statement
    const [other] = await db.query<{ n: number }>(SQL, ['nowhere', 1, 1, null, 'x'], { prepare: true });
    expect(other).toMatchObject({ n: 2, was_null: false });
  });

  it('pass arrays as the plain statement does (quotes, backslashes, commas, braces, nulls)', async () => {
    const sql = `SELECT x, n FROM unnest($1::text[], $2::int[]) AS u(x, n)`;
    const texts = ['a', 'with "quotes"', 'back\\slash', 'comma,and{brace}', null, '', 'NULL'];
    const nums = [1, 2, 3, 4, 5, 6, 7];
    const plain = await db.query(sql, [texts, nums]);
    expect(plain.map((r) => r.x)).toEqual(texts);
    expect(await db.query(sql, [texts, nums], { prepare: true })).toEqual(plain);
  });

  it('are planned once: the session holds the statement after the first call', async () => {
    const count = `SELECT count(*)::int AS n FROM pg_prepared_statements WHERE statement LIKE '%network <> $1%'`;
    if (testDbKind === 'postgres') {
      // prepared per pooled connection: one transaction holds one connection to look at
      const n = await db.transaction(async (q) => {
        await q.query(SQL, PARAMS, { prepare: true });
        await q.query(SQL, PARAMS, { prepare: true });
        return (await q.query<{ n: number }>(count))[0]!.n;
      });
      expect(n).toBe(1);
    } else {
      await db.query(SQL, PARAMS, { prepare: true });
      await db.query(SQL, PARAMS, { prepare: true });
      expect((await db.query<{ n: number }>(count))[0]!.n).toBe(1);
    }
  });

  it('prepare again when the session forgot them (DEALLOCATE ALL)', async () => {
    await db.query(SQL, PARAMS, { prepare: true });
    await db.exec('DEALLOCATE ALL');
    const rows = await db.query(SQL, PARAMS, { prepare: true });
    expect(rows[0]).toMatchObject({ t: 'base', n: 1 });
  });

  it('fail like the plain statement on bad input, and the session keeps working', async () => {
    const bad = `SELECT $1::int AS v`;
    await expect(db.query(bad, ['not a number'], { prepare: true })).rejects.toMatchObject({ code: '22P02' });
    await expect(db.query(bad, ['7'], { prepare: true })).resolves.toEqual([{ v: 7 }]);
    await expect(
      db.query(`SELECT * FROM no_such_table WHERE x = $1`, [1], { prepare: true }),
    ).rejects.toMatchObject({ code: '42P01' });
    await expect(db.query(SQL, PARAMS, { prepare: true })).resolves.toHaveLength(1);
  });

  it("never run inside another caller's open transaction", async () => {
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    const tx = db.transaction(async (q) => {
      await q.query(`INSERT INTO chains (network, kind, chain_id) VALUES ('tmp', 'evm', 1)`);
      await held;
      throw new Error('roll back');
    });
    // started while the transaction holds its uncommitted row: it must not see it
    const during = db.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM chains WHERE network <> $1`,
      ['x'],
      {
        prepare: true,
      },
    );
    await new Promise((r) => setTimeout(r, 50));
    release();
    await expect(tx).rejects.toThrow('roll back');
    expect((await during)[0]!.n).toBe(2);
  });
});
