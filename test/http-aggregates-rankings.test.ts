/**
 * Contract tests over HTTP for the free aggregate routes, continued (test/http-aggregates.test.ts
 * has the headers, /chains, /chains/{network} and /feed): /leaderboard, /stats/facets,
 * /stats/types, /stats/issuers, /categories, the OpenAPI document, and every route before the
 * first refresh. The index is test/helpers/agg-seed.ts's; expected numbers are recomputed from the
 * stored rows with the pure scoring functions.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config.js';
import { createApp } from '../src/doors/http/app.js';
import { registerChains } from '../src/store/chain-state.js';
import { issuerOrg } from '../src/read/stats.js';
import { readLeaderboard } from '../src/read/leaderboard.js';
import { round6 } from '../src/scoring/index.js';
import { halfUp6, micros } from './helpers/exact-reference.js';
import { openTestDatabase, type TestDatabase } from './helpers/db.js';
import {
  byCodeUnit,
  checkIssuers,
  expectedLeaderboard,
  expectedFacets,
  expectedPrior,
  expectedWallets,
  facetOrder,
  isEligible,
} from './helpers/agg-expect.js';

import { BURN, HOSTILE, NOW, W1, W2, W3, W5, W6, useSeededApp } from './helpers/agg-seed.js';

describe('free aggregate routes: rankings, stats, OpenAPI', () => {
  const s = useSeededApp();
  const { get } = s;

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
      const wallets = expectedWallets(s.stored);
      const scored = [...wallets.values()].filter((w) => w.final_score !== null);
      const prior = expectedPrior(scored.map((w) => w.final_score));
      expect(Math.abs(body.shrinkage.prior - prior!)).toBeLessThanOrEqual(1e-6);
      expect(body.shrinkage.prior).toBe(round6(body.shrinkage.prior));
      expect(body.rows).toEqual(expectedLeaderboard(s.stored, body.shrinkage.prior));
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
        const res = await s.app.request(`/leaderboard?${q}`, { headers: { 'X-PAYMENT': 'abc' } });
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
        const page = await readLeaderboard(s.t.db, { offset: off, limit: 2 });
        expect(page.rows).toEqual(body.rows.slice(off, off + 2));
      }
      const trading = await readLeaderboard(s.t.db, { type: 'trading' });
      expect(trading.rows.map((r) => r.wallet).sort()).toEqual([BURN, W1].sort());
      const unknown = await readLeaderboard(s.t.db, { type: 'unknown' });
      expect(unknown.rows.map((r) => r.wallet).sort()).toEqual([W1, W2, W5, W6].sort());
    });
  });

  describe('GET /stats/facets', () => {
    it('every raw tag1 with volume, mean, reach; in volume order on the wire', async () => {
      const res = await s.app.request('/stats/facets');
      const text = await res.text();
      const body = JSON.parse(text) as Record<string, unknown>;
      const ef = expectedFacets(s.stored.ratings, null);
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
      const ef = expectedFacets(s.stored.ratings, 'polygon');
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
      const total = s.stored.agents.length;
      const unknown = s.stored.agents.filter((a) => undeclared(a.declared_type)).length;
      expect(body.total_agents).toBe(total);
      expect(body.unknown_agents).toBe(unknown);
      expect(body.declared_agents).toBe(total - unknown);
      expect(body.unknown_share).toBe(round6(unknown / total));
      const keys = Object.keys(body.types);
      expect(keys).toContain('unknown');
      expect(new Set(keys)).toEqual(
        new Set([
          'unknown',
          ...s.stored.agents.filter((a) => !undeclared(a.declared_type)).map((a) => a.declared_type),
        ]),
      );
      // Per type: agents, rated agents, eligible reviews and their mean.
      for (const key of keys) {
        const agents = s.stored.agents.filter((a) =>
          key === 'unknown' ? undeclared(a.declared_type) : a.declared_type === key,
        );
        const elig = s.stored.ratings.filter(
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
      checkIssuers(body, s.stored, issuerOrg);
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
      const declared = s.stored.agents.filter(
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
        total_agents: s.stored.agents.length,
        share: round6(declared.length / s.stored.agents.length),
      });
    });
  });

  describe('OpenAPI', () => {
    it('declares every route with its parameters and bounds', () => {
      const doc = s.app.getOpenAPI31Document({ openapi: '3.1.0', info: { title: 't', version: '2.0.0' } });
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
