/**
 * Free answers served from precomputed bytes (src/doors/http/free-cache.ts): the same bytes and
 * ETag until the index changes, 304 on If-None-Match, new bytes after a refresh; static answers
 * built once. Runs on PGlite, or on PostgreSQL with TEST_DATABASE_URL / DATABASE_URL.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config.js';
import { createApp } from '../src/doors/http/app.js';
import { FreeAnswerCache, etagMatches } from '../src/doors/http/free-cache.js';
import { refreshAggregates } from '../src/store/aggregates-refresh.js';
import { openTestDatabase, type TestDatabase } from './helpers/db.js';

const OWNER = '0x00000000000000000000000000000000000000aa';
const NOW = new Date('2026-10-02T00:00:00Z');

describe('precomputed free answers', () => {
  let t: TestDatabase;
  let cache: FreeAnswerCache;
  let app: ReturnType<typeof createApp>;
  let block = 10;

  async function rate(rater: string, value: number): Promise<void> {
    block += 1;
    await t.db.query(
      `INSERT INTO ratings (network, tx_hash, log_index, agent_id, rater, feedback_index, value_raw, value_decimals, value,
                            tag1, feedback_uri, block_number, block_time)
       VALUES ('base', $1, 0, '1', $2, 1, $3, 0, $3, 'trust', 'https://x.example/f', $4, '2026-10-01T00:00:00Z')`,
      [`0x${block.toString(16).padStart(64, '0')}`, rater, value, block],
    );
  }

  beforeAll(async () => {
    t = await openTestDatabase();
    await t.db.query(`INSERT INTO chains (network, kind, chain_id) VALUES ('base', 'evm', 8453)`);
    await t.db.query(`INSERT INTO agents (network, agent_id, owner) VALUES ('base', '1', $1)`, [OWNER]);
    await rate('0x00000000000000000000000000000000000000b1', 80);
    await refreshAggregates(t.db);
    // a long polling period: only this process's own writes make it look again
    cache = new FreeAnswerCache(t.db, { pollMs: 3_600_000 }).useClock(() => NOW);
    app = createApp({ config: loadConfig({}), db: t.db, now: () => NOW, freeCache: cache });
  });
  afterAll(() => t.close());

  it('the same bytes and ETag until the index changes; 304 on If-None-Match', async () => {
    const first = await app.request('/leaderboard');
    expect(first.status).toBe(200);
    const etag = first.headers.get('etag');
    expect(etag).toMatch(/^"[A-Za-z0-9_-]+"$/);
    const body = await first.text();
    expect(JSON.parse(body).rows.map((r: { wallet: string }) => r.wallet)).toEqual([OWNER]);
    const hits = cache.hits;
    const again = await app.request('/v1/leaderboard');
    expect(again.status).toBe(200);
    expect(await again.text()).toBe(body);
    expect(again.headers.get('etag')).toBe(etag);
    expect(again.headers.get('content-type')).toMatch(/application\/json/);
    expect(again.headers.get('api-version')).toBe(first.headers.get('api-version'));
    expect(cache.hits).toBe(hits + 1);

    const cond = await app.request('/leaderboard', { headers: { 'If-None-Match': `"nope", ${etag}` } });
    expect(cond.status).toBe(304);
    expect(cond.headers.get('etag')).toBe(etag);
    expect(await cond.text()).toBe('');

    // a new rating and a refresh: new bytes, new ETag; the old ETag no longer matches
    await rate('0x00000000000000000000000000000000000000b2', 40);
    await refreshAggregates(t.db);
    const after = await app.request('/leaderboard', { headers: { 'If-None-Match': etag! } });
    expect(after.status).toBe(200);
    expect(after.headers.get('etag')).not.toBe(etag);
    const row = (await after.json()).rows[0];
    expect(row.final_score).toBe(60);
    expect(row.distinct_raters).toBe(2);
  });

  it('keys on the whole URL: another wallet, another query, another answer', async () => {
    const a = await app.request(`/wallets/${OWNER}/chains`);
    const b = await app.request('/wallets/0x00000000000000000000000000000000000000cc/chains');
    expect(a.status).toBe(200);
    expect(b.status).toBe(200);
    expect(await a.text()).not.toBe(await b.text());
    const f1 = await app.request('/stats/facets');
    const f2 = await app.request('/stats/facets?network=base');
    expect(f1.status).toBe(200);
    expect(f2.status).toBe(200);
    // refusals are never kept: the same bad request is validated every time
    expect((await app.request('/stats/facets?network=nope')).status).toBe(422);
    expect((await app.request('/stats/facets?network=nope')).status).toBe(422);
  });

  it('health follows the index at once after a write made by this process', async () => {
    const before = await (await app.request('/health')).json();
    await rate('0x00000000000000000000000000000000000000b3', 90);
    await t.db.query(`UPDATE chains SET ratings_count = ratings_count + 1 WHERE network = 'base'`);
    const after = await (await app.request('/health')).json();
    expect(after.feedback_entries).toBe(before.feedback_entries + 1);
  });

  it('/stats/documents: answered from memory within a minute, read again the next minute', async () => {
    let clock = NOW.getTime();
    const c2 = new FreeAnswerCache(t.db, { pollMs: 3_600_000 }).useClock(() => new Date(clock));
    const app2 = createApp({ config: loadConfig({}), db: t.db, now: () => new Date(clock), freeCache: c2 });
    const fetched = async () =>
      ((await (await app2.request('/stats/documents')).json()) as { by_state: Record<string, number> })
        .by_state.succeeded ?? 0;
    const before = await fetched();
    await t.db.query(
      `INSERT INTO feedback_documents (network, tx_hash, log_index, agent_id, rater, block_number, uri, state)
       VALUES ('base', $1, 0, '1', '0x00000000000000000000000000000000000000b1', 11, 'https://x.example/f', 'succeeded')`,
      [`0x${'d'.repeat(64)}`],
    );
    const hits = c2.hits;
    clock += 30_000; // the same minute (NOW is on a minute boundary or before its 30th second)
    expect(await fetched()).toBe(before);
    expect(c2.hits).toBe(hits + 1);
    clock += 60_000;
    expect(await fetched()).toBe(before + 1);
    await t.db.query(`DELETE FROM feedback_documents WHERE tx_hash = $1`, [`0x${'d'.repeat(64)}`]);
  });

  it('/pricing is built once: byte-identical answers, served from memory', async () => {
    const a = await app.request('/pricing');
    const hits = cache.hits;
    const b = await app.request('/pricing');
    expect(await b.text()).toBe(await a.text());
    expect(b.headers.get('x-pricing-version')).toBe(a.headers.get('x-pricing-version'));
    expect(cache.hits).toBe(hits + 1);
  });

  it('If-None-Match: weak tags, lists and * match; anything else does not', () => {
    expect(etagMatches('W/"abc"', '"abc"')).toBe(true);
    expect(etagMatches('"x", "abc"', '"abc"')).toBe(true);
    expect(etagMatches('*', '"abc"')).toBe(true);
    expect(etagMatches('"abd"', '"abc"')).toBe(false);
    expect(etagMatches(undefined, '"abc"')).toBe(false);
  });
});
