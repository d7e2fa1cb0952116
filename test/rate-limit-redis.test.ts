/**
 * The shared (Redis) rate-limit store, as several API processes would use it: two apps, each with
 * its own Redis connection and the same key prefix, draw from one bucket per client and budget.
 * Needs a Redis server: TEST_REDIS_URL (CI sets it; .ci/run starts a local server). Without it the
 * Redis tests are skipped, so a bare `npm test` on a machine without Redis still passes.
 *
 * Also here: the read replica (DATABASE_READ_URL) on PostgreSQL, skipped on the embedded database.
 */
import { randomBytes } from 'node:crypto';
import { createServer } from 'node:net';
import pg from 'pg';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../src/config.js';
import { openDatabase, readerOf, type Database } from '../src/db/database.js';
import { createApp } from '../src/doors/http/app.js';
import { RedisRateLimitStore } from '../src/doors/http/rate-limit-redis.js';
import { InProcessRateLimitStore, type RateLimitStore } from '../src/doors/http/rate-limit.js';
import { ingestBatch } from '../src/indexer/ingest.js';
import { registerChains } from '../src/store/chain-state.js';
import { refreshAggregates } from '../src/store/aggregates-refresh.js';
import { countingDb } from './helpers/counting-db.js';
import { openTestDatabase, testDatabaseUrl, type TestDatabase } from './helpers/db.js';
import { openMigratedPglite } from './helpers/db-template.js';
import { ownedAndRated } from './helpers/indexer-fixtures.js';

const REDIS_URL = process.env.TEST_REDIS_URL || null;
const NOW = new Date('2026-11-01T00:00:00Z');
const W1 = '0x00000000000000000000000000000000000000a1';

/** A request as the node listener delivers it: with a socket address (the limiter's client key). */
function from(app: ReturnType<typeof createApp>, client: string, path: string, method = 'GET') {
  return app.request(path, { method }, { incoming: { socket: { remoteAddress: client } } });
}

