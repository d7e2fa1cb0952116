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
  /** Transactions the node listed but did not serve (retried on later passes). */
  gaps: number;
  /** Transactions whose events are known to be incomplete (logs truncated by the node). */
  incomplete_transactions: number;
  /** The lowest block scanned (a start block moved below it is scanned on the next pass). */
  scanned_from_block?: number | null;
  /** The last completeness census: ok, mismatch, unchecked (null: never ran). */
  census_state?: string | null;
  census_detail?: string | null;
  census_block?: number | null;
  census_at?: Date | null;
  /** Its scope (full, sample) and method (multicall3, eth_call); the last full census's block and time. */
  census_scope?: string | null;
  census_method?: string | null;
  census_full_block?: number | null;
  census_full_at?: Date | null;
  /** Configuration warnings of the last pass (NULL: none). */
  config_warning?: string | null;
}

export async function chainScanRows(db: Queryable, networks: readonly string[]): Promise<ChainScanRow[]> {
  const rows = await db.query<ChainScanRow & Record<string, unknown>>(
    `SELECT network, kind, chain_id, enabled, last_scanned_block, head_at_last_sync, backfill_complete,
            last_success_at, last_error, last_error_at, scanned_from_block,
            census_state, census_detail, census_block, census_at, census_scope, census_method,
            census_full_block, census_full_at, config_warning,
            (SELECT count(*) FROM scan_gaps g WHERE g.network = c.network)::int AS gaps,
            (SELECT count(*) FROM incomplete_transactions i WHERE i.network = c.network)::int AS incomplete_transactions
       FROM chains c`,
  );
  for (const r of rows) {
    r.gaps = Number(r.gaps);
    r.incomplete_transactions = Number(r.incomplete_transactions);
    for (const k of ['scanned_from_block', 'census_block', 'census_full_block'] as const)
      if (r[k] != null) r[k] = Number(r[k]);
  }
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

type OverallState = 'ok' | 'degraded' | 'starting';

/**
 * The honest overall state of the index, from the enabled chains' scan rows:
 *  - `starting`: no enabled chain has synced yet and none has failed (the first pass is pending
 *    or running);
 *  - `degraded`: some enabled chain has never synced, failed its last attempt, is stale (no
 *    success for more than twice the indexer period, plus an hour), or its last completeness
 *    census disagreed with the chain; or no chain is enabled;
 *  - `ok`: every enabled chain synced, none failing or stale.
 * With the indexer off (period 0) staleness is not judged: the index is as fresh as it was built.
 */
export function overallState(
  rows: readonly ChainScanRow[],
  now: Date,
  indexerPeriodSeconds: number,
): { status: OverallState; reason: string } {
  const enabled = rows.filter((r) => r.enabled);
  const n = enabled.length;
  if (n === 0) return { status: 'degraded', reason: 'no chain is enabled: nothing is being indexed' };
  const synced = enabled.filter((r) => r.last_success_at !== null);
  const failing = enabled.filter(
    (r) =>
      r.last_error !== null &&
      (r.last_success_at === null || (r.last_error_at !== null && r.last_error_at > r.last_success_at)),
  );
  const staleAfterMs = (2 * indexerPeriodSeconds + 3600) * 1000;
  const stale =
    indexerPeriodSeconds > 0
      ? synced.filter((r) => now.getTime() - r.last_success_at!.getTime() > staleAfterMs)
      : [];
  const names = (rs: readonly ChainScanRow[]) => rs.map((r) => r.network).join(', ');
  const off = indexerPeriodSeconds === 0 ? ' (the indexer is off: INDEXER_PERIOD_SECONDS=0)' : '';
  if (synced.length === 0) {
    if (failing.length === 0) {
      return {
        status: 'starting',
        reason: `0 of ${n} enabled chains have synced yet; the first pass is pending or running${off}`,
      };
    }
    return {
      status: 'degraded',
      reason: `0 of ${n} enabled chains have ever synced; failing: ${names(failing)}${off}`,
    };
  }
  const problems: string[] = [];
  const never = enabled.filter((r) => r.last_success_at === null && !failing.includes(r));
  const mismatched = enabled.filter((r) => r.census_state === 'mismatch');
  if (failing.length) problems.push(`failing: ${names(failing)}`);
  if (mismatched.length)
    problems.push(`census mismatch (the index disagrees with the chain): ${names(mismatched)}`);
  if (never.length) problems.push(`not synced yet: ${names(never)}`);
  if (stale.length)
    problems.push(`stale (no success for over ${Math.round(staleAfterMs / 3_600_000)} h): ${names(stale)}`);
  if (problems.length === 0) return { status: 'ok', reason: `${n} of ${n} enabled chains synced` };
  return {
    status: 'degraded',
    reason: `${synced.length} of ${n} enabled chains synced; ${problems.join('; ')}${off}`,
  };
}

/**
 * Readiness for a load balancer: the database answers and every migration of this build is
 * applied. Never throws.
 */
export async function readiness(
  db: Queryable,
  expectedMigrations: readonly string[],
): Promise<{ ready: true } | { ready: false; reason: string }> {
  let applied: Set<string>;
  try {
    const rows = await db.query<{ id: string }>('SELECT id FROM schema_migrations');
    applied = new Set(rows.map((r) => r.id));
  } catch {
    return { ready: false, reason: 'the database is unreachable or not migrated' };
  }
  const missing = expectedMigrations.filter((m) => !applied.has(m));
  if (missing.length) return { ready: false, reason: `migrations not applied: ${missing.join(', ')}` };
  return { ready: true };
}

export interface CensusView {
  state: 'ok' | 'mismatch' | 'unchecked';
  checked_at: string | null;
  block: number | null;
  scope: 'full' | 'sample' | null;
  method: 'multicall3' | 'eth_call' | null;
  full_block: number | null;
  full_checked_at: string | null;
  detail: Record<string, unknown> | null;
}

/** A chain's census as /health shows it (never ran: unchecked, nulls). */
export function censusView(r: ChainScanRow): CensusView {
  let detail: Record<string, unknown> | null = null;
  if (r.census_detail) {
    try {
      detail = JSON.parse(r.census_detail) as Record<string, unknown>;
    } catch {
      detail = { error: 'unreadable census record' };
    }
  }
  const state = r.census_state === 'ok' || r.census_state === 'mismatch' ? r.census_state : 'unchecked';
  const scope = r.census_scope === 'full' || r.census_scope === 'sample' ? r.census_scope : null;
  const method = r.census_method === 'multicall3' || r.census_method === 'eth_call' ? r.census_method : null;
  return {
    state,
    checked_at: r.census_at ? new Date(r.census_at).toISOString() : null,
    block: r.census_block ?? null,
    scope,
    method,
    full_block: r.census_full_block ?? null,
    full_checked_at: r.census_full_at ? new Date(r.census_full_at).toISOString() : null,
    detail,
  };
}
