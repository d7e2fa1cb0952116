/**
 * A batch that loses to another chain's batch (PostgreSQL's deadlock 40P01 or serialization
 * failure 40001, seen when chains are written concurrently: the maintained aggregates keyed by the
 * rater wallet are shared between chains) is rolled back whole and written again, once; any other
 * error, or a conflict that keeps coming back, fails the batch as before. Both databases: the
 * rollback is the real one of the database under test.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { databaseErrorCode, isTransactionConflict, type Database } from '../src/db/database.js';
import { loadConfig } from '../src/config.js';
import { INGEST_CONFLICT_ATTEMPTS, ingestBatch } from '../src/indexer/ingest.js';
import { emptyChainResult, logChainOutcomes } from '../src/indexer/pass-report.js';
import { registry } from '../src/metrics.js';
import { ownedAndRated } from './helpers/indexer-fixtures.js';
import { openTestDatabase, type TestDatabase } from './helpers/db.js';

/** An error shaped as pg's and PGlite's are when the server refuses a statement. */
const refused = (code: string) =>
  Object.assign(new Error(code === '40P01' ? 'deadlock detected' : 'refused'), { severity: 'ERROR', code });

/** The database under test, whose next `n` transactions fail with `code` AFTER their writes ran. */
function losing(inner: Database, code: string, n: number): Database & { runs: () => number } {
  let left = n;
  let runs = 0;
  return {
    ...inner,
    runs: () => runs,
    transaction: (fn) =>
      inner.transaction(async (tx) => {
        runs++;
        const out = await fn(tx);
        if (left > 0) {
          left--;
          throw refused(code);
        }
        return out;
      }),
  } as Database & { runs: () => number };
}

const cp = { network: 'base', lastScannedBlock: 5, headAtLastSync: 5, caughtUp: false };
const count = async (db: Database, table: string) =>
  Number((await db.query<{ n: number }>(`SELECT count(*) AS n FROM ${table}`))[0]!.n);
const conflicts = async () =>
  Number(
    /repindex_index_batch_conflicts_total\{chain="base"\} (\d+)/.exec(await registry.metrics())?.[1] ?? 0,
  );

describe('a batch that loses to a concurrent transaction', () => {
  let t: TestDatabase;
  beforeEach(async () => {
    t = await openTestDatabase();
    await t.db.query(`INSERT INTO chains (network, kind, chain_id) VALUES ('base', 'evm', 8453)`);
  });
  afterEach(() => t.close());

  it('names the database refusals it may retry, and only those', () => {
    expect(databaseErrorCode(refused('40P01'))).toBe('40P01');
    expect(databaseErrorCode(new Error('outer', { cause: refused('23505') }))).toBe('23505');
    expect(databaseErrorCode(Object.assign(new Error('rpc'), { code: 'ECONNREFUSED' }))).toBeNull();
    expect(isTransactionConflict(refused('40P01'))).toBe(true);
    expect(isTransactionConflict(refused('40001'))).toBe(true);
    expect(isTransactionConflict(refused('23505'))).toBe(false);
  });

  it.each(['40P01', '40001'])('is written again after %s, exactly once', async (code) => {
    const before = await conflicts();
    const db = losing(t.db, code, 2);
    const counts = await ingestBatch(db, ownedAndRated('base', '0xaa', '0xcc', '80'), cp);
    expect(db.runs()).toBe(3);
    expect(counts.ratings).toBe(1);
    expect(await count(t.db, 'ratings')).toBe(1);
    expect(await count(t.db, 'live_agent_rater')).toBe(1);
    const [chain] = await t.db.query<{ last_scanned_block: number }>(
      `SELECT last_scanned_block FROM chains WHERE network = 'base'`,
    );
    expect(Number(chain!.last_scanned_block)).toBe(5);
    expect(await conflicts()).toBe(before + 2);
  });

  it('fails the batch, writing nothing, when the conflict keeps coming back', async () => {
    const db = losing(t.db, '40P01', INGEST_CONFLICT_ATTEMPTS);
    await expect(ingestBatch(db, ownedAndRated('base', '0xaa', '0xcc', '80'), cp)).rejects.toMatchObject({
      code: '40P01',
    });
    expect(db.runs()).toBe(INGEST_CONFLICT_ATTEMPTS);
    expect(await count(t.db, 'ratings')).toBe(0);
  });

  it('does not retry any other refusal', async () => {
    const db = losing(t.db, '23505', 1);
    await expect(ingestBatch(db, ownedAndRated('base', '0xaa', '0xcc', '80'), cp)).rejects.toMatchObject({
      code: '23505',
    });
    expect(db.runs()).toBe(1);
    expect(await count(t.db, 'ratings')).toBe(0);
  });
});

describe('a chain failed by the database', () => {
  it('is not blamed on the RPC: the hint names the SQLSTATE', () => {
    const chain = loadConfig({}).chains.find((c) => c.network === 'base')!;
    const lines: string[] = [];
    const log = { info: (l: string) => lines.push(l), warn: (l: string) => lines.push(l) };
    const failed = (databaseCode?: string) => ({
      ...emptyChainResult(chain),
      status: 'failed' as const,
      ok: false,
      error: 'deadlock detected',
      ...(databaseCode ? { databaseCode } : {}),
    });
    logChainOutcomes([failed('40P01'), failed()], [chain, chain], log);
    expect(lines[0]).toContain('SQLSTATE 40P01');
    expect(lines[0]).not.toContain('RPC_URL_BASE');
    expect(lines[1]).toContain('RPC_URL_BASE');
  });
});
