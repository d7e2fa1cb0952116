/**
 * Reads of the feedback-document evidence (migration 0100): per rating of a page (its document
 * status, payment proof and responses: one statement for the page's keys, never more than the
 * page), the evidence counts of a subject, and the free coverage figures of /stats/documents.
 * Every statement is parameterised.
 */
import type { Queryable } from '../db/database.js';

/** Responses served per rating (the newest beyond this are counted, not listed). */
export const RESPONSES_PER_RATING = 20;

export interface RatingKey {
  network: string;
  tx_hash: string;
  log_index: number;
  agent_id: string;
  rater: string;
  feedback_index: string;
}

export interface DocumentEvidenceRow {
  state: string;
  attempts: number;
  reason: string | null;
  created_at: Date;
  updated_at: Date;
  fetched_at: Date | null;
  blob_sha256: string | null;
  byte_length: number | null;
  parser_version: string | null;
  integrity_state: string | null;
  mismatches: unknown;
  payment_proof: unknown;
  payment_state: string | null;
  payment_reason: string | null;
}

export interface ResponseRow {
  tx_hash: string;
  log_index: number;
  block_number: number;
  block_time: Date | null;
  responder: string;
  responder_class: string;
  response_uri: string;
  response_hash: string | null;
}

export interface RatingEvidence {
  document: DocumentEvidenceRow | null;
  responses: ResponseRow[];
  responses_total: number;
}

const keyOf = (network: string, tx: string, logIndex: number) => `${network}\u0000${tx}\u0000${logIndex}`;

/** The document, payment proof and responses of each rating of a page, keyed by `ratingKey`. */
export async function readRatingEvidence(
  db: Queryable,
  ratings: readonly RatingKey[],
): Promise<Map<string, RatingEvidence>> {
  const out = new Map<string, RatingEvidence>();
  if (ratings.length === 0) return out;
  for (const r of ratings) out.set(ratingKey(r), { document: null, responses: [], responses_total: 0 });
  const rows = await db.query<Record<string, unknown>>(
    `WITH k AS (
       SELECT * FROM unnest($1::text[], $2::text[], $3::int[], $4::text[], $5::text[], $6::numeric[])
         AS k(network, tx_hash, log_index, agent_id, rater, feedback_index))
     SELECT 'd' AS kind, k.network, k.tx_hash, k.log_index,
            json_build_object('state', d.state, 'attempts', d.attempts, 'reason', d.reason,
              'created_at', d.created_at, 'updated_at', d.updated_at, 'fetched_at', d.fetched_at,
              'blob_sha256', d.blob_sha256, 'byte_length', d.byte_length, 'parser_version', d.parser_version,
              'integrity_state', d.integrity_state, 'mismatches', d.mismatches, 'payment_proof', d.payment_proof,
              'payment_state', d.payment_state, 'payment_reason', d.payment_reason)::text AS body,
            0::bigint AS n, 0 AS rn
       FROM k JOIN feedback_documents d
         ON d.network = k.network AND d.tx_hash = k.tx_hash AND d.log_index = k.log_index
     UNION ALL
     SELECT 'r', x.network, x.k_tx, x.k_log, x.body, x.n, x.rn FROM (
       SELECT k.network, k.tx_hash AS k_tx, k.log_index AS k_log,
              json_build_object('tx_hash', r.tx_hash, 'log_index', r.log_index, 'block_number', r.block_number,
                'block_time', r.block_time, 'responder', r.responder, 'responder_class', r.responder_class,
                'response_uri', r.response_uri, 'response_hash', r.response_hash)::text AS body,
              count(*) OVER (PARTITION BY k.network, k.tx_hash, k.log_index) AS n,
              row_number() OVER (PARTITION BY k.network, k.tx_hash, k.log_index
                                 ORDER BY r.block_number, r.log_index, r.tx_hash) AS rn
         FROM k JOIN rating_responses r
           ON r.network = k.network AND r.agent_id = k.agent_id AND r.rater = k.rater
          AND r.feedback_index = k.feedback_index) x
      WHERE x.rn <= $7`,
    [
      ratings.map((r) => r.network),
      ratings.map((r) => r.tx_hash),
      ratings.map((r) => r.log_index),
      ratings.map((r) => r.agent_id),
      ratings.map((r) => r.rater),
      ratings.map((r) => r.feedback_index),
      RESPONSES_PER_RATING,
    ],
  );
  for (const row of rows) {
    const e = out.get(keyOf(String(row.network), String(row.tx_hash), Number(row.log_index)));
    if (!e) continue;
    const body = JSON.parse(String(row.body)) as Record<string, unknown>;
    if (row.kind === 'd') {
      e.document = {
        ...(body as unknown as DocumentEvidenceRow),
        created_at: new Date(String(body.created_at)),
        updated_at: new Date(String(body.updated_at)),
        fetched_at: body.fetched_at ? new Date(String(body.fetched_at)) : null,
      };
    } else {
      e.responses.push({
        ...(body as unknown as ResponseRow),
        block_time: body.block_time ? new Date(String(body.block_time)) : null,
      });
      e.responses_total = Number(row.n);
    }
  }
  for (const e of out.values())
    e.responses.sort((a, b) => a.block_number - b.block_number || a.log_index - b.log_index);
  return out;
}

