/**
 * Contract tests for the free per-subject routes: GET /search/{q}, GET /wallets/{wallet}/chains and
 * GET|HEAD /wallets/{wallet}/exists. Fixture: the demo scenario (three local EVM chains indexed by
 * the real indexer) plus a few Solana rows written through the ingest tables, then the aggregate
 * refresh. Every expected number is recomputed from the stored `ratings` and `agents` rows with the
 * pure scoring functions (test/helpers/lookup-expected.ts), never read from the aggregate tables the
 * routes use. One file for the three routes: they share its costly fixture (a demo copy, a refresh).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Demo } from '../src/demo/run-demo.js';
import { createApp } from '../src/doors/http/app.js';
import type { App } from '../src/doors/http/context.js';
import { tierById } from '../src/payments/pricing.js';
import { refreshAggregates } from '../src/store/aggregates-refresh.js';
import { startHttpServer, type RunningServer } from '../src/server.js';
import { CAVEAT_CODES, POLICY_VERSION } from '../src/scoring/index.js';
import { testDatabaseUrl } from './helpers/db.js';
import { openDemoCopy } from './helpers/demo.js';
import {
  BOTH,
  BOTH_OWNED,
  SOL_ASSET,
  SOL_ASSET_UNRATED,
  SOL_WALLET,
  byLenThenText,
  lookupExpectations,
  readStoredRows,
  seedSolana,
  type AgentRow,
  type Row,
} from './helpers/lookup-expected.js';

const NOW = new Date('2026-11-20T08:00:00Z');

let demo: Demo;
let app: App;
let refreshedAt: string;

let ratings: Row[] = [];
let agents: AgentRow[] = [];
let chainOrder: string[] = [];
const { configOrder, expectedChains, expectedAgent, owners } = lookupExpectations(() => ({
  ratings,
  agents,
  chainOrder,
}));

beforeAll(async () => {
  // On PostgreSQL the demo writes into a private schema of the test server.
  demo = await openDemoCopy();
  await seedSolana(demo.db);
  refreshedAt = (await refreshAggregates(demo.db, () => NOW)).refreshed_at;
  app = createApp({ config: demo.config, db: demo.db, now: () => NOW });
  chainOrder = demo.config.chains.map((c) => c.network);
  ({ ratings, agents } = await readStoredRows(demo.db));
}, 240_000);

afterAll(async () => {
  await demo?.close();
});

async function get(path: string, init?: RequestInit) {
  const res = await app.request(path, init);
  const text = await res.text();
  return { res, text, body: text ? JSON.parse(text) : null };
}

// ------------------------------------------------------------------ /wallets/{wallet}/chains

describe('GET /wallets/{wallet}/chains', () => {
  it('runs on the database the suite was asked for', () => {
    expect(demo.db.kind).toBe(testDatabaseUrl ? 'postgres' : 'pglite');
  });

  it('serves, for every owner in the index, the per-chain preview recomputed from the stored rows', async () => {
    expect(owners().length).toBeGreaterThan(10);
    for (const wallet of owners()) {
      const { res, body } = await get(`/wallets/${wallet}/chains`);
      expect(res.status, wallet).toBe(200);
      const exp = expectedChains(wallet);
      expect(body, wallet).toEqual({
        wallet,
        chains: exp.chains,
        chains_with_identity: exp.chains_with_identity,
        chains_with_reputation: exp.chains_with_reputation,
        identity_count: exp.identity_count,
        total_reviews: exp.total_reviews,
        distinct_raters: exp.distinct_raters,
        global_score: exp.global_score,
        caveats:
          wallet === '0x000000000000000000000000000000000000dead'
            ? [expect.objectContaining({ code: 'burn-address' })]
            : [],
        caveats_not_computed: CAVEAT_CODES.filter((c) => c !== 'burn-address').sort(),
        policy_version: POLICY_VERSION,
        source: 'aggregate:agg_wallet_chain',
        refreshed_at: refreshedAt,
      });
    }
  });

  it('covers the scenario cases: multi-chain owner, burn address, registered-but-unrated, real zero', async () => {
    const multi = (await get(`/wallets/${demo.facts.multiChainOwner.address}/chains`)).body;
    expect(multi.chains.map((c: { network: string }) => c.network)).toEqual(['base', 'arbitrum', 'optimism']);
    expect(multi.global_score).not.toBeNull();
    // The global score is the mean of the per-chain scores (one chain, one vote), never pooled.
    const perChain = multi.chains.map((c: { final_score: number }) => c.final_score);
    expect(multi.global_score).toBeCloseTo(
      perChain.reduce((a: number, b: number) => a + b, 0) / perChain.length,
      5,
    );
    // Distinct raters are deduplicated across chains, so they never exceed the sum of the rows.
    const summed = multi.chains.reduce(
      (s: number, c: { distinct_raters: number }) => s + c.distinct_raters,
      0,
    );
    expect(multi.distinct_raters).toBeLessThanOrEqual(summed);

    const burn = (await get(`/wallets/${demo.facts.burnOwnedAgent.owner}/chains`)).body;
    expect(burn.caveats).toEqual([{ code: 'burn-address', text: expect.any(String) }]);
    expect(burn.chains[0].final_score).not.toBeNull();

    const unrated = (await get(`/wallets/${demo.facts.unratedOwner.address}/chains`)).body;
    expect(unrated.chains.length).toBeGreaterThan(0);
    for (const c of unrated.chains)
      expect(c).toMatchObject({ final_score: null, total_reviews: 0, distinct_raters: 0 });
    expect(unrated.global_score).toBeNull();
    expect(unrated.chains_with_reputation).toBe(0);

    // A real zero is a score of 0, never null.
    const zero = (await get(`/wallets/${BOTH}/chains`)).body;
    expect(zero.chains).toEqual([
      {
        network: 'solana',
        agent_count: 1,
        agent_ids: [BOTH_OWNED],
        final_score: 0,
        total_reviews: 1,
        distinct_raters: 1,
      },
    ]);
    expect(zero.global_score).toBe(0);
  });

  it('answers a wallet with no identity anywhere with 200, chains: [] and global_score: null (not 404)', async () => {
    const { res, body } = await get('/wallets/0x00000000000000000000000000000000000000b0/chains');
    expect(res.status).toBe(200);
    expect(body).toMatchObject({
      wallet: '0x00000000000000000000000000000000000000b0',
      chains: [],
      chains_with_identity: 0,
      chains_with_reputation: 0,
      identity_count: 0,
      total_reviews: 0,
      distinct_raters: 0,
      global_score: null,
      caveats: [],
    });
  });

  it('serves the burn-address caveat even when the burn address holds nothing', async () => {
    const { body } = await get('/wallets/1nc1nerator11111111111111111111111111111111/chains');
    expect(body.chains).toEqual([]);
    expect(body.caveats.map((c: { code: string }) => c.code)).toEqual(['burn-address']);
  });

  it('gives a byte-identical answer for an EVM address in any case, with or without 0x, and under /v1', async () => {
    const addr = demo.facts.multiChainOwner.address; // checksummed, mixed case
    const hex = addr.slice(2);
    const variants = [
      addr,
      addr.toLowerCase(),
      `0x${hex.toUpperCase()}`,
      hex.toLowerCase(),
      hex.toUpperCase(),
    ];
    const texts = await Promise.all(variants.map(async (v) => (await get(`/wallets/${v}/chains`)).text));
    texts.push((await get(`/v1/wallets/${addr.toUpperCase().replace('0X', '0x')}/chains`)).text);
    for (const t of texts) expect(t).toBe(texts[0]);
    expect(JSON.parse(texts[0]!).wallet).toBe(addr.toLowerCase());
  });

  it('keeps Solana keys verbatim: the key answers, its lower-cased spelling is another (empty) wallet', async () => {
    const exact = (await get(`/wallets/${SOL_WALLET}/chains`)).body;
    expect(exact.wallet).toBe(SOL_WALLET);
    const { received: _received, ...expected } = expectedChains(SOL_WALLET);
    expect(exact).toMatchObject(expected);
    expect(exact.chains[0]).toMatchObject({
      network: 'solana',
      agent_ids: [BOTH, SOL_ASSET, SOL_ASSET_UNRATED].sort(byLenThenText),
      // (90 + 70 + 80) / 3: the self-rating and the revoked rating are out of the score
      final_score: 80,
      total_reviews: 3,
      distinct_raters: 2,
    });
    const lower = await get(`/wallets/${SOL_WALLET.toLowerCase()}/chains`);
    expect(lower.res.status).toBe(200);
    expect(lower.body).toMatchObject({ wallet: SOL_WALLET.toLowerCase(), chains: [], global_score: null });
  });

  it.each([
    ['short garbage', 'abc'],
    ['0x + 39 hex', `0x${'a'.repeat(39)}`],
    ['0x + 41 hex', `0x${'a'.repeat(41)}`],
    ['non-hex after 0x', `0x${'g'.repeat(40)}`],
    ['base58 too short', 'A'.repeat(31)],
    ['base58 too long', 'A'.repeat(45)],
    ['base58 with a zero', `0${'A'.repeat(40)}`],
    ['a very long string', 'x'.repeat(5000)],
    ['unicode', 'ñandú🙂'],
    ['html', '<script>alert(1)</script>'],
    ['space-padded address', ` ${'0x'}${'a'.repeat(40)} `],
  ])('answers 422 not_an_address for %s', async (_label, input) => {
    for (const route of ['chains', 'exists']) {
      const { res, body } = await get(`/wallets/${encodeURIComponent(input)}/${route}`);
      expect(res.status).toBe(422);
      expect(res.headers.get('content-type')).toMatch(/^application\/json/);
      expect(body.detail).toMatchObject({ error: 'not_an_address', wallet: input });
      expect(res.headers.get('api-version')).toBe('2.0.0');
    }
  });
});

// ------------------------------------------------------------------ /wallets/{wallet}/exists

describe('GET|HEAD /wallets/{wallet}/exists', () => {
  it('answers booleans and counts that agree with the stored rows, with next pointers only when they apply', async () => {
    const lookup = tierById('wallet-lookup');
    for (const wallet of [...owners(), '0x00000000000000000000000000000000000000b0']) {
      const { res, body } = await get(`/wallets/${wallet}/exists`);
      expect(res.status).toBe(200);
      expect(res.headers.get('ratelimit-policy')).toBe('10;w=1;burst=20');
      const exp = expectedChains(wallet);
      expect(body).toMatchObject({
        wallet,
        has_identity: exp.identity_count > 0,
        identity_count: exp.identity_count,
        chains_with_identity: exp.chains_with_identity,
        has_reputation: exp.received > 0,
        chains_with_reputation: exp.chains_with_reputation,
        total_reviews: exp.total_reviews,
        source: 'aggregate:agg_wallet',
        refreshed_at: refreshedAt,
      });
      if (exp.identity_count > 0) {
        expect(body.next.free).toEqual({ endpoint: '/wallets/{wallet}/chains', gives: expect.any(String) });
      } else {
        expect(body.next).toEqual({});
      }
      if (exp.received > 0) {
        expect(body.next.paid).toMatchObject({
          endpoint: '/reputation/wallet/{wallet}',
          price_usd: lookup.price_usd,
          pricing_version: 'cost-tiered@5',
          tier: 'wallet-lookup',
          preview: { distinct_raters: exp.distinct_raters },
        });
        expect(body.next.paid.preview.last_rating_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
      } else {
        // Absent, not null: nothing to buy.
        expect('paid' in body.next).toBe(false);
      }
    }
  });

  it('is registered-but-unrated for the unrated owner, and byte-identical across EVM spellings', async () => {
    const w = demo.facts.unratedOwner.address;
    const { body } = await get(`/wallets/${w}/exists`);
    expect(body).toMatchObject({ has_identity: true, has_reputation: false, chains_with_reputation: 0 });
    expect(Object.keys(body.next)).toEqual(['free']);
    const texts = await Promise.all(
      [w, w.toLowerCase(), `0x${w.slice(2).toUpperCase()}`, w.slice(2)].map(
        async (v) => (await get(`/wallets/${v}/exists`)).text,
      ),
    );
    for (const t of texts) expect(t).toBe(texts[0]);
  });

  it('answers HEAD with the same status and Content-Length and no body (in process)', async () => {
    for (const w of [
      demo.facts.multiChainOwner.address,
      '0x00000000000000000000000000000000000000b0',
      'not-a-wallet',
    ]) {
      const g = await get(`/wallets/${w}/exists`);
      const h = await app.request(`/wallets/${w}/exists`, { method: 'HEAD' });
      expect(h.status).toBe(g.res.status);
      expect(await h.text()).toBe('');
      expect(h.headers.get('content-length')).toBe(String(Buffer.byteLength(g.text)));
      expect(g.res.headers.get('content-length')).toBe(String(Buffer.byteLength(g.text)));
    }
  });

  it('answers HEAD with the same status and Content-Length and no body (over a real socket, with /v1)', async () => {
    let server: RunningServer | null = null;
    try {
      server = await startHttpServer(
        { config: demo.config, db: demo.db, now: () => NOW },
        { host: '127.0.0.1', port: 0 },
      );
      for (const path of [
        `/wallets/${demo.facts.multiChainOwner.address}/exists`,
        `/v1/wallets/${demo.facts.multiChainOwner.address}/exists`,
        '/wallets/%3Cscript%3E/exists',
      ]) {
        const g = await fetch(`${server.url}${path}`);
        const gText = await g.text();
        const h = await fetch(`${server.url}${path}`, { method: 'HEAD' });
        expect(h.status).toBe(g.status);
        expect(h.headers.get('content-length')).toBe(String(Buffer.byteLength(gText)));
        expect(await h.text()).toBe('');
        expect(h.headers.get('ratelimit-policy')).toBe('10;w=1;burst=20');
        expect(h.headers.get('api-version')).toBe('2.0.0');
      }
    } finally {
      await server?.close();
    }
  });
});

// ------------------------------------------------------------------ /search/{q}

describe('GET /search/{q}', () => {
  it('reads an EVM address as a wallet: one row per chain, same numbers as the preview, paid route per row', async () => {
    const addr = demo.facts.multiChainOwner.address;
    const lower = addr.toLowerCase();
    const { res, body } = await get(`/search/${addr}`);
    expect(res.status).toBe(200);
    const exp = expectedChains(lower);
    expect(body).toMatchObject({
      query: addr,
      normalized_query: lower,
      interpretations: ['evm_wallet'],
      match_count: exp.chains.length,
      policy_version: POLICY_VERSION,
      source: 'aggregate:agg_wallet_chain',
      refreshed_at: refreshedAt,
    });
    expect(body.matches).toEqual(
      exp.chains.map((c) => ({
        interpreted_as: 'evm_wallet',
        network: c.network,
        wallet: lower,
        agent_count: c.agent_count,
        agent_ids: c.agent_ids,
        declared_type: expect.toSatisfy((v: unknown) => v === null || typeof v === 'string'),
        final_score: c.final_score,
        total_reviews: c.total_reviews,
        distinct_raters: c.distinct_raters,
        detail_route: `GET /reputation/wallet/${lower}`,
        source: 'aggregate:agg_wallet_chain',
      })),
    );
    // Any spelling of the address gives the same matches (the query echo differs by design).
    for (const v of [lower, `0x${addr.slice(2).toUpperCase()}`, addr.slice(2)]) {
      const other = (await get(`/search/${v}`)).body;
      expect(other.query).toBe(v);
      expect({ ...other, query: addr }).toEqual(body);
    }
  });

  it('reads digits as an agent id on every EVM chain: one row per chain, each with its own owner and score', async () => {
    const { agentId, owners: expectedOwners } = demo.facts.sameAgentIdOnTwoChains;
    const id = String(agentId);
    const { body } = await get(`/search/${id}`);
    expect(body.interpretations).toEqual(['evm_agent_id']);
    expect(body.source).toBe('aggregate:agents+agg_agent');
    expect(body.refreshed_at).toBe(refreshedAt);
    const networks = agents
      .filter((a) => a.agent_id === id && a.network !== 'solana')
      .map((a) => a.network)
      .sort(configOrder);
    expect(body.matches.map((m: { network: string }) => m.network)).toEqual(networks);
    expect(networks.length).toBeGreaterThanOrEqual(2);
    for (const m of body.matches) {
      const exp = expectedAgent(m.network, id);
      expect(m).toEqual({
        interpreted_as: 'evm_agent_id',
        network: m.network,
        wallet: exp.wallet,
        agent_count: 1,
        agent_ids: [id],
        declared_type: exp.declared_type,
        final_score: exp.final_score,
        total_reviews: exp.total_reviews,
        distinct_raters: exp.distinct_raters,
        detail_route: `GET /reputation/agent/${m.network}/${id}`,
        source: 'aggregate:agents+agg_agent',
      });
    }
    for (const o of expectedOwners) {
      const row = body.matches.find((m: { network: string }) => m.network === o.network);
      expect(row.wallet).toBe(o.owner.toLowerCase());
    }
    const owned = new Set(body.matches.map((m: { wallet: string }) => m.wallet));
    expect(owned.size).toBeGreaterThanOrEqual(2);
  });

  it('computes an agent reading for every indexed EVM agent from its own ratings only', async () => {
    const ids = [...new Set(agents.filter((a) => a.network !== 'solana').map((a) => a.agent_id))];
    for (const id of ids) {
      const { body } = await get(`/search/${id}`);
      for (const m of body.matches) {
        expect(m, `${m.network}/${id}`).toMatchObject(expectedAgent(m.network, id));
      }
    }
  });

  it('treats leading zeros as the same counter and a well-formed unknown id as 200 with matches: []', async () => {
    const seven = (await get('/search/1')).body;
    const padded = (await get('/search/0001')).body;
    expect(padded.normalized_query).toBe('1');
    expect({ ...padded, query: '1' }).toEqual(seven);
    const unknown = await get('/search/987654321987654321');
    expect(unknown.res.status).toBe(200);
    expect(unknown.body).toMatchObject({ interpretations: ['evm_agent_id'], matches: [], match_count: 0 });
    const unknownWallet = await get('/search/0x00000000000000000000000000000000000000b0');
    expect(unknownWallet.res.status).toBe(200);
    expect(unknownWallet.body).toMatchObject({
      interpretations: ['evm_wallet'],
      matches: [],
      match_count: 0,
    });
  });

  it('reads a base58 key as a Solana wallet AND a Solana asset, labelling each row with its reading', async () => {
    const both = (await get(`/search/${BOTH}`)).body;
    expect(both.interpretations).toEqual(['solana_wallet', 'solana_asset']);
    expect(both.normalized_query).toBe(BOTH);
    expect(both.matches).toEqual([
      {
        interpreted_as: 'solana_wallet',
        network: 'solana',
        wallet: BOTH,
        agent_count: 1,
        agent_ids: [BOTH_OWNED],
        declared_type: 'assistant',
        final_score: 0,
        total_reviews: 1,
        distinct_raters: 1,
        detail_route: `GET /reputation/wallet/${BOTH}`,
        source: 'aggregate:agg_wallet_chain',
      },
      {
        interpreted_as: 'solana_asset',
        network: 'solana',
        wallet: SOL_WALLET,
        agent_count: 1,
        agent_ids: [BOTH],
        declared_type: null,
        final_score: null,
        total_reviews: 0,
        distinct_raters: 0,
        detail_route: `GET /reputation/agent/solana/${BOTH}`,
        source: 'aggregate:agents+agg_agent',
      },
    ]);
    expect(both.source).toBe('aggregate:agg_wallet_chain, aggregate:agents+agg_agent');

    const asset = (await get(`/search/${SOL_ASSET}`)).body;
    expect(asset.matches).toHaveLength(1);
    expect(asset.matches[0]).toMatchObject({
      interpreted_as: 'solana_asset',
      wallet: SOL_WALLET,
      final_score: 80,
      total_reviews: 3,
      distinct_raters: 2,
      declared_type: 'oracle',
    });
    // Case-sensitive: another spelling is another key (well-formed, unknown).
    const lower = await get(`/search/${SOL_ASSET.toLowerCase()}`);
    expect(lower.res.status).toBe(200);
    expect(lower.body.matches).toEqual([]);
  });

  it.each([
    ['an empty query', '/search/', ''],
    ['no segment at all', '/search', ''],
    ['garbage', '/search/abc', 'abc'],
    ['two segments', '/search/0x1/2', '0x1/2'],
    ['an encoded slash', '/search/a%2Fb', 'a/b'],
    ['html', `/search/${encodeURIComponent('<script>alert(1)</script>')}`, '<script>alert(1)</script>'],
    ['unicode', `/search/${encodeURIComponent('ñandú')}`, 'ñandú'],
    ['a trailing space', `/search/${encodeURIComponent('1 ')}`, '1 '],
    ['79 digits (over uint256 length)', `/search/${'9'.repeat(79)}`, '9'.repeat(79)],
    ['a uint256 overflow in 78 digits', `/search/${'9'.repeat(78)}`, '9'.repeat(78)],
    ['a very long string', `/search/${'x'.repeat(5000)}`, 'x'.repeat(5000)],
  ])('answers 422 unrecognized_query with accepted_shapes for %s', async (_label, path, query) => {
    for (const p of [path, `/v1${path}`]) {
      const { res, body } = await get(p);
      expect(res.status, p).toBe(422);
      expect(body.detail).toMatchObject({ error: 'unrecognized_query', query });
      expect(body.detail.accepted_shapes).toHaveLength(3);
      expect(res.headers.get('ratelimit-policy')).toBe('50;w=1;burst=40');
    }
  });

  it('is the same under /v1', async () => {
    for (const q of ['1', demo.facts.multiChainOwner.address, BOTH]) {
      expect((await get(`/v1/search/${q}`)).text).toBe((await get(`/search/${q}`)).text);
    }
  });
});
