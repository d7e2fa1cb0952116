/**
 * Write statements of the feedback-document queue (`feedback_documents`, migration 0100): the
 * ingest enqueues one job per rating that names a feedbackURI (idempotent, keyed like the
 * rating); the fetcher (src/documents/) leases due jobs with FOR UPDATE SKIP LOCKED (several
 * processes never take the same job; an expired lease is taken again), and finishes each one
 * only while it still holds the lease. Every value is a parameter.
 */
import type { Queryable } from '../db/database.js';
import type { FeedbackEvent } from '../index-events.js';
import { chunks, count } from './rows.js';

/** Queues the feedback document of every rating that names a URI; returns the jobs created. */
export async function enqueueDocuments(tx: Queryable, feedback: readonly FeedbackEvent[]): Promise<number> {
  const withUri = feedback.filter((e) => e.feedbackUri.trim() !== '');
  let n = 0;
  for (const c of chunks(withUri)) {
    n += await count(
      tx,
      `WITH ins AS (
         INSERT INTO feedback_documents (network, tx_hash, log_index, agent_id, rater, block_number, uri, feedback_hash)
         SELECT * FROM unnest($1::text[], $2::text[], $3::int[], $4::text[], $5::text[], $6::bigint[], $7::text[], $8::text[])
         ON CONFLICT (network, tx_hash, log_index) DO NOTHING RETURNING 1)
       SELECT count(*)::int AS n FROM ins`,
      [
        c.map((e) => e.network),
        c.map((e) => e.txHash),
        c.map((e) => e.logIndex),
        c.map((e) => e.agentId),
        c.map((e) => e.rater),
        c.map((e) => e.blockNumber),
        c.map((e) => e.feedbackUri),
        c.map((e) => e.feedbackHash),
      ],
    );
  }
  return n;
}

/** A leased job: the document row, the rating's logged fields and the agent's payees. */
export type DocumentJob = {
  network: string;
  tx_hash: string;
  log_index: number;
  uri: string;
  feedback_hash: string | null;
  attempts: number;
  first_keccak256: string | null;
  integrity_state: string | null;
  agent_id: string;
  rater: string;
  feedback_index: string;
  value_raw: string;
  value_decimals: number;
  tag1: string;
  tag2: string;
  endpoint: string;
  /** The agent's current owner and agentWallet metadata (hex of its bytes), when known. */
  owner: string | null;
  agent_wallet_hex: string | null;
};

/**
 * Leases at most `limit` due jobs for `owner` until `now + leaseSeconds`: queued or retry jobs
 * whose next try has come, leased jobs whose lease expired, succeeded jobs due for a re-check.
 * Jobs another transaction holds are skipped (SKIP LOCKED), so concurrent fetchers split the work.
 */
export async function leaseDocuments(
  tx: Queryable,
  owner: string,
  now: Date,
  limit: number,
  leaseSeconds: number,
  /** Only this agent's jobs (the demo fetches its own documents only); default every job. */
  scope: { network: string; agentId: string } | null = null,
): Promise<DocumentJob[]> {
  return tx.query<DocumentJob>(
    `WITH due AS (
       SELECT network, tx_hash, log_index FROM feedback_documents
        WHERE ((state IN ('queued', 'retry', 'succeeded') AND next_try_at <= $2::timestamptz)
               OR (state = 'leased' AND lease_expires_at <= $2::timestamptz))
          AND ($5::text IS NULL OR (network = $5::text AND agent_id = $6::text))
        ORDER BY next_try_at, network, tx_hash, log_index
        LIMIT $3
        FOR UPDATE SKIP LOCKED)
     UPDATE feedback_documents d
        SET state = 'leased', lease_owner = $1, lease_expires_at = $2::timestamptz + make_interval(secs => $4),
            attempts = d.attempts + 1, updated_at = $2::timestamptz
       FROM due
       JOIN ratings r ON r.network = due.network AND r.tx_hash = due.tx_hash AND r.log_index = due.log_index
       LEFT JOIN agents a ON a.network = r.network AND a.agent_id = r.agent_id
       LEFT JOIN agent_metadata m ON m.network = r.network AND m.agent_id = r.agent_id AND m.meta_key = 'agentWallet'
      WHERE d.network = due.network AND d.tx_hash = due.tx_hash AND d.log_index = due.log_index
      RETURNING d.network, d.tx_hash, d.log_index, d.uri, d.feedback_hash, d.attempts, d.first_keccak256,
                d.integrity_state, r.agent_id, r.rater, r.feedback_index::text AS feedback_index,
                r.value_raw::text AS value_raw, r.value_decimals::int AS value_decimals, r.tag1, r.tag2, r.endpoint,
                a.owner, m.value_hex AS agent_wallet_hex`,
    [owner, now.toISOString(), limit, leaseSeconds, scope?.network ?? null, scope?.agentId ?? null],
  );
}

