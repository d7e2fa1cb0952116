/**
 * Static and policy routes: /pricing (and the pricing table module), /manifesto and its editions,
 * /workflows.json, /.well-known/oauth-protected-resource (and the two OAuth documents that do not
 * exist), and the documented refusals /names/* and /(auth|me)(/.*)?. All of them are served by an
 * app whose database throws on every call: none of them may touch the index.
 */
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config.js';
import type { Database } from '../src/db/database.js';
import { createApp } from '../src/doors/http/app.js';
import { PRINCIPLE_IDS } from '../src/manifesto.js';
import {
  matchTier,
  PAYMENT_NETWORKS,
  PRICE_TIERS,
  PRICING_VERSION,
  tierById,
  usdToBaseUnits,
} from '../src/payments/pricing.js';

const BASE = 'https://rep.example.org';
const TREASURY = '0x1111111111111111111111111111111111111111';

/** A database that is down: every call throws (and is counted). */
function downDatabase(): Database & { calls: number } {
  const state = { calls: 0 };
  const fail = async () => {
    state.calls += 1;
    throw new Error('database is down');
  };
  return {
    kind: 'postgres',
    query: fail,
    exec: fail,
    transaction: fail,
    tryWithLock: fail,
    close: async () => undefined,
    get calls() {
      return state.calls;
    },
  } as unknown as Database & { calls: number };
}

function appWith(env: Record<string, string> = {}) {
  const db = downDatabase();
  const config = loadConfig({ BASE_URL: BASE, ...env });
  const app = createApp({ config, db, now: () => new Date('2026-11-20T00:00:00Z') });
  return { app, db, config };
}

async function get(app: ReturnType<typeof createApp>, path: string, init?: RequestInit) {
  const res = await app.request(path, init);
  const text = await res.text();
  let body: unknown = null;
  try {
    body = text ? JSON.parse(text) : null;
  } catch {
    body = text;
  }
  return { res, text, body: body as Record<string, any> }; // eslint-disable-line @typescript-eslint/no-explicit-any
}

// ------------------------------------------------------------------ pricing

