import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { refreshAggregates } from '../src/store/aggregates-refresh.js';
import { openTestDatabase, type TestDatabase } from './helpers/db.js';

describe('aggregate refresh with hostile chain text', () => {
  let t: TestDatabase;
  beforeAll(async () => {
    t = await openTestDatabase();
  });
  afterAll(() => t.close());

  it('survives incompressible 10 kB tag1, host and declared type (no btree key on free text)', async () => {
    const big = randomBytes(7_500).toString('base64'); // ~10 kB, does not compress
    const host = `${randomBytes(3_000).toString('hex')}.example`;
    await t.db.query(`INSERT INTO chains (network, kind, chain_id) VALUES ('base', 'evm', 8453)`);
    await t.db.query(
      `INSERT INTO agents (network, agent_id, owner, declared_type) VALUES ('base', '1', '0xaa', $1)`,
      [big],
    );
    await t.db.query(
      `INSERT INTO ratings (network, tx_hash, log_index, agent_id, rater, feedback_index, value_raw, value_decimals, value,
                            tag1, feedback_uri, block_number, block_time)
       VALUES ('base', '0x01', 0, '1', '0xbb', 1, 50, 0, 50, $1, $2, 7, '2026-10-01T00:00:00Z')`,
      [big, `https://${host}/x`],
    );
    const report = await refreshAggregates(t.db);
    expect(report.wallets).toBe(1);
    const facets = await t.db.query<{ tag1: string; ratings: number }>(
      `SELECT tag1, ratings FROM agg_facet WHERE network = '*'`,
    );
    expect(facets).toEqual([{ tag1: big, ratings: 1 }]);
    const issuers = await t.db.query<{ host: string }>(`SELECT host FROM agg_issuer`);
    expect(issuers).toEqual([{ host }]);
    const types = await t.db.query<{ declared_type: string }>(`SELECT declared_type FROM agg_type`);
    expect(types).toEqual([{ declared_type: big }]);
  });
});
