/**
 * The steps of the free aggregates' refresh (./aggregates-refresh.ts runs them, in order, in its
 * one transaction): the per-agent pieces of the agents in scope, the distinct members, the
 * per-wallet rows (per chain and overall), then the small top-level tables (chains, facets, types,
 * issuers) summed from those pieces. Every statement writes the agg_* tables; none scans the
 * ratings table beyond the rows of the agents in scope.
 */
import type { Queryable } from '../db/database.js';
import { SHRINKAGE_K } from '../scoring/policies.js';
import { ELIGIBLE, IN_DOMAIN, SELF, URI_HOST } from '../db/sql-fragments.js';

/**
 * Mean of a column in exact NUMERIC (an order-independent sum, one rounding at the end), so two
 * indexings of the same chain give the same double bit for bit whatever the row order; a float
 * avg() depends on the order rows are summed in.
 */
export const EXACT_AVG = (col: string) => `(sum((${col})::numeric) / nullif(count(${col}), 0))::float8`;

const ownerOr = "coalesce(a.owner, '')";

/** The rating columns the refresh reads from new and newly revoked ratings. */
export const NEW_COLS =
  'network, agent_id, rater, value, revoked, tag1, feedback_uri, block_time, block_number, revoked_block';

/**
 * Per-agent pieces (by class, by tag1, by issuer host, eligible ratings per rater), moved by the
 * DELTA of the ratings written or revoked since the last refresh; agents whose owner moved are
 * recounted from their rows. A full rebuild is the same with every rating new.
 */
