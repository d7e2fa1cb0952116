/**
 * Write statements for ratings and revocations. Every insert is idempotent (keyed by network +
 * tx hash + log index); a revocation is applied to its rating whichever of the two arrived first.
 */
import type { Queryable } from '../db/database.js';
import type { FeedbackEvent, RevocationEvent } from '../index-events.js';
import { chunks, count, countedInsert, csvField, iso } from './rows.js';

export const RATING_COLUMNS = [
  'network',
  'tx_hash',
  'log_index',
  'agent_id',
  'rater',
  'feedback_index',
  'value_raw',
  'value_decimals',
  'value',
  'tag1',
  'tag2',
  'endpoint',
  'feedback_uri',
  'feedback_hash',
  'block_number',
  'block_time',
] as const;
const COLS = RATING_COLUMNS.join(', ');

/** A rating as its CSV line, in RATING_COLUMNS order (NULL unquoted, every text quoted). */
export function ratingCsv(e: FeedbackEvent): string {
  return [
    csvField(e.network),
    csvField(e.txHash),
    csvField(e.logIndex),
    csvField(e.agentId),
    csvField(e.rater),
    csvField(e.feedbackIndex),
    csvField(e.valueRaw),
    csvField(e.valueDecimals),
    csvField(e.value),
    csvField(e.tag1),
    csvField(e.tag2),
    csvField(e.endpoint),
    csvField(e.feedbackUri),
    csvField(e.feedbackHash),
    csvField(e.blockNumber),
    csvField(iso(e.blockTime)),
  ].join(',');
}

/**
 * Inserts ratings (moves the chain's live ratings counter); returns the rows really inserted.
 *
 * On PGlite (a handle with `copyCsv`) the whole batch is first loaded into a session temp table
 * with one COPY, then inserted from it in ONE statement: the same INSERT … ON CONFLICT DO NOTHING
 * and the same statement triggers (one transition table for the batch), but no array parameter
 * built in JavaScript and parsed back element by element inside the WebAssembly server (that
 * path cost about as much as the insert itself there). Elsewhere: multi-row INSERT … SELECT FROM
 * unnest of arrays, in chunks.
 */
export async function insertRatings(tx: Queryable, feedback: readonly FeedbackEvent[]): Promise<number> {
  if (feedback.length === 0) return 0;
  if (tx.copyCsv) {
    await tx.query(
      `CREATE TEMP TABLE IF NOT EXISTS ratings_in (LIKE ratings INCLUDING DEFAULTS) ON COMMIT DELETE ROWS`,
    );
    await tx.query('DELETE FROM ratings_in');
    await tx.copyCsv('ratings_in', RATING_COLUMNS, feedback.map(ratingCsv).join('\n'));
    return count(
      tx,
      countedInsert(
        `INSERT INTO ratings (${COLS}) SELECT ${COLS} FROM ratings_in ON CONFLICT (network, tx_hash, log_index) DO NOTHING`,
        'ratings_count',
      ),
      [],
    );
  }
  let n = 0;
  for (const c of chunks(feedback)) {
    n += await count(
      tx,
      countedInsert(
        `INSERT INTO ratings (${COLS})
         SELECT * FROM unnest($1::text[], $2::text[], $3::int[], $4::text[], $5::text[], $6::numeric[], $7::numeric[],
                              $8::smallint[], $9::numeric[], $10::text[], $11::text[], $12::text[], $13::text[],
                              $14::text[], $15::bigint[], $16::timestamptz[])
         ON CONFLICT (network, tx_hash, log_index) DO NOTHING`,
        'ratings_count',
      ),
      [
        c.map((e) => e.network),
        c.map((e) => e.txHash),
        c.map((e) => e.logIndex),
        c.map((e) => e.agentId),
        c.map((e) => e.rater),
        c.map((e) => e.feedbackIndex),
        c.map((e) => e.valueRaw),
        c.map((e) => e.valueDecimals),
        c.map((e) => e.value),
        c.map((e) => e.tag1),
        c.map((e) => e.tag2),
        c.map((e) => e.endpoint),
        c.map((e) => e.feedbackUri),
        c.map((e) => e.feedbackHash),
        c.map((e) => e.blockNumber),
        c.map((e) => iso(e.blockTime)),
      ],
    );
  }
  return n;
}

