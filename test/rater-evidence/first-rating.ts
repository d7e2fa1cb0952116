/**
 * Rater evidence through the database, each rater's first rating, kept by triggers: an earlier
 * rating moves it and queues a new lookup, a later one does not, a rollback that deletes it finds
 * the next; a Solana rater has nothing to look up. Registered by test/rater-evidence.test.ts on its
 * one database (the fixture: test/helpers/rater-evidence.ts).
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { testDbKind } from '../helpers/db.js';
import { H, T0, addr, type RaterEventTools, type RaterFixture } from '../helpers/rater-evidence.js';

/* eslint-disable @typescript-eslint/no-explicit-any -- the served JSON is read field by field */

/** The 'first rating per rater, kept by triggers (${testDbKind})' suite over the file's database. */
export function firstRatingSuite(fixture: () => RaterFixture, tools: RaterEventTools): void {
  let db: RaterFixture['db'];
  const { mint, rate, ingest } = tools;
  beforeAll(() => {
    ({ db } = fixture());
  });

  describe(`first rating per rater, kept by triggers (${testDbKind})`, () => {
    const rater = addr('aa', 1);
    const first = async () =>
      (
        await db.query<any>(
          `SELECT network, block_number::int AS block, state, attempts, nonce FROM rater_first_tx WHERE rater = $1`,
          [rater],
        )
      )[0];

    it('an earlier rating moves it and queues a new lookup; a later one does not; a rollback finds the next', async () => {
      await ingest(
        'base',
        [...mint('base', '901', addr('bb', 1), 100), rate('base', '901', rater, 80, T0 + 10 * H, 110)],
        110,
      );
      expect(await first()).toMatchObject({
        network: 'base',
        block: 110,
        state: 'queued',
        attempts: 0,
        nonce: null,
      });
      // the lookup ran: the row holds a nonce
      await db.query(
        `UPDATE rater_first_tx SET state = 'fetched', nonce = 7, attempts = 1 WHERE rater = $1`,
        [rater],
      );
      await ingest('base', [rate('base', '901', rater, 70, T0 + 20 * H, 120, 2)], 120);
      expect(await first()).toMatchObject({ block: 110, state: 'fetched', nonce: 7 });
      await ingest('optimism', [rate('optimism', '5', rater, 60, T0 + 5 * H, 50)], 50);
      expect(await first()).toMatchObject({
        network: 'optimism',
        block: 50,
        state: 'queued',
        attempts: 0,
        nonce: null,
      });
      // a deep reorg's rollback deletes it: the next one is found
      await db.query(`DELETE FROM ratings WHERE network = 'optimism' AND block_number > 40`);
      expect(await first()).toMatchObject({ network: 'base', block: 110, state: 'queued' });
    });

    it('a rater first seen on Solana has no account history to read', async () => {
      const s = '7xKXtg2CW87d97TXJSDpbD5jBkheTqA83TZRuJosgAsU';
      await ingest(
        'solana',
        [rate('solana', 'AssetA1111111111111111111111111111111111111', s, 90, T0, 300)],
        300,
      );
      const [row] = await db.query<any>(`SELECT state FROM rater_first_tx WHERE rater = $1`, [s]);
      expect(row.state).toBe('unavailable');
    });
  });
}