export async function refreshAgents(tx: Queryable, fresh: string): Promise<void> {
  for (const t of ['agg_agent', 'agg_agent_tag', 'agg_agent_host', 'agg_agent_rater']) {
    await tx.query(
      `DELETE FROM ${t} x USING refresh_reset d WHERE x.network = d.network AND x.agent_id = d.agent_id`,
    );
  }
  // One row per affected rating: its contribution now, minus (for an older rating revoked since)
  // its contribution before (it was live then: the earliest revocation is the one recorded).
  await tx.query(`
    CREATE TEMP TABLE IF NOT EXISTS refresh_delta (
      network TEXT, agent_id TEXT, tag1 TEXT, host TEXT, rater TEXT, ratings INTEGER, eligible INTEGER,
      esum NUMERIC, self INTEGER, revoked INTEGER, ood INTEGER, live INTEGER, lsum NUMERIC, last_at TIMESTAMPTZ)`);
  await tx.query(`DELETE FROM refresh_delta`);
  const elig = ELIGIBLE('r', ownerOr);
  const live = `(NOT r.revoked AND ${IN_DOMAIN('r')})`;
  const nowRow = `r.network, r.agent_id, r.tag1, coalesce(${URI_HOST('r.feedback_uri')}, ''), r.rater, 1,
           CASE WHEN ${elig} THEN 1 ELSE 0 END, CASE WHEN ${elig} THEN r.value ELSE 0 END,
           CASE WHEN ${SELF('r', 'a.owner')} THEN 1 ELSE 0 END, CASE WHEN r.revoked THEN 1 ELSE 0 END,
           CASE WHEN NOT r.revoked AND NOT ${IN_DOMAIN('r')} THEN 1 ELSE 0 END,
           CASE WHEN ${live} THEN 1 ELSE 0 END, CASE WHEN ${live} THEN r.value ELSE 0 END, r.block_time`;
  const cols =
    'network, agent_id, tag1, host, rater, ratings, eligible, esum, self, revoked, ood, live, lsum, last_at';
  await tx.query(`
    INSERT INTO refresh_delta (${cols})
    SELECT ${nowRow}
      FROM ${fresh} r
      LEFT JOIN agents a ON a.network = r.network AND a.agent_id = r.agent_id`);
  await tx.query(`
    INSERT INTO refresh_delta (${cols})
    SELECT ${nowRow}
      FROM refresh_reset d JOIN ratings r ON r.network = d.network AND r.agent_id = d.agent_id
      JOIN refresh_since s ON s.network = r.network AND r.block_number <= s.block
      LEFT JOIN agents a ON a.network = r.network AND a.agent_id = r.agent_id`);
  // older ratings revoked since: live → revoked
  const wasElig = `(${IN_DOMAIN('r')} AND r.rater <> ${ownerOr})`;
  await tx.query(`
    INSERT INTO refresh_delta (${cols})
    SELECT r.network, r.agent_id, r.tag1, coalesce(${URI_HOST('r.feedback_uri')}, ''), r.rater, 0,
           CASE WHEN ${wasElig} THEN -1 ELSE 0 END, CASE WHEN ${wasElig} THEN -r.value ELSE 0 END,
           CASE WHEN ${IN_DOMAIN('r')} AND r.rater = a.owner THEN -1 ELSE 0 END, 1,
           CASE WHEN NOT ${IN_DOMAIN('r')} THEN -1 ELSE 0 END,
           CASE WHEN ${IN_DOMAIN('r')} THEN -1 ELSE 0 END, CASE WHEN ${IN_DOMAIN('r')} THEN -r.value ELSE 0 END,
           NULL
      FROM refresh_revoked r
      LEFT JOIN agents a ON a.network = r.network AND a.agent_id = r.agent_id
     WHERE NOT EXISTS (SELECT 1 FROM refresh_reset d WHERE d.network = r.network AND d.agent_id = r.agent_id)`);

  await tx.query(`
    INSERT INTO agg_agent (network, agent_id, ratings, total_reviews, eligible_sum, distinct_raters, self_count,
                           revoked_count, out_of_domain_count, live_count, live_sum, last_rating_at)
    SELECT network, agent_id, sum(ratings), sum(eligible), sum(esum), 0, sum(self), sum(revoked), sum(ood),
           sum(live), sum(lsum), max(last_at)
      FROM refresh_delta GROUP BY network, agent_id
    ON CONFLICT (network, agent_id) DO UPDATE SET
      ratings = agg_agent.ratings + EXCLUDED.ratings,
      total_reviews = agg_agent.total_reviews + EXCLUDED.total_reviews,
      eligible_sum = coalesce(agg_agent.eligible_sum, 0) + EXCLUDED.eligible_sum,
      self_count = agg_agent.self_count + EXCLUDED.self_count,
      revoked_count = agg_agent.revoked_count + EXCLUDED.revoked_count,
      out_of_domain_count = agg_agent.out_of_domain_count + EXCLUDED.out_of_domain_count,
      live_count = agg_agent.live_count + EXCLUDED.live_count,
      live_sum = coalesce(agg_agent.live_sum, 0) + EXCLUDED.live_sum,
      last_rating_at = greatest(agg_agent.last_rating_at, EXCLUDED.last_rating_at)`);
  await tx.query(`
    INSERT INTO agg_agent_rater (network, agent_id, rater, eligible)
    SELECT network, agent_id, rater, sum(eligible) FROM refresh_delta
     GROUP BY network, agent_id, rater HAVING sum(eligible) <> 0
    ON CONFLICT (network, agent_id, rater) DO UPDATE SET eligible = agg_agent_rater.eligible + EXCLUDED.eligible`);
  await tx.query(`
    INSERT INTO agg_agent_tag (network, agent_id, tag_key, tag1, ratings, eligible, eligible_sum)
    SELECT network, agent_id, md5(tag1), min(tag1), sum(ratings), sum(eligible), sum(esum)
      FROM refresh_delta GROUP BY network, agent_id, md5(tag1)
    ON CONFLICT (network, agent_id, tag_key) DO UPDATE SET
      ratings = agg_agent_tag.ratings + EXCLUDED.ratings,
      eligible = agg_agent_tag.eligible + EXCLUDED.eligible,
      eligible_sum = coalesce(agg_agent_tag.eligible_sum, 0) + EXCLUDED.eligible_sum`);
  await tx.query(`
    INSERT INTO agg_agent_host (network, agent_id, host_key, host, ratings)
    SELECT network, agent_id, md5(host), min(host), sum(ratings)
      FROM refresh_delta GROUP BY network, agent_id, md5(host) HAVING sum(ratings) > 0
    ON CONFLICT (network, agent_id, host_key) DO UPDATE SET ratings = agg_agent_host.ratings + EXCLUDED.ratings`);
  // Normal forms (so a moved sum reads exactly like a recount): NULL when nothing is counted,
  // trailing zeros trimmed; distinct eligible raters recounted from agg_agent_rater.
  await tx.query(`
    CREATE TEMP TABLE IF NOT EXISTS refresh_moved (network TEXT, agent_id TEXT, PRIMARY KEY (network, agent_id))`);
  await tx.query(`DELETE FROM refresh_moved`);
  await tx.query(`INSERT INTO refresh_moved SELECT DISTINCT network, agent_id FROM refresh_delta`);
  await tx.query(`
    DELETE FROM agg_agent_rater x USING refresh_moved m
     WHERE x.network = m.network AND x.agent_id = m.agent_id AND x.eligible <= 0`);
  await tx.query(`
    UPDATE agg_agent g SET
      eligible_sum = CASE WHEN g.total_reviews = 0 THEN NULL ELSE trim_scale(g.eligible_sum) END,
      live_sum = CASE WHEN g.live_count = 0 THEN NULL ELSE trim_scale(g.live_sum) END,
      distinct_raters = (SELECT count(*) FROM agg_agent_rater x WHERE x.network = g.network AND x.agent_id = g.agent_id)::int
      FROM refresh_moved m WHERE g.network = m.network AND g.agent_id = m.agent_id`);
  await tx.query(`
    UPDATE agg_agent_tag t SET eligible_sum = CASE WHEN t.eligible = 0 THEN NULL ELSE trim_scale(t.eligible_sum) END
      FROM refresh_moved m WHERE t.network = m.network AND t.agent_id = m.agent_id`);
}

