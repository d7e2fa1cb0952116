/**
 * Queries behind `GET /search/{q}`: exact match only (no prefix, wildcard, listing or paging).
 * The wallet reading reuses the per-chain aggregate of src/read/wallets.ts; the agent-id reading is
 * one indexed lookup of that id on the given networks (agents_agent_id_idx) joined to the per-agent
 * aggregate refreshed after each index pass (agg_agent), so a free request never scans ratings.
 */
import type { Queryable } from '../db/database.js';

export const AGENT_LOOKUP_SOURCE = 'aggregate:agents+agg_agent';

/** One agent id found on one network, with the eligible aggregate of the ratings it received. */
interface AgentIdRow {
  network: string;
  agent_id: string;
  /** Current owner; null while only feedback has been seen for that id. */
  owner: string | null;
  declared_type: string | null;
  /** Every rating received, whatever its class. */
  ratings: number;
  /** Eligible ratings (not revoked, in domain, not by the current owner). */
  total_reviews: number;
  /** Exact sum of the eligible values (NUMERIC as text); null when none. */
  eligible_sum: string | null;
  distinct_raters: number;
}

/** Every agent with exactly this id on any of `networks` (one row per network). */
export async function findAgentsById(
  db: Queryable,
  agentId: string,
  networks: readonly string[],
): Promise<AgentIdRow[]> {
  if (networks.length === 0) return [];
  const rows = await db.query<Record<string, unknown>>(
    `SELECT a.network, a.agent_id, a.owner, a.declared_type,
            coalesce(g.ratings, 0) AS ratings, coalesce(g.total_reviews, 0) AS total_reviews,
            g.eligible_sum::text AS eligible_sum, coalesce(g.distinct_raters, 0) AS distinct_raters
       FROM agents a
       LEFT JOIN agg_agent g ON g.network = a.network AND g.agent_id = a.agent_id
      WHERE a.agent_id = $1 AND a.network = ANY($2::text[])`,
    [agentId, [...networks]],
  );
  return rows.map((r) => ({
    network: String(r.network),
    agent_id: String(r.agent_id),
    owner: r.owner === null || r.owner === undefined ? null : String(r.owner),
    declared_type: r.declared_type === null || r.declared_type === undefined ? null : String(r.declared_type),
    ratings: Number(r.ratings ?? 0),
    total_reviews: Number(r.total_reviews ?? 0),
    eligible_sum: r.eligible_sum === null || r.eligible_sum === undefined ? null : String(r.eligible_sum),
    distinct_raters: Number(r.distinct_raters ?? 0),
  }));
}