/** What a finished job writes (every column the fetcher may set). */
export interface DocumentOutcome {
  state: 'queued' | 'retry' | 'succeeded' | 'failed';
  nextTryAt: Date;
  reason: string | null;
  /** True when this outcome does not count as a fetch attempt (e.g. waiting for an IPFS gateway). */
  uncountAttempt?: boolean;
  /** Unset: the blob columns keep their values (likewise mismatches and the payment fields). */
  blob?: {
    sha256: string;
    keccak256: string;
    byteLength: number;
    contentType: string | null;
    fetchedAt: Date;
  };
  integrityState?: string | null;
  parserVersion?: string | null;
  mismatches?: unknown[] | null;
  paymentProof?: unknown;
  paymentState?: string | null;
  paymentReason?: string | null;
}

/**
 * Finishes a leased job, only while `owner` still holds its lease (a job whose lease expired and
 * was taken by another fetcher is left to that one). Returns whether the row was written.
 */
export async function finishDocument(
  tx: Queryable,
  key: { network: string; tx_hash: string; log_index: number },
  owner: string,
  now: Date,
  o: DocumentOutcome,
): Promise<boolean> {
  const hasBlob = o.blob !== undefined;
  const hasEvidence = o.integrityState !== undefined;
  const hasPayment = o.paymentState !== undefined;
  const n = await count(
    tx,
    `WITH up AS (
       UPDATE feedback_documents SET
         state = $5, next_try_at = $6::timestamptz, reason = $7, lease_owner = NULL, lease_expires_at = NULL,
         attempts = CASE WHEN $8 THEN greatest(attempts - 1, 0) ELSE attempts END,
         updated_at = $4::timestamptz,
         blob_sha256 = CASE WHEN $9 THEN $10 ELSE blob_sha256 END,
         blob_keccak256 = CASE WHEN $9 THEN $11 ELSE blob_keccak256 END,
         byte_length = CASE WHEN $9 THEN $12::int ELSE byte_length END,
         content_type = CASE WHEN $9 THEN $13 ELSE content_type END,
         fetched_at = CASE WHEN $9 THEN $14::timestamptz ELSE fetched_at END,
         first_keccak256 = CASE WHEN $9 THEN coalesce(first_keccak256, $11) ELSE first_keccak256 END,
         integrity_state = CASE WHEN $15 THEN $16 ELSE integrity_state END,
         parser_version = CASE WHEN $15 THEN $17 ELSE parser_version END,
         mismatches = CASE WHEN $24 THEN $18::jsonb ELSE mismatches END,
         payment_proof = CASE WHEN $19 THEN $20::jsonb ELSE payment_proof END,
         payment_state = CASE WHEN $19 THEN $21 ELSE payment_state END,
         payment_reason = CASE WHEN $19 THEN $22 ELSE payment_reason END
        WHERE network = $1 AND tx_hash = $2 AND log_index = $3 AND state = 'leased' AND lease_owner = $23
       RETURNING 1)
     SELECT count(*)::int AS n FROM up`,
    [
      key.network,
      key.tx_hash,
      key.log_index,
      now.toISOString(),
      o.state,
      o.nextTryAt.toISOString(),
      o.reason,
      o.uncountAttempt === true,
      hasBlob,
      o.blob?.sha256 ?? null,
      o.blob?.keccak256 ?? null,
      o.blob?.byteLength ?? null,
      o.blob?.contentType ?? null,
      o.blob ? o.blob.fetchedAt.toISOString() : null,
      hasEvidence,
      o.integrityState ?? null,
      o.parserVersion ?? null,
      o.mismatches == null ? null : JSON.stringify(o.mismatches),
      hasPayment,
      o.paymentProof == null ? null : JSON.stringify(o.paymentProof),
      o.paymentState ?? null,
      o.paymentReason ?? null,
      owner,
      o.mismatches !== undefined,
    ],
  );
  return n > 0;
}

/** Makes the jobs that wait for an IPFS gateway due now (called when a gateway is configured). */
export async function wakeIpfsJobs(tx: Queryable, now: Date): Promise<number> {
  return count(
    tx,
    `WITH up AS (UPDATE feedback_documents SET next_try_at = $1::timestamptz
                  WHERE state = 'queued' AND reason = 'no_ipfs_gateway' RETURNING 1)
     SELECT count(*)::int AS n FROM up`,
    [now.toISOString()],
  );
}
