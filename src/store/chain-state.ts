/**
 * The `chains` table (one row per configured network: checkpoint, head, backfill flag, last
 * success and error, start block, live counters) and the stored checkpoint block hashes.
 */
import type { ChainConfig } from '../chains.js';
import type { Queryable } from '../db/database.js';
import { iso } from './rows.js';

/** Upserts every configured chain (kind, chain id, enabled); scan state is left untouched. */
export async function registerChains(db: Queryable, chains: ChainConfig[]): Promise<void> {
  for (const ch of chains) {
    await db.query(
      `INSERT INTO chains (network, kind, chain_id, enabled) VALUES ($1, $2, $3, $4)
       ON CONFLICT (network) DO UPDATE SET kind = EXCLUDED.kind, chain_id = EXCLUDED.chain_id, enabled = EXCLUDED.enabled`,
      [ch.network, ch.kind, ch.chainId, ch.enabled],
    );
  }
}

export interface CheckpointUpdate {
  network: string;
  /** The batch's last block: everything up to it is now written (null: unchanged). */
  lastScannedBlock: number | null;
  /** The head seen at the start of this pass (before the confirmation margin). */
  headAtLastSync: number;
  /** The checkpoint has reached head − confirmations: the backfill is complete (sticky). */
  caughtUp: boolean;
  /** Set on the pass's last batch of a chain: records last_success_at and clears last_error. */
  successAt?: Date | null;
}

/** Moves a chain's checkpoint (inside the batch's transaction). */
export async function writeCheckpoint(tx: Queryable, cp: CheckpointUpdate): Promise<void> {
  const rows = await tx.query(
    `UPDATE chains SET
        last_scanned_block = GREATEST(last_scanned_block, $2::bigint),
        head_at_last_sync = $3::bigint,
        backfill_complete = backfill_complete OR $4::boolean,
        last_success_at = coalesce($5::timestamptz, last_success_at),
        last_error = CASE WHEN $5::timestamptz IS NULL THEN last_error ELSE NULL END
      WHERE network = $1
      RETURNING network`,
    [cp.network, cp.lastScannedBlock, cp.headAtLastSync, cp.caughtUp, iso(cp.successAt ?? null)],
  );
  if (rows.length === 0) throw new Error(`chain "${cp.network}" is not registered in the chains table`);
}

/** Records why a chain failed or was skipped this pass (best effort: never throws). */
export async function recordChainError(
  db: Queryable,
  network: string,
  message: string,
  at: Date,
): Promise<void> {
  await db
    .query(`UPDATE chains SET last_error = $2, last_error_at = $3 WHERE network = $1`, [
      network,
      message,
      at.toISOString(),
    ])
    .catch(() => undefined);
}

/** What a pass needs to know of a chain's row, read in one statement (nulls: none yet / never ran). */
export interface ChainPassState {
  /** The checkpoint, the recorded start block and the lowest block scanned. */
  lastScannedBlock: number | null;
  startBlock: number | null;
  scannedFrom: number | null;
  /** The last census: its state, block and scope; the last full one's block, and the passes since. */
  census: {
    state: string | null;
    block: number | null;
    scope: string | null;
    fullBlock: number | null;
    passesSinceFull: number;
  };
  /** Events the index ever stored for the chain (the ingest's live counters). */
  events: { agents: number; ratings: number };
}

/**
 * Where a chain's scan stands (checkpoint, start block, lowest block scanned), its last census and
 * its event counters: the one read of the `chains` row a pass makes before its scan and once more
 * before its census (the scan moves the checkpoint and the counters in between).
 */