async function closedPort(): Promise<number> {
  const srv = createServer();
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', () => r()));
  const port = (srv.address() as { port: number }).port;
  await new Promise<void>((r) => srv.close(() => r()));
  return port;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('config: DATABASE_READ_URL', () => {
  it('is a configuration error without DATABASE_URL', () => {
    expect(() => loadConfig({ DATABASE_READ_URL: 'postgres://replica/db' })).toThrow(ConfigError);
    expect(() => loadConfig({ DATABASE_READ_URL: 'postgres://replica/db' })).toThrow(
      /DATABASE_READ_URL needs DATABASE_URL/,
    );
    const c = loadConfig({
      DATABASE_URL: 'postgres://primary/db',
      DATABASE_READ_URL: 'postgres://replica/db',
    });
    expect(c.databaseReadUrl).toBe('postgres://replica/db');
  });

  it('the embedded database is its own reader', async () => {
    const db = await openMigratedPglite();
    try {
      expect(readerOf(db)).toBe(db);
    } finally {
      await db.close();
    }
  });
});

describe('InProcessRateLimitStore', () => {
  it('is the default store: burst then 429, per app', async () => {
    const store: RateLimitStore = new InProcessRateLimitStore();
    const b = { name: 'default', rate: 0.001, burst: 2 };
    expect([await store.take(b, 'c'), await store.take(b, 'c'), await store.take(b, 'c')]).toEqual([
      true,
      true,
      false,
    ]);
    expect(await store.take(b, 'other')).toBe(true);
    await store.close();
  });
});

describe.skipIf(!REDIS_URL)('Redis rate-limit store (TEST_REDIS_URL; skipped without a Redis server)', () => {
  const prefix = `repindex:test:${randomBytes(6).toString('hex')}:`;
  let t: TestDatabase;
  let admin: Redis;
  let storeA: RedisRateLimitStore;
  let storeB: RedisRateLimitStore;
  let appA: ReturnType<typeof createApp>;
  let appB: ReturnType<typeof createApp>;
  let dbA: Database & { calls: () => number };
  let dbB: Database & { calls: () => number };
  const config = loadConfig({
    RATE_LIMIT_RPS: '1',
    RATE_LIMIT_BURST: '4',
    BASE_URL: 'https://rep.example.org',
  });

  beforeAll(async () => {
    t = await openTestDatabase();
    await registerChains(t.db, config.chains);
    admin = new Redis(REDIS_URL as string, { lazyConnect: true });
    await admin.connect();
    // Two API processes: each its own connection, one key prefix.
    storeA = new RedisRateLimitStore({ url: REDIS_URL as string, keyPrefix: prefix });
    storeB = new RedisRateLimitStore({ url: REDIS_URL as string, keyPrefix: prefix });
    dbA = countingDb(t.db);
    dbB = countingDb(t.db);
    appA = createApp({ config, db: dbA, now: () => NOW, rateLimit: storeA });
    appB = createApp({ config, db: dbB, now: () => NOW, rateLimit: storeB });
  });

  afterAll(async () => {
    await storeA?.close();
    await storeB?.close();
    if (admin) {
      const keys = await admin.keys(`${prefix}*`);
      if (keys.length) await admin.del(...keys);
      await admin.quit();
    }
    await t?.close();
  });

  it('shares one burst across two app instances: the 429 comes when the SUM exceeds it, before any handler', async () => {
    const path = `/wallets/${W1}/chains`;
    const statuses = [];
    for (const app of [appA, appB, appA, appB]) statuses.push((await from(app, '10.0.0.1', path)).status);
    expect(statuses).toEqual([200, 200, 200, 200]);
    const before = [dbA.calls(), dbB.calls()];
    expect(before[0]).toBeGreaterThan(0);
    const [a, b] = [await from(appA, '10.0.0.1', path), await from(appB, '10.0.0.1', path)];
    expect([a.status, b.status]).toEqual([429, 429]);
    expect([dbA.calls(), dbB.calls()]).toEqual(before); // nothing queried
    expect(a.headers.get('ratelimit-policy')).toBe('1;w=1;burst=4');
    expect(a.headers.get('api-version')).toBe('2.0.0');
    expect(Number(a.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(await a.json()).toEqual({ detail: expect.any(String) });
    expect(storeA.fallbacks + storeB.fallbacks).toBe(0);
  });

  it('refills at `rate` tokens per second (Redis clock)', async () => {
    const client = '10.0.0.2';
    for (let i = 0; i < 4; i++)
      expect((await from(i % 2 ? appB : appA, client, '/pricing')).status).toBe(200);
    expect((await from(appA, client, '/pricing')).status).toBe(429);
    await sleep(1100);
    expect((await from(appB, client, '/pricing')).status).toBe(200);
    expect((await from(appA, client, '/pricing')).status).toBe(429);
  });

  it('keeps separate clients apart', async () => {
    for (let i = 0; i < 4; i++) expect((await from(appA, '10.0.0.3', '/pricing')).status).toBe(200);
    expect((await from(appB, '10.0.0.3', '/pricing')).status).toBe(429);
    expect((await from(appB, '10.0.0.4', '/pricing')).status).toBe(200);
    expect((await from(appA, '2001:db8::1', '/pricing')).status).toBe(200);
  });

  it('keeps the exists and names budgets separate from the default one (and shared across apps)', async () => {
    const client = '10.0.0.5';
    for (let i = 0; i < 4; i++) await from(appA, client, '/pricing');
    expect((await from(appA, client, '/pricing')).status).toBe(429);
    // exists: 10;w=1;burst=20, GET and HEAD, with and without /v1, across both apps.
    const exists = [];
    const started = Date.now();
    for (let i = 0; i < 24; i++) {
      const r = await from(
        i % 2 ? appB : appA,
        client,
        `${i % 3 ? '/v1' : ''}/wallets/${W1}/exists`,
        i % 4 ? 'GET' : 'HEAD',
      );
      expect(r.headers.get('ratelimit-policy')).toBe('10;w=1;burst=20');
      exists.push(r.status);
    }
    const ok = exists.filter((s) => s === 200).length;
    expect(ok).toBeGreaterThanOrEqual(20);
    // Plus what refilled (10 tokens/s) while the loop ran.
    expect(ok).toBeLessThanOrEqual(20 + Math.ceil(((Date.now() - started) / 1000) * 10));
    expect(exists.filter((s) => s === 429).length).toBe(24 - ok);
    // names: 1;w=1;burst=2, one budget for resolve and reverse.
    const names = [];
    for (const [app, p] of [
      [appA, '/names/resolve?name=a.eth'],
      [appB, '/names/reverse?address=x'],
      [appA, '/names/resolve'],
    ] as const) {
      names.push((await from(app, client, p)).status);
    }
    expect(names.slice(0, 2)).not.toContain(429);
    expect(names[2]).toBe(429);
  });

  it('takes tokens atomically: concurrent takes from two stores never exceed the burst', async () => {
    const budget = { name: 'atomic', rate: 0.001, burst: 10 };
    const results = await Promise.all(
      Array.from({ length: 60 }, (_v, i) => (i % 2 ? storeA : storeB).take(budget, 'race')),
    );
    expect(results.filter(Boolean).length).toBe(10);
  });

  it('gives every bucket key a TTL (idle buckets vanish once full again)', async () => {
    const keys = await admin.keys(`${prefix}*`);
    expect(keys.length).toBeGreaterThan(0);
    for (const k of keys) {
      const ttl = await admin.pttl(k);
      expect(ttl).toBeGreaterThan(0);
    }
    // default budget: burst 4 at 1/s → full again after 4 s; the key lives 4 s + 1 s slack.
    expect(await admin.pttl(`${prefix}default:10.0.0.1`)).toBeLessThanOrEqual(5000);
  });

  it('recovers when the script is flushed from the Redis script cache (EVALSHA falls back to EVAL)', async () => {
    await admin.script('FLUSH');
    expect(await storeA.take({ name: 'flush', rate: 1, burst: 1 }, 'c')).toBe(true);
    expect(await storeB.take({ name: 'flush', rate: 1, burst: 1 }, 'c')).toBe(false);
    expect(storeA.fallbacks + storeB.fallbacks).toBe(0);
  });

  it('fails open to in-process limiting when Redis is unreachable, and logs at most once per minute', async () => {
    const logs: string[] = [];
    const port = await closedPort();
    const down = new RedisRateLimitStore({
      url: `redis://:s3cret@127.0.0.1:${port}`,
      keyPrefix: prefix,
      connectTimeoutMs: 300,
      log: (m) => logs.push(m),
    });
    try {
      const app = createApp({ config, db: t.db, now: () => NOW, rateLimit: down });
      const started = Date.now();
      const statuses = [];
      for (let i = 0; i < 5; i++) statuses.push((await from(app, '10.0.0.9', '/pricing')).status);
      expect(Date.now() - started).toBeLessThan(5000);
      // Still answered; the in-process fallback still applies the burst of this process.
      expect(statuses).toEqual([200, 200, 200, 200, 429]);
      expect((await from(app, '10.0.0.9', `/wallets/${W1}/chains`)).status).toBe(429);
      expect((await from(app, '10.0.0.10', `/wallets/${W1}/chains`)).status).toBe(200);
      expect(down.fallbacks).toBeGreaterThanOrEqual(7);
      expect(logs).toHaveLength(1);
      expect(logs[0]).toMatch(/fail-open/);
      expect(logs[0]).not.toContain('s3cret'); // the URL (with its password) is not logged
    } finally {
      await down.close();
    }
  });
});

describe.skipIf(!testDatabaseUrl)(
  'DATABASE_READ_URL: free routes read from the replica pool (PostgreSQL only)',
  () => {
    let t: TestDatabase;
    let withReader: Database;
    const appName = `repindex_read_${randomBytes(4).toString('hex')}`;
    const config = loadConfig({ RATE_LIMIT_RPS: '1000', BASE_URL: 'https://rep.example.org' });

    beforeAll(async () => {
      t = await openTestDatabase();
      await registerChains(t.db, config.chains);
      for (const [network, owner, value] of [
        ['base', W1, '80'],
        ['celo', '0x00000000000000000000000000000000000000b2', '40'],
      ] as const) {
        const events = ownedAndRated(network, owner, '0x00000000000000000000000000000000000000cc', value);
        await ingestBatch(t.db, events, { network, lastScannedBlock: 5, headAtLastSync: 5, caughtUp: false });
      }
      await refreshAggregates(t.db);
      // The "replica" is the same server through a second pool, told apart by application_name.
      const readUrl = new URL(t.url as string);
      readUrl.searchParams.set('application_name', appName);
      withReader = await openDatabase({
        databaseUrl: t.url,
        dataDir: 'memory://',
        databaseReadUrl: readUrl.toString(),
      });
    });

    afterAll(async () => {
      await withReader?.close();
      await t?.close();
    });

    const readConnections = async (): Promise<number> => {
      const c = new pg.Client({ connectionString: testDatabaseUrl as string });
      await c.connect();
      try {
        const r = await c.query(
          'SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name = $1',
          [appName],
        );
        return (r.rows[0] as { n: number }).n;
      } finally {
        await c.end();
      }
    };

    it('answers the free routes identically, and the read pool is the one queried', async () => {
      expect(readerOf(withReader)).not.toBe(withReader);
      expect(await readConnections()).toBe(0); // lazy: no replica connection before a read
      const primaryOnly = createApp({ config, db: t.db, now: () => NOW });
      const replicated = createApp({ config, db: withReader, now: () => NOW });
      const paths = [
        '/chains',
        '/chains/base?days=7',
        '/feed',
        '/leaderboard',
        '/stats/facets',
        '/stats/types',
        '/stats/issuers',
        '/categories',
        `/search/${W1}`,
        `/wallets/${W1}/chains`,
        `/wallets/${W1}/exists`,
        `/badge/${W1}.svg`,
      ];
      for (const p of paths) {
        const [a, b] = await Promise.all([primaryOnly.request(p), replicated.request(p)]);
        expect(b.status, p).toBe(a.status);
        expect(await b.text(), p).toBe(await a.text());
      }
      expect(await readConnections()).toBeGreaterThan(0);
      const [row] = await readerOf(withReader).query<{ app: string }>('SELECT current_setting($1) AS app', [
        'application_name',
      ]);
      expect(row?.app).toBe(appName);
      const [primary] = await withReader.query<{ app: string }>('SELECT current_setting($1) AS app', [
        'application_name',
      ]);
      expect(primary?.app).not.toBe(appName);
    });
  },
);
