/**
 * The metered handlers (src/paid), called directly — validate, then run — on the demo
 * scenario (three local chains, indexed by the real indexer pass), on PGlite or on PostgreSQL
 * (TEST_DATABASE_URL). Every expected number is recomputed from the stored `ratings` and `agents`
 * rows (plain arithmetic or the pure scoring functions), never hard-coded.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Demo } from '../src/demo/run-demo.js';
import type { AppContext } from '../src/doors/http/context.js';
import type { PaidHandler, RawPaidRequest } from '../src/paid/handler.js';
import { paidHandlers } from '../src/paid/index.js';
import { readLeaderboard } from '../src/read/leaderboard.js';
import { readSnapshot } from '../src/read/snapshots.js';
import {
  bucketStart,
  classifyRating,
  DecimalSum,
  normalizeAddress,
  parseDecimal,
  POLICY_VERSION,
  round6,
} from '../src/scoring/index.js';
import { openDemoCopy } from './helpers/demo.js';
import { loadStored, type StoredAgent, type StoredRating } from './helpers/agg-expect.js';

/* eslint-disable @typescript-eslint/no-explicit-any */

const NOW = new Date('2026-11-01T12:00:00Z');
const UNKNOWN_WALLET = '0x1234567890abcdef1234567890abcdef12345678';

function mean(values: readonly string[]): number | null {
  const acc = new DecimalSum();
  for (const v of values) acc.add(parseDecimal(v)!);
  return round6(acc.mean());
}