/** The map key of a rating in {@link readRatingEvidence}'s answer. */
export function ratingKey(r: { network: string; tx_hash: string; log_index: number }): string {
  return keyOf(r.network, r.tx_hash, r.log_index);
}

export interface EvidenceCounts {
  ratings_with_document: number;
  ratings_with_matching_document: number;
  ratings_with_verified_payment: number;
}

/**
 * The evidence counts of the agents given (a wallet's agents, or one agent): ratings whose
 * document was fetched, whose document matches its on-chain commitment, whose proof of payment
 * was verified. One statement over the per-agent counts the feedback_documents trigger keeps
 * (migration 0110): O(agents), never O(ratings).
 */
export async function readEvidenceCounts(
  db: Queryable,
  agents: readonly { network: string; agentId: string }[],
): Promise<EvidenceCounts> {
  if (agents.length === 0)
    return { ratings_with_document: 0, ratings_with_matching_document: 0, ratings_with_verified_payment: 0 };
  // The per-agent counts kept by the feedback_documents trigger (migration 0110): O(agents) rows,
  // never the agents' documents themselves.
  const [row] = await db.query<Record<string, unknown>>(
    `SELECT coalesce(sum(e.fetched), 0)::bigint AS fetched, coalesce(sum(e.matching), 0)::bigint AS matching,
            coalesce(sum(e.verified), 0)::bigint AS verified
       FROM unnest($1::text[], $2::text[]) AS a(network, agent_id)
       JOIN agent_evidence e ON e.network = a.network AND e.agent_id = a.agent_id`,
    [agents.map((a) => a.network), agents.map((a) => a.agentId)],
    { prepare: true },
  );
  return {
    ratings_with_document: Number(row?.fetched ?? 0),
    ratings_with_matching_document: Number(row?.matching ?? 0),
    ratings_with_verified_payment: Number(row?.verified ?? 0),
  };
}

export interface DocumentStats {
  ratings: number;
  ratings_with_uri: number;
  by_state: Record<string, number>;
  by_integrity: Record<string, number>;
  by_payment: Record<string, number>;
  responses: number;
  by_responder_class: Record<string, number>;
  by_issuer: IssuerCoverage[];
}

/** Fetch and integrity coverage of one feedbackURI host (`no_host`: ipfs:, data:, …). */
export interface IssuerCoverage {
  issuer_host: string;
  documents: number;
  fetched: number;
  matching: number;
  verified_payments: number;
}

/** Hosts listed in /stats/documents (the largest first). */
export const ISSUER_COVERAGE_LIMIT = 50;

/**
 * Fetch, integrity and payment coverage over the whole index (the free /stats/documents); per
 * feedbackURI host from the stored `host` column (migration 0120), never a regex over the rows.
 */
