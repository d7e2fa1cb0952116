/**
 * Paid handlers on the demo scenario, the wallet history (tier wallet-history): weekly and monthly
 * series by block time, undated ratings in coverage only, unknown wallets and bad input. Registered
 * by test/paid-handlers.test.ts inside its describe, on its one demo copy (the fixture:
 * test/helpers/paid-demo.ts).
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { bucketStart, POLICY_VERSION } from '../../src/scoring/index.js';
import { UNKNOWN_WALLET, paidDemoTools, type PaidDemo } from '../helpers/paid-demo.js';

/* eslint-disable @typescript-eslint/no-explicit-any */

/** The 'history' suite over the file's fixture. */
export function historySuite(fixture: () => PaidDemo): void {
  let demo: PaidDemo['demo'];
  const { call, eligibleOf, expectedScore } = paidDemoTools(fixture);
  beforeAll(() => {
    ({ demo } = fixture());
  });

  describe('history', () => {
    it('weekly and monthly series by block time, counts and cumulative score recomputed', async () => {
      const wallet = demo.facts.multiChainOwner.address.toLowerCase();
      const elig = eligibleOf(wallet);
      const exp = expectedScore(wallet);
      for (const bucket of ['week', 'month'] as const) {
        const { status, body } = await call(
          'wallet-history',
          { wallet },
          bucket === 'week' ? {} : { bucket },
        );
        expect(status).toBe(200);
        expect(body.bucket).toBe(bucket);
        expect(body.coverage).toEqual({ dated_reviews: elig.length, undated_reviews: 0 });
        const perBucket = new Map<string, number>();
        for (const r of elig) {
          const k = bucketStart(r.block_time!, bucket).toISOString();
          perBucket.set(k, (perBucket.get(k) ?? 0) + 1);
        }
        for (const p of body.points) expect(p.review_count).toBe(perBucket.get(p.period) ?? 0);
        expect(body.points.reduce((s: number, p: any) => s + p.review_count, 0)).toBe(elig.length);
        expect(body.points.at(-1).cumulative_score).toBe(exp.final);
        expect(body.final_score).toBe(exp.final);
        expect(body.policy_version).toBe(POLICY_VERSION);
        expect(Array.isArray(body.caveats)).toBe(true);
        expect(body).toHaveProperty('confidence');
        if (bucket === 'month') {
          for (const p of body.points) expect(p.period).toMatch(/-01T00:00:00\.000Z$/);
        } else {
          for (const p of body.points) expect(new Date(p.period).getUTCDay()).toBe(1);
        }
      }
      const w = await call('wallet-history', { wallet });
      const m = await call('wallet-history', { wallet }, { bucket: 'month' });
      expect(m.body.points.length).toBeLessThan(w.body.points.length);
    });

    it('undated ratings are counted in coverage and left out of the points', async () => {
      const wallet = demo.facts.multiChainOwner.address.toLowerCase();
      const target = eligibleOf(wallet)[0]!;
      const key = [target.network, target.tx_hash, target.log_index];
      await demo.db.query(
        `UPDATE ratings SET block_time = NULL WHERE network = $1 AND tx_hash = $2 AND log_index = $3`,
        key,
      );
      try {
        const { body } = await call('wallet-history', { wallet });
        expect(body.coverage).toEqual({ dated_reviews: eligibleOf(wallet).length - 1, undated_reviews: 1 });
        expect(body.points.reduce((s: number, p: any) => s + p.review_count, 0)).toBe(
          eligibleOf(wallet).length - 1,
        );
      } finally {
        await demo.db.query(
          `UPDATE ratings SET block_time = $4 WHERE network = $1 AND tx_hash = $2 AND log_index = $3`,
          [...key, target.block_time],
        );
      }
    });

    it('unknown wallet: empty series; 422 on bad bucket or wallet', async () => {
      const { status, body } = await call('wallet-history', { wallet: UNKNOWN_WALLET });
      expect(status).toBe(200);
      expect(body.points).toEqual([]);
      expect(body.final_score).toBeNull();
      expect(body.caveats.map((c: any) => c.code)).toContain('no-score');
      const wallet = demo.facts.multiChainOwner.address;
      expect((await call('wallet-history', { wallet }, { bucket: 'day' })).status).toBe(422);
      expect((await call('wallet-history', { wallet }, { bucket: ['week', 'month'] })).status).toBe(422);
      const bad = await call('wallet-history', { wallet: '0x123' });
      expect(bad.status).toBe(422);
      expect(bad.body.detail.error).toBe('not_an_address');
    });
  });
}