describe('paid handlers on the demo scenario', () => {
  let demo: Demo;
  let ctx: AppContext;
  let stored: { ratings: StoredRating[]; agents: StoredAgent[] };

  const call = async (
    tier: string,
    params: Record<string, string>,
    query: Record<string, string | string[]> = {},
    receipt: string | null = null,
  ): Promise<{ status: number; body: any }> => {
    const h = paidHandlers[tier] as PaidHandler<unknown>;
    expect(h.tier).toBe(tier);
    const req: RawPaidRequest = {
      params,
      query: Object.fromEntries(Object.entries(query).map(([k, v]) => [k, Array.isArray(v) ? v : [v]])),
    };
    const v = await h.validate(ctx, req);
    if (!v.ok) return { status: v.status, body: v.body };
    const r = await h.run(ctx, v.input, { receipt });
    return { status: r.status, body: JSON.parse(JSON.stringify(r.body)) };
  };

  /** Ratings received by the wallet's current agents. */
  const received = (wallet: string) =>
    stored.ratings.filter((r) => r.owner !== null && r.owner === normalizeAddress(wallet));
  const eligibleOf = (wallet: string) =>
    received(wallet).filter((r) => classifyRating(r, r.owner!) === 'eligible');

  /** equal-weight-per-chain@2 by plain arithmetic over the stored rows. */
  const expectedScore = (wallet: string) => {
    const elig = eligibleOf(wallet);
    const networks = [...new Set(elig.map((r) => r.network))].sort();
    const perChain = Object.fromEntries(
      networks.map((n) => [n, mean(elig.filter((r) => r.network === n).map((r) => r.value))]),
    );
    const scores = Object.values(perChain) as number[];
    const final = scores.length ? round6(scores.reduce((a, b) => a + b, 0) / scores.length) : null;
    return { perChain, final, total: elig.length, raters: new Set(elig.map((r) => r.rater)).size };
  };

  beforeAll(async () => {
    demo = await openDemoCopy();
    stored = await loadStored(demo.db);
    ctx = { config: demo.config, db: demo.db, now: () => NOW };
  }, 300_000);
  afterAll(async () => {
    await demo?.close();
  });

  it('exports one handler per metered tier', () => {
    expect(Object.keys(paidHandlers).sort()).toEqual(
      [
        'agent-detail',
        'leaderboard-deep',
        'rater-profile',
        'wallet-history',
        'wallet-lookup',
        'wallet-snapshot',
      ].sort(),
    );
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

  describe('agent detail', () => {
    const agentCall = (network: string, agentId: string, q: Record<string, string> = {}) =>
      call('agent-detail', { network, agent_id: agentId }, q);

    it('revoked rating: present, marked, with its revoking transaction', async () => {
      const rev = demo.facts.revoked[0]!;
      const { status, body } = await agentCall(rev.network, String(rev.agentId), { limit: '0' });
      expect(status).toBe(200);
      const rows = stored.ratings.filter(
        (r) => r.network === rev.network && r.agent_id === String(rev.agentId),
      );
      expect(body.ratings.length).toBe(rows.length);
      const marked = body.ratings.filter((r: any) => r.revoked);
      expect(marked.length).toBe(rows.filter((r) => r.revoked).length);
      const hit = marked.find((r: any) => r.revoked_tx?.toLowerCase() === rev.txHash.toLowerCase());
      expect(hit).toBeDefined();
      expect(hit.is_revoked).toBe(true);
      expect(body.revoked_count).toBe(rows.filter((r) => r.revoked).length);
    });

    it('every rating with tx, block, log index, rater, facet, exact value; score relative to the current owner', async () => {
      const a = demo.facts.multiChainOwner.agents[0]!;
      const id = String(a.agentId);
      const rows = stored.ratings
        .filter((r) => r.network === a.network && r.agent_id === id)
        .sort((x, y) => x.block_number - y.block_number || x.log_index - y.log_index);
      const { body } = await agentCall(a.network, id, { limit: '0' });
      expect(body.current_owner).toBe(demo.facts.multiChainOwner.address.toLowerCase());
      expect(body.indexed_identity).toBe(true);
      expect(body.ratings.map((r: any) => [r.tx_hash, r.block_number, r.log_index])).toEqual(
        rows.map((r) => [r.tx_hash, r.block_number, r.log_index]),
      );
      body.ratings.forEach((r: any, i: number) => {
        expect(r.rater).toBe(rows[i]!.rater);
        expect(r.facet).toBe(rows[i]!.tag1);
        expect(r.value_exact).toBe(rows[i]!.value);
        expect(r.value).toBe(Number(rows[i]!.value));
      });
      const elig = rows.filter((r) => classifyRating(r, r.owner!) === 'eligible');
      expect(body.score).toBe(mean(elig.map((r) => r.value)));
      expect(body.review_count).toBe(elig.length);
      expect(body.policy_version).toBe(POLICY_VERSION);
      expect(body.confidence).not.toBeNull();
      expect(Array.isArray(body.caveats)).toBe(true);
    });

    it('a real zero renders as 0, never null', async () => {
      const z = demo.facts.zeroRating;
      const { body } = await agentCall(z.network, String(z.agentId), { limit: '0' });
      const r = body.ratings.find((x: any) => x.tx_hash.toLowerCase() === z.txHash.toLowerCase());
      expect(r).toBeDefined();
      expect(r.value).toBe(0);
      expect(r.normalized_value).toBe(0);
      expect(Number(r.value_exact)).toBe(0);
    });

    it('paging declares truncation and continues', async () => {
      // the agent with the most ratings
      const counts = new Map<string, number>();
      for (const r of stored.ratings)
        counts.set(`${r.network}/${r.agent_id}`, (counts.get(`${r.network}/${r.agent_id}`) ?? 0) + 1);
      const [key, total] = [...counts.entries()].sort((a, b) => b[1] - a[1])[0]!;
      const [network, id] = key.split('/') as [string, string];
      expect(total).toBeGreaterThan(2);
      const full = await agentCall(network, id, { limit: '0' });
      expect(full.body.pagination).toMatchObject({
        total,
        returned: total,
        next_offset: null,
        truncated: false,
      });
      const p1 = await agentCall(network, id, { limit: '2' });
      expect(p1.body.pagination).toMatchObject({
        total,
        returned: 2,
        offset: 0,
        next_offset: 2,
        truncated: true,
      });
      const p2 = await agentCall(network, id, { limit: '2', offset: '2' });
      expect([...p1.body.ratings, ...p2.body.ratings]).toEqual(full.body.ratings.slice(0, 4));
      // the score always covers every rating
      expect(p1.body.score).toBe(full.body.score);
      const dflt = await agentCall(network, id);
      expect(dflt.body.pagination.limit).toBe(200);
      const tail = await agentCall(network, id, { offset: String(total) });
      expect(tail.body.pagination).toMatchObject({ total, returned: 0, next_offset: null });
    });

    it('EVM agent ids are normalized ("007" is "7")', async () => {
      const a = demo.facts.multiChainOwner.agents[0]!;
      const plain = await agentCall(a.network, String(a.agentId));
      const padded = await agentCall(a.network.toUpperCase(), `00${a.agentId}`);
      expect(padded.body).toEqual(plain.body);
    });

    it('404 unknown network, 422 bad agent id / paging, 404 agent not indexed', async () => {
      const a = demo.facts.multiChainOwner.agents[0]!;
      const net = await agentCall('nochain', '1');
      expect(net.status).toBe(404);
      expect(net.body.detail.error).toBe('unknown_network');
      expect(net.body.detail.known_networks).toEqual(demo.config.chains.map((c) => c.network));
      expect((await agentCall(a.network, 'abc')).status).toBe(422);
      expect((await agentCall(a.network, '-1')).status).toBe(422);
      expect((await agentCall(a.network, String(a.agentId), { limit: '1001' })).status).toBe(422);
      expect((await agentCall(a.network, String(a.agentId), { limit: 'x' })).status).toBe(422);
      expect((await agentCall(a.network, String(a.agentId), { offset: '-1' })).status).toBe(422);
      expect((await agentCall(a.network, String(a.agentId), { limit: '5', max_ratings: '5' })).status).toBe(
        422,
      );
      expect((await agentCall(a.network, String(a.agentId), { foo: '1' })).status).toBe(422);
      const missing = await agentCall(a.network, '987654321');
      expect(missing).toEqual({ status: 404, body: { detail: 'agent not indexed' } });
    });
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

  describe('leaderboard page', () => {
    it('pages continue the /leaderboard order', async () => {
      const free = await readLeaderboard(demo.db, { offset: 0, limit: 100 });
      expect(free.rows.length).toBeGreaterThan(4);
      const p1 = await call('leaderboard-deep', {}, { limit: '3' });
      const p2 = await call('leaderboard-deep', {}, { limit: '3', offset: '3' });
      expect(p1.status).toBe(200);
      expect(p1.body.next_offset).toBe(3);
      expect(p1.body.total).toBeNull();
      const paged = [...p1.body.rows, ...p2.body.rows];
      expect(paged).toEqual(JSON.parse(JSON.stringify(free.rows.slice(0, 6))));
      expect(paged.map((r: any) => r.rank)).toEqual([1, 2, 3, 4, 5, 6]);
      const all = await call('leaderboard-deep', {});
      expect(all.body.limit).toBe(100);
      expect(all.body.rows).toEqual(JSON.parse(JSON.stringify(free.rows)));
      const past = await call('leaderboard-deep', {}, { offset: String(free.rows.length + 10) });
      expect(past.body.rows).toEqual([]);
      expect(past.body.next_offset).toBeNull();
    });

    it('type filter reuses readLeaderboard', async () => {
      const typed = demo.facts.typedAgents[0]!;
      const expected = await readLeaderboard(demo.db, { offset: 0, limit: 500, type: typed.type });
      const { body } = await call('leaderboard-deep', {}, { type: typed.type, limit: '500' });
      expect(body.rows).toEqual(JSON.parse(JSON.stringify(expected.rows)));
      for (const r of body.rows) expect(r.declared_types).toContain(typed.type);
    });

    it('422 out of range', async () => {
      const bad: Record<string, string>[] = [
        { limit: '0' },
        { limit: '501' },
        { offset: '-1' },
        { limit: '1.5' },
        { type: '' },
        { page: '2' },
      ];
      for (const q of bad) {
        expect((await call('leaderboard-deep', {}, q)).status).toBe(422);
      }
      expect((await call('leaderboard-deep', {}, { limit: '500' })).status).toBe(200);
    });
  });
});
