/**
 * The free aggregates, recomputed after each index pass in ONE transaction (readers on PostgreSQL
 * keep seeing the previous set until it commits). Free routes read these tables; they never scan
 * the ratings table. The math is the scoring policy (see sql-fragments.ts and src/scoring).
 */
import type { Database, Queryable } from '../db/database.js';
import { SHRINKAGE_K } from '../scoring/policies.js';
import { ELIGIBLE, IN_DOMAIN, SELF, URI_HOST } from './sql-fragments.js';

/**
 * Mean of a column in exact NUMERIC (an order-independent sum, one rounding at the end), so two
 * indexings of the same chain give the same double bit for bit whatever the row order; a float
 * avg() depends on the order rows are summed in.
 */
const EXACT_AVG = (col: string) => `(sum((${col})::numeric) / nullif(count(${col}), 0))::float8`;

const AGG_TABLES = [
  'agg_agent',
  'agg_wallet_chain',
  'agg_wallet',
  'agg_chain',
  'agg_chain_day',
  'agg_facet',
  'agg_type',
  'agg_issuer',
] as const;

export interface RefreshReport {
  refreshed_at: string;
  wallets: number;
  prior: number | null;
  millis: number;
}

export async function refreshAggregates(db: Database, now: () => Date = () => new Date()): Promise<RefreshReport> {
  const started = Date.now();
  return db.transaction(async (tx) => {
    for (const t of AGG_TABLES) await tx.query(`DELETE FROM ${t}`);
    await refreshAgents(tx);
    await refreshWalletChains(tx);
    await refreshWallets(tx);
    await refreshChains(tx);
    await refreshFacets(tx);
    await refreshTypes(tx);
    await refreshIssuers(tx);
    const [p] = await tx.query<{ prior: number | null; wallets: number }>(
      `SELECT ${EXACT_AVG('final_score')} AS prior, count(*) AS wallets FROM agg_wallet WHERE final_score IS NOT NULL`,
    );
    const refreshedAt = now().toISOString();
    await tx.query(
      `INSERT INTO agg_meta (meta_key, value) VALUES ('refresh', $1::jsonb)
       ON CONFLICT (meta_key) DO UPDATE SET value = EXCLUDED.value`,
      [JSON.stringify({ refreshed_at: refreshedAt, prior: p?.prior ?? null, k: SHRINKAGE_K })],
    );
    return { refreshed_at: refreshedAt, wallets: p?.wallets ?? 0, prior: p?.prior ?? null, millis: Date.now() - started };
  });
}

async function refreshAgents(tx: Queryable): Promise<void> {
  // An id whose owner is not known yet has no self-ratings to set apart (owner compared as '').
  const owner = "coalesce(a.owner, '')";
  await tx.query(`
    INSERT INTO agg_agent (network, agent_id, ratings, total_reviews, eligible_sum, distinct_raters)
    SELECT r.network, r.agent_id, count(*)::int,
           (count(*) FILTER (WHERE ${ELIGIBLE('r', owner)}))::int,
           sum(r.value) FILTER (WHERE ${ELIGIBLE('r', owner)}),
           (count(DISTINCT r.rater) FILTER (WHERE ${ELIGIBLE('r', owner)}))::int
      FROM ratings r LEFT JOIN agents a ON a.network = r.network AND a.agent_id = r.agent_id
     GROUP BY r.network, r.agent_id`);
}