/** Stores revocations as logged; returns the rows really inserted. */
export async function insertRevocations(
  tx: Queryable,
  revocations: readonly RevocationEvent[],
): Promise<number> {
  let n = 0;
  for (const c of chunks(revocations)) {
    n += await count(
      tx,
      `WITH ins AS (
         INSERT INTO revocations (network, tx_hash, log_index, agent_id, rater, feedback_index, block_number, block_time)
         SELECT * FROM unnest($1::text[], $2::text[], $3::int[], $4::text[], $5::text[], $6::numeric[], $7::bigint[], $8::timestamptz[])
         ON CONFLICT (network, tx_hash, log_index) DO NOTHING RETURNING 1)
       SELECT count(*)::int AS n FROM ins`,
      [
        c.map((e) => e.network),
        c.map((e) => e.txHash),
        c.map((e) => e.logIndex),
        c.map((e) => e.agentId),
        c.map((e) => e.rater),
        c.map((e) => e.feedbackIndex),
        c.map((e) => e.blockNumber),
        c.map((e) => iso(e.blockTime)),
      ],
    );
  }
  return n;
}

/** A rating's key: (network, agent, rater, feedback index). */
interface RatingKey {
  network: string;
  agentId: string;
  rater: string;
  feedbackIndex: string;
}

/**
 * Marks revoked every not yet revoked rating among `keys` that has a stored revocation (the
 * earliest revocation of a rating wins); returns the ratings whose flag was set.
 */
export async function applyRevocations(tx: Queryable, keys: readonly RatingKey[]): Promise<number> {
  let n = 0;
  for (const c of chunks(keys)) {
    // Look the revocations up first (an index probe per key, almost always nothing found), then
    // update only the ratings they name: the UPDATE never has to plan against a big key list.
    const found = await tx.query<{
      network: string;
      agent_id: string;
      rater: string;
      feedback_index: string;
      tx_hash: string;
      block_number: number;
      block_time: Date | null;
    }>(
      `SELECT DISTINCT ON (r.network, r.agent_id, r.rater, r.feedback_index)
              r.network, r.agent_id, r.rater, r.feedback_index::text AS feedback_index, r.tx_hash, r.block_number, r.block_time
         FROM unnest($1::text[], $2::text[], $3::text[], $4::numeric[]) AS k(network, agent_id, rater, feedback_index)
         JOIN revocations r ON r.network = k.network AND r.agent_id = k.agent_id AND r.rater = k.rater
                           AND r.feedback_index = k.feedback_index
        ORDER BY r.network, r.agent_id, r.rater, r.feedback_index, r.block_number, r.log_index`,
      [
        c.map((e) => e.network),
        c.map((e) => e.agentId),
        c.map((e) => e.rater),
        c.map((e) => e.feedbackIndex),
      ],
    );
    if (found.length === 0) continue;
    n += await count(
      tx,
      `WITH up AS (
         UPDATE ratings t SET revoked = TRUE, revoked_tx = v.tx_hash, revoked_block = v.block_number, revoked_at = v.block_time
           FROM unnest($1::text[], $2::text[], $3::text[], $4::numeric[], $5::text[], $6::bigint[], $7::timestamptz[])
                AS v(network, agent_id, rater, feedback_index, tx_hash, block_number, block_time)
          WHERE t.network = v.network AND t.agent_id = v.agent_id AND t.rater = v.rater
            AND t.feedback_index = v.feedback_index AND NOT t.revoked
         RETURNING 1)
       SELECT count(*)::int AS n FROM up`,
      [
        found.map((f) => f.network),
        found.map((f) => f.agent_id),
        found.map((f) => f.rater),
        found.map((f) => f.feedback_index),
        found.map((f) => f.tx_hash),
        found.map((f) => f.block_number),
        found.map((f) => (f.block_time ? new Date(f.block_time).toISOString() : null)),
      ],
    );
  }
  return n;
}
