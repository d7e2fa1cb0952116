/**
 * A rater's side of the MAINTAINED aggregates (the rater profile): its (agent, rater) rows with each
 * agent's current subject, its per-tag rows, and the block times of its first and last rating (two
 * index probes of `ratings`). O(subjects it rated), never O(ratings). Parameterised; no scoring.
 */
import type { Queryable } from '../db/database.js';
import type { AgentRaterAggregate, AgentRaterTagAggregate, EmittedAggregate } from '../scoring/index.js';

const RATER_COLS = `ar.network, ar.agent_id, ar.rater, ar.live_count, trim_scale(ar.live_sum)::text AS live_sum,
  ar.live_sumsq::text AS live_sumsq, ar.live_undated, ar.revoked_count, ar.ood_count`;

const TAG_COLS = `t.network, t.agent_id, t.rater, t.tag1, t.live_count, t.live_sum::text AS live_sum,
  t.revoked_count, t.ood_count`;

function raterRow(r: Record<string, unknown>): AgentRaterAggregate {
  return {
    network: String(r.network),
    agentId: String(r.agent_id),
    rater: String(r.rater),
    liveCount: Number(r.live_count),
    liveSum: String(r.live_sum),
    ...(r.live_sumsq === undefined ? {} : { liveSumSq: String(r.live_sumsq) }),
    liveUndated: Number(r.live_undated),
    revokedCount: Number(r.revoked_count),
    oodCount: Number(r.ood_count),
  };
}

function tagRow(r: Record<string, unknown>): AgentRaterTagAggregate {
  return {
    network: String(r.network),
    agentId: String(r.agent_id),
    rater: String(r.rater),
    tag1: String(r.tag1),
    liveCount: Number(r.live_count),
    liveSum: String(r.live_sum),
    revokedCount: Number(r.revoked_count),
    oodCount: Number(r.ood_count),
  };
}

/** A rater's maintained rows with each agent's current subject, and its first/last rating time. */
export async function readEmittedAggregates(
  db: Queryable,
  rater: string,
): Promise<{
  rows: EmittedAggregate[];
  tags: AgentRaterTagAggregate[];
  first: Date | null;
  last: Date | null;
}> {
  const [rows, tags, span] = await Promise.all([
    db.query<Record<string, unknown>>(
      `SELECT ${RATER_COLS}, coalesce(a.owner, ar.network || ':' || ar.agent_id) AS subject
         FROM live_agent_rater ar LEFT JOIN agents a ON a.network = ar.network AND a.agent_id = ar.agent_id
        WHERE ar.rater = $1`,
      [rater],
      { prepare: true },
    ),
    db.query<Record<string, unknown>>(
      `SELECT ${TAG_COLS} FROM live_agent_rater_tag t WHERE t.rater = $1`,
      [rater],
      {
        prepare: true,
      },
    ),
    db.query<{ first: Date | null; last: Date | null }>(
      `SELECT (SELECT block_time FROM ratings WHERE rater = $1 AND block_time IS NOT NULL ORDER BY block_time ASC LIMIT 1) AS first,
              (SELECT block_time FROM ratings WHERE rater = $1 AND block_time IS NOT NULL ORDER BY block_time DESC LIMIT 1) AS last`,
      [rater],
      { prepare: true },
    ),
  ]);
  return {
    rows: rows.map((r) => ({ ...raterRow(r), subject: String(r.subject) })),
    tags: tags.map(tagRow),
    first: span[0]?.first ?? null,
    last: span[0]?.last ?? null,
  };
}
