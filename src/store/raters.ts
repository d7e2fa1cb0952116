/**
 * Write statements of the rater evidence (migration 0160): the account-history queue
 * (`rater_first_tx`: lease due lookups with FOR UPDATE SKIP LOCKED, finish one only while still
 * holding its lease) and the background run's results (`rater_evidence`, `rater_subject_evidence`,
 * `rater_evidence_meta`), written in one transaction through a staging table so unchanged rows are
 * not rewritten. Every value is a parameter.
 */
import type { Database, Queryable } from '../db/database.js';
import { chunks } from './rows.js';

/** A leased lookup of a rater's first rating transaction. */
export type RaterTxJob = {
  rater: string;
  network: string;
  tx_hash: string;
  attempts: number;
};

/**
 * Leases at most `limit` due lookups for `owner` until `now + leaseSeconds` (queued or retry
 * lookups whose time has come, leased ones whose lease ran out), oldest first; only `networks`.
 */
export async function leaseRaterTransactions(
  tx: Queryable,
  owner: string,
  now: Date,
  limit: number,
  leaseSeconds: number,
  networks: readonly string[],
): Promise<RaterTxJob[]> {
  if (networks.length === 0 || limit <= 0) return [];
  return tx.query<RaterTxJob>(
    `WITH due AS (
       SELECT rater FROM rater_first_tx
        WHERE ((state IN ('queued', 'retry') AND next_try_at <= $2::timestamptz)
               OR (state = 'leased' AND lease_expires_at <= $2::timestamptz))
          AND network = ANY ($5::text[])
        ORDER BY next_try_at, rater
        LIMIT $3
        FOR UPDATE SKIP LOCKED)
     UPDATE rater_first_tx t
        SET state = 'leased', lease_owner = $1, lease_expires_at = $2::timestamptz + make_interval(secs => $4),
            attempts = t.attempts + 1, updated_at = $2::timestamptz
       FROM due WHERE t.rater = due.rater
     RETURNING t.rater, t.network, t.tx_hash, t.attempts`,
    [owner, now.toISOString(), limit, leaseSeconds, [...networks]],
  );
}

/** What a finished lookup writes. */
export interface RaterTxOutcome {
  state: 'fetched' | 'retry' | 'failed' | 'unavailable' | 'queued';
  nextTryAt: Date;
  reason: string | null;
  txFrom?: string;
  nonce?: number;
}

/**
 * Finishes a leased lookup, only while `owner` still holds its lease AND the row still names the
 * same transaction (an earlier rating may have replaced it meanwhile). Returns whether it wrote.
 */
export async function finishRaterTransaction(
  tx: Queryable,
  job: RaterTxJob,
  owner: string,
  now: Date,
  o: RaterTxOutcome,
): Promise<boolean> {
  const rows = await tx.query<{ rater: string }>(
    `UPDATE rater_first_tx SET state = $4, next_try_at = $5::timestamptz, reason = $6, lease_owner = NULL,
            lease_expires_at = NULL, updated_at = $7::timestamptz,
            tx_from = CASE WHEN $4 = 'fetched' THEN $8 ELSE tx_from END,
            nonce = CASE WHEN $4 = 'fetched' THEN $9::bigint ELSE nonce END,
            fetched_at = CASE WHEN $4 = 'fetched' THEN $7::timestamptz ELSE fetched_at END
      WHERE rater = $1 AND tx_hash = $2 AND state = 'leased' AND lease_owner = $3
     RETURNING rater`,
    [
      job.rater,
      job.tx_hash,
      owner,
      o.state,
      o.nextTryAt.toISOString(),
      o.reason,
      now.toISOString(),
      o.txFrom ?? null,
      o.nonce ?? null,
    ],
  );
  return rows.length > 0;
}

/** One rater's row of a run. */
export interface RaterEvidenceWrite {
  rater: string;
  subjects: number;
  independentSubjects: number;
  verifiedRatings: number;
  paidMicroUsd: string;
  seed: boolean;
  cohortId: string | null;
  cohortSize: number;
  cohortReasons: string;
  trust: number;
  graphTrust: number | null;
  /** The row's facts as the paid statements read them (src/read/raters.ts `encodeFacts`). */
  facts: string;
}

/** One (rater, subject) row of a run (only pairs with a payment or reciprocity). */
export interface PairEvidenceWrite {
  rater: string;
  subject: string;
  verifiedRatings: number;
  paidMicroUsd: string;
  reciprocal: boolean;
}

/**
 * Replaces the evidence with a run's rows in ONE transaction: rows that did not change are left
 * alone, changed ones updated, new ones inserted, the others deleted; then the run's meta.
 */
