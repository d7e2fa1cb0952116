/**
 * GET /chains and GET /chains/{network}: every configured chain side by side, and one chain in
 * full. Reads the aggregate tables (agg_chain, agg_wallet_chain, agg_facet, agg_chain_day) and
 * the small `chains` scan-state table; never the ratings.
 */
import type { ChainConfig } from '../chains.js';
import type { Queryable } from '../db/database.js';
import { meanFromAggregate, round6Ratio } from '../scoring/index.js';
import { chainScanRows, staleHours } from './health.js';

export const CHAIN_DAYS = { default: 90, min: 1, max: 365 } as const;
export const CHAIN_TOP_LIMIT = { default: 25, min: 1, max: 200 } as const;

export interface ChainStat {
  network: string;
  kind: string;
  chain_id: number | null;
  enabled: boolean;
  agents: number;
  owners: number;
  ratings: number;
  distinct_raters: number;
  rated_agents: number;
  scored_wallets: number;
  eligible_ratings: number;
  revoked: number;
  self_rated: number;
  out_of_domain: number;
  orphan_ratings: number;
  facets: number;
  avg_value: number | null;
  ratings_per_agent: number | null;
  first_rating_day: string | null;
  last_rating_day: string | null;
  last_scanned_block: number | null;
  head_at_last_sync: number | null;
  blocks_behind: number | null;
  backfill_complete: boolean;
  last_sync_at: string | null;
  stale_hours: number | null;
}

interface AggChainRow {
  network: string;
  agents: number;
  ratings: number;
  distinct_raters: number;
  rated_agents: number;
  scored_wallets: number;
}

interface OwnedRow {
  network: string;
  owners: number;
  attributed: number;
  eligible: number;
  eligible_sum: string | null;
  revoked: number;
  self_rated: number;
  out_of_domain: number;
}

const num = (v: unknown): number => Number(v ?? 0);
const numOrNull = (v: unknown): number | null => (v === null || v === undefined ? null : Number(v));

/** Stats of the given chains (configuration order), zeros for a chain with nothing indexed. */
export async function readChainStats(
  db: Queryable,
  chains: readonly ChainConfig[],
  now: Date,
): Promise<ChainStat[]> {
  const networks = chains.map((c) => c.network);
  const [agg, owned, facets, days, scans] = await Promise.all([
    db.query<AggChainRow & Record<string, unknown>>(
      `SELECT network, agents, ratings, distinct_raters, rated_agents, scored_wallets
         FROM agg_chain WHERE network = ANY($1::text[])`,
      [networks],
    ),
    db.query<OwnedRow & Record<string, unknown>>(
      `SELECT network, count(*) AS owners, sum(ratings) AS attributed, sum(total_reviews) AS eligible,
              sum(eligible_sum)::text AS eligible_sum, sum(revoked_count) AS revoked, sum(self_count) AS self_rated,
              sum(out_of_domain_count) AS out_of_domain
         FROM agg_wallet_chain WHERE network = ANY($1::text[]) GROUP BY network`,
      [networks],
    ),
    db.query<{ network: string; n: number }>(
      `SELECT network, count(*) AS n FROM agg_facet WHERE network = ANY($1::text[]) GROUP BY network`,
      [networks],
    ),
    db.query<{ network: string; first_day: string | null; last_day: string | null }>(
      `SELECT network, to_char(min(day), 'YYYY-MM-DD') AS first_day, to_char(max(day), 'YYYY-MM-DD') AS last_day
         FROM agg_chain_day WHERE network = ANY($1::text[]) GROUP BY network`,
      [networks],
    ),
    chainScanRows(db, networks),
  ]);
  const aggBy = new Map(agg.map((r) => [r.network, r]));
  const ownedBy = new Map(owned.map((r) => [r.network, r]));
  const facetsBy = new Map(facets.map((r) => [r.network, num(r.n)]));
  const daysBy = new Map(days.map((r) => [r.network, r]));
  const scanBy = new Map(scans.map((r) => [r.network, r]));
  return chains.map((ch) => {
    const a = aggBy.get(ch.network);
    const o = ownedBy.get(ch.network);
    const d = daysBy.get(ch.network);
    const s = scanBy.get(ch.network);
    const agents = num(a?.agents);
    const ratings = num(a?.ratings);
    const eligible = num(o?.eligible);
    const last = numOrNull(s?.last_scanned_block);
    const head = numOrNull(s?.head_at_last_sync);
    return {
      network: ch.network,
      kind: ch.kind,
      chain_id: ch.chainId,
      enabled: ch.enabled,
      agents,
      owners: num(o?.owners),
      ratings,
      distinct_raters: num(a?.distinct_raters),
      rated_agents: num(a?.rated_agents),
      scored_wallets: num(a?.scored_wallets),
      eligible_ratings: eligible,
      revoked: num(o?.revoked),
      self_rated: num(o?.self_rated),
      out_of_domain: num(o?.out_of_domain),
      orphan_ratings: Math.max(0, ratings - num(o?.attributed)),
      facets: facetsBy.get(ch.network) ?? 0,
      avg_value: eligible > 0 ? meanFromAggregate(o?.eligible_sum ?? null, eligible) : null,
      ratings_per_agent: agents > 0 ? round6Ratio(ratings, agents) : null,
      first_rating_day: d?.first_day ?? null,
      last_rating_day: d?.last_day ?? null,
      last_scanned_block: last,
      head_at_last_sync: head,
      blocks_behind: last !== null && head !== null ? Math.max(0, head - last) : null,
      backfill_complete: s?.backfill_complete ?? false,
      last_sync_at: s?.last_success_at ? s.last_success_at.toISOString() : null,
      stale_hours: staleHours(s?.last_success_at ?? null, now),
    };
  });
}

export interface ChainDay {
  /** UTC date of the on-chain block time, YYYY-MM-DD. */
  day: string;
  ratings: number;
  /** Distinct raters that day. */
  raters: number;
}

/** UTC calendar date of `d` as YYYY-MM-DD. */
function utcDay(d: Date): string {
  return d.toISOString().slice(0, 10);
}

/**
 * The last `days` UTC days ending today (by `now`), oldest first, every day present (zeros
 * filled), bucketed by on-chain block date.
 */
export async function readChainActivity(
  db: Queryable,
  network: string,
  days: number,
  now: Date,
): Promise<ChainDay[]> {
  const today = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate());
  const series: string[] = [];
  for (let i = days - 1; i >= 0; i -= 1) series.push(utcDay(new Date(today - i * 86_400_000)));
  const rows = await db.query<{ day: string; ratings: number; distinct_raters: number }>(
    `SELECT to_char(day, 'YYYY-MM-DD') AS day, ratings, distinct_raters FROM agg_chain_day
      WHERE network = $1 AND day >= $2::date AND day <= $3::date`,
    [network, series[0], series[series.length - 1]],
  );
  const byDay = new Map(rows.map((r) => [r.day, r]));
  return series.map((day) => {
    const r = byDay.get(day);
    return { day, ratings: num(r?.ratings), raters: num(r?.distinct_raters) };
  });
}
