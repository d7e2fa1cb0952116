/**
 * A deep reorg's storage side: deletes everything the index holds from blocks above the common
 * ancestor in ONE transaction and moves the checkpoint back (src/indexer/rollback.ts finds the
 * ancestor and calls this). Metadata values and agent URIs are stored as "latest value only": when
 * the rollback removes a latest value of an agent that existed below the ancestor, the earlier
 * value is not known any more, and the checkpoint goes back to the chain's start block (a full
 * rescan).
 */
import type { Queryable } from '../db/database.js';
import { requireFullRefresh } from './aggregate-meta.js';
import { count as n } from './rows.js';

export interface RollbackResult {
  network: string;
  /** The block everything above was deleted (null: everything; the chain is rescanned from its start). */
  ancestor: number | null;
  ratings: number;
  revocations: number;
  unrevoked: number;
  /** ResponseAppended rows and feedback-document jobs deleted with their blocks. */
  responses: number;
  documents: number;
  transfers: number;
  metadata: number;
  agents: number;
  /** Agents whose rows or ratings changed: the keys derived aggregates must be recomputed for. */
  touched: { network: string; agent_id: string }[];
  /** The checkpoint went back to the start block (a latest-only value could not be restored). */
  fullRescan: boolean;
}

/**
 * Deletes everything the index holds from blocks above `block` on `network` and moves the
 * checkpoint back (to `block`, or to "nothing scanned" when a full rescan is needed; `block`
 * null means everything). Call it inside ONE transaction (see healReorg). All of the rollback's
 * SQL lives here.
 */
