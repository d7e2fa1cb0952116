/**
 * What runs after an index pass: the incremental refresh of the free aggregates. The indexer does
 * not call the read model itself; `repindex serve` (the scheduler), `repindex index --once` and
 * the demo hand this hook to the pass (`afterPass`), which runs it inside the pass lock.
 */
import type { Database } from './db/database.js';
import { recordAggregateRefresh } from './metrics.js';
import { refreshAggregates } from './store/aggregates-refresh.js';

export async function refreshAfterPass(db: Database): Promise<void> {
  const t0 = performance.now();
  await refreshAggregates(db, { incremental: true });
  recordAggregateRefresh((performance.now() - t0) / 1000);
}
