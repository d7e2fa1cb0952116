/**
 * The ranking (`bayes-shrinkage-distinct-raters@1`), read from the aggregate tables.
 *
 * The aggregates order wallets in SQL; the served numbers are recomputed here with the pure
 * scoring functions from the exact per-chain sums (`agg_wallet_chain.eligible_sum`), so every
 * row satisfies, to the digit, `shrunk_score = round6((n·final_score + k·prior) / (n + k))` with
 * the published six-decimal `final_score`, `prior` and `k`. The SQL order only selects a window
 * of candidates (with a margin far wider than any rounding difference); the final order is
 * `compareLeaderboard` over the served numbers, so the order is recomputable from the response.
 */
import type { Queryable } from '../db/database.js';
import {
  compareLeaderboard,
  meanFromAggregate,
  round6,
  scoreFromAggregates,
  shrunkScore,
  SHRINKAGE_K,
} from '../scoring/index.js';
import { readRefreshMeta } from './refresh-meta.js';
import { LEADERBOARD_FREE_ROWS } from '../request-params.js';

/** Window margin around the SQL bounds: far above the ≤1e-6 gap between SQL and served values. */
const MARGIN = 1e-4;

export interface LeaderboardRow {
  rank: number;
  wallet: string;
  final_score: number | null;
  shrunk_score: number | null;
  distinct_raters: number;
  total_reviews: number;
  chain_count: number;
  networks: string[];
  declared_types: string[];
}

interface Ranking<R> {
  /** Shrinkage strength k. */
  k: number;
  /** The prior the rows were shrunk toward (six decimals); null when the index has no scored wallet. */
  prior: number | null;
  /** When the aggregates behind the rows were recomputed; null before the first refresh. */
  refreshed_at: string | null;
  rows: R[];
}

/**
 * The declared types a ranking row shows: the types its identities declare, by code unit; an
 * identity that declares none adds nothing (a wallet whose identities declare nothing shows `[]`).
 */
function rowTypes(types: readonly (string | null)[] | null): string[] {
  return sortTypes((types ?? []).filter((t): t is string => t !== null)) as string[];
}

/** Strings by code unit, nulls last: a collation-free, deterministic order. */
export function sortTypes(types: readonly (string | null)[]): (string | null)[] {
  return [...types].sort((a, b) => (a === b ? 0 : a === null ? 1 : b === null ? -1 : a < b ? -1 : 1));
}

interface Bounds {
  /** Upper bound of the window (SQL shrunk at position `offset`), null = no upper bound. */
  hi: number | null;
  /** Lower bound (SQL shrunk at the window's last position), null = no lower bound. */
  lo: number | null;
  /** Rows strictly above the window (served position of the first candidate). */
  above: number;
}

/**
 * Bounds of the window [offset, offset+limit) in the SQL order of `table`, where `where` is a
 * fixed SQL fragment over parameters `params` ($1..$n). Null when the window is empty.
 */
async function windowBounds(
  db: Queryable,
  table: string,
  where: string,
  params: unknown[],
  offset: number,
  limit: number,
): Promise<Bounds | null> {
  const n = params.length;
  const at = async (pos: number): Promise<number | null> => {
    const [row] = await db.query<{ s: number }>(
      `SELECT shrunk_score AS s FROM ${table}
        WHERE shrunk_score IS NOT NULL AND ${where}
        ORDER BY shrunk_score DESC NULLS LAST, distinct_raters DESC, wallet OFFSET $${n + 1} LIMIT 1`,
      [...params, pos],
    );
    return row ? Number(row.s) : null;
  };
  const first = await at(offset);
  if (first === null) return null;
  const last = await at(offset + limit - 1);
  let above = 0;
  let hi: number | null = null;
  if (offset > 0) {
    hi = first + MARGIN;
    const [c] = await db.query<{ n: number }>(
      `SELECT count(*) AS n FROM ${table} WHERE shrunk_score > $${n + 1} AND ${where}`,
      [...params, hi],
    );
    above = Number(c?.n ?? 0);
  }
  return { hi, lo: last === null ? null : last - MARGIN, above };
}

/** Orders candidates by the served numbers and keeps the served positions [offset, offset+limit). */
function slice<R extends { wallet: string; shrunk_score: number | null; distinct_raters: number }>(
  candidates: Omit<R, 'rank'>[],
  bounds: Bounds,
  offset: number,
  limit: number,
): (Omit<R, 'rank'> & { rank: number })[] {
  const sorted = candidates.filter((c) => c.shrunk_score !== null).sort(compareLeaderboard);
  const out: (Omit<R, 'rank'> & { rank: number })[] = [];
  sorted.forEach((c, i) => {
    const pos = bounds.above + i;
    if (pos >= offset && pos < offset + limit) out.push({ rank: pos + 1, ...c });
  });
  return out;
}

interface LeaderboardQuery {
  offset?: number;
  limit?: number;
  /**
   * Self-declared type filter (for the paged route): wallets with at least one identity declaring
   * exactly this type; `unknown` selects wallets with an identity that declares none (or an empty or literal
   * `unknown` declaration, as in /stats/types).
   */
  type?: string | null;
}