/**
 * Distinct raters per chain, per facet, per issuer host and per day, distinct agents per host:
 * membership rows that only new ratings add to (class-independent: a revocation or a transfer
 * moves none); the activity counts of the days new ratings fell on.
 */
// Each branch is made distinct on its own and the branches are appended (UNION ALL), so no one sort
// or hash table holds every branch's rows at once (six times the ratings in a full rebuild, spilled
// to disk past work_mem); a row two branches gave alike is still inserted once (ON CONFLICT DO
// NOTHING skips a row the same statement already inserted).
export async function refreshMembers(tx: Queryable, fresh: string): Promise<void> {
  const day = "(n.block_time AT TIME ZONE 'UTC')::date";
  await tx.query(`
    INSERT INTO agg_member (dim, key, member)
    SELECT DISTINCT 'chain_rater', n.network, n.rater FROM ${fresh} n
    UNION ALL SELECT DISTINCT 'facet_rater', n.network || ':' || md5(n.tag1), n.rater FROM ${fresh} n
    UNION ALL SELECT DISTINCT 'facet_rater', '*:' || md5(n.tag1), n.rater FROM ${fresh} n
    UNION ALL SELECT DISTINCT 'issuer_rater', md5(coalesce(${URI_HOST('n.feedback_uri')}, '')), n.rater FROM ${fresh} n
    UNION ALL SELECT DISTINCT 'issuer_agent', md5(coalesce(${URI_HOST('n.feedback_uri')}, '')), n.network || ':' || n.agent_id
            FROM ${fresh} n
    UNION ALL SELECT DISTINCT 'day_rater', n.network || ':' || ${day}, n.rater FROM ${fresh} n WHERE n.block_time IS NOT NULL
    ON CONFLICT DO NOTHING`);
  await tx.query(`
    INSERT INTO agg_chain_day (network, day, ratings, distinct_raters)
    SELECT n.network, ${day}, count(*)::int, 0 FROM ${fresh} n WHERE n.block_time IS NOT NULL GROUP BY 1, 2
    ON CONFLICT (network, day) DO UPDATE SET ratings = agg_chain_day.ratings + EXCLUDED.ratings`);
  await tx.query(`
    UPDATE agg_chain_day c SET distinct_raters =
      (SELECT count(*) FROM agg_member m WHERE m.dim = 'day_rater' AND m.key = c.network || ':' || c.day)::int
      FROM refresh_days d WHERE c.network = d.network AND c.day = d.day`);
}