export async function writeEvidenceRun(
  db: Database,
  raters: readonly RaterEvidenceWrite[],
  pairs: readonly PairEvidenceWrite[],
  meta: Record<string, unknown>,
): Promise<{ raters: number; pairs: number }> {
  return db.transaction(async (tx) => {
    await tx.exec(`CREATE TEMP TABLE IF NOT EXISTS rater_evidence_stage (LIKE rater_evidence) ON COMMIT DELETE ROWS;
                   CREATE TEMP TABLE IF NOT EXISTS rater_subject_evidence_stage (LIKE rater_subject_evidence) ON COMMIT DELETE ROWS;
                   DELETE FROM rater_evidence_stage; DELETE FROM rater_subject_evidence_stage;`);
    for (const c of chunks(raters)) {
      await tx.query(
        `INSERT INTO rater_evidence_stage (rater, subjects, independent_subjects, verified_ratings, paid_micro_usd, seed,
                                           cohort_id, cohort_size, cohort_reasons, trust, graph_trust, facts)
         SELECT * FROM unnest($1::text[], $2::int[], $3::int[], $4::int[], $5::numeric[], $6::boolean[], $7::text[],
                              $8::int[], $9::text[], $10::float8[], $11::float8[], $12::text[])`,
        [
          c.map((r) => r.rater),
          c.map((r) => r.subjects),
          c.map((r) => r.independentSubjects),
          c.map((r) => r.verifiedRatings),
          c.map((r) => r.paidMicroUsd),
          c.map((r) => r.seed),
          c.map((r) => r.cohortId),
          c.map((r) => r.cohortSize),
          c.map((r) => r.cohortReasons),
          c.map((r) => r.trust),
          c.map((r) => r.graphTrust),
          c.map((r) => r.facts),
        ],
      );
    }
    for (const c of chunks(pairs)) {
      await tx.query(
        `INSERT INTO rater_subject_evidence_stage (rater, subject, verified_ratings, paid_micro_usd, reciprocal)
         SELECT * FROM unnest($1::text[], $2::text[], $3::int[], $4::numeric[], $5::boolean[])`,
        [
          c.map((p) => p.rater),
          c.map((p) => p.subject),
          c.map((p) => p.verifiedRatings),
          c.map((p) => p.paidMicroUsd),
          c.map((p) => p.reciprocal),
        ],
      );
    }
    await tx.exec(`
      DELETE FROM rater_evidence e WHERE NOT EXISTS (SELECT 1 FROM rater_evidence_stage s WHERE s.rater = e.rater);
      INSERT INTO rater_evidence AS t SELECT * FROM rater_evidence_stage
      ON CONFLICT (rater) DO UPDATE SET
        subjects = EXCLUDED.subjects, independent_subjects = EXCLUDED.independent_subjects,
        verified_ratings = EXCLUDED.verified_ratings, paid_micro_usd = EXCLUDED.paid_micro_usd, seed = EXCLUDED.seed,
        cohort_id = EXCLUDED.cohort_id, cohort_size = EXCLUDED.cohort_size, cohort_reasons = EXCLUDED.cohort_reasons,
        trust = EXCLUDED.trust, graph_trust = EXCLUDED.graph_trust, facts = EXCLUDED.facts
      WHERE (t.subjects, t.independent_subjects, t.verified_ratings, t.paid_micro_usd, t.seed, t.cohort_id,
             t.cohort_size, t.cohort_reasons, t.trust, t.graph_trust, t.facts)
            IS DISTINCT FROM (EXCLUDED.subjects, EXCLUDED.independent_subjects, EXCLUDED.verified_ratings,
             EXCLUDED.paid_micro_usd, EXCLUDED.seed, EXCLUDED.cohort_id, EXCLUDED.cohort_size,
             EXCLUDED.cohort_reasons, EXCLUDED.trust, EXCLUDED.graph_trust, EXCLUDED.facts);
      DELETE FROM rater_subject_evidence e
       WHERE NOT EXISTS (SELECT 1 FROM rater_subject_evidence_stage s WHERE s.rater = e.rater AND s.subject = e.subject);
      INSERT INTO rater_subject_evidence AS t SELECT * FROM rater_subject_evidence_stage
      ON CONFLICT (rater, subject) DO UPDATE SET
        verified_ratings = EXCLUDED.verified_ratings, paid_micro_usd = EXCLUDED.paid_micro_usd, reciprocal = EXCLUDED.reciprocal
      WHERE (t.verified_ratings, t.paid_micro_usd, t.reciprocal)
            IS DISTINCT FROM (EXCLUDED.verified_ratings, EXCLUDED.paid_micro_usd, EXCLUDED.reciprocal);`);
    // The copies of the facts in live_rater (migration 0190) follow in the same transaction: the
    // changed ones rewritten, those of raters without an evidence row any more cleared.
    await tx.exec(`
      UPDATE live_rater l SET facts = e.facts
        FROM rater_evidence e
       WHERE e.rater = l.rater AND l.facts IS DISTINCT FROM e.facts;
      UPDATE live_rater l SET facts = NULL
       WHERE l.facts IS NOT NULL AND NOT EXISTS (SELECT 1 FROM rater_evidence e WHERE e.rater = l.rater);`);
    await tx.query(
      `INSERT INTO rater_evidence_meta (meta_key, value) VALUES ('run', $1::jsonb)
       ON CONFLICT (meta_key) DO UPDATE SET value = EXCLUDED.value`,
      [JSON.stringify(meta)],
    );
    return { raters: raters.length, pairs: pairs.length };
  });
}