export async function readDocumentStats(db: Queryable): Promise<DocumentStats> {
  const rows = await db.query<{ kind: string; k: string | null; n: number }>(
    `SELECT 'state' AS kind, state AS k, count(*)::int AS n FROM feedback_documents GROUP BY state
     UNION ALL SELECT 'integrity', integrity_state, count(*)::int FROM feedback_documents
                WHERE integrity_state IS NOT NULL GROUP BY integrity_state
     UNION ALL SELECT 'payment', payment_state, count(*)::int FROM feedback_documents
                WHERE payment_state IS NOT NULL GROUP BY payment_state
     UNION ALL SELECT 'responder', responder_class, count(*)::int FROM rating_responses GROUP BY responder_class
     UNION ALL SELECT 'ratings', NULL, coalesce(sum(ratings_count), 0)::int FROM chains`,
  );
  const stats: DocumentStats = {
    ratings: 0,
    ratings_with_uri: 0,
    by_state: { queued: 0, leased: 0, retry: 0, succeeded: 0, failed: 0 },
    by_integrity: { match: 0, mismatch: 0, no_commitment: 0, unreachable: 0, not_json: 0, changed: 0 },
    by_payment: { verified: 0, not_found: 0, mismatch: 0, unsupported_chain: 0 },
    responses: 0,
    by_responder_class: { owner: 0, operator: 0, third_party: 0 },
    by_issuer: [],
  };
  for (const r of rows) {
    const n = Number(r.n);
    if (r.kind === 'ratings') stats.ratings = n;
    else if (r.kind === 'state' && r.k) {
      stats.by_state[r.k] = n;
      stats.ratings_with_uri += n;
    } else if (r.kind === 'integrity' && r.k) stats.by_integrity[r.k] = n;
    else if (r.kind === 'payment' && r.k) stats.by_payment[r.k] = n;
    else if (r.kind === 'responder' && r.k) {
      stats.by_responder_class[r.k] = n;
      stats.responses += n;
    }
  }
  const issuers = await db.query<Record<string, unknown>>(
    `SELECT coalesce(host, 'no_host') AS host,
            count(*)::int AS documents,
            count(*) FILTER (WHERE first_keccak256 IS NOT NULL)::int AS fetched,
            count(*) FILTER (WHERE integrity_state = 'match')::int AS matching,
            count(*) FILTER (WHERE payment_state = 'verified')::int AS verified
       FROM feedback_documents GROUP BY 1 ORDER BY 2 DESC, 1 LIMIT $1`,
    [ISSUER_COVERAGE_LIMIT],
  );
  stats.by_issuer = issuers.map(coverageOf);
  return stats;
}

function coverageOf(r: Record<string, unknown>): IssuerCoverage {
  return {
    issuer_host: String(r.host),
    documents: Number(r.documents),
    fetched: Number(r.fetched),
    matching: Number(r.matching),
    verified_payments: Number(r.verified),
  };
}

/**
 * Document coverage of every feedbackURI host (the hosts of /stats/issuers, same derivation), and
 * of the ratings whose URI names no http(s) host.
 */
export async function readIssuerCoverage(db: Queryable): Promise<{
  by_host: Record<string, Omit<IssuerCoverage, 'issuer_host'>>;
  no_host: Omit<IssuerCoverage, 'issuer_host'>;
}> {
  const rows = await db.query<Record<string, unknown>>(
    `SELECT coalesce(host, '') AS host,
            count(*)::int AS documents,
            count(*) FILTER (WHERE first_keccak256 IS NOT NULL)::int AS fetched,
            count(*) FILTER (WHERE integrity_state = 'match')::int AS matching,
            count(*) FILTER (WHERE payment_state = 'verified')::int AS verified
       FROM feedback_documents GROUP BY 1 ORDER BY 1`,
  );
  const by_host: Record<string, Omit<IssuerCoverage, 'issuer_host'>> = {};
  let no_host = { documents: 0, fetched: 0, matching: 0, verified_payments: 0 };
  for (const r of rows) {
    const { issuer_host, ...c } = coverageOf(r);
    if (issuer_host === '') no_host = c;
    else by_host[issuer_host] = c;
  }
  return { by_host, no_host };
}