export async function refreshWalletChains(tx: Queryable): Promise<void> {
  await tx.query(`DELETE FROM agg_wallet_chain x USING refresh_wallets w WHERE x.wallet = w.wallet`);
  await tx.query(`DELETE FROM agg_wallet x USING refresh_wallets w WHERE x.wallet = w.wallet`);
  // Distinct eligible raters per (wallet, chain) and per wallet: from the wallets' ratings.
  await tx.query(`CREATE TEMP TABLE IF NOT EXISTS refresh_raters (wallet TEXT, network TEXT, n INTEGER)`);
  await tx.query(`DELETE FROM refresh_raters`);
  await tx.query(`
    INSERT INTO refresh_raters (wallet, network, n)
    SELECT a.owner, x.network, count(DISTINCT x.rater)::int
      FROM refresh_wallets w JOIN agents a ON a.owner = w.wallet
      JOIN agg_agent_rater x ON x.network = a.network AND x.agent_id = a.agent_id
     GROUP BY GROUPING SETS ((a.owner, x.network), (a.owner))`);
  await tx.query(`
    INSERT INTO agg_wallet_chain (wallet, network, agent_ids, agent_count, declared_types, ratings, total_reviews,
      eligible_sum, final_score, distinct_raters, self_count, revoked_count, out_of_domain_count, last_rating_at)
    SELECT a.owner, a.network,
           array_agg(a.agent_id ORDER BY length(a.agent_id), a.agent_id),
           count(*)::int,
           array_agg(DISTINCT a.declared_type),
           coalesce(sum(g.ratings), 0)::int, coalesce(sum(g.total_reviews), 0)::int, sum(g.eligible_sum),
           CASE WHEN sum(g.total_reviews) > 0 THEN (sum(g.eligible_sum) / sum(g.total_reviews))::float8 END,
           coalesce(max(rr.n), 0), coalesce(sum(g.self_count), 0)::int, coalesce(sum(g.revoked_count), 0)::int,
           coalesce(sum(g.out_of_domain_count), 0)::int, max(g.last_rating_at)
      FROM refresh_wallets w JOIN agents a ON a.owner = w.wallet
      LEFT JOIN agg_agent g ON g.network = a.network AND g.agent_id = a.agent_id
      LEFT JOIN refresh_raters rr ON rr.wallet = a.owner AND rr.network = a.network
     GROUP BY a.owner, a.network`);
  // Per-chain ranking: shrink toward that chain's prior (mean of the chain's scored wallets).
  await tx.query(
    `UPDATE agg_wallet_chain w
        SET shrunk_score = (w.distinct_raters * w.final_score + $1 * p.prior) / (w.distinct_raters + $1)
       FROM (SELECT network, ${EXACT_AVG('final_score')} AS prior FROM agg_wallet_chain WHERE final_score IS NOT NULL GROUP BY network) p
      WHERE p.network = w.network AND w.final_score IS NOT NULL
        AND w.shrunk_score IS DISTINCT FROM (w.distinct_raters * w.final_score + $1 * p.prior) / (w.distinct_raters + $1)`,
    [SHRINKAGE_K],
  );
}

export async function refreshWallets(tx: Queryable): Promise<void> {
  // Global score = mean of the non-null per-chain scores (avg skips NULL): one chain, one vote.
  await tx.query(`
    INSERT INTO agg_wallet (wallet, final_score, distinct_raters, total_reviews, ratings, chain_count, networks,
      identity_count, chains_with_identity, chains_with_reputation, declared_types, last_rating_at)
    WITH types AS (
      SELECT c.wallet, array_agg(DISTINCT t) AS declared_types
        FROM refresh_wallets rw JOIN agg_wallet_chain c ON c.wallet = rw.wallet, unnest(c.declared_types) AS t
       GROUP BY c.wallet
    )
    SELECT w.wallet, ${EXACT_AVG('w.final_score')}, coalesce(max(ra.n), 0), sum(w.total_reviews)::int,
           sum(w.ratings)::int,
           (count(*) FILTER (WHERE w.final_score IS NOT NULL))::int,
           coalesce(array_agg(w.network ORDER BY w.network) FILTER (WHERE w.final_score IS NOT NULL), '{}'),
           sum(w.agent_count)::int, count(*)::int, (count(*) FILTER (WHERE w.ratings > 0))::int,
           coalesce(max(ty.declared_types), '{}'), max(w.last_rating_at)
      FROM refresh_wallets rw JOIN agg_wallet_chain w ON w.wallet = rw.wallet
      LEFT JOIN refresh_raters ra ON ra.wallet = w.wallet AND ra.network IS NULL
      LEFT JOIN types ty ON ty.wallet = w.wallet
     GROUP BY w.wallet`);
  await tx.query(
    `UPDATE agg_wallet w
        SET shrunk_score = (w.distinct_raters * w.final_score + $1 * p.prior) / (w.distinct_raters + $1)
       FROM (SELECT ${EXACT_AVG('final_score')} AS prior FROM agg_wallet WHERE final_score IS NOT NULL) p
      WHERE w.final_score IS NOT NULL AND p.prior IS NOT NULL
        AND w.shrunk_score IS DISTINCT FROM (w.distinct_raters * w.final_score + $1 * p.prior) / (w.distinct_raters + $1)`,
    [SHRINKAGE_K],
  );
}

