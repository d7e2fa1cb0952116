/**
 * Contract tests over HTTP for the free aggregate routes: /chains, /chains/{network}, /feed,
 * /leaderboard, /stats/facets, /stats/types, /stats/issuers, /categories. The index is a small
 * hand-made history written through the ingest tables (transfers already applied as owners,
 * self-ratings, a revocation, a real zero, out-of-domain values, a burn-address owner, a hostile
 * and an integer-like tag1, an orphan and an undated rating), then `refreshAggregates`. Expected
 * numbers are recomputed from the stored rows with the pure scoring functions.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config.js';
import { createApp } from '../src/doors/http/app.js';
import { registerChains } from '../src/store/chain-state.js';
import { refreshAggregates } from '../src/store/aggregates-refresh.js';
import { issuerOrg } from '../src/read/stats.js';
import { readLeaderboard } from '../src/read/leaderboard.js';
import { round6, shrunkScore } from '../src/scoring/index.js';
import { halfUp6, micros } from './helpers/exact-reference.js';
import { openTestDatabase, type TestDatabase } from './helpers/db.js';
import {
  byCodeUnit,
  checkFeed,
  checkIssuers,
  expectedFacets,
  expectedFeed,
  expectedPrior,
  expectedWallets,
  facetOrder,
  isEligible,
  loadStored,
  sortLeaderboard,
  type StoredAgent,
  type StoredRating,
} from './helpers/agg-expect.js';

const NOW = new Date('2026-10-10T12:00:00Z');
const addr = (n: number) => `0x${n.toString(16).padStart(40, '0')}`;
const BURN = '0x000000000000000000000000000000000000dead';
const HOSTILE = `<script>alert(1)</script> "q" & 'q' `.repeat(20).slice(0, 500);

const W1 = addr(0xa1); // base + optimism
const W2 = addr(0xa2); // real zero
const W3 = addr(0xa3); // registered, unrated
const W4 = addr(0xa4); // polygon, decimals, hostile tag1
const W5 = addr(0xa5); // optimism tie
const W6 = addr(0xa6); // optimism tie
const R = (n: number) => addr(0xb00 + n);

let txSeq = 0;
interface RatingIn {
  network: string;
  agent: string;
  rater: string;
  raw: string;
  decimals?: number;
  tag1?: string;
  uri?: string;
  at: string | null;
  block: number;
  revoked?: boolean;
}

async function seed(t: TestDatabase) {
  const db = t.db;
  const agents: [string, string, string | null, string | null][] = [
    ['base', '1', W1, 'trading'],
    ['optimism', '1', W1, null],
    ['base', '2', W2, null],
    ['base', '3', W3, 'Data'],
    ['polygon', '7', W4, HOSTILE],
    ['base', '4', BURN, 'trading'],
    ['optimism', '5', W5, 'unknown'],
    ['optimism', '6', W6, ''],
    ['celo', '1', W3, null],
  ];
  for (const [network, id, owner, type] of agents) {
    await db.query(
      `INSERT INTO agents (network, agent_id, minter, owner, declared_type, registered_block) VALUES ($1, $2, $3, $4, $5, 1)`,
      [network, id, R(99), owner, type],
    );
  }
  const ratings: RatingIn[] = [
    {
      network: 'base',
      agent: '1',
      rater: R(1),
      raw: '90',
      tag1: 'trust',
      uri: 'https://feedback.example.com/a',
      at: '2026-10-09T10:00:00Z',
      block: 100,
    },
    {
      network: 'base',
      agent: '1',
      rater: R(2),
      raw: '80',
      tag1: 'trust',
      uri: 'https://feedback.example.com/b',
      at: '2026-10-09T10:00:00Z',
      block: 100,
    },
    {
      network: 'base',
      agent: '1',
      rater: R(3),
      raw: '7000',
      decimals: 2,
      tag1: 'liveness',
      uri: 'http://WWW.Example.com:8080/z',
      at: '2026-10-08T23:59:59Z',
      block: 90,
    },
    {
      network: 'base',
      agent: '1',
      rater: W1,
      raw: '100',
      tag1: 'trust',
      uri: 'https://feedback.example.com/self',
      at: '2026-10-07T00:00:00Z',
      block: 80,
    },
    {
      network: 'base',
      agent: '1',
      rater: R(4),
      raw: '10',
      tag1: 'trust',
      uri: 'ipfs://QmX',
      at: '2026-10-06T00:00:00Z',
      block: 70,
      revoked: true,
    },
    {
      network: 'base',
      agent: '1',
      rater: R(5),
      raw: '150',
      tag1: 'trust',
      uri: '',
      at: '2026-10-05T00:00:00Z',
      block: 60,
    },
    {
      network: 'base',
      agent: '1',
      rater: R(6),
      raw: '-5',
      tag1: '',
      uri: 'data:application/json,{}',
      at: '2026-10-05T00:00:01Z',
      block: 61,
    },
    {
      network: 'optimism',
      agent: '1',
      rater: R(1),
      raw: '60',
      tag1: 'trust',
      uri: 'https://api.shop.co.uk/r',
      at: '2026-10-09T10:00:00Z',
      block: 5000,
    },
    {
      network: 'base',
      agent: '2',
      rater: R(1),
      raw: '0',
      tag1: 'trust',
      uri: 'https://feedback.example.com/z',
      at: '2026-10-09T09:00:00Z',
      block: 99,
    },
    {
      network: 'polygon',
      agent: '7',
      rater: R(7),
      raw: '505',
      decimals: 1,
      tag1: HOSTILE,
      uri: 'https://10.0.0.1/x',
      at: '2026-09-01T00:00:00Z',
      block: 7,
    },
    {
      network: 'polygon',
      agent: '7',
      rater: R(8),
      raw: '100',
      tag1: '5',
      uri: 'https://localhost/x',
      at: '2026-09-02T00:00:00Z',
      block: 8,
    },
    { network: 'polygon', agent: '7', rater: R(9), raw: '75', tag1: '', at: null, block: 9 },
    {
      network: 'base',
      agent: '4',
      rater: R(2),
      raw: '75',
      tag1: 'activity',
      at: '2026-10-01T00:00:00Z',
      block: 50,
    },
    {
      network: 'optimism',
      agent: '5',
      rater: R(8),
      raw: '70',
      tag1: 'trust',
      at: '2026-10-03T00:00:00Z',
      block: 4000,
    },
    {
      network: 'optimism',
      agent: '6',
      rater: R(8),
      raw: '70',
      tag1: 'trust',
      at: '2026-10-03T00:00:00Z',
      block: 4000,
    },
    // Orphan: an identity the index has not registered.
    {
      network: 'base',
      agent: '99',
      rater: R(1),
      raw: '40',
      tag1: 'trust',
      at: '2026-10-02T00:00:00Z',
      block: 55,
    },
  ];
  let li = 0;
  for (const r of ratings) {
    const decimals = r.decimals ?? 0;
    const value = decimals === 0 ? r.raw : (Number(r.raw) / 10 ** decimals).toString();
    txSeq += 1;
    await db.query(
      `INSERT INTO ratings (network, tx_hash, log_index, agent_id, rater, feedback_index, value_raw, value_decimals, value,
                            tag1, feedback_uri, block_number, block_time, revoked, revoked_tx)
       VALUES ($1, $2, $3, $4, $5, 1, $6, $7, $8, $9, $10, $11, $12, $13, $14)`,
      [
        r.network,
        `0x${txSeq.toString(16).padStart(64, '0')}`,
        li++,
        r.agent,
        r.rater,
        r.raw,
        decimals,
        value,
        r.tag1 ?? '',
        r.uri ?? '',
        r.block,
        r.at ? new Date(r.at) : null,
        r.revoked ?? false,
        r.revoked ? `0x${'f'.repeat(64)}` : null,
      ],
    );
  }
  await db.query(
    `UPDATE chains SET last_scanned_block = 100, head_at_last_sync = 112, backfill_complete = true,
            last_success_at = '2026-10-10T09:00:00Z' WHERE network = 'base'`,
  );
  // A dead scanner: synced once, long ago.
  await db.query(
    `UPDATE chains SET last_scanned_block = 5000, head_at_last_sync = 5012, backfill_complete = false,
            last_success_at = '2026-10-01T12:00:00Z' WHERE network = 'optimism'`,
  );
  await refreshAggregates(db, () => NOW);
}

describe('free aggregate routes', () => {
  let t: TestDatabase;
  let app: ReturnType<typeof createApp>;
  let stored: { ratings: StoredRating[]; agents: StoredAgent[] };
  const config = loadConfig({});
  const get = async (path: string) => {
    const res = await app.request(path);
    return { res, status: res.status, body: (await res.json()) as any }; // eslint-disable-line @typescript-eslint/no-explicit-any
  };

  beforeAll(async () => {
    t = await openTestDatabase();
    await registerChains(t.db, config.chains);
    await seed(t);
    stored = await loadStored(t.db);
    app = createApp({ config, db: t.db, now: () => NOW });
  });
  afterAll(() => t.close());

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
        const [a, b] = await Promise.all([app.request(p), app.request(`/v1${p}`)]);
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
        const [a, b] = await Promise.all([app.request(p), app.request(`/v1${p}`)]);
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

    it('counts, classes and means match the stored rows', async () => {
      const { body } = await get('/chains');
      for (const row of body) {
        const rs = stored.ratings.filter((r) => r.network === row.network);
        const owned = rs.filter((r) => r.owner !== null);
        const elig = owned.filter(isEligible);
        const agents = stored.agents.filter((a) => a.network === row.network);
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
      const later = createApp({ config, db: t.db, now: () => new Date(NOW.getTime() + 24 * 3_600_000) });
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
      const wallets = expectedWallets(stored);
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
      const ef = expectedFacets(stored.ratings, 'base');
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
        const rs = stored.ratings.filter(
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
      checkFeed(body, stored, null, 200);
      expect(body).toHaveLength(stored.ratings.length - 1);
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
      expect(all.body.length).toBe(Math.min(50, stored.ratings.length - 1));
      const two = await get('/feed?limit=2');
      expect(two.body).toEqual(all.body.slice(0, 2));
      const op = await get('/feed?network=OPTIMISM');
      expect(op.status).toBe(200);
      expect(op.body.map((r: { tx_hash: string }) => r.tx_hash)).toEqual(
        expectedFeed(stored.ratings, 'optimism', 50).map((r) => r.tx_hash),
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

  describe('GET /leaderboard', () => {
    it('ranks scored wallets by shrunk_score, distinct_raters, wallet; recomputable from the row', async () => {
      const { body } = await get('/leaderboard');
      expect(body).toMatchObject({
        policy_version: 'equal-weight-per-chain@2',
        ordering_policy: 'bayes-shrinkage-distinct-raters@1',
        shrinkage: { k: 3 },
        limit: 100,
        paged_route: '/leaderboard/page',
        refreshed_at: NOW.toISOString(),
      });
      const wallets = expectedWallets(stored);
      const scored = [...wallets.values()].filter((w) => w.final_score !== null);
      const prior = expectedPrior(scored.map((w) => w.final_score));
      expect(Math.abs(body.shrinkage.prior - prior!)).toBeLessThanOrEqual(1e-6);
      expect(body.shrinkage.prior).toBe(round6(body.shrinkage.prior));
      const types = new Map<string, (string | null)[]>();
      for (const a of stored.agents) {
        if (!a.owner) continue;
        const list = types.get(a.owner) ?? [];
        if (a.declared_type !== null && !list.includes(a.declared_type)) list.push(a.declared_type);
        types.set(a.owner, list);
      }
      const sortTypes = (xs: (string | null)[]) =>
        [...xs].sort((a, b) => (a === b ? 0 : a === null ? 1 : b === null ? -1 : byCodeUnit(a, b)));
      const exp = sortLeaderboard(
        scored.map((w) => ({
          wallet: w.wallet,
          final_score: w.final_score,
          shrunk_score: shrunkScore(w.final_score, w.distinct_raters, body.shrinkage.prior),
          distinct_raters: w.distinct_raters,
          total_reviews: w.total_reviews,
          chain_count: w.chain_count,
          networks: w.networks,
          declared_types: sortTypes(types.get(w.wallet) ?? []),
        })),
      ).map((r, i) => ({ rank: i + 1, ...r }));
      expect(body.rows).toEqual(exp);
      // Recompute every position from the row alone, as a checker in exact decimals does:
      // shrunk = (n·f + k·p)/(n + k), rounded once to six decimals, half up. (This index holds a
      // tie: 63.7708335, served 63.770834; floating point gives 63.770833.)
      for (const r of body.rows) {
        const { k, prior: p } = body.shrinkage;
        const n = BigInt(r.distinct_raters);
        expect(r.shrunk_score).toBe(
          halfUp6(n * micros(r.final_score) + BigInt(k) * micros(p), (n + BigInt(k)) * 1_000_000n),
        );
      }
      // Six decimals at most.
      for (const r of body.rows) {
        for (const x of [r.final_score, r.shrunk_score]) expect(round6(x)).toBe(x);
      }
    });

    it('zero vs null: a real 0 is ranked with 0; an unrated wallet is not ranked', async () => {
      const { body } = await get('/leaderboard');
      const w2 = body.rows.find((r: { wallet: string }) => r.wallet === W2);
      expect(w2).toMatchObject({
        final_score: 0,
        distinct_raters: 1,
        total_reviews: 1,
        chain_count: 1,
        networks: ['base'],
      });
      expect(w2.shrunk_score).toBeGreaterThan(0);
      expect(body.rows.find((r: { wallet: string }) => r.wallet === W3)).toBeUndefined();
      // W1: equal weight per chain: base 80 (three raters), optimism 60 → 70, three distinct raters overall.
      const w1 = body.rows.find((r: { wallet: string }) => r.wallet === W1);
      expect(w1).toMatchObject({
        final_score: 70,
        distinct_raters: 3,
        total_reviews: 4,
        chain_count: 2,
        networks: ['base', 'optimism'],
        // an identity that declares nothing adds nothing: never a null in the list
        declared_types: ['trading'],
      });
      // Exact tie on the score and the raters: the wallet decides.
      const i5 = body.rows.findIndex((r: { wallet: string }) => r.wallet === W5);
      const i6 = body.rows.findIndex((r: { wallet: string }) => r.wallet === W6);
      expect(body.rows[i5].shrunk_score).toBe(body.rows[i6].shrunk_score);
      expect(i6).toBe(i5 + 1);
      expect(body.rows.map((r: { rank: number }) => r.rank)).toEqual(
        body.rows.map((_: unknown, i: number) => i + 1),
      );
    });

    it('any query parameter: 422 pointing at /leaderboard/page, never 402', async () => {
      for (const q of ['limit=10', 'offset=100', 'type=trading', 'x', 'b=1&a=2', 'page=2&page=3']) {
        const res = await app.request(`/leaderboard?${q}`, { headers: { 'X-PAYMENT': 'abc' } });
        expect(res.status, q).toBe(422);
        const body = (await res.json()) as {
          detail: { error: string; params: string[]; paged_route: string };
        };
        expect(body.detail.error).toBe('leaderboard_takes_no_params');
        expect(body.detail.paged_route).toBe('/leaderboard/page');
        expect(body.detail.params).toEqual([...new Set(q.split('&').map((kv) => kv.split('=')[0]!))].sort());
      }
      expect((await get('/leaderboard?')).status).toBe(200);
    });

    it('the read model pages the same ranking (for /leaderboard/page)', async () => {
      const { body } = await get('/leaderboard');
      for (let off = 0; off < body.rows.length; off += 1) {
        const page = await readLeaderboard(t.db, { offset: off, limit: 2 });
        expect(page.rows).toEqual(body.rows.slice(off, off + 2));
      }
      const trading = await readLeaderboard(t.db, { type: 'trading' });
      expect(trading.rows.map((r) => r.wallet).sort()).toEqual([BURN, W1].sort());
      const unknown = await readLeaderboard(t.db, { type: 'unknown' });
      expect(unknown.rows.map((r) => r.wallet).sort()).toEqual([W1, W2, W5, W6].sort());
    });
  });

  describe('GET /stats/facets', () => {
    it('every raw tag1 with volume, mean, reach; in volume order on the wire', async () => {
      const res = await app.request('/stats/facets');
      const text = await res.text();
      const body = JSON.parse(text) as Record<string, unknown>;
      const ef = expectedFacets(stored.ratings, null);
      const order = facetOrder(ef);
      // The object's keys in wire order (JSON.parse would move "5" first).
      const wireKeys = [...text.matchAll(/(?:^\{|\},)("(?:[^"\\]|\\.)*"):\{"count"/g)].map(
        (m) => JSON.parse(m[1]!) as string,
      );
      expect(wireKeys).toEqual(order);
      expect(Object.keys(body).sort()).toEqual([...order].sort());
      for (const k of order) expect(body[k]).toEqual(ef.get(k));
      expect(body['']).toBeDefined();
      expect(body[HOSTILE]).toMatchObject({ count: 1, eligible: 1, avg_score: 50.5 });
      expect((body.trust as { count: number }).count).toBeGreaterThan(0);
    });

    it('?network= narrows to one chain; unknown network 422', async () => {
      const { body } = await get('/stats/facets?network=polygon');
      const ef = expectedFacets(stored.ratings, 'polygon');
      expect(Object.keys(body).sort()).toEqual([...ef.keys()].sort());
      const bad = await get('/stats/facets?network=polygom');
      expect(bad.status).toBe(422);
      expect(bad.body.detail.known_networks).toContain('polygon');
    });
  });

  describe('GET /stats/types', () => {
    it('declared-type coverage with total_agents and unknown_share; self-declared, never verified', async () => {
      const { body } = await get('/stats/types');
      expect(body.classification_source).toBe('self_declared');
      expect(body.declared_type_verified).toBe(false);
      expect(body.note).toMatch(/never verified/);
      const undeclared = (t: string | null) => t === null || t === '' || t === 'unknown';
      const total = stored.agents.length;
      const unknown = stored.agents.filter((a) => undeclared(a.declared_type)).length;
      expect(body.total_agents).toBe(total);
      expect(body.unknown_agents).toBe(unknown);
      expect(body.declared_agents).toBe(total - unknown);
      expect(body.unknown_share).toBe(round6(unknown / total));
      const keys = Object.keys(body.types);
      expect(keys).toContain('unknown');
      expect(new Set(keys)).toEqual(
        new Set([
          'unknown',
          ...stored.agents.filter((a) => !undeclared(a.declared_type)).map((a) => a.declared_type),
        ]),
      );
      // Per type: agents, rated agents, eligible reviews and their mean.
      for (const key of keys) {
        const agents = stored.agents.filter((a) =>
          key === 'unknown' ? undeclared(a.declared_type) : a.declared_type === key,
        );
        const elig = stored.ratings.filter(
          (r) => isEligible(r) && agents.some((a) => a.network === r.network && a.agent_id === r.agent_id),
        );
        const rated = agents.filter((a) =>
          elig.some((r) => r.network === a.network && r.agent_id === a.agent_id),
        );
        expect(body.types[key].agent_count, key).toBe(agents.length);
        expect(body.types[key].rated_agent_count, key).toBe(rated.length);
        expect(body.types[key].total_reviews, key).toBe(elig.length);
        const m = elig.length ? elig.reduce((s, r) => s + Number(r.value), 0) / elig.length : null;
        if (m === null) expect(body.types[key].avg_score).toBeNull();
        else expect(body.types[key].avg_score).toBeCloseTo(m, 6);
      }
      expect(body.types.trading).toMatchObject({ agent_count: 2, rated_agent_count: 2 });
      expect(body.types.Data).toEqual({
        agent_count: 1,
        rated_agent_count: 0,
        total_reviews: 0,
        avg_score: null,
      });
    });
  });

  describe('GET /stats/issuers', () => {
    it('ratings grouped by feedbackURI host, with issuer_org, no_host and issuer_source', async () => {
      const { body } = await get('/stats/issuers');
      expect(body.issuer_source).toBe('derived_from_feedback_uri_host');
      expect(body.advisory).toBe(true);
      expect(body.policy_version).toBe('equal-weight-per-chain@2');
      expect(typeof body.issuer_org_rule).toBe('string');
      checkIssuers(body, stored, issuerOrg);
      const orgs = Object.fromEntries(
        body.issuers.map((i: { issuer_host: string; issuer_org: string }) => [i.issuer_host, i.issuer_org]),
      );
      expect(orgs).toMatchObject({
        'feedback.example.com': 'example.com',
        'www.example.com': 'example.com',
        'api.shop.co.uk': 'shop.co.uk',
        '10.0.0.1': '10.0.0.1',
        localhost: 'localhost',
      });
    });

    it('issuer_org rule', () => {
      expect(issuerOrg('a.b.c.example.org')).toBe('example.org');
      expect(issuerOrg('example.org')).toBe('example.org');
      expect(issuerOrg('x.example.com.au')).toBe('example.com.au');
      expect(issuerOrg('x.example.co')).toBe('example.co');
      expect(issuerOrg('[::1]')).toBe('[::1]');
      expect(issuerOrg('example.org.')).toBe('example.org');
    });
  });

  describe('GET /categories', () => {
    it('declared types present in the index, alphabetical, with counts; nothing invented', async () => {
      const { body } = await get('/categories');
      expect(body).toMatchObject({
        categories_source: 'declared_type',
        declared_type_verified: false,
        ordering: 'alphabetical',
      });
      const declared = stored.agents.filter(
        (a) => a.declared_type !== null && a.declared_type !== '' && a.declared_type !== 'unknown',
      );
      const names = [...new Set(declared.map((a) => a.declared_type as string))].sort(byCodeUnit);
      expect(body.categories.map((c: { category: string }) => c.category)).toEqual(names);
      expect(body.categories.find((c: { category: string }) => c.category === 'trading')).toEqual({
        category: 'trading',
        agent_count: 2,
        rated_agent_count: 2,
        total_reviews: 4,
      });
      expect(body.coverage).toEqual({
        categorized_agents: declared.length,
        total_agents: stored.agents.length,
        share: round6(declared.length / stored.agents.length),
      });
    });
  });

  describe('OpenAPI', () => {
    it('declares every route with its parameters and bounds', () => {
      const doc = app.getOpenAPI31Document({ openapi: '3.1.0', info: { title: 't', version: '2.0.0' } });
      for (const p of [
        '/chains',
        '/chains/{network}',
        '/feed',
        '/leaderboard',
        '/stats/facets',
        '/stats/types',
        '/stats/issuers',
        '/categories',
      ]) {
        expect(doc.paths?.[p]?.get, p).toBeDefined();
      }
      const params = (p: string) =>
        (doc.paths?.[p]?.get?.parameters ?? []) as {
          name: string;
          schema: { minimum?: number; maximum?: number; default?: number };
        }[];
      expect(params('/feed').find((x) => x.name === 'limit')?.schema).toMatchObject({
        minimum: 1,
        maximum: 200,
        default: 50,
      });
      expect(params('/chains/{network}').find((x) => x.name === 'days')?.schema).toMatchObject({
        minimum: 1,
        maximum: 365,
        default: 90,
      });
      expect(params('/leaderboard')).toEqual([]);
      const schemas = Object.keys(doc.components?.schemas ?? {});
      expect(schemas).toEqual(
        expect.arrayContaining([
          'ChainStat',
          'ChainDetail',
          'FeedEvent',
          'LeaderboardRow',
          'FacetStat',
          'TypeBreakdown',
          'IssuerStats',
          'CategoryCatalog',
        ]),
      );
    });
  });
});

describe('free aggregate routes before the first refresh', () => {
  let t: TestDatabase;
  let app: ReturnType<typeof createApp>;
  const config = loadConfig({});
  beforeAll(async () => {
    t = await openTestDatabase();
    await registerChains(t.db, config.chains);
    app = createApp({ config, db: t.db, now: () => NOW });
  });
  afterAll(() => t.close());

  it('answer with zeros, empty lists and null priors, never an error', async () => {
    const chains = (await (await app.request('/chains')).json()) as { agents: number; ratings: number }[];
    expect(chains).toHaveLength(11);
    expect(chains.every((c) => c.agents === 0 && c.ratings === 0)).toBe(true);
    const lb = (await (await app.request('/leaderboard')).json()) as {
      rows: unknown[];
      shrinkage: unknown;
      refreshed_at: unknown;
    };
    expect(lb).toMatchObject({ rows: [], shrinkage: { k: 3, prior: null }, refreshed_at: null });
    expect(await (await app.request('/feed')).json()).toEqual([]);
    expect(await (await app.request('/stats/facets')).json()).toEqual({});
    const types = (await (await app.request('/stats/types')).json()) as Record<string, unknown>;
    expect(types).toMatchObject({
      total_agents: 0,
      unknown_share: null,
      types: { unknown: { agent_count: 0, avg_score: null } },
    });
    const issuers = (await (await app.request('/stats/issuers')).json()) as Record<string, unknown>;
    expect(issuers).toMatchObject({
      issuers: [],
      no_host: { count: 0, distinct_agents: 0, distinct_raters: 0 },
    });
    const cats = (await (await app.request('/categories')).json()) as Record<string, unknown>;
    expect(cats).toMatchObject({
      categories: [],
      coverage: { categorized_agents: 0, total_agents: 0, share: null },
    });
    const chain = await app.request('/chains/solana?days=2');
    expect(chain.status).toBe(200);
  });
});
