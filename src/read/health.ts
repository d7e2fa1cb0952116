/** Queries behind GET /health. */
import type { Queryable } from '../db/database.js';

export interface ChainScanRow {
  network: string;
  kind: string;
  chain_id: number | null;
  enabled: boolean;
  last_scanned_block: number | null;
  head_at_last_sync: number | null;
  backfill_complete: boolean;
  last_success_at: Date | null;
  last_error: string | null;
  last_error_at: Date | null;
}

export async function chainScanRows(db: Queryable, networks: readonly string[]): Promise<ChainScanRow[]> {
  const rows = await db.query<ChainScanRow & Record<string, unknown>>(
    `SELECT network, kind, chain_id, enabled, last_scanned_block, head_at_last_sync, backfill_complete,
            last_success_at, last_error, last_error_at
       FROM chains`,
  );
  const byNet = new Map(rows.map((r) => [r.network, r]));
  // Configuration order, so the answer is stable.
  return networks.map((n) => byNet.get(n)).filter((r): r is ChainScanRow & Record<string, unknown> => !!r);
}

/**
 * Live totals from the per-chain counters the ingest keeps in step with its inserts (same
 * transaction), so /health never counts the ratings table.
 */
export async function indexTotals(db: Queryable): Promise<{ agents: number; feedback_entries: number }> {
  const [row] = await db.query<{ agents: number | bigint | null; feedback_entries: number | bigint | null }>(
    `SELECT sum(agents_count)::bigint AS agents, sum(ratings_count)::bigint AS feedback_entries FROM chains`,
  );
  return { agents: Number(row?.agents ?? 0), feedback_entries: Number(row?.feedback_entries ?? 0) };
}

/** Hours since the last successful sync, one decimal; null when never synced. */
export function staleHours(lastSuccess: Date | null, now: Date): number | null {
  if (!lastSuccess) return null;
  return Math.max(0, Math.round(((now.getTime() - lastSuccess.getTime()) / 3_600_000) * 10) / 10);
}