export async function refreshChains(tx: Queryable): Promise<void> {
  // Every configured chain gets a row, zeros included; summed from the per-agent pieces.
  await tx.query(`DELETE FROM agg_chain`);
  await tx.query(`
    INSERT INTO agg_chain (network, agents, ratings, distinct_raters, rated_agents, scored_wallets, mean_value, prior)
    SELECT c.network,
           coalesce((SELECT count(*) FROM agents a WHERE a.network = c.network), 0)::int,
           coalesce(rs.ratings, 0), coalesce(mr.n, 0), coalesce(rs.rated_agents, 0),
           coalesce(ws.scored, 0), rs.mean_value, ws.prior
      FROM chains c
      LEFT JOIN (
        SELECT network, sum(ratings)::int AS ratings, count(*)::int AS rated_agents,
               CASE WHEN sum(live_count) > 0 THEN (sum(live_sum) / sum(live_count))::float8 END AS mean_value
          FROM agg_agent GROUP BY network
      ) rs ON rs.network = c.network
      LEFT JOIN (SELECT key, count(*)::int AS n FROM agg_member WHERE dim = 'chain_rater' GROUP BY key) mr
        ON mr.key = c.network
      LEFT JOIN (
        SELECT network, count(*)::int AS scored, ${EXACT_AVG('final_score')} AS prior
          FROM agg_wallet_chain WHERE final_score IS NOT NULL GROUP BY network
      ) ws ON ws.network = c.network`);
}

export async function refreshFacets(tx: Queryable): Promise<void> {
  await tx.query(`DELETE FROM agg_facet`);
  const cols = 'network, tag1, ratings, eligible, mean, distinct_agents, distinct_raters';
  // per chain, then all chains ('*'): sums of the per-agent pieces, raters from agg_member
  for (const [network, agentKey, groupBy, memberKey] of [
    ['t.network', 't.agent_id', 't.network, t.tag1', "f.network || ':' || md5(f.tag1)"],
    ["'*'", "t.network || ':' || t.agent_id", 't.tag1', "'*:' || md5(f.tag1)"],
  ] as const) {
    await tx.query(`
      INSERT INTO agg_facet (${cols})
      SELECT f.network, f.tag1, f.ratings, f.eligible, f.mean, f.distinct_agents, coalesce(m.n, 0)
        FROM (
          SELECT ${network} AS network, t.tag1, sum(t.ratings)::int AS ratings, sum(t.eligible)::int AS eligible,
                 CASE WHEN sum(t.eligible) > 0 THEN (sum(t.eligible_sum) / sum(t.eligible))::float8 END AS mean,
                 count(DISTINCT ${agentKey})::int AS distinct_agents
            FROM agg_agent_tag t GROUP BY ${groupBy}
        ) f
        LEFT JOIN (SELECT key, count(*)::int AS n FROM agg_member WHERE dim = 'facet_rater' GROUP BY key) m
          ON m.key = ${memberKey}`);
  }
}

export async function refreshTypes(tx: Queryable): Promise<void> {
  await tx.query(`DELETE FROM agg_type`);
  await tx.query(`
    INSERT INTO agg_type (declared_type, declared, agent_count, rated_agent_count, total_reviews, avg_score)
    SELECT coalesce(a.declared_type, ''), a.declared_type IS NOT NULL, count(*)::int,
           (count(*) FILTER (WHERE g.total_reviews > 0))::int, coalesce(sum(g.total_reviews), 0)::int,
           CASE WHEN sum(g.total_reviews) > 0 THEN (sum(g.eligible_sum) / sum(g.total_reviews))::float8 END
      FROM agents a LEFT JOIN agg_agent g ON g.network = a.network AND g.agent_id = a.agent_id
     GROUP BY coalesce(a.declared_type, ''), a.declared_type IS NOT NULL`);
}

export async function refreshIssuers(tx: Queryable): Promise<void> {
  await tx.query(`DELETE FROM agg_issuer`);
  await tx.query(`
    INSERT INTO agg_issuer (host, ratings, distinct_agents, distinct_raters)
    SELECT h.host, h.ratings, coalesce(ma.n, 0), coalesce(mr.n, 0)
      FROM (SELECT host, sum(ratings)::int AS ratings FROM agg_agent_host GROUP BY host) h
      LEFT JOIN (SELECT key, count(*)::int AS n FROM agg_member WHERE dim = 'issuer_agent' GROUP BY key) ma
        ON ma.key = md5(h.host)
      LEFT JOIN (SELECT key, count(*)::int AS n FROM agg_member WHERE dim = 'issuer_rater' GROUP BY key) mr
        ON mr.key = md5(h.host)`);
}
