/**
 * The six metered MCP tools against FAKE paid routes (no database): a test app registers tiny
 * routes at the metered paths that answer 402 with a challenge built by the real challenge
 * builder (src/payments/challenge.ts) and 200 when an X-PAYMENT header is present, plus fake free
 * previews. The MCP door of src/doors/http/routes/mcp.ts is mounted on that app and reached
 * through a real listening server with the SDK client, so the status mapping, the recipient check,
 * `payment` → X-PAYMENT and the tool-made caveats are tested independently of the real paywall.
 * Also: unit tests of src/doors/mcp/results.ts.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { serve } from '@hono/node-server';
import { OpenAPIHono } from '@hono/zod-openapi';
import type { AddressInfo } from 'node:net';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { loadConfig } from '../src/config.js';
import type { AppContext, AppEnv } from '../src/doors/http/context.js';
import { useDoorCors } from '../src/doors/http/app.js';
import { registerA2aRoutes } from '../src/doors/http/routes/a2a.js';
import { registerMcpRoutes } from '../src/doors/http/routes/mcp.js';
import { fromAnswer, recipientCheck, type RouteAnswer } from '../src/doors/mcp/results.js';
import { buildChallenge, canonicalResource } from '../src/payments/challenge.js';
import { matchTier, pricingCatalog } from '../src/payments/pricing.js';
import type { Database } from '../src/db/database.js';

/* eslint-disable @typescript-eslint/no-explicit-any */

const TREASURY = '0x2222222222222222222222222222222222222222';
const ATTACKER = '0x9999999999999999999999999999999999999999';
const RATED = '0x00000000000000000000000000000000000000aa';
const NOBODY = '0x00000000000000000000000000000000000000bb';
const AGENT_RATINGS = 250;

interface Fake {
  url: string;
  /** Every in-process request the fake routes saw: path+query and X-PAYMENT. */
  seen: { resource: string; payment: string | null }[];
  close(): Promise<void>;
}

