/**
 * The durable receipt of `?snapshot=true`: the ONLY write the service performs on request.
 *
 * `inputs_digest` = sha256 (hex) of a canonical serialisation of what the answer was computed from:
 *   JSON.stringify({
 *     digest_version: 1, policy_version, prior, chain_priors: [[network, prior], …] (network asc),
 *     ratings: [[network, tx_hash, log_index, value (exact string), revoked], …]
 *              sorted by network, tx_hash (code-unit order), log_index (numeric)
 *   })
 * Only those fields, in that fixed order: the same ratings, values, revocations, priors and policy
 * always give the same digest, whatever the order the rows were read in.
 */
import { createHash, randomUUID } from 'node:crypto';
import type { Queryable } from '../db/database.js';

export const DIGEST_VERSION = 1;

export interface DigestRating {
  network: string;
  txHash: string;
  logIndex: number;
  value: string;
  revoked: boolean;
}

export interface DigestInputs {
  policyVersion: string;
  prior: number | null;
  chainPriors: ReadonlyMap<string, number | null> | readonly [string, number | null][];
  ratings: readonly DigestRating[];
}

const byCodeUnit = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/** The canonical serialisation hashed into `inputs_digest`. */
export function canonicalInputs(inputs: DigestInputs): string {
  const ratings = [...inputs.ratings]
    .sort(
      (a, b) => byCodeUnit(a.network, b.network) || byCodeUnit(a.txHash, b.txHash) || a.logIndex - b.logIndex,
    )
    .map((r) => [r.network, r.txHash, r.logIndex, r.value, r.revoked]);
  const chainPriors = [...inputs.chainPriors].sort(([a], [b]) => byCodeUnit(a, b));
  return JSON.stringify({
    digest_version: DIGEST_VERSION,
    policy_version: inputs.policyVersion,
    prior: inputs.prior,
    chain_priors: chainPriors,
    ratings,
  });
}

export function inputsDigest(inputs: DigestInputs): string {
  return createHash('sha256').update(canonicalInputs(inputs), 'utf8').digest('hex');
}

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

/** One receipt row by id, or null. */
export async function readSnapshot(db: Queryable, snapshotId: string): Promise<SnapshotRow | null> {
  const [r] = await db.query<Record<string, unknown>>(
    `SELECT snapshot_id, wallet, inputs_digest, policy_version, payment_receipt, response, created_at
       FROM snapshot_receipts WHERE snapshot_id = $1`,
    [snapshotId],
  );
  if (!r) return null;
  const created = r.created_at;
  return {
    snapshot_id: String(r.snapshot_id),
    wallet: String(r.wallet),
    inputs_digest: String(r.inputs_digest),
    policy_version: String(r.policy_version),
    payment_receipt: (r.payment_receipt as string | null) ?? null,
    response: r.response,
    created_at: created instanceof Date ? created.toISOString() : String(created),
  };
}
