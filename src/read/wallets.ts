/**
 * Queries behind the free wallet routes (`/wallets/{wallet}/chains`, `/wallets/{wallet}/exists`)
 * and the wallet reading of `/search/{q}`. They read the aggregate tables refreshed after each
 * index pass (src/store/aggregates-refresh.ts), never the ratings table, and each answer is ONE statement so
 * that on PostgreSQL it comes from a single snapshot (a refresh committing in between cannot mix
 * two generations of the aggregate into one answer).
 */
import type { Queryable } from '../db/database.js';

/** Where these numbers come from (served as `source`). */
export const WALLET_CHAINS_SOURCE = 'aggregate:agg_wallet_chain';
export const WALLET_SOURCE = 'aggregate:agg_wallet';

/** One chain on which the wallet holds at least one identity. */
export interface WalletChainRow {
  network: string;
  agent_ids: string[];
  agent_count: number;
  /** Declared types of those agents (null entries: declared none). */
  declared_types: (string | null)[];
  /** Every rating received on this chain, whatever its class. */
  ratings: number;
  /** Eligible ratings. */
  total_reviews: number;
  /** Exact sum of the eligible values (NUMERIC as text); null when none. */
  eligible_sum: string | null;
  /** Distinct eligible raters on this chain. */
  distinct_raters: number;
}

/** The wallet-wide row (distinct raters deduplicated across chains). */
interface WalletTotalsRow {
  identity_count: number;
  chains_with_identity: number;
  /** Chains where the wallet's identities received at least one rating. */
  chains_with_reputation: number;
  total_reviews: number;
  ratings: number;
  distinct_raters: number;
  /** On-chain time of the newest rating received (any class), ISO 8601 UTC; null when undated/none. */
  last_rating_at: string | null;
}

interface WalletAggregate {
  /** Null when the wallet holds no identity on any chain. */
  totals: WalletTotalsRow | null;
  chains: WalletChainRow[];
  /** When the aggregates were last recomputed; null when never. */
  refreshed_at: string | null;
}

const ISO_UTC = (col: string) => `to_char(${col} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"')`;

const toInt = (v: unknown): number => (v === null || v === undefined ? 0 : Number(v));

function refreshedAt(meta: unknown): string | null {
  if (meta && typeof meta === 'object' && 'refreshed_at' in meta) {
    const v = (meta as { refreshed_at: unknown }).refreshed_at;
    return typeof v === 'string' ? v : null;
  }
  return null;
}

/** Per-chain rows and wallet totals of one (already normalized) wallet, in one snapshot. */
export async function readWalletAggregate(db: Queryable, wallet: string): Promise<WalletAggregate> {
  const [row] = await db.query<{ meta: unknown; totals: Record<string, unknown> | null; chains: unknown }>(
    `SELECT
       (SELECT value FROM agg_meta WHERE meta_key = 'refresh') AS meta,
       (SELECT jsonb_build_object(
                 'identity_count', w.identity_count,
                 'chains_with_identity', w.chains_with_identity,
                 'chains_with_reputation', w.chains_with_reputation,
                 'total_reviews', w.total_reviews,
                 'ratings', w.ratings,
                 'distinct_raters', w.distinct_raters,
                 'last_rating_at', ${ISO_UTC('w.last_rating_at')})
          FROM agg_wallet w WHERE w.wallet = $1) AS totals,
       (SELECT coalesce(jsonb_agg(jsonb_build_object(
                 'network', c.network,
                 'agent_ids', to_jsonb(c.agent_ids),
                 'agent_count', c.agent_count,
                 'declared_types', to_jsonb(c.declared_types),
                 'ratings', c.ratings,
                 'total_reviews', c.total_reviews,
                 'eligible_sum', c.eligible_sum::text,
                 'distinct_raters', c.distinct_raters) ORDER BY c.network), '[]'::jsonb)
          FROM agg_wallet_chain c WHERE c.wallet = $1) AS chains`,
    [wallet],
  );
  const chains = (Array.isArray(row?.chains) ? row.chains : []) as Record<string, unknown>[];
  const t = row?.totals ?? null;
  return {
    refreshed_at: refreshedAt(row?.meta),
    totals: t
      ? {
          identity_count: toInt(t.identity_count),
          chains_with_identity: toInt(t.chains_with_identity),
          chains_with_reputation: toInt(t.chains_with_reputation),
          total_reviews: toInt(t.total_reviews),
          ratings: toInt(t.ratings),
          distinct_raters: toInt(t.distinct_raters),
          last_rating_at: typeof t.last_rating_at === 'string' ? t.last_rating_at : null,
        }
      : null,
    chains: chains.map((c) => ({
      network: String(c.network),
      agent_ids: Array.isArray(c.agent_ids) ? c.agent_ids.map(String) : [],
      agent_count: toInt(c.agent_count),
      declared_types: Array.isArray(c.declared_types)
        ? c.declared_types.map((x) => (x === null ? null : String(x)))
        : [],
      ratings: toInt(c.ratings),
      total_reviews: toInt(c.total_reviews),
      eligible_sum: typeof c.eligible_sum === 'string' ? c.eligible_sum : null,
      distinct_raters: toInt(c.distinct_raters),
    })),
  };
}

/** Wallet totals only (the small `exists` answer), in one statement. */
export async function readWalletTotals(
  db: Queryable,
  wallet: string,
): Promise<{ totals: WalletTotalsRow | null; refreshed_at: string | null }> {
  const rows = await db.query<Record<string, unknown>>(
    `SELECT m.value AS meta, w.identity_count, w.chains_with_identity, w.chains_with_reputation, w.total_reviews,
            w.ratings, w.distinct_raters, ${ISO_UTC('w.last_rating_at')} AS last_rating_at, w.wallet IS NOT NULL AS found
       FROM (SELECT 1) one
       LEFT JOIN agg_meta m ON m.meta_key = 'refresh'
       LEFT JOIN agg_wallet w ON w.wallet = $1`,
    [wallet],
  );
  const r = rows[0];
  if (!r) return { totals: null, refreshed_at: null };
  return {
    refreshed_at: refreshedAt(r.meta),
    totals: r.found
      ? {
          identity_count: toInt(r.identity_count),
          chains_with_identity: toInt(r.chains_with_identity),
          chains_with_reputation: toInt(r.chains_with_reputation),
          total_reviews: toInt(r.total_reviews),
          ratings: toInt(r.ratings),
          distinct_raters: toInt(r.distinct_raters),
          last_rating_at: typeof r.last_rating_at === 'string' ? r.last_rating_at : null,
        }
      : null,
  };
}