/** A test app: fake free previews + fake metered routes + the real MCP door (and door CORS). */
async function startFake(opts: { treasury: string | null; challengePayTo: string }): Promise<Fake> {
  const app = new OpenAPIHono<AppEnv>({
    getPath: (req) => {
      const p = new URL(req.url).pathname;
      return p.startsWith('/v1/') ? p.slice(3) : p;
    },
  });
  const seen: Fake['seen'] = [];
  const ctx: AppContext = {
    config: { ...loadConfig({}), treasuryAddress: opts.treasury },
    db: null as unknown as Database,
    now: () => new Date('2026-11-01T12:00:00Z'),
  };
  useDoorCors(app);
  registerA2aRoutes(app, ctx);
  registerMcpRoutes(app, ctx);

  app.get('/wallets/:wallet/chains', (c) => {
    const w = c.req.param('wallet');
    if (!/^0x[0-9a-fA-F]{40}$/.test(w))
      return c.json({ detail: { error: 'not_an_address', wallet: w } }, 422);
    const chains =
      w === NOBODY
        ? []
        : [{ network: 'base', agent_ids: ['7'], final_score: 80, total_reviews: 3, distinct_raters: 2 }];
    return c.json({
      wallet: w,
      chains,
      chains_with_identity: chains.length,
      chains_with_reputation: chains.length,
      global_score: chains.length ? 80 : null,
      caveats: [],
    });
  });
  app.get('/search/:q', (c) => {
    const q = c.req.param('q');
    if (!/^\d+$/.test(q)) return c.json({ detail: { error: 'unrecognized_query' } }, 422);
    const matches = q === '7' ? [{ network: 'base', wallet: RATED, agent_ids: ['7'], final_score: 80 }] : [];
    return c.json({ query: q, normalized_query: String(Number(q)), interpretations: ['agent_id'], matches });
  });
  app.get('/pricing', (c) => c.json(pricingCatalog({ treasuryAddress: opts.treasury })));
  app.get('/health', (c) => c.json({ agents: 3, feedback_entries: 5, chains: [], policy_version: 'p@1' }));
  app.get('/leaderboard', (c) => c.json({ rows: [{ rank: 1 }, { rank: 2 }], limit: 100 }));

  // The fake paywall: 402 (real challenge shape) without X-PAYMENT, else the route's fake body.
  const paid = (body: (c: any) => unknown) => (c: any) => {
    const url = new URL(c.req.url);
    const resource = canonicalResource('GET', url);
    const payment = c.req.header('x-payment') ?? null;
    seen.push({ resource, payment });
    const tier = matchTier('GET', url.pathname, url.searchParams)!;
    if (payment === null || payment === 'spent') {
      const { body: challenge, headers } = buildChallenge({
        tier,
        resource,
        config: { treasuryAddress: opts.challengePayTo, facilitatorUrl: 'http://127.0.0.1:9/none' },
        ...(payment ? { error: 'payment_reused', reason: 'spent' } : {}),
      });
      return c.json(challenge, 402, headers);
    }
    if (payment === 'in-flight') {
      // The paywall's answer while another request settles this very authorization.
      const { body: challenge, headers } = buildChallenge({
        tier,
        resource,
        config: { treasuryAddress: opts.challengePayTo, facilitatorUrl: 'http://127.0.0.1:9/none' },
        error: 'payment_in_flight',
        retryable: true,
      });
      return c.json(challenge, 402, { ...headers, 'Retry-After': '5' });
    }
    if (payment === 'facilitator-down') {
      return c.json(
        { error: 'facilitator_unavailable', message: 'down', retryable: true, retry_after_seconds: 5 },
        503,
        { 'Retry-After': '5' },
      );
    }
    if (payment === 'boom') return c.json({ detail: 'Internal error' }, 500);
    return c.json(body(c), 200, { 'X-Payment-Receipt': '0xreceipt', 'X-Payment-Reused': 'false' });
  };
  app.get(
    '/reputation/wallet/:wallet',
    paid((c) => ({
      wallet: c.req.param('wallet'),
      final_score: 80,
      facets: { trust: { score: 80 } },
      caveats: [],
      policy_version: 'p@1',
      snapshot: c.req.query('snapshot') ?? null,
    })),
  );
  app.get(
    '/reputation/wallet/:wallet/history',
    paid((c) => ({
      wallet: c.req.param('wallet'),
      bucket: c.req.query('bucket') ?? 'month',
      series: [],
      coverage: { undated_reviews: 2 },
    })),
  );
  app.get(
    '/reputation/agent/:network/:agent_id',
    paid((c) => {
      // Like the real route: pages with max_ratings and declares it in `pagination`.
      const max = Number(c.req.query('max_ratings') ?? 200);
      const all = Array.from({ length: AGENT_RATINGS }, (_, i) => ({ tx_hash: `0x${i}` }));
      const page = max === 0 ? all : all.slice(0, max);
      return {
        network: c.req.param('network'),
        agent_id: c.req.param('agent_id'),
        confidence: 'low',
        caveats: [{ code: 'few-raters', text: 'pocos' }],
        registration: { state: 'valid', name: '<b>declared</b>', services: [] },
        pagination: { total: all.length, returned: page.length, truncated: page.length < all.length },
        ratings: page,
      };
    }),
  );
  app.get(
    '/reputation/rater/:wallet',
    paid((c) => ({ rater: c.req.param('wallet'), emitted: 4 })),
  );
  app.get(
    '/leaderboard/page',
    paid((c) => ({
      offset: Number(c.req.query('offset') ?? 0),
      limit: Number(c.req.query('limit') ?? 100),
      next_offset: null,
      total: null,
      rows: [{ rank: 101 }],
    })),
  );

  return new Promise((resolve) => {
    const server = serve({ fetch: app.fetch, hostname: '127.0.0.1', port: 0 }, (info: AddressInfo) => {
      resolve({
        url: `http://127.0.0.1:${info.port}`,
        seen,
        close: () =>
          new Promise<void>((res) => {
            server.close(() => res());
            (server as unknown as { closeAllConnections?: () => void }).closeAllConnections?.();
          }),
      });
    });
  });
}

