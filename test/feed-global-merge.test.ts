/**
 * Migration 0200 drops ratings_time_idx (block_time DESC, network, block_number DESC, log_index
 * DESC); the global feed now merges the newest rows of each network read through
 * ratings_network_time_idx. Its answer must be the one the old single ORDER BY gave, on every
 * limit, with block-time ties across and within networks and undated ratings around.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readFeed } from '../src/read/feed.js';
import { openTestDatabase, type TestDatabase } from './helpers/db.js';

/** The global feed's statement before migration 0200 (the reference order). */
const OLD_GLOBAL = `SELECT r.network, r.tx_hash, r.log_index
  FROM (SELECT * FROM ratings WHERE block_time IS NOT NULL
         ORDER BY block_time DESC, network, block_number DESC, log_index DESC LIMIT $1) r
 ORDER BY r.block_time DESC, r.network, r.block_number DESC, r.log_index DESC`;

let t: TestDatabase;
let emptyFeed: unknown[] = [];

beforeAll(async () => {
  t = await openTestDatabase();
  emptyFeed = await readFeed(t.db, { network: null, limit: 50 });
  // 4 networks, unequal sizes; block times collide across networks (every 7th block shares its
  // time with the other chains) and within one (two blocks a second on celo); some undated.
  await t.db.query(
    `INSERT INTO ratings (network, tx_hash, log_index, agent_id, rater, feedback_index, value_raw, value_decimals,
                          value, block_number, block_time)
     SELECT n.network, '0x' || md5(n.network || ':' || g), g % 3, (g % 11)::text, '0x' || lpad(to_hex(g % 17), 40, '0'),
            g, g % 101, 0, g % 101, g / 3,
            CASE WHEN g % 29 = 0 THEN NULL
                 WHEN n.network = 'celo' THEN timestamptz '2026-01-01' + ((g / 6) * interval '1 second')
                 ELSE timestamptz '2026-01-01' + ((g / 3) * interval '1 second') + n.skew END
       FROM (VALUES ('base', 120, interval '0'), ('bsc', 400, interval '0'), ('celo', 60, interval '0'),
                    ('avalanche', 5, interval '3 seconds')) AS n(network, k, skew)
       CROSS JOIN LATERAL generate_series(1, n.k) AS g`,
  );
});

afterAll(async () => {
  await t?.close();
});

describe('global feed without ratings_time_idx (migration 0200)', () => {
  it('the index is gone and ratings_network_time_idx is there', async () => {
    const idx = await t.db.query<{ indexname: string }>(
      `SELECT indexname FROM pg_indexes WHERE tablename = 'ratings' AND schemaname = current_schema()`,
    );
    const names = idx.map((r) => r.indexname);
    expect(names).not.toContain('ratings_time_idx');
    expect(names).toContain('ratings_network_time_idx');
  });

  it.each([1, 2, 3, 7, 50, 200, 1000])(
    'limit %i: the same rows in the same order as the old statement',
    async (limit) => {
      const want = await t.db.query<{ network: string; tx_hash: string; log_index: number }>(OLD_GLOBAL, [
        limit,
      ]);
      const got = await readFeed(t.db, { network: null, limit });
      expect(got.map((r) => [r.network, r.tx_hash, r.log_index])).toEqual(
        want.map((r) => [r.network, r.tx_hash, Number(r.log_index)]),
      );
      expect(got.length).toBe(
        Math.min(limit, 585 - Math.floor(120 / 29) - Math.floor(400 / 29) - Math.floor(60 / 29)),
      );
    },
  );

  it('an empty index answers an empty feed', () => {
    expect(emptyFeed).toEqual([]);
  });
});
