/**
 * The inputs of the free-answer cache's GENERATION (src/doors/http/free-cache.ts): the refresh
 * stamp (`agg_meta`) and every chain's scan state and live counters, in one small query on the
 * reader. The cache digests them; any change drops every cached answer.
 */
import { readerOf, type Database } from '../db/database.js';

/** The refresh stamp and the chains' state, as text (null: none yet). */
export async function readFreeCacheGenerationInputs(
  db: Database,
): Promise<{ refresh: string | null; chains: string | null }> {
  const [row] = await readerOf(db).query<{ r: string | null; c: string | null }>(
    `SELECT (SELECT value::text FROM agg_meta WHERE meta_key = 'refresh') AS r,
            (SELECT string_agg(concat_ws('|', network, enabled, last_scanned_block, head_at_last_sync,
                                         backfill_complete, last_success_at, last_error, last_error_at,
                                         agents_count, ratings_count), ';' ORDER BY network)
               FROM chains) AS c`,
  );
  return { refresh: row?.r ?? null, chains: row?.c ?? null };
}