async function refreshWalletChains(tx: Queryable): Promise<void> {
  await tx.query(`
    INSERT INTO agg_wallet_chain (wallet, network, agent_ids, agent_count, declared_types, ratings, total_reviews,
      eligible_sum, final_score, distinct_raters, self_count, revoked_count, out_of_domain_count, last_rating_at)
    WITH owned AS (
      SELECT owner AS wallet, network,
             array_agg(agent_id ORDER BY length(agent_id), agent_id) AS agent_ids,
             count(*)::int AS agent_count,
             array_agg(DISTINCT declared_type) AS declared_types
        FROM agents WHERE owner IS NOT NULL
       GROUP BY owner, network
    ), rated AS (
      SELECT a.owner AS wallet, r.network,
             count(*)::int AS ratings,
             (count(*) FILTER (WHERE ${ELIGIBLE('r', 'a.owner')}))::int AS total_reviews,
             sum(r.value) FILTER (WHERE ${ELIGIBLE('r', 'a.owner')}) AS eligible_sum,
             (count(DISTINCT r.rater) FILTER (WHERE ${ELIGIBLE('r', 'a.owner')}))::int AS distinct_raters,
             (count(*) FILTER (WHERE ${SELF('r', 'a.owner')}))::int AS self_count,
             (count(*) FILTER (WHERE r.revoked))::int AS revoked_count,
             (count(*) FILTER (WHERE NOT r.revoked AND NOT ${IN_DOMAIN('r')}))::int AS out_of_domain_count,
             max(r.block_time) AS last_rating_at
        FROM ratings r JOIN agents a ON a.network = r.network AND a.agent_id = r.agent_id
       WHERE a.owner IS NOT NULL
       GROUP BY a.owner, r.network
    )
    SELECT o.wallet, o.network, o.agent_ids, o.agent_count, o.declared_types,
           coalesce(rt.ratings, 0), coalesce(rt.total_reviews, 0), rt.eligible_sum,
           CASE WHEN rt.total_reviews > 0 THEN (rt.eligible_sum / rt.total_reviews)::float8 END,
           coalesce(rt.distinct_raters, 0), coalesce(rt.self_count, 0), coalesce(rt.revoked_count, 0),
           coalesce(rt.out_of_domain_count, 0), rt.last_rating_at
      FROM owned o LEFT JOIN rated rt ON rt.wallet = o.wallet AND rt.network = o.network`);
  // Per-chain ranking: shrink toward that chain's prior (mean of the chain's scored wallets).
  await tx.query(
    `UPDATE agg_wallet_chain w
        SET shrunk_score = (w.distinct_raters * w.final_score + $1 * p.prior) / (w.distinct_raters + $1)
       FROM (SELECT network, ${EXACT_AVG('final_score')} AS prior FROM agg_wallet_chain WHERE final_score IS NOT NULL GROUP BY network) p
      WHERE p.network = w.network AND w.final_score IS NOT NULL`,
    [SHRINKAGE_K],
  );
}

async function refreshWallets(tx: Queryable): Promise<void> {
  // Global score = mean of the non-null per-chain scores (avg skips NULL): one chain, one vote.
  await tx.query(`
    INSERT INTO agg_wallet (wallet, final_score, distinct_raters, total_reviews, ratings, chain_count, networks,
      identity_count, chains_with_identity, chains_with_reputation, declared_types, last_rating_at)
    WITH raters AS (
      SELECT a.owner AS wallet, count(DISTINCT r.rater)::int AS distinct_raters
        FROM ratings r JOIN agents a ON a.network = r.network AND a.agent_id = r.agent_id
       WHERE a.owner IS NOT NULL AND ${ELIGIBLE('r', 'a.owner')}
       GROUP BY a.owner
    ), types AS (
      SELECT wallet, array_agg(DISTINCT t) AS declared_types
        FROM agg_wallet_chain, unnest(declared_types) AS t
       GROUP BY wallet
    )
    SELECT w.wallet, ${EXACT_AVG('w.final_score')}, coalesce(max(ra.distinct_raters), 0), sum(w.total_reviews)::int,
           sum(w.ratings)::int,
           (count(*) FILTER (WHERE w.final_score IS NOT NULL))::int,
           coalesce(array_agg(w.network ORDER BY w.network) FILTER (WHERE w.final_score IS NOT NULL), '{}'),
           sum(w.agent_count)::int, count(*)::int, (count(*) FILTER (WHERE w.ratings > 0))::int,
           coalesce(max(ty.declared_types), '{}'), max(w.last_rating_at)
      FROM agg_wallet_chain w
      LEFT JOIN raters ra ON ra.wallet = w.wallet
      LEFT JOIN types ty ON ty.wallet = w.wallet
     GROUP BY w.wallet`);
  await tx.query(
    `UPDATE agg_wallet w
        SET shrunk_score = (w.distinct_raters * w.final_score + $1 * p.prior) / (w.distinct_raters + $1)
       FROM (SELECT ${EXACT_AVG('final_score')} AS prior FROM agg_wallet WHERE final_score IS NOT NULL) p
      WHERE w.final_score IS NOT NULL AND p.prior IS NOT NULL`,
    [SHRINKAGE_K],
  );
}

