/**
 * Paid handlers on the demo scenario, the rater profile (tier rater-profile): counts recomputed
 * from the emitted rows, no score, a wallet that never rated. Registered by test/paid-
 * handlers.test.ts inside its describe, on its one demo copy (the fixture: test/helpers/paid-
 * demo.ts).
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { round6 } from '../../src/scoring/index.js';
import type { StoredRating } from '../helpers/agg-expect.js';
import { mean, UNKNOWN_WALLET, paidDemoTools, type PaidDemo } from '../helpers/paid-demo.js';

/** The 'rater profile' suite over the file's fixture. */
export function raterProfileSuite(fixture: () => PaidDemo): void {
  let demo: PaidDemo['demo'];
  let stored: PaidDemo['stored'];
  const { call } = paidDemoTools(fixture);
  beforeAll(() => {
    ({ demo, stored } = fixture());
  });

  describe('rater profile', () => {
    it.each([
      ['a prolific rater', () => demo.facts.prolificRaters[0]!.address],
      ['a rater of an agent it now owns (self-ratings)', () => demo.facts.selfRater.address],
    ])('counts recomputed from the emitted rows; no score: %s', async (_label, pick) => {
      const rater = pick().toLowerCase();
      const rows = stored.ratings.filter((r) => r.rater === rater);
      const subjectOf = (r: StoredRating) => r.owner ?? `${r.network}:${r.agent_id}`;
      const { status, body } = await call('rater-profile', {
        wallet: rater.toUpperCase().replace('0X', '0x'),
      });
      expect(status).toBe(200);
      expect(body.wallet).toBe(rater);
      expect(body.ratings_emitted).toBe(rows.length);
      expect(body.revoked_count).toBe(rows.filter((r) => r.revoked).length);
      expect(body.distinct_subjects).toBe(new Set(rows.map(subjectOf)).size);
      expect(body.self_ratings).toBe(rows.filter((r) => r.owner === rater).length);
      const active = rows.filter((r) => !r.revoked);
      // eligible: not revoked, in domain, and not a rating of a subject it owns
      const eligible = active.filter(
        (r) => Number(r.value) >= 0 && Number(r.value) <= 100 && subjectOf(r) !== rater,
      );
      expect(body.eligible_count).toBe(eligible.length);
      if (rows.some((r) => subjectOf(r) === rater)) expect(body.self_ratings).toBeGreaterThan(0);
      expect(body.value_avg).toBe(mean(eligible.map((r) => r.value)));
      const perSubject = new Map<string, number>();
      for (const r of active) perSubject.set(subjectOf(r), (perSubject.get(subjectOf(r)) ?? 0) + 1);
      expect(body.top_subject_share).toBe(round6(Math.max(...perSubject.values()) / active.length));
      for (const c of body.per_chain) {
        const onChain = rows.filter((r) => r.network === c.network);
        expect(c.total).toBe(onChain.length);
        expect(c.active).toBe(onChain.filter((r) => !r.revoked).length);
      }
      expect(
        body.unknown_tag_count +
          Object.values(body.roles as Record<string, number>).reduce((a, b) => a + b, 0),
      ).toBe(rows.length);
      expect(body).not.toHaveProperty('final_score');
      expect(body).not.toHaveProperty('score');
    });

    it('a wallet that never rated: zeros and nulls; 422 on a non-address', async () => {
      const { status, body } = await call('rater-profile', { wallet: UNKNOWN_WALLET });
      expect(status).toBe(200);
      expect(body.ratings_emitted).toBe(0);
      expect(body.value_avg).toBeNull();
      expect(body.per_chain).toEqual([]);
      expect((await call('rater-profile', { wallet: 'zzz' })).status).toBe(422);
      expect((await call('rater-profile', { wallet: UNKNOWN_WALLET }, { x: '1' })).status).toBe(422);
    });
  });
}
