/**
 * The demo's own bookkeeping: the `demo` mark in `indexer_meta` (a database the demo may reset)
 * and the reset itself. Trusted table names only.
 */
import type { Database } from '../db/database.js';

const DEMO_TABLES = [
  'agent_endpoints',
  'agent_registrations',
  'liveness_hosts',
  'feedback_documents',
  'agent_evidence',
  'rating_responses',
  'ratings',
  'revocations',
  'ownership_transfers',
  'solana_agent_wallets',
  'agent_metadata',
  'agents',
  'census_differences',
] as const;

/** True when an earlier demo marked this database as its own. */
export async function isDemoDatabase(db: Database): Promise<boolean> {
  return (await db.query(`SELECT 1 FROM indexer_meta WHERE meta_key = 'demo'`)).length > 0;
}

/** Whether the database holds any indexed row (agents, ratings, revocations). */
export async function holdsIndexRows(db: Database): Promise<boolean> {
  const [row] = await db.query<{ n: number }>(
    `SELECT (SELECT count(*) FROM agents) + (SELECT count(*) FROM ratings) + (SELECT count(*) FROM revocations) AS n`,
  );
  return Number(row?.n ?? 0) > 0;
}

/** Marks the database as the demo's (it may then be reset by the next demo). */
export async function markDemoDatabase(db: Database): Promise<void> {
  await db.query(`INSERT INTO indexer_meta (meta_key, value) VALUES ('demo', 'true') ON CONFLICT DO NOTHING`);
}

/** Deletes every indexed row and resets every chain's scan state, in one transaction. */
export async function resetDemoDatabase(db: Database): Promise<void> {
  await db.transaction(async (tx) => {
    for (const t of DEMO_TABLES) await tx.query(`DELETE FROM ${t}`);
    await tx.query(
      `UPDATE chains SET last_scanned_block = NULL, head_at_last_sync = NULL, backfill_complete = FALSE,
         last_success_at = NULL, last_error = NULL, last_error_at = NULL, start_block = NULL,
         agents_count = 0, ratings_count = 0`,
    );
  });
}
