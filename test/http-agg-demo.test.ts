/**
 * The free aggregate routes on the demo scenario (three local EDR chains, the deterministic
 * history, indexed by the real indexer pass), on PGlite or on PostgreSQL (TEST_DATABASE_URL).
 * Every expected number is recomputed from the stored `ratings` and `agents` rows with the pure
 * scoring functions; the scenario's facts pin the cases it was built for.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../src/doors/http/app.js';
import type { Demo } from '../src/demo/run-demo.js';
import { issuerOrg } from '../src/read/stats.js';
import { isBurnAddress } from '../src/scoring/index.js';
import { openDemoCopy } from './helpers/demo.js';
import {
  checkCategories,
  checkChainDetail,
  checkChainStats,
  checkFacetsObject,
  checkFeed,
  checkIssuers,
  checkLeaderboard,
  checkTypes,
  loadStored,
  uriHost,
  type StoredAgent,
  type StoredRating,
} from './helpers/agg-expect.js';

/* eslint-disable @typescript-eslint/no-explicit-any */

// The scenario ends on 2026-11-01; its clock for these tests is noon that day.
const NOW = new Date('2026-11-01T12:00:00Z');

describe('free aggregate routes on the demo scenario', () => {
  let demo: Demo;
  let app: ReturnType<typeof createApp>;
  let stored: { ratings: StoredRating[]; agents: StoredAgent[] };
  const get = async (path: string) => {
    const res = await app.request(path);
    const text = await res.text();
    return { res, status: res.status, text, body: JSON.parse(text) as any };
  };

  beforeAll(async () => {
    demo = await openDemoCopy();
    stored = await loadStored(demo.db);
    app = createApp({ config: demo.config, db: demo.db, now: () => NOW });
  }, 300_000);
  afterAll(async () => {
    await demo?.close();
  });

  it('the fixture holds what the scenario played', () => {
    expect(stored.ratings.length).toBe(demo.facts.totals.ratings);
    expect(stored.agents.length).toBe(demo.facts.totals.agents);
  });

  it('/chains: every configured chain, counts recomputed from the rows; disabled chains show zeros', async () => {
    const { body, res } = await get('/chains');
    expect(res.headers.get('api-version')).toBe('2.0.0');
    expect(res.headers.get('ratelimit-policy')).toBe('50;w=1;burst=40');
    expect(body.map((c: any) => c.network)).toEqual(demo.config.chains.map((c) => c.network));
    checkChainStats(body, stored);
    for (const c of body) {
      const cfg = demo.config.chains.find((x) => x.network === c.network)!;
      expect(c.enabled).toBe(cfg.enabled);
      if (!cfg.enabled) {
        expect(c).toMatchObject({
          agents: 0,
          ratings: 0,
          distinct_raters: 0,
          stale_hours: null,
          last_scanned_block: null,
        });
      } else {
        expect(c.backfill_complete).toBe(true);
        expect(c.last_scanned_block).toBeGreaterThan(0);
        expect(c.ratings).toBe(demo.facts.chains[c.network as 'base'].ratings);
      }
    }
    // The self-rater's earlier ratings are now self-ratings on its chain.
    const sr = demo.facts.selfRater;
    expect(body.find((c: any) => c.network === sr.network).self_rated).toBeGreaterThanOrEqual(sr.selfRatings);
    expect((await get('/v1/chains')).text).toBe((await get('/chains')).text);
  });

  for (const network of ['base', 'optimism', 'arbitrum']) {
    it(`/chains/${network}: top wallets on that chain only, facets, activity by block date`, async () => {
      const { body } = await get(`/chains/${network}?days=130&limit=200`);
      expect(body.network).toBe(network);
      checkChainDetail(body, stored, network, NOW, 200);
      const dated = stored.ratings.filter((r) => r.network === network && r.block_time).length;
      expect(body.activity.reduce((s: number, d: any) => s + d.ratings, 0)).toBe(dated);
      const short = await get(`/chains/${network}`);
      expect(short.body.top.length).toBeLessThanOrEqual(25);
      expect(short.body.top).toEqual(body.top.slice(0, short.body.top.length));
      const unrated = demo.facts.unratedOwner.address.toLowerCase();
      expect(body.top.find((r: any) => r.wallet === unrated)).toBeUndefined();
    });
  }

  it('/chains/{network}: an indexed-but-disabled chain answers; an unknown one is 404', async () => {
    const celo = await get('/chains/celo?days=2');
    expect(celo.status).toBe(200);
    expect(celo.body.top).toEqual([]);
    const bad = await get('/chains/basechain');
    expect(bad.status).toBe(404);
    expect(bad.body.detail.known_networks).toEqual(demo.config.chains.map((c) => c.network));
  });

  it('/leaderboard: recomputed ranking; zero, burn address, multi-chain owner; unrated absent', async () => {
    const { body } = await get('/leaderboard');
    checkLeaderboard(body, stored);
    expect(body.rows.length).toBeGreaterThan(0);
    expect(body.rows.length).toBeLessThanOrEqual(100);
    const burn = body.rows.find((r: any) => isBurnAddress(r.wallet));
    expect(burn).toBeDefined();
    const multi = body.rows.find((r: any) => r.wallet === demo.facts.multiChainOwner.address.toLowerCase());
    if (multi) expect(multi.chain_count).toBe(multi.networks.length);
    expect(
      body.rows.find((r: any) => r.wallet === demo.facts.unratedOwner.address.toLowerCase()),
    ).toBeUndefined();
    const q = await get('/leaderboard?limit=500');
    expect(q.status).toBe(422);
    expect(q.body.detail.paged_route).toBe('/leaderboard/page');
  });

  it('/feed: newest first by block time, the zero, the revocations and the hostile tag1 as written', async () => {
    const all = await get('/feed?limit=200');
    checkFeed(all.body, stored, null, 200);
    for (const n of ['base', 'optimism', 'arbitrum']) {
      checkFeed((await get(`/feed?network=${n}&limit=200`)).body, stored, n, 200);
    }
    checkFeed((await get('/feed')).body, stored, null, 50);
    const z = demo.facts.zeroRating;
    const zero = stored.ratings.find(
      (r) =>
        r.network === z.network &&
        r.tx_hash.toLowerCase() === z.txHash.toLowerCase() &&
        r.rater.toLowerCase() === z.rater.toLowerCase(),
    )!;
    expect(zero.value).toBe('0');
    const chainFeed = await get(`/feed?network=${z.network}&limit=200`);
    const zeroRow = chainFeed.body.find(
      (r: any) => r.tx_hash === zero.tx_hash && r.log_index === zero.log_index,
    );
    expect(zeroRow).toMatchObject({ value: 0, value_exact: '0' });
    for (const rv of demo.facts.revoked) {
      const r = stored.ratings.find(
        (x) =>
          x.network === rv.network &&
          x.agent_id === String(rv.agentId) &&
          x.rater.toLowerCase() === rv.rater.toLowerCase() &&
          x.feedback_index === String(rv.feedbackIndex),
      )!;
      expect(r.revoked).toBe(true);
      expect(r.revoked_tx?.toLowerCase()).toBe(rv.txHash.toLowerCase());
    }
    const bad = await get('/feed?network=solana2');
    expect(bad.status).toBe(422);
    expect(bad.body.detail.known_networks).toContain('solana');
    expect((await get('/feed?limit=201')).status).toBe(422);
  });

  it('/stats/facets: every tag1, hostile one included verbatim, in volume order', async () => {
    const { body, text } = await get('/stats/facets');
    checkFacetsObject(body, text, stored, null);
    expect(Object.keys(body)).toContain(demo.facts.hostileTag1.tag1);
    for (const f of demo.facts.tag1Facets) expect(Object.keys(body)).toContain(f);
    for (const n of ['base', 'optimism', 'arbitrum']) {
      const r = await get(`/stats/facets?network=${n}`);
      checkFacetsObject(r.body, r.text, stored, n);
    }
  });

  it('/stats/types and /categories: declared types, recomputed', async () => {
    const types = await get('/stats/types');
    checkTypes(types.body, stored);
    expect(types.body.declared_type_verified).toBe(false);
    const cats = await get('/categories');
    checkCategories(cats.body, stored);
    for (const ta of demo.facts.typedAgents) {
      expect(cats.body.categories.map((c: any) => c.category)).toContain(ta.type);
    }
  });

  it('/stats/issuers: grouped by feedbackURI host, no_host row, issuer_source', async () => {
    const { body } = await get('/stats/issuers');
    expect(body.issuer_source).toBe('derived_from_feedback_uri_host');
    checkIssuers(body, stored, issuerOrg);
    const hosts = new Set(stored.ratings.map((r) => uriHost(r.feedback_uri)).filter((h) => h !== null));
    expect(new Set(body.issuers.map((i: any) => i.issuer_host))).toEqual(hosts);
    expect(
      demo.facts.feedbackHosts
        .filter((h) => h !== '')
        .map((h) => h.toLowerCase())
        .sort(),
    ).toEqual([...hosts].sort());
  });
});