async function refreshChains(tx: Queryable): Promise<void> {
  // Every configured chain gets a row, zeros included.
  await tx.query(`
    INSERT INTO agg_chain (network, agents, ratings, distinct_raters, rated_agents, scored_wallets, mean_value, prior)
    SELECT c.network,
           coalesce((SELECT count(*) FROM agents a WHERE a.network = c.network), 0)::int,
           coalesce(rs.ratings, 0), coalesce(rs.distinct_raters, 0), coalesce(rs.rated_agents, 0),
           coalesce(ws.scored, 0), rs.mean_value, ws.prior
      FROM chains c
      LEFT JOIN (
        SELECT r.network, count(*)::int AS ratings, count(DISTINCT r.rater)::int AS distinct_raters,
               count(DISTINCT r.agent_id)::int AS rated_agents,
               (sum(r.value) FILTER (WHERE NOT r.revoked AND ${IN_DOMAIN('r')}) / nullif(count(*) FILTER (WHERE NOT r.revoked AND ${IN_DOMAIN('r')}), 0))::float8 AS mean_value
          FROM ratings r GROUP BY r.network
      ) rs ON rs.network = c.network
      LEFT JOIN (
        SELECT network, count(*)::int AS scored, ${EXACT_AVG('final_score')} AS prior
          FROM agg_wallet_chain WHERE final_score IS NOT NULL GROUP BY network
      ) ws ON ws.network = c.network`);
  await tx.query(`
    INSERT INTO agg_chain_day (network, day, ratings, distinct_raters)
    SELECT network, (block_time AT TIME ZONE 'UTC')::date, count(*)::int, count(DISTINCT rater)::int
      FROM ratings WHERE block_time IS NOT NULL
     GROUP BY network, (block_time AT TIME ZONE 'UTC')::date`);
}

async function refreshFacets(tx: Queryable): Promise<void> {
  const select = (networkExpr: string, agentKey: string, groupBy: string) => `
    SELECT ${networkExpr}, r.tag1, count(*)::int,
           (count(*) FILTER (WHERE ${ELIGIBLE('r', "coalesce(a.owner, '')")}))::int,
           (sum(r.value) FILTER (WHERE ${ELIGIBLE('r', "coalesce(a.owner, '')")})
             / nullif(count(*) FILTER (WHERE ${ELIGIBLE('r', "coalesce(a.owner, '')")}), 0))::float8,
           count(DISTINCT ${agentKey})::int, count(DISTINCT r.rater)::int
      FROM ratings r LEFT JOIN agents a ON a.network = r.network AND a.agent_id = r.agent_id
     GROUP BY ${groupBy}`;
  const cols = 'network, tag1, ratings, eligible, mean, distinct_agents, distinct_raters';
  await tx.query(`INSERT INTO agg_facet (${cols}) ${select('r.network', 'r.agent_id', 'r.network, r.tag1')}`);
  await tx.query(`INSERT INTO agg_facet (${cols}) ${select("'*'", "r.network || ':' || r.agent_id", 'r.tag1')}`);
}

async function refreshTypes(tx: Queryable): Promise<void> {
  await tx.query(`
    INSERT INTO agg_type (declared_type, declared, agent_count, rated_agent_count, total_reviews, avg_score)
    WITH per_agent AS (
      SELECT a.network, a.agent_id, a.declared_type,
             (count(r.*) FILTER (WHERE ${ELIGIBLE('r', "coalesce(a.owner, '')")}))::int AS eligible,
             sum(r.value) FILTER (WHERE ${ELIGIBLE('r', "coalesce(a.owner, '')")}) AS eligible_sum
        FROM agents a LEFT JOIN ratings r ON r.network = a.network AND r.agent_id = a.agent_id
       GROUP BY a.network, a.agent_id, a.declared_type
    )
    SELECT coalesce(declared_type, ''), declared_type IS NOT NULL, count(*)::int,
           (count(*) FILTER (WHERE eligible > 0))::int, sum(eligible)::int,
           CASE WHEN sum(eligible) > 0 THEN (sum(eligible_sum) / sum(eligible))::float8 END
      FROM per_agent
     GROUP BY coalesce(declared_type, ''), declared_type IS NOT NULL`);
}

async function refreshIssuers(tx: Queryable): Promise<void> {
  await tx.query(`
    INSERT INTO agg_issuer (host, ratings, distinct_agents, distinct_raters)
    SELECT coalesce(${URI_HOST('r.feedback_uri')}, ''), count(*)::int,
           count(DISTINCT r.network || ':' || r.agent_id)::int, count(DISTINCT r.rater)::int
      FROM ratings r
     GROUP BY 1`);
}

/** The refresh stamp and the live global prior; nulls before the first refresh. */
export async function readRefreshMeta(db: Queryable): Promise<{ refreshed_at: string | null; prior: number | null }> {
  const [row] = await db.query<{ value: { refreshed_at: string; prior: number | null } }>(
    `SELECT value FROM agg_meta WHERE meta_key = 'refresh'`,
  );
  return { refreshed_at: row?.value.refreshed_at ?? null, prior: row?.value.prior ?? null };
}