async function connect(url: string): Promise<Client> {
  const client = new Client({ name: 'mcp-metered-test', version: '0.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${url}/mcp`)));
  return client;
}

const sc = async (client: Client, name: string, args: Record<string, unknown> = {}) => {
  const r = (await client.callTool({ name, arguments: args })) as any;
  expect(r.isError ?? false).toBe(false);
  return r.structuredContent as any;
};

describe('metered MCP tools against fake paid routes', () => {
  let fake: Fake;
  let client: Client;

  beforeAll(async () => {
    fake = await startFake({ treasury: TREASURY, challengePayTo: TREASURY });
    client = await connect(fake.url);
  });
  afterAll(async () => {
    await client?.close();
    await fake?.close();
  });

  const METERED: [string, Record<string, unknown>, string][] = [
    ['rep_lookup_wallet', { wallet: RATED }, `GET /reputation/wallet/${RATED}`],
    ['rep_lookup_wallet', { wallet: RATED, snapshot: true }, `GET /reputation/wallet/${RATED}?snapshot=true`],
    ['rep_rater_profile', { wallet: RATED }, `GET /reputation/rater/${RATED}`],
    ['rep_lookup_agent', { network: 'base', agent_id: '7' }, 'GET /reputation/agent/base/7?max_ratings=200'],
    ['rep_history', { wallet: RATED }, `GET /reputation/wallet/${RATED}/history`],
    ['rep_facets', { wallet: RATED }, `GET /reputation/wallet/${RATED}`],
    ['rep_leaderboard', { offset: 100 }, 'GET /leaderboard/page?offset=100'],
    ['rep_leaderboard', { limit: 300 }, 'GET /leaderboard/page?limit=300'],
    ['rep_leaderboard', { type: 'defi' }, 'GET /leaderboard/page?type=defi'],
  ];

  it('without payment: payment_required with the 402 body and recipient_check OK_TO_PAY (pinned treasury)', async () => {
    for (const [name, args, route] of METERED) {
      const r = await sc(client, name, args);
      expect(r.status, name).toBe('payment_required');
      expect(r.http_status).toBe(402);
      expect(r.route).toBe(route);
      expect(r.challenge.x402Version).toBe(2);
      expect(r.challenge.resource).toBe(route);
      expect(r.recipient_check).toMatchObject({
        verdict: 'OK_TO_PAY',
        expected: TREASURY,
        found: [TREASURY],
      });
      expect(r.payment_rejected).toBeUndefined();
    }
    const snap = await sc(client, 'rep_lookup_wallet', { wallet: RATED, snapshot: true });
    expect(snap.challenge.pricing.tier).toBe('wallet-snapshot');
  });

  it('with payment: the argument travels as X-PAYMENT of the same resource; 200 → ok with the receipt', async () => {
    for (const [name, args, route] of METERED) {
      fake.seen.length = 0;
      const r = await sc(client, name, { ...args, payment: 'c2lnbmVk' });
      expect(r.status, name).toBe('ok');
      expect(r.route).toBe(route);
      expect(r.payment).toEqual({ receipt: '0xreceipt', reused: false });
      expect(fake.seen).toEqual([{ resource: route, payment: 'c2lnbmVk' }]);
    }
  });

  it('rep_lookup_agent: max_ratings default 200, 0 = all, truncation always declared, confidence and caveats on top', async () => {
    const def = await sc(client, 'rep_lookup_agent', { network: 'base', agent_id: '7', payment: 'c2lnbmVk' });
    expect(def.data.ratings).toHaveLength(200);
    expect(def.truncation).toEqual({
      max_ratings: 200,
      returned: 200,
      total: AGENT_RATINGS,
      truncated: true,
    });
    expect(def.tool_caveats.map((c: any) => c.code)).toEqual(['truncated']);
    expect(def.confidence).toBe('low');
    expect(def.caveats).toEqual([{ code: 'few-raters', text: 'pocos' }]);
    // the agent's registration file rides on top, as the route served it (and in data)
    expect(def.registration).toEqual({ state: 'valid', name: '<b>declared</b>', services: [] });
    expect(def.data.registration).toEqual(def.registration);
    const all = await sc(client, 'rep_lookup_agent', {
      network: 'base',
      agent_id: '7',
      max_ratings: 0,
      payment: 'c2lnbmVk',
    });
    expect(all.data.ratings).toHaveLength(AGENT_RATINGS);
    expect(all.truncation).toEqual({
      max_ratings: 0,
      returned: AGENT_RATINGS,
      total: AGENT_RATINGS,
      truncated: false,
    });
    expect(all.tool_caveats).toEqual([]);
    const five = await sc(client, 'rep_lookup_agent', {
      network: 'base',
      agent_id: '7',
      max_ratings: 5,
      payment: 'c2lnbmVk',
    });
    expect(five.route).toBe('GET /reputation/agent/base/7?max_ratings=5');
    expect(five.truncation.returned).toBe(5);
    // Not on that chain: the free search decides, no quote.
    fake.seen.length = 0;
    expect((await sc(client, 'rep_lookup_agent', { network: 'optimism', agent_id: '7' })).status).toBe(
      'not_found',
    );
    expect((await sc(client, 'rep_lookup_agent', { network: 'base', agent_id: '8' })).status).toBe(
      'not_found',
    );
    expect(fake.seen).toEqual([]);
  });

  it('tool-made caveats: undated reviews in history; facets extracted from the wallet profile', async () => {
    const h = await sc(client, 'rep_history', { wallet: RATED, bucket: 'week', payment: 'c2lnbmVk' });
    expect(h.route).toBe(`GET /reputation/wallet/${RATED}/history?bucket=week`);
    expect(h.tool_caveats.map((c: any) => c.code)).toEqual(['undated-reviews']);
    const f = await sc(client, 'rep_facets', { wallet: RATED, payment: 'c2lnbmVk' });
    expect(f.data.facets).toEqual({ trust: { score: 80 } });
    expect(f.scope).toBe('wallet');
    const lb = await sc(client, 'rep_leaderboard', { offset: 100, payment: 'c2lnbmVk' });
    expect(lb.pagination).toMatchObject({ source: 'metered', offset: 100, total: null, returned: 1 });
  });

  it('nothing_to_buy for a wallet with no identity anywhere (no quote, payment not sent)', async () => {
    fake.seen.length = 0;
    for (const name of ['rep_lookup_wallet', 'rep_history', 'rep_facets']) {
      const r = await sc(client, name, { wallet: NOBODY, payment: 'c2lnbmVk' });
      expect(r.status, name).toBe('nothing_to_buy');
      expect(r.preview.chains).toEqual([]);
    }
    expect(fake.seen).toEqual([]);
    // A rater needs no identity: the rater profile still goes to the paid route.
    expect((await sc(client, 'rep_rater_profile', { wallet: NOBODY })).status).toBe('payment_required');
  });

  it('rejected, in-flight, unavailable and failing payments map to payment_required (rejected or not), unreachable', async () => {
    const spent = await sc(client, 'rep_rater_profile', { wallet: RATED, payment: 'spent' });
    expect(spent.status).toBe('payment_required');
    expect(spent.payment_rejected).toBe(true);
    expect(spent.challenge.error).toBe('payment_reused');
    // In flight: not a rejection; the same payment is retried after Retry-After.
    const flying = await sc(client, 'rep_rater_profile', { wallet: RATED, payment: 'in-flight' });
    expect(flying.status).toBe('payment_required');
    expect(flying.payment_rejected).toBe(false);
    expect(flying.retry_after_seconds).toBe(5);
    expect(flying.message).toMatch(/SAME payment/);
    expect(flying.challenge.error).toBe('payment_in_flight');
    const down = await sc(client, 'rep_rater_profile', { wallet: RATED, payment: 'facilitator-down' });
    expect(down.status).toBe('unreachable');
    expect(down.http_status).toBe(503);
    expect(down.retry_after_seconds).toBe(5);
    expect(down.data.error).toBe('facilitator_unavailable');
    const boom = await sc(client, 'rep_rater_profile', { wallet: RATED, payment: 'boom' });
    expect(boom.status).toBe('unreachable');
  });

  it('rep_pricing probes every metered tier: live 402, amount from accepts[], recipient check', async () => {
    const r = await sc(client, 'rep_pricing');
    expect(r.status).toBe('ok');
    const metered = pricingCatalog({ treasuryAddress: TREASURY }).tiers.filter((t) => !t.free);
    expect(r.data.probes.map((p: any) => p.tier)).toEqual(metered.map((t) => t.id));
    for (const p of r.data.probes) {
      const t = metered.find((x) => x.id === p.tier)!;
      expect(p).toMatchObject({ live: true, http_status: 402, amount: t.amount, matches_catalog: true });
      expect(p.recipient_check.verdict).toBe('OK_TO_PAY');
    }
    expect(r.data.index).toMatchObject({ agents: 3, feedback_entries: 5 });
    expect(r.tool_caveats).toEqual([]);
  });
});

describe('recipient check against a foreign or missing treasury', () => {
  it('DO_NOT_PAY when the challenge payTo differs from the pinned treasury', async () => {
    const fake = await startFake({ treasury: TREASURY, challengePayTo: ATTACKER });
    const client = await connect(fake.url);
    try {
      const r = await sc(client, 'rep_lookup_wallet', { wallet: RATED });
      expect(r.status).toBe('payment_required');
      expect(r.recipient_check).toMatchObject({
        verdict: 'DO_NOT_PAY',
        expected: TREASURY,
        found: [ATTACKER],
      });
      const p = await sc(client, 'rep_pricing');
      for (const probe of p.data.probes) expect(probe.recipient_check.verdict).toBe('DO_NOT_PAY');
    } finally {
      await client.close();
      await fake.close();
    }
  });

  it('DO_NOT_PAY when no treasury is pinned', async () => {
    const fake = await startFake({ treasury: null, challengePayTo: TREASURY });
    const client = await connect(fake.url);
    try {
      const r = await sc(client, 'rep_lookup_agent', { network: 'base', agent_id: '7' });
      expect(r.recipient_check).toMatchObject({ verdict: 'DO_NOT_PAY', expected: null });
    } finally {
      await client.close();
      await fake.close();
    }
  });
});

describe('results.ts mapping', () => {
  const answer = (
    http_status: number | null,
    body: unknown = {},
    extra: Partial<RouteAnswer> = {},
  ): RouteAnswer => ({
    route: 'GET /x',
    http_status,
    body,
    headers: {},
    paid: false,
    ...extra,
  });
  it('maps HTTP statuses onto tool statuses', () => {
    expect(fromAnswer(answer(200, { a: 1 }), null)).toMatchObject({
      status: 'ok',
      data: { a: 1 },
      tool_caveats: [],
    });
    expect(fromAnswer(answer(404), null).status).toBe('not_found');
    expect(fromAnswer(answer(422, { detail: [] }), null)).toMatchObject({
      status: 'error',
      http_status: 422,
    });
    expect(fromAnswer(answer(410), null).status).toBe('error');
    expect(fromAnswer(answer(503), null).status).toBe('unreachable');
    expect(fromAnswer(answer(500), null).status).toBe('unreachable');
    expect(fromAnswer(answer(429), null).status).toBe('unreachable');
    expect(fromAnswer(answer(null, null, { failure: 'boom' }), null).status).toBe('unreachable');
    expect(fromAnswer(answer(200, 'x', { failure: 'the body is not JSON' }), null).status).toBe(
      'unreachable',
    );
  });
  it('recipient check: every payee must equal the pinned treasury (case-insensitive EVM)', () => {
    const ch = (payTo: string[], recipient?: string) => ({
      accepts: payTo.map((p) => ({ payTo: p })),
      recipient,
    });
    expect(recipientCheck(ch([TREASURY.toUpperCase().replace('0X', '0x')]), TREASURY).verdict).toBe(
      'OK_TO_PAY',
    );
    expect(recipientCheck(ch([TREASURY, ATTACKER]), TREASURY).verdict).toBe('DO_NOT_PAY');
    expect(recipientCheck(ch([TREASURY], ATTACKER), TREASURY).verdict).toBe('DO_NOT_PAY');
    expect(recipientCheck(ch([]), TREASURY).verdict).toBe('DO_NOT_PAY');
    expect(recipientCheck({ accepts: [{}] }, TREASURY).verdict).toBe('DO_NOT_PAY');
    expect(recipientCheck(ch([TREASURY]), null).verdict).toBe('DO_NOT_PAY');
    expect(recipientCheck(null, TREASURY).verdict).toBe('DO_NOT_PAY');
  });
});

describe('door CORS on the fake app', () => {
  it('the preflight of /mcp is 204 and the answers carry access-control-allow-origin', async () => {
    const fake = await startFake({ treasury: TREASURY, challengePayTo: TREASURY });
    try {
      const pre = await fetch(`${fake.url}/mcp`, { method: 'OPTIONS' });
      expect(pre.status).toBe(204);
      expect(pre.headers.get('access-control-allow-origin')).toBe('*');
      const get = await fetch(`${fake.url}/mcp`);
      expect(get.status).toBe(405);
      expect(get.headers.get('access-control-allow-origin')).toBe('*');
    } finally {
      await fake.close();
    }
  });
});
