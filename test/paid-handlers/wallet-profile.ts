/**
 * Paid handlers on the demo scenario, the wallet profile (tier wallet-lookup, and wallet-snapshot
 * through snapshot=true): per-chain and global scores, facets, a chain still backfilling, any-case
 * EVM, self-rated, burn address, unrated and unknown wallets, the snapshot receipt row. Registered
 * by test/paid-handlers.test.ts inside its describe, on its one demo copy (the fixture:
 * test/helpers/paid-demo.ts).
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { readSnapshot } from '../../src/read/snapshots.js';
import { classifyRating, POLICY_VERSION, round6 } from '../../src/scoring/index.js';
import type { StoredRating } from '../helpers/agg-expect.js';
import { mean, NOW, UNKNOWN_WALLET, paidDemoTools, type PaidDemo } from '../helpers/paid-demo.js';

/* eslint-disable @typescript-eslint/no-explicit-any */

/** The 'wallet profile' suite over the file's fixture. */
export function walletProfileSuite(fixture: () => PaidDemo): void {
  let demo: PaidDemo['demo'];
  let stored: PaidDemo['stored'];
  const { call, received, eligibleOf, expectedScore } = paidDemoTools(fixture);
  beforeAll(() => {
    ({ demo, stored } = fixture());
  });

  describe('wallet profile', () => {
    it('multi-chain wallet: per_chain scores and the equal-weight global score, recomputed from rows', async () => {
      const wallet = demo.facts.multiChainOwner.address;
      const exp = expectedScore(wallet);
      expect(Object.keys(exp.perChain).length).toBeGreaterThanOrEqual(2);
      const { status, body } = await call('wallet-lookup', { wallet });
      expect(status).toBe(200);
      expect(body.wallet).toBe(wallet.toLowerCase());
      expect(body.final_score).toBe(exp.final);
      expect(body.total_reviews).toBe(exp.total);
      expect(body.distinct_raters).toBe(exp.raters);
      expect(body.policy_version).toBe(POLICY_VERSION);
      expect(body.chain_count).toBe(Object.keys(exp.perChain).length);
      for (const [n, s] of Object.entries(exp.perChain)) {
        expect(body.per_chain[n].final_score).toBe(s);
        expect(body.per_chain[n].weight).toBe(1);
      }
      // every chain where it holds an identity is listed
      const idChains = new Set(
        stored.agents.filter((a) => a.owner === wallet.toLowerCase()).map((a) => a.network),
      );
      expect(Object.keys(body.per_chain).sort()).toEqual([...idChains].sort());
      expect(Array.isArray(body.caveats)).toBe(true);
      for (const c of body.caveats) expect(Object.keys(c).sort()).toEqual(['code', 'text']);
      expect(body.confidence).not.toBeNull();
      expect(body.confidence.distinct_raters).toBe(exp.raters);
      // first/last rating by on-chain time over eligible ratings
      const times = eligibleOf(wallet)
        .map((r) => r.block_time?.getTime())
        .filter((x): x is number => x !== undefined);
      expect(body.first_rating_at).toBe(new Date(Math.min(...times)).toISOString());
      expect(body.last_rating_at).toBe(new Date(Math.max(...times)).toISOString());
    });

    it('facets: per raw tag1, eligible count and mean, beside the index mean', async () => {
      const wallet = demo.facts.multiChainOwner.address.toLowerCase();
      const elig = eligibleOf(wallet);
      const { body } = await call('wallet-lookup', { wallet });
      const tags = new Set(received(wallet).map((r) => r.tag1));
      expect(Object.keys(body.facets).sort()).toEqual([...tags].sort());
      for (const tag of tags) {
        const rows = elig.filter((r) => r.tag1 === tag);
        expect(body.facets[tag].count).toBe(rows.length);
        expect(body.facets[tag].score).toBe(rows.length ? mean(rows.map((r) => r.value)) : null);
        expect(body.facets[tag]).toHaveProperty('index_mean');
      }
    });

    it('a chain still backfilling degrades concentration and confidence, never the score', async () => {
      const wallet = demo.facts.multiChainOwner.address.toLowerCase();
      const network = eligibleOf(wallet)[0]!.network;
      const before = await call('wallet-lookup', { wallet });
      await demo.db.query(`UPDATE chains SET backfill_complete = FALSE WHERE network = $1`, [network]);
      try {
        const { body } = await call('wallet-lookup', { wallet });
        expect(body.concentration).toBeNull();
        expect(body.confidence).toBeNull();
        expect(body.caveats.map((c: any) => c.code)).toContain('concentration-degraded');
        expect(body.final_score).toBe(before.body.final_score);
      } finally {
        await demo.db.query(`UPDATE chains SET backfill_complete = TRUE WHERE network = $1`, [network]);
      }
      expect((await call('wallet-lookup', { wallet })).body.concentration).not.toBeNull();
    });

    it('EVM any case gives the identical answer', async () => {
      const wallet = demo.facts.multiChainOwner.address;
      const lower = await call('wallet-lookup', { wallet: wallet.toLowerCase() });
      const upper = await call('wallet-lookup', { wallet: `0x${wallet.slice(2).toUpperCase()}` });
      expect(JSON.stringify(upper.body)).toBe(JSON.stringify(lower.body));
    });

    it('self-rated: excluded from the score, published with gap = self - others', async () => {
      const sr = demo.facts.selfRater;
      const wallet = sr.address.toLowerCase();
      const selfRows = received(wallet).filter((r) => classifyRating(r, wallet) === 'self');
      expect(selfRows.length).toBe(sr.selfRatings);
      const exp = expectedScore(wallet);
      const selfScore = mean(selfRows.map((r) => r.value));
      const { body } = await call('wallet-lookup', { wallet });
      expect(body.final_score).toBe(exp.final);
      expect(body.self_rated.count).toBe(selfRows.length);
      expect(body.self_rated.score).toBe(selfScore);
      expect(body.self_rated.gap).toBe(
        selfScore === null || exp.final === null ? null : round6(selfScore - exp.final),
      );
      expect(body.caveats.map((c: any) => c.code)).toContain('self-rated');
    });

    it('burn address: caveat fires, ratings still scored', async () => {
      const wallet = demo.facts.burnOwnedAgent.owner;
      const exp = expectedScore(wallet);
      const { status, body } = await call('wallet-lookup', { wallet });
      expect(status).toBe(200);
      expect(body.caveats.map((c: any) => c.code)).toContain('burn-address');
      expect(body.final_score).toBe(exp.final);
      expect(body.final_score).not.toBeNull();
    });

    it('registered but unrated: null scores (never 0) and no-score', async () => {
      const wallet = demo.facts.unratedOwner.address;
      const { status, body } = await call('wallet-lookup', { wallet });
      expect(status).toBe(200);
      expect(body.final_score).toBeNull();
      expect(body.weighted_score).toBeNull();
      expect(body.shrunk_score).toBeNull();
      expect(body.total_reviews).toBe(0);
      expect(body.caveats.map((c: any) => c.code)).toContain('no-score');
      const nets = [...new Set(demo.facts.unratedOwner.agents.map((a) => a.network))].sort();
      expect(Object.keys(body.per_chain).sort()).toEqual(nets);
      for (const n of nets) expect(body.per_chain[n].final_score).toBeNull();
    });

    it('unknown wallet: 200 with null scores and no-score, not 404', async () => {
      const { status, body } = await call('wallet-lookup', { wallet: UNKNOWN_WALLET });
      expect(status).toBe(200);
      expect(body.final_score).toBeNull();
      expect(body.per_chain).toEqual({});
      expect(body.total_reviews).toBe(0);
      expect(body.confidence.band).toBe('no_ratings');
      expect(body.caveats.map((c: any) => c.code)).toContain('no-score');
      expect(body.snapshot).toBeUndefined();
    });

    it('weighted_score: one voice per rater, weight min(1, 0.25·s) from the rows', async () => {
      const wallet = demo.facts.multiChainOwner.address.toLowerCase();
      const elig = eligibleOf(wallet);
      const subjectOf = (r: StoredRating) => r.owner ?? `${r.network}:${r.agent_id}`;
      let num = 0;
      let den = 0;
      for (const rater of new Set(elig.map((r) => r.rater))) {
        const m = mean(elig.filter((r) => r.rater === rater).map((r) => r.value))!;
        const s = new Set(stored.ratings.filter((r) => r.rater === rater).map(subjectOf)).size;
        const w = Math.min(1, Math.max(0.25, 0.25 * s));
        num += w * m;
        den += w;
      }
      const { body } = await call('wallet-lookup', { wallet });
      expect(body.weighted_score).toBeCloseTo(num / den, 5);
    });

    it('snapshot=true writes exactly one receipt row with a reproducible inputs_digest', async () => {
      const wallet = demo.facts.multiChainOwner.address;
      const count = async () =>
        Number((await demo.db.query<{ n: number }>(`SELECT count(*) AS n FROM snapshot_receipts`))[0]!.n);
      const before = await count();
      const a = await call('wallet-snapshot', { wallet }, { snapshot: 'true' }, '0xreceipt1');
      expect(a.status).toBe(200);
      expect(await count()).toBe(before + 1);
      expect(a.body.snapshot).toMatchObject({
        policy_version: POLICY_VERSION,
        created_at: NOW.toISOString(),
      });
      expect(a.body.snapshot.inputs_digest).toMatch(/^[0-9a-f]{64}$/);
      const row = await readSnapshot(demo.db, a.body.snapshot.snapshot_id);
      expect(row).not.toBeNull();
      expect(row!.wallet).toBe(wallet.toLowerCase());
      expect(row!.inputs_digest).toBe(a.body.snapshot.inputs_digest);
      expect(row!.payment_receipt).toBe('0xreceipt1');
      expect((row!.response as any).final_score).toBe(a.body.final_score);
      // same inputs (any case of the wallet) → same digest, a second row
      const b = await call(
        'wallet-snapshot',
        { wallet: wallet.toUpperCase().replace('0X', '0x') },
        { snapshot: 'true' },
      );
      expect(b.body.snapshot.inputs_digest).toBe(a.body.snapshot.inputs_digest);
      expect(b.body.snapshot.snapshot_id).not.toBe(a.body.snapshot.snapshot_id);
      expect(await count()).toBe(before + 2);
      // a different subject → a different digest; a plain lookup writes nothing
      const c = await call('wallet-snapshot', { wallet: demo.facts.selfRater.address }, { snapshot: 'true' });
      expect(c.body.snapshot.inputs_digest).not.toBe(a.body.snapshot.inputs_digest);
      await call('wallet-lookup', { wallet }, { snapshot: 'false' });
      await call('wallet-lookup', { wallet });
      expect(await count()).toBe(before + 3);
    });

    it('422s: not_an_address, bad snapshot values, tier/flag mismatch, unknown parameters', async () => {
      const bad = await call('wallet-lookup', { wallet: 'nope' });
      expect(bad).toEqual({
        status: 422,
        body: { detail: expect.objectContaining({ error: 'not_an_address', wallet: 'nope' }) },
      });
      const wallet = demo.facts.multiChainOwner.address;
      for (const v of ['yes', '1', 'TRUE', '']) {
        expect((await call('wallet-lookup', { wallet }, { snapshot: v })).status).toBe(422);
        expect((await call('wallet-snapshot', { wallet }, { snapshot: v })).status).toBe(422);
      }
      expect((await call('wallet-lookup', { wallet }, { snapshot: 'true' })).status).toBe(422);
      expect((await call('wallet-snapshot', { wallet })).status).toBe(422);
      expect((await call('wallet-lookup', { wallet }, { snapshot: ['false', 'false'] })).status).toBe(422);
      expect((await call('wallet-lookup', { wallet }, { snap: 'true' })).status).toBe(422);
    });
  });
}
