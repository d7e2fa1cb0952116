/** Snapshot receipts: the one write of a paid `?snapshot=true` answer (read back by src/read/snapshots.ts). */
import { randomUUID } from 'node:crypto';
import type { Queryable } from '../db/database.js';

export interface SnapshotRow {
  snapshot_id: string;
  wallet: string;
  inputs_digest: string;
  policy_version: string;
  payment_receipt: string | null;
  response: unknown;
  created_at: string;
}

/** Inserts one receipt row (fresh uuid) and returns it. */
export async function insertSnapshot(
  db: Queryable,
  row: {
    wallet: string;
    inputsDigest: string;
    policyVersion: string;
    paymentReceipt: string | null;
    response: unknown;
    createdAt: Date;
  },
): Promise<SnapshotRow> {
  const id = randomUUID();
  await db.query(
    `INSERT INTO snapshot_receipts (snapshot_id, wallet, inputs_digest, policy_version, payment_receipt, response, created_at)
     VALUES ($1, $2, $3, $4, $5, $6::jsonb, $7)`,
    [
      id,
      row.wallet,
      row.inputsDigest,
      row.policyVersion,
      row.paymentReceipt,
      JSON.stringify(row.response),
      row.createdAt,
    ],
  );
  return {
    snapshot_id: id,
    wallet: row.wallet,
    inputs_digest: row.inputsDigest,
    policy_version: row.policyVersion,
    payment_receipt: row.paymentReceipt,
    response: row.response,
    created_at: row.createdAt.toISOString(),
  };
}
