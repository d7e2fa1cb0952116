/**
 * Cross-cutting HTTP contract: every documented route answers identically under /v1; every
 * response (200, 404, 410, 422, 429) carries `Api-Version: 2.0.0` and `RateLimit-Policy` with the
 * budget of its route; unknown routes are 404 JSON; and the rate limiter answers 429 before any
 * work, over a real socket, with the stricter budgets of /wallets/{wallet}/exists and /names/*.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig, type Config } from '../src/config.js';
import type { Database } from '../src/db/database.js';
import { createApp } from '../src/doors/http/app.js';
import { InProcessRateLimitStore, TokenBucketLimiter } from '../src/doors/http/rate-limit.js';
import type { App } from '../src/doors/http/context.js';
import { registerChains } from '../src/store/chain-state.js';
import { refreshAggregates } from '../src/store/aggregates-refresh.js';
import { startHttpServer, type RunningServer } from '../src/server.js';
import { countingDb } from './helpers/counting-db.js';
import { openTestDatabase, type TestDatabase } from './helpers/db.js';

const NOW = new Date('2026-11-20T00:00:00Z');
const W1 = '0x00000000000000000000000000000000000000a1';
const RATER = (n: number) => `0x${(0xb00 + n).toString(16).padStart(40, '0')}`;

let t: TestDatabase;
let config: Config;
let app: App;

beforeAll(async () => {
  t = await openTestDatabase();
  config = loadConfig({ BASE_URL: 'https://rep.example.org' });
  await registerChains(t.db, config.chains);
  await t.db.query(
    `INSERT INTO agents (network, agent_id, minter, owner, registered_block) VALUES ('base', '1', $1, $1, 1), ('celo', '1', $1, $1, 1)`,
    [W1],
  );
  for (let i = 0; i < 4; i++) {
    await t.db.query(
      `INSERT INTO ratings (network, tx_hash, log_index, agent_id, rater, feedback_index, value_raw, value_decimals, value, tag1,
                            block_number, block_time)
       VALUES ('base', $1, 0, '1', $2, 1, $3, 0, $4, 'trust', $5, '2026-11-01T00:00:00Z')`,
      [`0x${(i + 1).toString(16).padStart(64, '0')}`, RATER(i), 60 + i * 10, 60 + i * 10, 10 + i],
    );
  }
  await refreshAggregates(t.db, () => NOW);
  app = createApp({ config, db: t.db, now: () => NOW });
});
afterAll(() => t.close());

const SAMPLE: Record<string, string> = {
  wallet: W1,
  q: '1',
  network: 'base',
  agent_id: '1',
  file: 'swagger-init.js',
};

function expectedPolicy(path: string): string {
  if (/^(\/v1)?\/wallets\/[^/]+\/exists$/.test(path)) return '10;w=1;burst=20';
  if (/^(\/v1)?\/names\/(resolve|reverse)$/.test(path)) return '1;w=1;burst=2';
  return '50;w=1;burst=40';
}

async function documentedGets(): Promise<string[]> {
  const doc = await (await app.request('/openapi.json')).json();
  const out: string[] = [];
  for (const [p, item] of Object.entries<Record<string, unknown>>(doc.paths)) {
    if (!item.get) continue;
    out.push(p.replace(/\{([^}]+)\}/g, (_m, name: string) => SAMPLE[name] ?? 'x'));
  }
  return out;
}

describe('every documented route under /v1', () => {
  it('answers the same status and body as the plain route, with the version and policy headers', async () => {
    const paths = await documentedGets();
    expect(paths.length).toBeGreaterThan(20);
    for (const p of paths) {
      const [a, b] = [await app.request(p), await app.request(`/v1${p}`)];
      expect(b.status, p).toBe(a.status);
      expect(b.headers.get('content-type'), p).toBe(a.headers.get('content-type'));
      const [ta, tb] = [Buffer.from(await a.arrayBuffer()), Buffer.from(await b.arrayBuffer())];
      // A 402 challenge names the resource as requested; everything else is byte-identical.
      if (a.status !== 402) expect(tb.equals(ta), p).toBe(true);
      for (const r of [a, b]) {
        expect(r.headers.get('api-version'), p).toBe('2.0.0');
        expect(r.headers.get('ratelimit-policy'), p).toBe(expectedPolicy(p));
      }
    }
  });
});

describe('headers on every kind of answer', () => {
  it.each([
    ['200', '/health', 200],
    ['200 (static)', '/pricing', 200],
    ['404 unknown route', '/no/such/route', 404],
    ['404 unknown route under /v1', '/v1/no/such/route', 404],
    ['404 openid', '/.well-known/openid-configuration', 404],
    ['410 names', '/names/resolve?name=example.eth', 410],
    ['410 accounts', '/me', 410],
    ['422 not_an_address', '/wallets/nope/chains', 422],
    ['422 unrecognized_query', '/search/nope', 422],
    ['422 exists', '/wallets/nope/exists', 422],
  ])('%s carries Api-Version and RateLimit-Policy', async (_label, path, status) => {
    const res = await app.request(path);
    expect(res.status).toBe(status);
    expect(res.headers.get('api-version')).toBe('2.0.0');
    expect(res.headers.get('ratelimit-policy')).toBe(expectedPolicy(path.split('?')[0]!));
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
  });

  it('answers an unknown route with a 404 JSON detail', async () => {
    for (const p of [
      '/no/such/route',
      '/v1/no/such/route',
      '/wallets',
      '/wallets/x',
      '/search-x',
      '/badge',
      '/v2/health',
    ]) {
      const res = await app.request(p);
      expect(res.status, p).toBe(404);
      expect(await res.json(), p).toEqual({ detail: expect.any(String) });
    }
  });
});

// ------------------------------------------------------------------ 429 over a real socket

describe('rate limits (real listener: the limiter keys on the socket address)', () => {
  let server: RunningServer;
  let db: Database & { calls: () => number };
  beforeAll(async () => {
    db = countingDb(t.db);
    const tiny = loadConfig({
      RATE_LIMIT_RPS: '1',
      RATE_LIMIT_BURST: '2',
      BASE_URL: 'https://rep.example.org',
    });
    // The buckets' clock stands still: no token comes back while a burst is in flight, however
    // slow a loaded machine makes it (a real clock refilled the exists budget mid-burst there).
    const frozen = Date.now();
    server = await startHttpServer(
      {
        config: tiny,
        db,
        now: () => NOW,
        rateLimit: new InProcessRateLimitStore(new TokenBucketLimiter(() => frozen)),
      },
      { host: '127.0.0.1', port: 0 },
    );
  });
  afterAll(() => server.close());

  it('answers 429 once the default burst is spent, before any work, with the headers and Retry-After', async () => {
    const path = `/wallets/${W1}/chains`;
    const first = await fetch(`${server.url}${path}`);
    const second = await fetch(`${server.url}/v1${path}`);
    expect([first.status, second.status]).toEqual([200, 200]);
    expect(first.headers.get('ratelimit-policy')).toBe('1;w=1;burst=2');
    await Promise.all([first.text(), second.text()]);
    const before = db.calls();
    const third = await fetch(`${server.url}${path}`);
    expect(third.status).toBe(429);
    expect(db.calls()).toBe(before); // nothing queried
    expect(third.headers.get('api-version')).toBe('2.0.0');
    expect(third.headers.get('ratelimit-policy')).toBe('1;w=1;burst=2');
    expect(Number(third.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(third.headers.get('content-type')).toMatch(/^application\/json/);
    expect(await third.json()).toEqual({ detail: expect.any(String) });
    // Static routes share the default budget: still throttled, still with headers.
    const pricing = await fetch(`${server.url}/pricing`);
    expect(pricing.status).toBe(429);
    expect(pricing.headers.get('api-version')).toBe('2.0.0');
  });

  it('gives /wallets/{wallet}/exists its own budget (10;w=1;burst=20), GET and HEAD, with and without /v1', async () => {
    const paths = Array.from({ length: 40 }, (_v, i) => `${i % 2 ? '/v1' : ''}/wallets/${W1}/exists`);
    const answers = await Promise.all(
      paths.map(async (p, i) => {
        const r = await fetch(`${server.url}${p}`, { method: i % 3 === 0 ? 'HEAD' : 'GET' });
        await r.arrayBuffer();
        return r;
      }),
    );
    const ok = answers.filter((r) => r.status === 200).length;
    const limited = answers.filter((r) => r.status === 429).length;
    // The default budget is already spent (previous test), yet the exists budget starts full:
    // its burst of 20, and not one more (the clock stands still).
    expect(ok).toBe(20);
    expect(limited).toBe(20);
    for (const r of answers) {
      expect(r.headers.get('ratelimit-policy')).toBe('10;w=1;burst=20');
      expect(r.headers.get('api-version')).toBe('2.0.0');
    }
  });

  it('gives the two name routes one shared budget (1;w=1;burst=2)', async () => {
    const answers: number[] = [];
    for (const p of [
      '/names/resolve?name=a.eth',
      '/names/reverse?address=x',
      '/v1/names/resolve',
      '/names/reverse',
    ]) {
      const r = await fetch(`${server.url}${p}`);
      expect(r.headers.get('ratelimit-policy')).toBe('1;w=1;burst=2');
      await r.arrayBuffer();
      answers.push(r.status);
    }
    expect(answers.slice(0, 2)).toEqual([410, 410]);
    expect(answers.slice(2)).toContain(429);
  });

  it('does not count in-process calls (the MCP and A2A doors count at their own door)', async () => {
    const inProcess = createApp({
      config: loadConfig({ RATE_LIMIT_RPS: '1', RATE_LIMIT_BURST: '1' }),
      db: t.db,
      now: () => NOW,
    });
    for (let i = 0; i < 5; i++) expect((await inProcess.request('/pricing')).status).toBe(200);
  });
});
