/**
 * One agent (network + agent_id) and the ratings it received, read from the raw tables for the
 * paid agent detail. Ratings come in chain order (block_number, log_index); the page is cut in
 * SQL (`limit` null = every rating). Every statement is parameterised; no scoring here.
 */
import type { Queryable } from '../db/database.js';

export interface AgentRow {
  network: string;
  agent_id: string;
  /** Today's owner (null while only feedback has been seen). */
  owner: string | null;
  minter: string | null;
  agent_uri: string | null;
  declared_type: string | null;
  registered_block: number | null;
  registered_tx: string | null;
  registered_at: Date | null;
}

export interface AgentRatingRow {
  network: string;
  agent_id: string;
  tx_hash: string;
  block_number: number;
  log_index: number;
  block_time: Date | null;
  rater: string;
  feedback_index: string;
  value_raw: string;
  value_decimals: number;
  /** Exact decimal string (value_raw / 10^value_decimals). */
  value: string;
  tag1: string;
  tag2: string;
  endpoint: string;
  feedback_uri: string;
  feedback_hash: string | null;
  revoked: boolean;
  revoked_tx: string | null;
  revoked_block: number | null;
  revoked_at: Date | null;
}

const num = (v: unknown): number | null => (v === null || v === undefined ? null : Number(v));

/** True when the index holds the identity row or at least one rating of it. */
export async function agentIsIndexed(db: Queryable, network: string, agentId: string): Promise<boolean> {
  const [row] = await db.query<{ found: boolean }>(
    `SELECT (EXISTS (SELECT 1 FROM agents WHERE network = $1 AND agent_id = $2)
          OR EXISTS (SELECT 1 FROM ratings WHERE network = $1 AND agent_id = $2)) AS found`,
    [network, agentId],
    { prepare: true },
  );
  return row?.found === true;
}

/** Position of a rating in its agent's chain order: the keyset of the ratings page. */
export interface RatingCursor {
  block_number: number;
  log_index: number;
  tx_hash: string;
}

/** `block.log_index.tx_hash`, opaque to clients. */
export function formatCursor(c: RatingCursor): string {
  return `${c.block_number}.${c.log_index}.${c.tx_hash}`;
}

export function parseCursor(raw: string): RatingCursor | null {
  const m = /^(\d{1,18})\.(\d{1,9})\.([0-9A-Za-z]{1,128})$/.exec(raw);
  if (!m) return null;
  const block = Number(m[1]);
  if (!Number.isSafeInteger(block)) return null;
  return { block_number: block, log_index: Number(m[2]), tx_hash: m[3] as string };
}

/**
 * One page of the agent's ratings in chain order (block_number, log_index, tx_hash), by keyset
 * (`after`, strictly after that position) or by offset: an index range scan on
 * (network, agent_id, block_number, log_index, tx_hash) that never holds more than the page.
 */
export async function readAgentRatingsPage(
  db: Queryable,
  network: string,
  agentId: string,
  page: { limit: number; offset: number; after: RatingCursor | null },
): Promise<AgentRatingRow[]> {
  const after = page.after;
  const rows = await db.query<Record<string, unknown>>(
    `SELECT network, agent_id, tx_hash, block_number, log_index, block_time, rater,
            feedback_index::text AS feedback_index, value_raw::text AS value_raw, value_decimals,
            value::text AS value, tag1, tag2, endpoint, feedback_uri, feedback_hash,
            revoked, revoked_tx, revoked_block, revoked_at
       FROM ratings
      WHERE network = $1 AND agent_id = $2
        AND ($5::bigint IS NULL OR (block_number, log_index, tx_hash) > ($5::bigint, $6::int, $7::text))
      ORDER BY block_number, log_index, tx_hash
      LIMIT $3 OFFSET $4`,
    [
      network,
      agentId,
      page.limit,
      page.offset,
      after?.block_number ?? null,
      after?.log_index ?? null,
      after?.tx_hash ?? null,
    ],
  );
  return rows.map(agentRatingRow);
}

function agentRatingRow(r: Record<string, unknown>): AgentRatingRow {
  return {
    network: String(r.network),
    agent_id: String(r.agent_id),
    tx_hash: String(r.tx_hash),
    block_number: Number(r.block_number),
    log_index: Number(r.log_index),
    block_time: (r.block_time as Date | null) ?? null,
    rater: String(r.rater),
    feedback_index: String(r.feedback_index),
    value_raw: String(r.value_raw),
    value_decimals: Number(r.value_decimals),
    value: String(r.value),
    tag1: String(r.tag1),
    tag2: String(r.tag2),
    endpoint: String(r.endpoint),
    feedback_uri: String(r.feedback_uri),
    feedback_hash: (r.feedback_hash as string | null) ?? null,
    revoked: r.revoked === true,
    revoked_tx: (r.revoked_tx as string | null) ?? null,
    revoked_block: num(r.revoked_block),
    revoked_at: (r.revoked_at as Date | null) ?? null,
  };
}

/**
 * Every rating of the agent in chain order with their count (the row-version reference used by
 * tests and the bench; the paid route reads `readAgentRatingsPage` and the aggregates).
 */
export async function readAgentRatings(
  db: Queryable,
  network: string,
  agentId: string,
  page: { limit: number | null; offset: number } = { limit: null, offset: 0 },
): Promise<{ total: number; ratings: AgentRatingRow[] }> {
  const [countRow] = await db.query<{ n: number | bigint }>(
    `SELECT count(*) AS n FROM ratings WHERE network = $1 AND agent_id = $2`,
    [network, agentId],
  );
  const rows = await db.query<Record<string, unknown>>(
    `SELECT network, agent_id, tx_hash, block_number, log_index, block_time, rater,
            feedback_index::text AS feedback_index, value_raw::text AS value_raw, value_decimals,
            value::text AS value, tag1, tag2, endpoint, feedback_uri, feedback_hash,
            revoked, revoked_tx, revoked_block, revoked_at
       FROM ratings
      WHERE network = $1 AND agent_id = $2
      ORDER BY block_number, log_index, tx_hash
      LIMIT $3 OFFSET $4`,
    [network, agentId, page.limit, page.offset],
  );
  return { total: Number(countRow?.n ?? 0), ratings: rows.map(agentRatingRow) };
}
