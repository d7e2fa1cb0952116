/**
 * What the per-chain Prometheus gauges read at scrape time (src/metrics.ts): each chain's scan
 * state from the `chains` table, in one query per scrape.
 */
import type { Queryable } from '../db/database.js';

export interface ChainScanRow {
  network: string;
  enabled: boolean;
  last_scanned_block: number | null;
  head_at_last_sync: number | null;
  last_success_at: Date | null;
  /** The last completeness census: ok, mismatch, unchecked (null before any). */
  census_state: string | null;
}

/** Every chain's scan state (enabled or not). */
export function readChainScanRows(db: Queryable): Promise<ChainScanRow[]> {
  return db.query<ChainScanRow & Record<string, unknown>>(
    'SELECT network, enabled, last_scanned_block, head_at_last_sync, last_success_at, census_state FROM chains',
  );
}
