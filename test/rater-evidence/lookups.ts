/**
 * Rater evidence through the database, the account-history queue: leases (never twice, an expired
 * lease is taken again), lookups fetched / retried / failed, rate-limited per chain, a finish
 * refused once the row moved on. Registered by test/rater-evidence.test.ts on its one database (the
 * fixture: test/helpers/rater-evidence.ts).
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { leaseRaterTransactions } from '../../src/store/raters.js';
import {
  drainTxLookups,
  runTxRound,
  type TxLookupContext,
  type TxSource,
} from '../../src/raters/transactions.js';
import { testDbKind } from '../helpers/db.js';
import { H, T0, addr, type RaterEventTools, type RaterFixture } from '../helpers/rater-evidence.js';

/* eslint-disable @typescript-eslint/no-explicit-any -- the served JSON is read field by field */

/** The 'account-history lookups (${testDbKind})' suite over the file's database. */
export function lookupsSuite(fixture: () => RaterFixture, tools: RaterEventTools): void {
  let db: RaterFixture['db'];
  const { mint, rate, ingest } = tools;
  beforeAll(() => {
    ({ db } = fixture());
  });

  describe(`account-history lookups (${testDbKind})`, () => {
    const raters = [1, 2, 3, 4].map((i) => addr('cc', i));
    let now = new Date('2030-01-01T00:00:00Z');
    const answers = new Map<string, { from: string; nonce: number } | null | 'throw'>();
    const calls: string[] = [];
    const source: TxSource = async (_network, hash) => {
      calls.push(hash);
      const a = answers.get(hash);
      if (a === 'throw') throw new Error('upstream 502');
      return a ?? null;
    };
    const waits: number[] = [];
    const ctx = (over: Partial<TxLookupContext['options']> = {}): TxLookupContext => ({
      db,
      source,
      clock: () => now,
      owner: 'test-owner',
      sleep: async (ms) => void waits.push(ms),
      options: {
        networks: ['base'],
        batch: 10,
        ratePerSecond: 5,
        maxAttempts: 3,
        retryBaseSeconds: 60,
        leaseSeconds: 120,
        ...over,
      },
    });
    const rows = async () =>
      Object.fromEntries(
        (
          await db.query<any>(
            `SELECT rater, state, attempts, reason, tx_from, nonce::int AS nonce FROM rater_first_tx WHERE rater = ANY($1)`,
            [raters],
          )
        ).map((r) => [r.rater, r]),
      );

    it('fetches sender and nonce, retries then fails the unknown and the failing, spaced per chain', async () => {
      await ingest(
        'base',
        [
          ...mint('base', '902', addr('bb', 2), 200),
          ...raters.map((r, i) => rate('base', '902', r, 50 + i, T0 + 30 * H, 201 + i)),
        ],
        210,
      );
      const hashes = await db.query<{ rater: string; tx_hash: string }>(
        `SELECT rater, tx_hash FROM rater_first_tx WHERE rater = ANY($1) ORDER BY rater`,
        [raters],
      );
      const hash = (i: number) => hashes.find((h) => h.rater === raters[i])!.tx_hash;
      answers.set(hash(0), { from: raters[0]!, nonce: 0 });
      answers.set(hash(1), { from: '0x' + 'ee'.repeat(20), nonce: 91_234 });
      answers.set(hash(2), null);
      answers.set(hash(3), 'throw');
      // leased for another owner first: nothing is left for this one
      const other = await leaseRaterTransactions(db, 'someone-else', now, 10, 120, ['base']);
      expect(other.map((j) => j.rater).sort()).toEqual(expect.arrayContaining(raters));
      expect((await runTxRound(ctx())).leased).toBe(0);
      // its lease runs out: taken again
      now = new Date(now.getTime() + 121_000);
      const r1 = await runTxRound(ctx());
      expect(r1.leased).toBeGreaterThanOrEqual(4);
      let s = await rows();
      expect(s[raters[0]!]).toMatchObject({ state: 'fetched', tx_from: raters[0], nonce: 0, reason: null });
      expect(s[raters[1]!]).toMatchObject({
        state: 'fetched',
        tx_from: '0x' + 'ee'.repeat(20),
        nonce: 91_234,
      });
      expect(s[raters[2]!]).toMatchObject({ state: 'retry', reason: 'no_such_transaction' });
      expect(s[raters[3]!]).toMatchObject({ state: 'retry', reason: 'rpc_error' });
      // one chain: calls spaced by 1/5 s (each wait is what is left of the 200 ms after the call)
      expect(waits.length).toBeGreaterThanOrEqual(3);
      expect(waits.every((w) => w > 0 && w <= 200)).toBe(true);
      // not due before the backoff
      expect((await runTxRound(ctx())).leased).toBe(0);
      now = new Date(now.getTime() + 3600_000);
      await drainTxLookups(ctx());
      s = await rows();
      expect(s[raters[2]!]).toMatchObject({ state: 'failed', reason: 'no_such_transaction', attempts: 3 });
      expect(s[raters[3]!]).toMatchObject({ state: 'failed', reason: 'rpc_error' });
    });

    it('a lookup whose row moved to an earlier rating meanwhile is not written', async () => {
      const r = addr('cd', 1);
      await ingest('base', [rate('base', '902', r, 40, T0 + 40 * H, 230)], 230);
      const [job] = await leaseRaterTransactions(db, 'slow-owner', now, 100, 120, ['base']).then((js) =>
        js.filter((j) => j.rater === r),
      );
      expect(job).toBeDefined();
      await ingest('base', [rate('base', '902', r, 40, T0 + 39 * H, 231, 2)], 231);
      const { finishRaterTransaction } = await import('../../src/store/raters.js');
      expect(
        await finishRaterTransaction(db, job!, 'slow-owner', now, {
          state: 'fetched',
          nextTryAt: now,
          reason: null,
          txFrom: r,
          nonce: 3,
        }),
      ).toBe(false);
      const [row] = await db.query<any>(`SELECT state, nonce FROM rater_first_tx WHERE rater = $1`, [r]);
      expect(row).toMatchObject({ state: 'queued', nonce: null });
    });
  });
}