export async function readChainPassState(db: Queryable, network: string): Promise<ChainPassState> {
  const [row] = await db.query<{
    last_scanned_block: number | string | null;
    start_block: number | string | null;
    scanned_from_block: number | string | null;
    census_state: string | null;
    census_block: number | string | null;
    census_scope: string | null;
    census_full_block: number | string | null;
    census_passes_since_full: number | string | null;
    agents_count: number | string | null;
    ratings_count: number | string | null;
  }>(
    `SELECT last_scanned_block, start_block, scanned_from_block, census_state, census_block, census_scope,
            census_full_block, census_passes_since_full, agents_count, ratings_count
       FROM chains WHERE network = $1`,
    [network],
  );
  const n = (v: number | string | null | undefined) => (v === null || v === undefined ? null : Number(v));
  return {
    lastScannedBlock: n(row?.last_scanned_block),
    startBlock: n(row?.start_block),
    scannedFrom: n(row?.scanned_from_block),
    census: {
      state: row?.census_state ?? null,
      block: n(row?.census_block),
      scope: row?.census_scope ?? null,
      fullBlock: n(row?.census_full_block),
      passesSinceFull: Number(row?.census_passes_since_full ?? 0),
    },
    events: { agents: Number(row?.agents_count ?? 0), ratings: Number(row?.ratings_count ?? 0) },
  };
}

/** Lowers the recorded lowest scanned block to `block` (a range below it has been scanned). */
export async function lowerScannedFrom(db: Queryable, network: string, block: number): Promise<void> {
  await db.query(
    `UPDATE chains SET scanned_from_block = $2 WHERE network = $1 AND (scanned_from_block IS NULL OR scanned_from_block > $2)`,
    [network, block],
  );
}

/** Records the start block a chain's first pass discovered. */
export async function setStartBlock(db: Queryable, network: string, block: number): Promise<void> {
  await db.query('UPDATE chains SET start_block = $2 WHERE network = $1', [network, block]);
}

/** Raises the recorded start block to `block` (a walk that reached the start of the history). */
export async function raiseStartBlock(tx: Queryable, network: string, block: number): Promise<void> {
  await tx.query(
    `UPDATE chains SET start_block = $2 WHERE network = $1 AND (start_block IS NULL OR start_block < $2)`,
    [network, block],
  );
}

/**
 * Fresh planner statistics for the tables a pass writes, the trigger-maintained aggregates
 * included (ANALYZE samples: cheap on big tables). Without them a backfill keeps the plans made
 * for empty tables: the triggers' keyed deletes and upserts become scans of whole tables.
 */
export async function analyzeIndexTables(db: Queryable): Promise<void> {
  await db.exec(
    'ANALYZE agents, ratings, revocations, ownership_transfers, agent_metadata, live_agent_rater, ' +
      'live_agent_rater_tag, live_agent_day, live_agent_tag, live_rater_subject, live_rater',
  );
}

/** Checkpoint hashes kept per chain (the deepest reorg walked back to a stored block). */
const KEPT_HASHES = 256;

/** Stores the hash of a checkpoint block and prunes the oldest beyond KEPT_HASHES (in the batch's transaction). */
export async function recordCheckpointHash(
  tx: Queryable,
  network: string,
  block: number,
  hash: string,
): Promise<void> {
  await tx.query(
    `INSERT INTO chain_block_hashes (network, block_number, block_hash) VALUES ($1, $2, $3)
     ON CONFLICT (network, block_number) DO UPDATE SET block_hash = EXCLUDED.block_hash`,
    [network, block, hash],
  );
  await tx.query(
    `DELETE FROM chain_block_hashes WHERE network = $1 AND block_number < (
       SELECT block_number FROM chain_block_hashes WHERE network = $1
        ORDER BY block_number DESC OFFSET $2 LIMIT 1)`,
    [network, KEPT_HASHES - 1],
  );
}

/** The stored checkpoint hashes of a chain, newest first. */
export async function readCheckpointHashes(
  db: Queryable,
  network: string,
): Promise<{ block: number; hash: string }[]> {
  const rows = await db.query<{ block_number: number; block_hash: string }>(
    `SELECT block_number, block_hash FROM chain_block_hashes WHERE network = $1 ORDER BY block_number DESC`,
    [network],
  );
  return rows.map((r) => ({ block: Number(r.block_number), hash: r.block_hash }));
}
