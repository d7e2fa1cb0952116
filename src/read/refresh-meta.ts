/** The free aggregates' refresh stamp (written by src/store/aggregates-refresh.ts after each pass). */
import type { Queryable } from '../db/database.js';

/** The refresh stamp and the live global prior; nulls before the first refresh. */
export async function readRefreshMeta(
  db: Queryable,
): Promise<{ refreshed_at: string | null; prior: number | null }> {
  const [row] = await db.query<{ value: { refreshed_at: string; prior: number | null } }>(
    `SELECT value FROM agg_meta WHERE meta_key = 'refresh'`,
  );
  return { refreshed_at: row?.value.refreshed_at ?? null, prior: row?.value.prior ?? null };
}
