/** The free aggregates' bookkeeping (`agg_meta`) as far as writers other than the refresh touch it. */
import type { Queryable } from '../db/database.js';

/**
 * Marks the free aggregates for a full rebuild by the next refresh (rows below a refreshed
 * checkpoint were deleted, which the incremental refresh cannot see). Inside the caller's
 * transaction.
 */
export async function requireFullRefresh(tx: Queryable, reason: string): Promise<void> {
  await tx.query(
    `INSERT INTO agg_meta (meta_key, value) VALUES ('rebuild', $1::jsonb)
     ON CONFLICT (meta_key) DO UPDATE SET value = EXCLUDED.value`,
    [JSON.stringify({ reason })],
  );
}
