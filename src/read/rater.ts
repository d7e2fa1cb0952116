/**
 * Ratings EMITTED by one wallet as rater, for the paid rater profile. The subject of each rating
 * is the rated agent's CURRENT owner (`network:agent_id` when the agent has no known owner, the
 * same rule as the weighting in subject.ts). Parameterised; no scoring here.
 */
import type { Queryable } from '../db/database.js';
import type { EmittedRating } from '../scoring/index.js';

interface EmittedRatingRow extends EmittedRating {
  agentId: string;
  tag1: string;
  txHash: string;
  blockNumber: number;
  logIndex: number;
}

export async function readEmittedRatings(db: Queryable, rater: string): Promise<EmittedRatingRow[]> {
  const rows = await db.query<Record<string, unknown>>(
    `SELECT r.network, r.agent_id, coalesce(a.owner, r.network || ':' || r.agent_id) AS subject,
            r.value::text AS value, r.revoked, r.block_time, r.tag1, r.tx_hash, r.block_number, r.log_index
       FROM ratings r
       LEFT JOIN agents a ON a.network = r.network AND a.agent_id = r.agent_id
      WHERE r.rater = $1
      ORDER BY r.network, r.block_number, r.log_index, r.tx_hash`,
    [rater],
  );
  return rows.map((r) => ({
    network: String(r.network),
    agentId: String(r.agent_id),
    subject: String(r.subject),
    value: String(r.value),
    revoked: r.revoked === true,
    blockTime: (r.block_time as Date | null) ?? null,
    tag1: String(r.tag1),
    txHash: String(r.tx_hash),
    blockNumber: Number(r.block_number),
    logIndex: Number(r.log_index),
  }));
}