export async function rollbackAbove(
  tx: Queryable,
  network: string,
  block: number | null,
): Promise<RollbackResult> {
  const b = block ?? -1;
  const p = [network, b];
  // The agents whose data changes, collected before anything is deleted.
  const touched = await tx.query<{ network: string; agent_id: string }>(
    `SELECT $1::text AS network, agent_id FROM (
       SELECT agent_id FROM ratings WHERE network = $1 AND (block_number > $2 OR revoked_block > $2)
       UNION SELECT agent_id FROM revocations WHERE network = $1 AND block_number > $2
       UNION SELECT agent_id FROM ownership_transfers WHERE network = $1 AND block_number > $2
       UNION SELECT agent_id FROM agent_metadata WHERE network = $1 AND block_number > $2
       UNION SELECT agent_id FROM agents WHERE network = $1
               AND (registered_block > $2 OR owner_block > $2 OR uri_block > $2)
     ) k ORDER BY agent_id`,
    p,
  );
  // A latest-only value (metadata, URI) above the ancestor on an agent that already existed below
  // it: its earlier value is gone, so the chain is rescanned from the start.
  const fullRescan =
    block === null ||
    (await n(
      tx,
      `SELECT count(*)::int AS n FROM agents a
        WHERE a.network = $1 AND (a.registered_block IS NULL OR a.registered_block <= $2)
          AND (a.uri_block > $2 OR EXISTS (SELECT 1 FROM agent_metadata m
                WHERE m.network = a.network AND m.agent_id = a.agent_id AND m.block_number > $2))`,
      p,
    )) > 0;

  const unrevoked = await n(
    tx,
    `WITH up AS (UPDATE ratings SET revoked = FALSE, revoked_tx = NULL, revoked_block = NULL, revoked_at = NULL
                  WHERE network = $1 AND revoked_block > $2 AND block_number <= $2 RETURNING 1)
     SELECT count(*)::int AS n FROM up`,
    p,
  );
  const ratings = await n(
    tx,
    `WITH del AS (DELETE FROM ratings WHERE network = $1 AND block_number > $2 RETURNING 1),
          bump AS (UPDATE chains SET ratings_count = ratings_count - (SELECT count(*) FROM del) WHERE network = $1)
     SELECT count(*)::int AS n FROM del`,
    p,
  );
  const revocations = await n(
    tx,
    `WITH del AS (DELETE FROM revocations WHERE network = $1 AND block_number > $2 RETURNING 1) SELECT count(*)::int AS n FROM del`,
    p,
  );
  const responses = await n(
    tx,
    `WITH del AS (DELETE FROM rating_responses WHERE network = $1 AND block_number > $2 RETURNING 1) SELECT count(*)::int AS n FROM del`,
    p,
  );
  const documents = await n(
    tx,
    `WITH del AS (DELETE FROM feedback_documents WHERE network = $1 AND block_number > $2 RETURNING 1) SELECT count(*)::int AS n FROM del`,
    p,
  );
  const transfers = await n(
    tx,
    `WITH del AS (DELETE FROM ownership_transfers WHERE network = $1 AND block_number > $2 RETURNING 1) SELECT count(*)::int AS n FROM del`,
    p,
  );
  const metadata = await n(
    tx,
    `WITH del AS (DELETE FROM agent_metadata WHERE network = $1 AND block_number > $2 RETURNING 1) SELECT count(*)::int AS n FROM del`,
    p,
  );
  // The current owner: the latest transfer still held (none: unknown again).
  await tx.query(
    `UPDATE agents a SET (owner, owner_block, owner_log_index) = (
       SELECT t.to_address, t.block_number, t.log_index FROM ownership_transfers t
        WHERE t.network = a.network AND t.agent_id = a.agent_id
        ORDER BY t.block_number DESC, t.log_index DESC LIMIT 1)
      WHERE a.network = $1 AND a.owner_block > $2`,
    p,
  );
  // URIs set above the ancestor (their earlier value comes back with the full rescan).
  await tx.query(
    `UPDATE agents SET agent_uri = NULL, uri_block = NULL, uri_log_index = NULL, uri_declared_type = NULL
      WHERE network = $1 AND uri_block > $2`,
    p,
  );
  // Agents minted above the ancestor, and rows nothing below it speaks of any more.
  const agents = await n(
    tx,
    `WITH del AS (
       DELETE FROM agents a WHERE a.network = $1 AND (
         a.registered_block > $2
         OR (a.registered_block IS NULL AND a.owner_block IS NULL AND a.uri_block IS NULL
             AND a.agent_id = ANY($3::text[])
             AND NOT EXISTS (SELECT 1 FROM agent_metadata m WHERE m.network = a.network AND m.agent_id = a.agent_id)))
       RETURNING 1),
     bump AS (UPDATE chains SET agents_count = agents_count - (SELECT count(*) FROM del) WHERE network = $1)
     SELECT count(*)::int AS n FROM del`,
    [network, b, touched.map((t) => t.agent_id)],
  );
  // Registration files of URIs set above the ancestor, or of agents gone (their endpoints go with them).
  await tx.query(
    `DELETE FROM agent_registrations r WHERE r.network = $1 AND (r.uri_block > $2 OR NOT EXISTS (
       SELECT 1 FROM agents a WHERE a.network = r.network AND a.agent_id = r.agent_id AND a.agent_uri IS NOT NULL))`,
    p,
  );
  await tx.query(`DELETE FROM chain_block_hashes WHERE network = $1 AND block_number > $2`, p);
  await tx.query(`UPDATE chains SET last_scanned_block = $2 WHERE network = $1`, [
    network,
    fullRescan ? null : block,
  ]);

  // ---- DERIVED AGGREGATES: the single call site where a rollback recomputes what is derived
  // from the rows above (per-agent / per-subject aggregates), for exactly the agents it touched.
  await recomputeDerivedAfterRollback(
    tx,
    network,
    touched.map((t) => t.agent_id),
  );

  return {
    network,
    ancestor: block,
    ratings,
    revocations,
    unrevoked,
    responses,
    documents,
    transfers,
    metadata,
    agents,
    touched,
    fullRescan,
  };
}

/**
 * Recomputes the aggregates derived from the agents a rollback touched (inside its transaction).
 * The free aggregates (src/store/aggregates-refresh.ts) are marked for a full rebuild by the after-pass
 * refresh; aggregate tables kept up to date by the ingest must be recomputed here for `agentIds`.
 */
async function recomputeDerivedAfterRollback(
  tx: Queryable,
  network: string,
  _agentIds: string[],
): Promise<void> {
  // The free aggregates: rows below a checkpoint were deleted, which the incremental refresh (it
  // looks above the last refresh's checkpoints) cannot see: the next refresh rebuilds them whole.
  await requireFullRefresh(tx, `rollback on ${network}`);
}
