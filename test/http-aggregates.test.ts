/**
 * Contract tests over HTTP for the free aggregate routes: /chains, /chains/{network}, /feed,
 * /leaderboard, /stats/facets, /stats/types, /stats/issuers, /categories. The index is a small
 * hand-made history written through the ingest tables (transfers already applied as owners,
 * self-ratings, a revocation, a real zero, out-of-domain values, a burn-address owner, a hostile
 * and an integer-like tag1, an orphan and an undated rating), then `refreshAggregates`. Expected
 * numbers are recomputed from the stored rows with the pure scoring functions.
 */
import { describe, expect, it } from 'vitest';
import { createApp } from '../src/doors/http/app.js';
import { shrunkScore } from '../src/scoring/index.js';
import {
  checkFeed,
  expectedFacets,
  expectedFeed,
  expectedPrior,
  expectedWallets,
  facetOrder,
  isEligible,
  sortLeaderboard,
} from './helpers/agg-expect.js';

import { BURN, HOSTILE, NOW, W1, W2, W3, useSeededApp } from './helpers/agg-seed.js';

describe('free aggregate routes', () => {
  const s = useSeededApp();
  const { config, get } = s;

  describe('headers and the /v1 alias', () => {
    const paths = [
      '/chains',
      '/chains/base?days=7',
      '/feed?limit=5',
      '/leaderboard',
      '/stats/facets',
      '/stats/types',
      '/stats/issuers',
      '/categories',
    ];
    for (const p of paths) {
      it(`${p}: 200, Api-Version, RateLimit-Policy, Cache-Control, same body under /v1`, async () => {
        const [a, b] = await Promise.all([s.app.request(p), s.app.request(`/v1${p}`)]);
        expect(a.status).toBe(200);
        expect(b.status).toBe(200);
        for (const r of [a, b]) {
          expect(r.headers.get('api-version')).toBe('2.0.0');
          expect(r.headers.get('ratelimit-policy')).toBe('50;w=1;burst=40');
          expect(r.headers.get('cache-control')).toMatch(/^public, max-age=\d+$/);
          expect(r.headers.get('content-type')).toMatch(/^application\/json/);
        }
        expect(await b.text()).toBe(await a.text());
      });
    }

    it('errors carry the headers too, and are the same under /v1', async () => {
      for (const p of ['/chains/nope', '/feed?network=nope', '/feed?limit=0', '/leaderboard?offset=100']) {
        const [a, b] = await Promise.all([s.app.request(p), s.app.request(`/v1${p}`)]);
        expect(b.status).toBe(a.status);
        expect(await b.json()).toEqual(await a.json());
        expect(a.headers.get('api-version')).toBe('2.0.0');
        expect(a.headers.get('ratelimit-policy')).toBe('50;w=1;burst=40');
      }
    });
  });

  describe('GET /chains', () => {
    it('lists every configured chain in configuration order, zeros where nothing is indexed', async () => {
      const { body } = await get('/chains');
      expect(body.map((c: { network: string }) => c.network)).toEqual(config.chains.map((c) => c.network));
      const eth = body.find((c: { network: string }) => c.network === 'ethereum');
      expect(eth).toMatchObject({
        chain_id: 1,
        enabled: true,
        agents: 0,
        ratings: 0,
        distinct_raters: 0,
        owners: 0,
        facets: 0,
        avg_value: null,
        ratings_per_agent: null,
        stale_hours: null,
        last_scanned_block: null,
        backfill_complete: false,
        last_sync_at: null,
      });
      // An indexed chain with identities but no ratings shows 0, not a missing row.
      const celo = body.find((c: { network: string }) => c.network === 'celo');
      expect(celo).toMatchObject({
        agents: 1,
        owners: 1,
        ratings: 0,
        distinct_raters: 0,
        eligible_ratings: 0,
        avg_value: null,
      });
    });

    it('counts, classes and means match the s.stored rows', async () => {
      const { body } = await get('/chains');
      for (const row of body) {
        const rs = s.stored.ratings.filter((r) => r.network === row.network);
        const owned = rs.filter((r) => r.owner !== null);
        const elig = owned.filter(isEligible);
        const agents = s.stored.agents.filter((a) => a.network === row.network);
        expect(row.agents).toBe(agents.length);
        expect(row.owners).toBe(new Set(agents.filter((a) => a.owner).map((a) => a.owner)).size);
        expect(row.ratings).toBe(rs.length);
        expect(row.distinct_raters).toBe(new Set(rs.map((r) => r.rater)).size);
        expect(row.eligible_ratings).toBe(elig.length);
        expect(row.revoked).toBe(owned.filter((r) => r.revoked).length);
        expect(row.orphan_ratings).toBe(rs.length - owned.length);
        expect(row.self_rated + row.out_of_domain + row.revoked + row.eligible_ratings).toBe(owned.length);
        expect(row.facets).toBe(new Set(rs.map((r) => r.tag1)).size);
        const exact = elig.length ? elig.reduce((s, r) => s + Number(r.value), 0) / elig.length : null;
        if (exact === null) expect(row.avg_value).toBeNull();
        else expect(row.avg_value).toBeCloseTo(exact, 6);
      }
      const base = body.find((c: { network: string }) => c.network === 'base');
      expect(base).toMatchObject({
        self_rated: 1,
        revoked: 1,
        out_of_domain: 2,
        orphan_ratings: 1,
        last_scanned_block: 100,
        head_at_last_sync: 112,
        blocks_behind: 12,
        backfill_complete: true,
        last_sync_at: '2026-10-10T09:00:00.000Z',
        stale_hours: 3,
        first_rating_day: '2026-10-01',
        last_rating_day: '2026-10-09',
      });
    });

    it('stale_hours grows with the clock when a scanner is dead', async () => {
      const { body } = await get('/chains');
      const op = body.find((c: { network: string }) => c.network === 'optimism');
      expect(op.stale_hours).toBe(216);
      const later = createApp({ config, db: s.t.db, now: () => new Date(NOW.getTime() + 24 * 3_600_000) });
      const res = await later.request('/chains');
      const op2 = ((await res.json()) as { network: string; stale_hours: number }[]).find(
        (c) => c.network === 'optimism',
      );
      expect(op2?.stale_hours).toBe(240);
    });
  });

  describe('GET /chains/{network}', () => {
    it('serves stats, top wallets scored with that chain only, facets and a zero-filled series', async () => {
      const { body } = await get('/chains/base?days=10');
      expect(Object.keys(body).sort()).toEqual(
        [
          'activity',
          'days',
          'facets',
          'network',
          'ordering_policy',
          'policy_version',
          'refreshed_at',
          'shrinkage',
          'stats',
          'top',
        ].sort(),
      );
      expect(body.network).toBe('base');
      expect(body.policy_version).toBe('equal-weight-per-chain@2');
      expect(body.ordering_policy).toBe('bayes-shrinkage-distinct-raters@1');
      expect(body.refreshed_at).toBe(NOW.toISOString());
      const chains = await get('/chains');
      expect(body.stats).toEqual(chains.body.find((c: { network: string }) => c.network === 'base'));

      // Top: recompute the chain's own scores and prior.
      const wallets = expectedWallets(s.stored);
      const onChain = [...wallets.values()]
        .map((w) => ({ wallet: w.wallet, pc: w.per_chain.get('base') }))
        .filter((x) => x.pc && x.pc.final_score !== null);
      const prior = expectedPrior(onChain.map((x) => x.pc!.final_score));
      expect(body.shrinkage.k).toBe(3);
      expect(Math.abs(body.shrinkage.prior - prior!)).toBeLessThanOrEqual(1e-6);
      const expectedTop = sortLeaderboard(
        onChain.map((x) => ({
          wallet: x.wallet,
          final_score: x.pc!.final_score,
          shrunk_score: shrunkScore(x.pc!.final_score, x.pc!.distinct_raters, body.shrinkage.prior),
          distinct_raters: x.pc!.distinct_raters,
          total_reviews: x.pc!.total_reviews,
        })),
      ).map((r, i) => ({ rank: i + 1, ...r }));
      expect(
        body.top.map((r: Record<string, unknown>) => ({
          rank: r.rank,
          wallet: r.wallet,
          final_score: r.final_score,
          shrunk_score: r.shrunk_score,
          distinct_raters: r.distinct_raters,
          total_reviews: r.total_reviews,
        })),
      ).toEqual(expectedTop);
      // W1 on base alone: 90, 80, 70 (self, revoked, out-of-domain excluded), not the global score.
      const w1 = body.top.find((r: { wallet: string }) => r.wallet === W1);
      expect(w1).toMatchObject({
        final_score: 80,
        distinct_raters: 3,
        total_reviews: 3,
        agent_count: 1,
        agent_ids: ['1'],
        declared_types: ['trading'],
      });
      // A real zero is 0, never null; the unrated wallet is not ranked.
      expect(body.top.find((r: { wallet: string }) => r.wallet === W2).final_score).toBe(0);
      expect(body.top.find((r: { wallet: string }) => r.wallet === W3)).toBeUndefined();
      expect(body.top.find((r: { wallet: string }) => r.wallet === BURN)).toBeDefined();

      // Facets of this chain only.
      const ef = expectedFacets(s.stored.ratings, 'base');
      expect(body.facets.map((f: { facet: string }) => f.facet)).toEqual(facetOrder(ef));
      for (const f of body.facets) expect(f).toEqual({ facet: f.facet, ...ef.get(f.facet) });

      // Activity: ten days ending today (UTC), oldest first, zeros filled, by block date.
      expect(body.days).toBe(10);
      expect(body.activity.map((d: { day: string }) => d.day)).toEqual([
        '2026-10-01',
        '2026-10-02',
        '2026-10-03',
        '2026-10-04',
        '2026-10-05',
        '2026-10-06',
        '2026-10-07',
        '2026-10-08',
        '2026-10-09',
        '2026-10-10',
      ]);
      for (const d of body.activity) {
        const rs = s.stored.ratings.filter(
          (r) => r.network === 'base' && r.block_time && r.block_time.toISOString().slice(0, 10) === d.day,
        );
        expect(d).toEqual({ day: d.day, ratings: rs.length, raters: new Set(rs.map((r) => r.rater)).size });
      }
      expect(body.activity.find((d: { day: string }) => d.day === '2026-10-08')).toEqual({
        day: '2026-10-08',
        ratings: 1,
        raters: 1,
      });
      expect(body.activity.find((d: { day: string }) => d.day === '2026-10-04')).toEqual({
        day: '2026-10-04',
        ratings: 0,
        raters: 0,
      });
    });

    it('defaults to 90 days and 25 rows; accepts the slug in any case', async () => {
      const { body } = await get('/chains/BASE');
      expect(body.network).toBe('base');
      expect(body.days).toBe(90);
      expect(body.activity).toHaveLength(90);
      expect(body.activity.at(-1).day).toBe('2026-10-10');
      const one = await get('/chains/base?limit=1');
      expect(one.body.top).toHaveLength(1);
      expect(one.body.top[0]).toEqual(body.top[0]);
    });

    it('a chain with identities but no ratings: zeros, no top, empty facets', async () => {
      const { status, body } = await get('/chains/celo?days=3');
      expect(status).toBe(200);
      expect(body.stats).toMatchObject({ agents: 1, ratings: 0 });
      expect(body.top).toEqual([]);
      expect(body.facets).toEqual([]);
      expect(body.shrinkage).toEqual({ k: 3, prior: null });
      expect(body.activity).toEqual([
        { day: '2026-10-08', ratings: 0, raters: 0 },
        { day: '2026-10-09', ratings: 0, raters: 0 },
        { day: '2026-10-10', ratings: 0, raters: 0 },
      ]);
    });

    it('unknown chain: 404 with known_networks', async () => {
      const { status, body } = await get('/chains/notachain');
      expect(status).toBe(404);
      expect(body.detail).toMatchObject({ error: 'unknown_network', network: 'notachain' });
      expect(body.detail.known_networks).toEqual(config.chains.map((c) => c.network));
    });

    it('days / limit out of range or not an integer: 422', async () => {
      for (const q of [
        'days=0',
        'days=366',
        'days=abc',
        'days=1.5',
        'days=',
        'days=1e2',
        'limit=0',
        'limit=201',
      ]) {
        const { status, body } = await get(`/chains/base?${q}`);
        expect(status, q).toBe(422);
        expect(Array.isArray(body.detail), q).toBe(true);
        expect(body.detail[0].loc).toEqual(['query', q.split('=')[0]]);
      }
      for (const q of ['days=1', 'days=365', 'limit=200'])
        expect((await get(`/chains/base?${q}`)).status, q).toBe(200);
    });
  });

  describe('GET /feed', () => {
    it('newest first by block time, undated left out, every field', async () => {
      const { body } = await get('/feed?limit=200');
      checkFeed(body, s.stored, null, 200);
      expect(body).toHaveLength(s.stored.ratings.length - 1);
      for (const row of body) expect(typeof row.agent_id).toBe('string');
      const zero = body.find(
        (r: { network: string; agent_id: string }) => r.network === 'base' && r.agent_id === '2',
      );
      expect(zero.value).toBe(0);
      const dec = body.find((r: { value_raw: string }) => r.value_raw === '505');
      expect(dec).toMatchObject({ value: 50.5, value_exact: '50.5', value_decimals: 1, facet: HOSTILE });
      const rev = body.find((r: { revoked: boolean }) => r.revoked);
      expect(rev.revoked_tx).toBe(`0x${'f'.repeat(64)}`);
      const orphan = body.find((r: { agent_id: string }) => r.agent_id === '99');
      expect(orphan.subject_wallet).toBeNull();
    });

    it('defaults to 50, honours limit and network (any case)', async () => {
      const all = await get('/feed');
      expect(all.body.length).toBe(Math.min(50, s.stored.ratings.length - 1));
      const two = await get('/feed?limit=2');
      expect(two.body).toEqual(all.body.slice(0, 2));
      const op = await get('/feed?network=OPTIMISM');
      expect(op.status).toBe(200);
      expect(op.body.map((r: { tx_hash: string }) => r.tx_hash)).toEqual(
        expectedFeed(s.stored.ratings, 'optimism', 50).map((r) => r.tx_hash),
      );
      expect(op.body.every((r: { network: string }) => r.network === 'optimism')).toBe(true);
      // Same block time on one chain: block number then log index decide.
      expect(op.body[1].block_time).toBe(op.body[2].block_time);
      expect(op.body[1].log_index).toBeGreaterThan(op.body[2].log_index);
      const eth = await get('/feed?network=ethereum');
      expect(eth.status).toBe(200);
      expect(eth.body).toEqual([]);
    });

    it('unknown network: 422 listing known_networks', async () => {
      const { status, body } = await get('/feed?network=basee');
      expect(status).toBe(422);
      expect(body.detail).toMatchObject({ error: 'unknown_network', network: 'basee' });
      expect(body.detail.known_networks).toEqual(config.chains.map((c) => c.network));
    });

    it('limit out of range or not an integer: 422', async () => {
      for (const q of ['limit=0', 'limit=201', 'limit=-1', 'limit=abc', 'limit=2.5', 'limit=']) {
        const { status, body } = await get(`/feed?${q}`);
        expect(status, q).toBe(422);
        expect(body.detail[0]).toMatchObject({ loc: ['query', 'limit'] });
        expect(typeof body.detail[0].msg).toBe('string');
      }
      expect((await get('/feed?limit=1')).body).toHaveLength(1);
      expect((await get('/feed?limit=200')).status).toBe(200);
    });
  });
});
