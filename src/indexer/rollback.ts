/**
 * Deep reorgs. The indexer only scans to head − confirmations, so a reorg
 * inside that margin never reaches the index. A DEEPER one is healed here:
 *
 *  1. every committed batch records the hash of its last block (`recordCheckpointHash` in
 *     src/store/chain-state.ts, inside the batch's transaction; the newest 256 per chain are kept);
 *  2. at the start of a pass, `findCommonAncestor` compares the newest stored hash with the chain;
 *     on a mismatch it walks back through the stored hashes to the newest block the chain still
 *     has (the common ancestor);
 *  3. `rollbackAbove(tx, network, block)` (src/store/rollback.ts) deletes everything written
 *     above that block in ONE transaction (ratings, revocations and the revoked flags they set, ownership transfers and
 *     the owners they set, metadata, URIs, agents minted above it, the live counters, the stored
 *     hashes) and moves the checkpoint back to it; the pass then rescans from there.
 *
 * Metadata values and agent URIs are stored as "latest value only". When the rollback removes a
 * latest value of an agent that existed below the ancestor, the earlier value is not known any
 * more: the checkpoint then goes back to the chain's start block (a full rescan, idempotent and
 * cheap relative to correctness; rare in practice: it needs a deep reorg carrying a metadata or
 * URI update of an older agent). When no stored hash matches at all, the same full rescan is done.
 */
import type { Database, Queryable } from '../db/database.js';
import { readCheckpointHashes } from '../store/chain-state.js';
import { rollbackAbove, type RollbackResult } from '../store/rollback.js';

interface AncestorCheck {
  /** The newest stored checkpoint block, whose hash the chain no longer has. */
  mismatchAt: number;
  /** The newest stored block the chain still has (null: none does; rescan from the start). */
  ancestor: number | null;
}

/**
 * Compares the stored checkpoint hashes with the chain, newest first. Null when the newest one
 * still matches (or nothing is stored yet); else where the chain diverged and the common ancestor.
 */
async function findCommonAncestor(
  db: Queryable,
  network: string,
  blockHash: (block: number) => Promise<string | null>,
): Promise<AncestorCheck | null> {
  const stored = await readCheckpointHashes(db, network);
  if (stored.length === 0) return null;
  const newest = stored[0]!;
  if ((await blockHash(newest.block)) === newest.hash) return null;
  for (const s of stored.slice(1)) {
    if ((await blockHash(s.block)) === s.hash) return { mismatchAt: newest.block, ancestor: s.block };
  }
  return { mismatchAt: newest.block, ancestor: null };
}

/**
 * Detects a deep reorg on `network` and heals it: finds the common ancestor and rolls back above
 * it in one transaction. Returns what was rolled back, or null when the chain still has the
 * newest checkpoint's block.
 */
export async function healReorg(
  db: Database,
  network: string,
  blockHash: (block: number) => Promise<string | null>,
): Promise<(RollbackResult & { mismatchAt: number }) | null> {
  const check = await findCommonAncestor(db, network, blockHash);
  if (!check) return null;
  const result = await db.transaction((tx) => rollbackAbove(tx, network, check.ancestor));
  return { ...result, mismatchAt: check.mismatchAt };
}
