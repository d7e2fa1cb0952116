import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config.js';
import { createApp } from '../src/doors/http/app.js';
import { registerChains } from '../src/store/chain-state.js';
import { refreshAggregates } from '../src/store/aggregates-refresh.js';
import { ingestBatch } from '../src/indexer/ingest.js';
import { openTestDatabase, type TestDatabase } from './helpers/db.js';
import { ownedAndRated } from './helpers/indexer-fixtures.js';

describe('GET /health on an empty index', () => {
  let t: TestDatabase;
  let app: ReturnType<typeof createApp>;
  beforeAll(async () => {
    t = await openTestDatabase();
    const config = loadConfig({});
    await registerChains(t.db, config.chains);
    app = createApp({ config, db: t.db, now: () => new Date('2026-11-01T00:00:00Z') });
  });
  afterAll(() => t.close());

  it('answers with the contract fields, zeros and nulls, every chain listed', async () => {
    const res = await app.request('/health');
    expect(res.status).toBe(200);
    expect(res.headers.get('api-version')).toBe('2.0.0');
    expect(res.headers.get('ratelimit-policy')).toBe('50;w=1;burst=40');
    const body = await res.json();
    expect(body).toMatchObject({
      // Nothing synced yet and nothing failed: starting, not ok.
      status: 'starting',
      agents: 0,
      feedback_entries: 0,
      indexer_period_seconds: 3600,
      policy_version: 'equal-weight-per-chain@2',
      ordering_policy: 'bayes-shrinkage-distinct-raters@1',
      rater_weight_policy: 'one-voice-per-counterparty+bounded-trust@3',
      confidence_policy: 'wilson-raters@1',
      reading_policy: {
        min_raters: 3,
        top_share: 0.5,
        campaign_per_rater: 20,
        self_gap: null,
        combine: 'independent',
      },
      confidence_thresholds: { no_ratings: 0, low: 1, medium: 3, high: 6 },
      shrinkage: { k: 3, prior: null },
    });
    expect(body.chains.map((c: { network: string }) => c.network)).toEqual([
      'base',
      'solana',
      'avalanche',
      'arbitrum',
      'optimism',
      'polygon',
      'celo',
      'ethereum',
      'bsc',
      'monad',
      'robinhood',
    ]);
    for (const c of body.chains) {
      expect(c).toMatchObject({
        last_scanned_block: null,
        head_at_last_sync: null,
        backfill_complete: false,
        stale_hours: null,
      });
    }
  });

  it('is the same under /v1 and reflects counts, scan state and the live prior', async () => {
    // Through the real ingest, which keeps the live counters /health reads.
    for (const [network, owner, value] of [
      ['base', '0xaa', '80'],
      ['celo', '0xbb', '40'],
    ] as const) {
      const events = ownedAndRated(network, owner, '0xcc', value);
      const cp = { network, lastScannedBlock: 5, headAtLastSync: 5, caughtUp: false };
      await ingestBatch(t.db, events, cp);
      await ingestBatch(t.db, events, cp); // a replay inserts nothing and counts nothing
    }
    await t.db.query(
      `UPDATE chains SET last_scanned_block = 100, head_at_last_sync = 112, backfill_complete = true,
              last_success_at = '2026-10-31T18:00:00Z' WHERE network = 'base'`,
    );
    await refreshAggregates(t.db);
    const [a, b] = await Promise.all([app.request('/health'), app.request('/v1/health')]);
    const body = await a.json();
    expect(await b.json()).toEqual(body);
    expect(body.agents).toBe(2);
    expect(body.feedback_entries).toBe(2);
    // prior = mean of every scored wallet's final score = (80 + 40) / 2
    expect(body.shrinkage.prior).toBe(60);
    expect(body.chains[0]).toMatchObject({
      network: 'base',
      last_scanned_block: 100,
      head_at_last_sync: 112,
      backfill_complete: true,
      stale_hours: 6,
    });
  });
});
