/**
 * The Solana scanner's own state: transactions listed but not served (`scan_gaps`, retried by
 * later passes), transactions whose logs were cut (`incomplete_transactions`) and the cursor of
 * an interrupted signature walk (`solana_scan_cursor`).
 */
import type { Queryable } from '../db/database.js';

/** A listed transaction the node did not serve, at its position. */
export interface ScanGap {
  signature: string;
  slot: number;
  txIndex: number;
}

/** A transaction whose logs were truncated: the events before the cut were kept. */
export interface IncompleteTransaction {
  signature: string;
  slot: number;
  reason: string;
  eventsKept: number;
}

/** Records gaps (a gap seen again counts one more attempt). */
export async function recordScanGaps(
  tx: Queryable,
  network: string,
  gaps: readonly ScanGap[],
): Promise<void> {
  if (gaps.length === 0) return;
  await tx.query(
    `INSERT INTO scan_gaps (network, tx_hash, block_number, tx_index)
     SELECT $1, * FROM unnest($2::text[], $3::bigint[], $4::int[])
     ON CONFLICT (network, tx_hash) DO UPDATE SET attempts = scan_gaps.attempts + 1, last_attempt_at = now()`,
    [network, gaps.map((g) => g.signature), gaps.map((g) => g.slot), gaps.map((g) => g.txIndex)],
  );
}

/** Forgets the gaps whose transactions were served at last. */
export async function clearScanGaps(
  tx: Queryable,
  network: string,
  signatures: readonly string[],
): Promise<void> {
  if (signatures.length === 0) return;
  await tx.query(`DELETE FROM scan_gaps WHERE network = $1 AND tx_hash = ANY($2::text[])`, [
    network,
    signatures,
  ]);
}

/** The oldest `limit` gaps of a chain (in chain order). */
export async function readScanGaps(db: Queryable, network: string, limit: number): Promise<ScanGap[]> {
  const rows = await db.query<{ tx_hash: string; block_number: number | string; tx_index: number }>(
    `SELECT tx_hash, block_number, tx_index FROM scan_gaps WHERE network = $1
      ORDER BY block_number, tx_index LIMIT $2`,
    [network, limit],
  );
  return rows.map((r) => ({
    signature: r.tx_hash,
    slot: Number(r.block_number),
    txIndex: Number(r.tx_index),
  }));
}

/** Records transactions whose logs were truncated (once each). */
export async function recordIncompleteTransactions(
  tx: Queryable,
  network: string,
  incomplete: readonly IncompleteTransaction[],
): Promise<void> {
  if (incomplete.length === 0) return;
  await tx.query(
    `INSERT INTO incomplete_transactions (network, tx_hash, block_number, reason, events_kept)
     SELECT $1, * FROM unnest($2::text[], $3::bigint[], $4::text[], $5::int[])
     ON CONFLICT (network, tx_hash) DO NOTHING`,
    [
      network,
      incomplete.map((x) => x.signature),
      incomplete.map((x) => x.slot),
      incomplete.map((x) => x.reason),
      incomplete.map((x) => x.eventsKept),
    ],
  );
}

/** Where an interrupted walk over slots [fromSlot, toSlot] stood: below `beforeSignature` (at `lowSlot`). */
interface WalkCursor {
  fromSlot: number;
  toSlot: number;
  beforeSignature: string;
  lowSlot: number;
}

export async function readWalkCursor(db: Queryable, network: string): Promise<WalkCursor | null> {
  const [c] = await db.query<{
    from_slot: number | string;
    to_slot: number | string;
    before_signature: string;
    low_slot: number | string;
  }>('SELECT from_slot, to_slot, before_signature, low_slot FROM solana_scan_cursor WHERE network = $1', [
    network,
  ]);
  if (!c) return null;
  return {
    fromSlot: Number(c.from_slot),
    toSlot: Number(c.to_slot),
    beforeSignature: c.before_signature,
    lowSlot: Number(c.low_slot),
  };
}

export async function saveWalkCursor(tx: Queryable, network: string, cursor: WalkCursor): Promise<void> {
  await tx.query(
    `INSERT INTO solana_scan_cursor (network, from_slot, to_slot, before_signature, low_slot, updated_at)
     VALUES ($1, $2, $3, $4, $5, now())
     ON CONFLICT (network) DO UPDATE SET from_slot = EXCLUDED.from_slot, to_slot = EXCLUDED.to_slot,
       before_signature = EXCLUDED.before_signature, low_slot = EXCLUDED.low_slot, updated_at = now()`,
    [network, cursor.fromSlot, cursor.toSlot, cursor.beforeSignature, cursor.lowSlot],
  );
}

export async function clearWalkCursor(tx: Queryable, network: string): Promise<void> {
  await tx.query('DELETE FROM solana_scan_cursor WHERE network = $1', [network]);
}