describe('pricing table (src/payments/pricing.ts)', () => {
  it('prices the metered routes of the contract, as strings, with USDC base units', () => {
    const paid = Object.fromEntries(
      PRICE_TIERS.filter((t) => !t.free).map((t) => [t.id, [t.price_usd, t.amount]]),
    );
    expect(paid).toEqual({
      'wallet-lookup': ['0.01', '10000'],
      'wallet-snapshot': ['0.05', '50000'],
      'wallet-history': ['0.03', '30000'],
      'agent-detail': ['0.02', '20000'],
      'rater-profile': ['0.01', '10000'],
      'leaderboard-deep': ['0.01', '10000'],
    });
    for (const t of PRICE_TIERS) {
      expect(typeof t.price_usd).toBe('string');
      expect(t.amount).toBe(usdToBaseUnits(t.price_usd));
      expect(t.why.length).toBeGreaterThan(10);
      expect(() => new RegExp(t.path)).not.toThrow();
      expect(t.path.startsWith('^') && t.path.endsWith('$')).toBe(true);
      if (t.free) expect(t).toMatchObject({ price_usd: '0', amount: '0', free_preview: null });
    }
    expect(new Set(PRICE_TIERS.map((t) => t.id)).size).toBe(PRICE_TIERS.length);
    // Every metered tier names its free preview, except the rater route (on purpose).
    for (const t of PRICE_TIERS.filter((x) => !x.free)) {
      if (t.id === 'rater-profile') expect(t.free_preview).toBeNull();
      else expect(t.free_preview?.endpoint).toMatch(/^\//);
    }
  });

  it('converts USD strings exactly and refuses what is not a price', () => {
    expect(usdToBaseUnits('0.01')).toBe('10000');
    expect(usdToBaseUnits('1')).toBe('1000000');
    expect(usdToBaseUnits('0.000001')).toBe('1');
    expect(usdToBaseUnits('0')).toBe('0');
    expect(() => usdToBaseUnits('0.0000001')).toThrow();
    expect(() => usdToBaseUnits('-1')).toThrow();
    expect(() => usdToBaseUnits('1e-2')).toThrow();
  });

  it('matches requests to tiers the way the paywall will (query, /v1, HEAD, unknown)', () => {
    const w = '0x000000000000000000000000000000000000dEaD';
    expect(matchTier('GET', `/reputation/wallet/${w}`)?.id).toBe('wallet-lookup');
    expect(matchTier('GET', `/reputation/wallet/${w}`, new URLSearchParams('snapshot=true'))?.id).toBe(
      'wallet-snapshot',
    );
    expect(matchTier('GET', `/reputation/wallet/${w}`, { snapshot: 'false' })?.id).toBe('wallet-lookup');
    expect(matchTier('GET', `/v1/reputation/wallet/${w}/history`)?.id).toBe('wallet-history');
    expect(matchTier('GET', '/reputation/agent/base/7')?.id).toBe('agent-detail');
    expect(matchTier('GET', `/reputation/rater/${w}`)?.id).toBe('rater-profile');
    expect(matchTier('GET', '/leaderboard/page')?.id).toBe('leaderboard-deep');
    expect(matchTier('GET', '/leaderboard')?.id).toBe('leaderboard-shop-window');
    expect(matchTier('HEAD', `/wallets/${w}/exists`)?.id).toBe('wallet-exists');
    expect(matchTier('POST', '/mcp')?.id).toBe('mcp');
    expect(matchTier('DELETE', '/me/agents/x')?.id).toBe('accounts');
    expect(matchTier('GET', '/nope')).toBeNull();
    expect(matchTier('GET', '/reputation/wallet/a/b/c')).toBeNull();
    expect(tierById('wallet-lookup').price_usd).toBe('0.01');
    expect(() => tierById('nope')).toThrow();
  });

  it('offers the six payment networks in order, with their chain ids and USDC contracts', () => {
    expect(PAYMENT_NETWORKS.map((n) => [n.network, n.chain_id, n.caip2])).toEqual([
      ['base', 8453, 'eip155:8453'],
      ['avalanche', 43114, 'eip155:43114'],
      ['arbitrum', 42161, 'eip155:42161'],
      ['optimism', 10, 'eip155:10'],
      ['polygon', 137, 'eip155:137'],
      ['celo', 42220, 'eip155:42220'],
    ]);
    expect(PAYMENT_NETWORKS.find((n) => n.network === 'base')?.asset).toBe(
      '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913',
    );
    expect(PAYMENT_NETWORKS.find((n) => n.network === 'celo')?.asset).toBe(
      '0xcebA9300f2b948710d2653dD7B07f33A8B32118C',
    );
    for (const n of PAYMENT_NETWORKS) {
      expect(n.asset).toMatch(/^0x[0-9a-fA-F]{40}$/);
      expect(n).toMatchObject({ decimals: 6, asset_version: '2' });
    }
  });
});

describe('GET /pricing', () => {
  it('carries an ETag of its body; If-None-Match naming it answers 304 with no body; another config, another tag', async () => {
    const { app, db } = appWith({ TREASURY_ADDRESS: TREASURY });
    const first = await get(app, '/pricing');
    const etag = first.res.headers.get('etag');
    expect(etag).toMatch(/^"[A-Za-z0-9_-]{22}"$/);
    expect(first.res.headers.get('content-type')).toMatch(/^application\/json/);
    const again = await app.request('/pricing', { headers: { 'If-None-Match': etag! } });
    expect(again.status).toBe(304);
    expect(await again.text()).toBe('');
    expect(again.headers.get('etag')).toBe(etag);
    const stale = await get(app, '/pricing', { headers: { 'If-None-Match': '"not-this-one"' } });
    expect(stale.res.status).toBe(200);
    expect(stale.text).toBe(first.text);
    const other = await get(
      appWith({ TREASURY_ADDRESS: '0x2222222222222222222222222222222222222222' }).app,
      '/pricing',
    );
    expect(other.res.headers.get('etag')).not.toBe(etag);
    expect(db.calls).toBe(0);
  });

  it('answers from the table with the index down, with X-Pricing-Version and the treasury from config', async () => {
    const { app, db } = appWith({ TREASURY_ADDRESS: TREASURY });
    const { res, body } = await get(app, '/pricing');
    expect(res.status).toBe(200);
    expect(res.headers.get('x-pricing-version')).toBe(PRICING_VERSION);
    expect(res.headers.get('api-version')).toBe('2.0.0');
    expect(res.headers.get('ratelimit-policy')).toBe('50;w=1;burst=40');
    expect(body).toMatchObject({
      pricing_version: 'cost-tiered@5',
      currency: 'USDC',
      networks: ['base', 'avalanche', 'arbitrum', 'optimism', 'polygon', 'celo'],
      treasury: TREASURY,
      max_timeout_seconds: 120,
    });
    expect(body.accepted_networks).toEqual(PAYMENT_NETWORKS.map((n) => ({ ...n })));
    expect(body.tiers).toEqual(JSON.parse(JSON.stringify(PRICE_TIERS)));
    expect(body.free_tier).toMatch(/free/i);
    expect(db.calls).toBe(0);
    // Same under /v1.
    expect((await get(app, '/v1/pricing')).text).toBe(JSON.stringify(body));
  });

  it('publishes a null treasury while TREASURY_ADDRESS is unset', async () => {
    const { app } = appWith();
    const { body } = await get(app, '/pricing');
    expect(body.treasury).toBeNull();
  });
});

// ------------------------------------------------------------------ manifesto

/** Every string in a JSON value, with its key. */
function strings(v: unknown, key = ''): [string, string][] {
  if (typeof v === 'string') return [[key, v]];
  if (Array.isArray(v)) return v.flatMap((x) => strings(x, key));
  if (v && typeof v === 'object') return Object.entries(v).flatMap(([k, x]) => strings(x, k));
  return [];
}

/** Digit-bearing tokens that are names, versions, codes or addresses, never index figures. */
const NOT_A_FIGURE = [
  /https?:\/\/\S+/g,
  /ERC-8004/g,
  /EIP-(3009|712)/g,
  /x402/g,
  /base58/g,
  /eip155:\d+/g,
  /0x[0-9a-fA-F]{40}/g,
  /\b[a-z-]+@\d+\b/g, // policy / document versions
  /\bHTTP \d{3}\b/g,
  /\b(200|402|404|410|422|429|503)\b/g,
  /src\/\S+/g, // file paths in enforced_by
];

describe('GET /manifesto', () => {
  it('serves every field, exactly the eight principle ids, and never touches the database', async () => {
    const { app, db } = appWith();
    const { res, body } = await get(app, '/manifesto');
    expect(res.status).toBe(200);
    expect(Object.keys(body).sort()).toEqual(
      [
        'manifesto_version',
        'title',
        'subtitle',
        'catchphrase',
        'editions',
        'note',
        'origin',
        'principles',
        'we_are_not',
        'verifications',
        'siblings',
      ].sort(),
    );
    expect(body.principles.map((p: { id: string }) => p.id)).toEqual([
      'score-with-composition',
      'no-data-is-not-zero',
      'self-assessment-published-never-averaged',
      'not-an-oracle',
      'not-a-bridge',
      'not-a-people-search-engine',
      'payment-is-the-authentication',
      'every-claim-carries-its-transaction',
    ]);
    expect(PRINCIPLE_IDS).toHaveLength(8);
    for (const p of body.principles) {
      expect(Object.keys(p).sort()).toEqual(['detail', 'enforced_by', 'id', 'inherited_from', 'statement']);
      expect(p.statement.length).toBeGreaterThan(5);
      expect(p.detail.length).toBeGreaterThan(20);
      expect(p.enforced_by.length).toBeGreaterThan(5);
      expect(p.inherited_from === null || typeof p.inherited_from === 'string').toBe(true);
    }
    expect(body.editions).toEqual({
      en: `${BASE}/manifesto.md`,
      es: `${BASE}/manifesto.es.md`,
      html: `${BASE}/manifesto.html`,
    });
    expect(body.we_are_not.length).toBeGreaterThanOrEqual(5);
    expect(body.verifications.length).toBeGreaterThanOrEqual(5);
    for (const v of body.verifications) {
      expect(Object.keys(v).sort()).toEqual(['claim', 'command', 'free', 'read', 'route']);
      expect(v.command.startsWith('curl ')).toBe(true);
      expect(v.command).toContain(BASE);
      expect(v.route).toMatch(/^(GET|HEAD|POST) \//);
      expect(typeof v.free).toBe('boolean');
    }
    expect(body.verifications.some((v: { free: boolean }) => !v.free)).toBe(true);
    for (const url of Object.values(body.siblings)) expect(String(url).startsWith(BASE)).toBe(true);
    expect(db.calls).toBe(0);
  });

  it('copies no index figure: no digit outside names, versions, status codes, addresses and commands', async () => {
    const { app } = appWith();
    const { body } = await get(app, '/manifesto');
    const offenders: string[] = [];
    for (const [key, s] of strings(body)) {
      if (key === 'command' || key === 'route') continue;
      let rest = s;
      for (const re of NOT_A_FIGURE) rest = rest.replace(re, ' ');
      if (/\d/.test(rest)) offenders.push(`${key}: ${s}`);
    }
    expect(offenders).toEqual([]);
    expect(body.origin.figures).toBeNull();
  });

  it('serves the English, Spanish and HTML editions, escaped, from the same data', async () => {
    const { app } = appWith();
    const en = await get(app, '/manifesto.md');
    expect(en.res.status).toBe(200);
    expect(en.res.headers.get('content-type')).toMatch(/^text\/markdown/);
    const es = await get(app, '/manifesto.es.md');
    expect(es.res.headers.get('content-type')).toMatch(/^text\/markdown/);
    const html = await get(app, '/manifesto.html');
    expect(html.res.headers.get('content-type')).toMatch(/^text\/html/);
    for (const id of PRINCIPLE_IDS) {
      expect(en.text).toContain(id);
      expect(es.text).toContain(id);
      expect(html.text).toContain(`id="${id}"`);
    }
    expect(es.text).toContain('Sin datos no es cero');
    expect(html.text).not.toMatch(/<script/i);
    expect((await get(app, '/v1/manifesto.es.md')).text).toBe(es.text);
  });
});

// ------------------------------------------------------------------ workflows

describe('GET /workflows.json', () => {
  it('lists agent workflows whose steps point at real routes with prices from the pricing table', async () => {
    const { app, db } = appWith();
    const { res, body } = await get(app, '/workflows.json');
    expect(res.status).toBe(200);
    expect(body).toMatchObject({
      workflows_version: 'workflows@1',
      base_url: BASE,
      pricing_version: PRICING_VERSION,
    });
    const ids = body.workflows.map((w: { id: string }) => w.id);
    expect(ids).toEqual(
      expect.arrayContaining(['vet-wallet', 'resolve-identifier', 'sweep-wallets', 'pay-per-call']),
    );
    const doc = (await get(app, '/openapi.json')).body;
    for (const w of body.workflows) {
      expect(w.goal.length).toBeGreaterThan(10);
      w.steps.forEach((s: Record<string, unknown>, i: number) => {
        expect(s.step).toBe(i + 1);
        const route = String(s.route);
        const tier = matchTier(String(s.method), route.split('?')[0]!.replace(/\{[^}]+\}/g, 'x'));
        expect(tier, route).not.toBeNull();
        expect(s).toMatchObject({ tier: tier!.id, price_usd: tier!.price_usd, free: tier!.free });
        // Free steps point at routes this build serves and documents.
        if (tier!.free) expect(Object.keys(doc.paths), route).toContain(route.split('?')[0]);
      });
    }
    // The vet-wallet workflow goes free → free → paid.
    expect(body.workflows[0].steps.map((s: { free: boolean }) => s.free)).toEqual([true, true, false]);
    expect(db.calls).toBe(0);
  });
});

// ------------------------------------------------------------------ well-known

describe('/.well-known documents', () => {
  it('publishes protected-resource metadata with no authorization server and the x402 pointer', async () => {
    const { app, db } = appWith();
    const { res, body } = await get(app, '/.well-known/oauth-protected-resource');
    expect(res.status).toBe(200);
    expect(body).toEqual({
      resource: BASE,
      resource_name: expect.any(String),
      resource_documentation: `${BASE}/docs`,
      authorization_servers: [],
      scopes_supported: [],
      bearer_methods_supported: [],
      x402: { protocol: 'x402+HTTP', pricing: `${BASE}/pricing`, documentation: `${BASE}/docs` },
    });
    expect(db.calls).toBe(0);
  });

  it.each(['/.well-known/openid-configuration', '/.well-known/oauth-authorization-server'])(
    'answers 404 JSON at %s (and under /v1)',
    async (path) => {
      const { app } = appWith();
      for (const p of [path, `/v1${path}`]) {
        const { res, body } = await get(app, p);
        expect(res.status).toBe(404);
        expect(res.headers.get('content-type')).toMatch(/^application\/json/);
        expect(typeof body.detail).toBe('string');
        expect(res.headers.get('api-version')).toBe('2.0.0');
      }
    },
  );
});

// ------------------------------------------------------------------ refusals

describe('documented refusals', () => {
  const methods = ['GET', 'POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS'];

  it.each([
    '/names/resolve?name=example.eth',
    '/names/reverse?address=0x1111111111111111111111111111111111111111',
    '/names/resolve',
  ])('refuses %s with 410 not_offered for every method, never data about anybody', async (path) => {
    const { app, db } = appWith();
    for (const p of [path, `/v1${path}`]) {
      for (const method of methods) {
        const { res, body } = await get(app, p, { method });
        expect(res.status, `${method} ${p}`).toBe(410);
        expect(body).toEqual({
          detail: {
            error: 'not_offered',
            message: expect.any(String),
            principle: 'not-a-people-search-engine',
            manifesto: `${BASE}/manifesto`,
          },
        });
        expect(res.headers.get('ratelimit-policy')).toBe('1;w=1;burst=2');
        expect(res.headers.get('api-version')).toBe('2.0.0');
      }
      const head = await app.request(p, { method: 'HEAD' });
      expect(head.status).toBe(410);
      expect(await head.text()).toBe('');
    }
    expect(db.calls).toBe(0);
  });

  it.each([
    '/auth',
    '/auth/nonce',
    '/auth/verify',
    '/auth/session/rotate',
    '/me',
    '/me/agents',
    '/me/agents/base/1/profile',
  ])('refuses %s with 410 no_accounts for every method', async (path) => {
    const { app, db } = appWith();
    for (const p of [path, `/v1${path}`]) {
      for (const method of methods) {
        const { res, body } = await get(app, p, { method });
        expect(res.status, `${method} ${p}`).toBe(410);
        expect(body.detail).toMatchObject({
          error: 'no_accounts',
          principle: 'payment-is-the-authentication',
        });
        expect(res.headers.get('ratelimit-policy')).toBe('50;w=1;burst=40');
      }
    }
    expect(db.calls).toBe(0);
  });

  it('does not catch look-alike paths (they are plain 404s)', async () => {
    const { app } = appWith();
    for (const p of ['/authors', '/names', '/names/other', '/meh']) {
      const { res } = await get(app, p);
      expect(res.status, p).toBe(404);
    }
  });
});