/** The global ranking: wallets with a score, ordered by shrunk_score, distinct_raters, wallet. */
export async function readLeaderboard(
  db: Queryable,
  q: LeaderboardQuery = {},
): Promise<Ranking<LeaderboardRow>> {
  const offset = q.offset ?? 0;
  const limit = q.limit ?? LEADERBOARD_FREE_ROWS;
  const meta = await readRefreshMeta(db);
  const prior = round6(meta.prior);
  const base = { k: SHRINKAGE_K, prior, refreshed_at: meta.refreshed_at };
  const type = q.type ?? null;
  // `unknown`: an identity that declares nothing (NULL), or an empty or literal "unknown" declaration
  // (the /stats/types bucket).
  const where =
    `($1::text IS NULL OR $1 = ANY(declared_types) ` +
    `OR ($1 = 'unknown' AND (array_position(declared_types, NULL) IS NOT NULL OR '' = ANY(declared_types))))`;
  const bounds = await windowBounds(db, 'agg_wallet', where, [type], offset, limit);
  if (!bounds || prior === null) return { ...base, rows: [] };

  const wallets = await db.query<{
    wallet: string;
    distinct_raters: number;
    declared_types: (string | null)[];
  }>(
    `SELECT wallet, distinct_raters, declared_types FROM agg_wallet
      WHERE shrunk_score IS NOT NULL AND ${where}
        AND ($2::float8 IS NULL OR shrunk_score <= $2) AND ($3::float8 IS NULL OR shrunk_score >= $3)`,
    [type, bounds.hi, bounds.lo],
  );
  const perChain = await db.query<{
    wallet: string;
    network: string;
    eligible_sum: string;
    total_reviews: number;
  }>(
    `SELECT wallet, network, eligible_sum::text AS eligible_sum, total_reviews FROM agg_wallet_chain
      WHERE wallet = ANY($1::text[]) AND total_reviews > 0`,
    [wallets.map((w) => w.wallet)],
  );
  const chainsOf = new Map<string, { network: string; sum: string; count: number }[]>();
  for (const c of perChain) {
    const list = chainsOf.get(c.wallet) ?? [];
    list.push({ network: c.network, sum: c.eligible_sum, count: Number(c.total_reviews) });
    chainsOf.set(c.wallet, list);
  }
  const candidates = wallets.map((w) => {
    const chains = chainsOf.get(w.wallet) ?? [];
    const score = scoreFromAggregates(chains);
    const distinct = Number(w.distinct_raters);
    return {
      wallet: w.wallet,
      final_score: score.final_score,
      shrunk_score: shrunkScore(score.final_score, distinct, prior),
      distinct_raters: distinct,
      total_reviews: chains.reduce((s, c) => s + c.count, 0),
      chain_count: score.chain_count,
      networks: score.per_chain.filter((c) => c.final_score !== null).map((c) => c.network),
      declared_types: rowTypes(w.declared_types),
    };
  });
  return { ...base, rows: slice<LeaderboardRow>(candidates, bounds, offset, limit) };
}

interface ChainRankRow {
  rank: number;
  wallet: string;
  /** The wallet's score on this chain only. */
  final_score: number | null;
  shrunk_score: number | null;
  distinct_raters: number;
  total_reviews: number;
  agent_count: number;
  agent_ids: string[];
  declared_types: string[];
}

/**
 * One chain's own ranking: wallets scored with that chain's ratings only, shrunk toward that
 * chain's prior (`agg_chain.prior`, served at six decimals).
 */
export async function readChainRanking(
  db: Queryable,
  network: string,
  limit: number,
): Promise<Ranking<ChainRankRow>> {
  const meta = await readRefreshMeta(db);
  const [chain] = await db.query<{ prior: number | null }>(`SELECT prior FROM agg_chain WHERE network = $1`, [
    network,
  ]);
  const prior = round6(chain?.prior ?? null);
  const base = { k: SHRINKAGE_K, prior, refreshed_at: meta.refreshed_at };
  const where = 'network = $1';
  const bounds = await windowBounds(db, 'agg_wallet_chain', where, [network], 0, limit);
  if (!bounds || prior === null) return { ...base, rows: [] };
  const rows = await db.query<{
    wallet: string;
    eligible_sum: string | null;
    total_reviews: number;
    distinct_raters: number;
    agent_count: number;
    agent_ids: string[];
    declared_types: (string | null)[];
  }>(
    `SELECT wallet, eligible_sum::text AS eligible_sum, total_reviews, distinct_raters, agent_count, agent_ids,
            declared_types
       FROM agg_wallet_chain
      WHERE shrunk_score IS NOT NULL AND ${where} AND ($2::float8 IS NULL OR shrunk_score >= $2)`,
    [network, bounds.lo],
  );
  const candidates = rows.map((r) => {
    const final = meanFromAggregate(r.eligible_sum, r.total_reviews);
    const distinct = Number(r.distinct_raters);
    return {
      wallet: r.wallet,
      final_score: final,
      shrunk_score: shrunkScore(final, distinct, prior),
      distinct_raters: distinct,
      total_reviews: Number(r.total_reviews),
      agent_count: Number(r.agent_count),
      agent_ids: r.agent_ids,
      declared_types: rowTypes(r.declared_types),
    };
  });
  return { ...base, rows: slice<ChainRankRow>(candidates, bounds, 0, limit) };
}
