/**
 * The `refresh` section of the scale benchmark: a pass of BENCH_PASS new ratings written by the
 * real ingest (ingestBatch), then the incremental refresh the after-pass hook runs, and a full
 * rebuild beside it (unless BENCH_FULL_REBUILD=0).
 */
import type { Database } from '../../src/db/database.js';
import { refreshAggregates } from '../../src/store/aggregates-refresh.js';
import { checkpoint, feedbackEvents, ingest } from './ingest.js';
import { FULL_REBUILD, PASS } from './options.js';

/** Prints the refresh rows; returns the incremental refresh's milliseconds. */
export async function refreshAfterPass(db: Database): Promise<number> {
  console.log(
    `\naggregate refresh after a pass of ${PASS} new ratings (ingestBatch, then the after-pass refresh)`,
  );
  const from = await checkpoint(db);
  await ingest(db, feedbackEvents(PASS, from, 0));
  const inc = await refreshAggregates(db, { incremental: true });
  console.log(
    `  incremental (${inc.mode}: ${inc.agents} agents, ${inc.touched_wallets} wallets recomputed) ${inc.millis} ms`,
  );
  if (FULL_REBUILD) {
    const full = await refreshAggregates(db);
    console.log(`  full rebuild of the same index (for comparison)    ${full.millis} ms`);
  }
  return inc.millis;
}
