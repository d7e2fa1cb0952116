/**
 * The metered handlers (src/paid), called directly — validate, then run — on the demo
 * scenario (three local chains, indexed by the real indexer pass), on PGlite or on PostgreSQL
 * (TEST_DATABASE_URL). Every expected number is recomputed from the stored `ratings` and `agents`
 * rows (plain arithmetic or the pure scoring functions), never hard-coded. This file holds the one
 * demo copy (the costly setup); each tier's suite is a module of test/paid-handlers/ registered in
 * its describe, in this order: wallet profile, agent detail, history, rater profile, leaderboard.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Demo } from '../src/demo/run-demo.js';
import type { AppContext } from '../src/doors/http/context.js';
import { paidHandlers } from '../src/paid/index.js';
import { openDemoCopy } from './helpers/demo.js';
import { loadStored, type StoredAgent, type StoredRating } from './helpers/agg-expect.js';
import { NOW } from './helpers/paid-demo.js';
import { agentDetailSuite } from './paid-handlers/agent-detail.js';
import { historySuite } from './paid-handlers/history.js';
import { leaderboardPageSuite } from './paid-handlers/leaderboard-page.js';
import { raterProfileSuite } from './paid-handlers/rater-profile.js';
import { walletProfileSuite } from './paid-handlers/wallet-profile.js';

describe('paid handlers on the demo scenario', () => {
  let demo: Demo;
  let ctx: AppContext;
  let stored: { ratings: StoredRating[]; agents: StoredAgent[] };
  const fixture = () => ({ demo, ctx, stored });

  beforeAll(async () => {
    demo = await openDemoCopy();
    stored = await loadStored(demo.db);
    ctx = { config: demo.config, db: demo.db, now: () => NOW };
  }, 300_000);
  afterAll(async () => {
    await demo?.close();
  });

  it('exports one handler per metered tier', () => {
    expect(Object.keys(paidHandlers).sort()).toEqual(
      [
        'agent-detail',
        'leaderboard-deep',
        'rater-profile',
        'wallet-history',
        'wallet-lookup',
        'wallet-snapshot',
      ].sort(),
    );
  });

  walletProfileSuite(fixture);
  agentDetailSuite(fixture);
  historySuite(fixture);
  raterProfileSuite(fixture);
  leaderboardPageSuite(fixture);
});
