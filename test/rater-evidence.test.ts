/**
 * Rater evidence through the database (issue 32), on PGlite and (with DATABASE_URL) PostgreSQL:
 *  - each rater's first rating is kept by triggers (an earlier rating moves it and queues a new
 *    lookup; a rollback that deletes it finds the next; a Solana rater has nothing to look up);
 *  - the account-history queue: leases (never twice, an expired lease is taken again), lookups
 *    fetched / retried / failed, rate-limited per chain, a finish refused once the row moved on;
 *  - the background run: cohorts, independent breadth, reciprocity, verified payments in valued
 *    tokens, graph trust, written once per change of its inputs;
 *  - the served facts: per rating of the agent detail (its voice's weight: the weighted score
 *    recomputes from them), counts in the wallet profile, a rater's facts in its profile, the free
 *    count of raters with a verified payment and its explorer card; the reference (row) path and
 *    the aggregate path give the same weighted_score.
 * The real eth_getTransactionByHash lookup against a local node is test/rater-evidence-chain.test.ts.
 * This file opens the one database; its suites are modules of test/rater-evidence/, registered in
 * order (the last reads the raters the first two wrote).
 */
import { afterAll, beforeAll } from 'vitest';
import { loadConfig, type Config } from '../src/config.js';
import type { Database } from '../src/db/database.js';
import { registerChains } from '../src/store/chain-state.js';
import { openTestDatabase, type TestDatabase } from './helpers/db.js';
import { raterEventTools } from './helpers/rater-evidence.js';
import { firstRatingSuite } from './rater-evidence/first-rating.js';
import { lookupsSuite } from './rater-evidence/lookups.js';
import { servedEvidenceSuite } from './rater-evidence/served.js';

let t: TestDatabase;
let db: Database;
let config: Config;
const fixture = () => ({ t, db, config });
const tools = raterEventTools(fixture);

beforeAll(async () => {
  t = await openTestDatabase();
  db = t.db;
  config = loadConfig({});
  await registerChains(db, config.chains);
});
afterAll(async () => {
  await t.close();
});

firstRatingSuite(fixture, tools);
lookupsSuite(fixture, tools);
servedEvidenceSuite(fixture, tools);
