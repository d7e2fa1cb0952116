/**
 * The evidence fields every served rating carries (issue 23): `document` (the fetch, integrity and
 * parser status of its feedback document; never the document's content), `author_class`,
 * `responses[]` and `payment_proof`. Evidence only: none of it moves a score.
 */
import type { RatingEvidence } from '../read/documents.js';
import { iso } from './common.js';

/** `facilitator-authored` when the rating's client is a known relayer (KNOWN_RELAYERS), else `rater-authored`. */
export function authorClass(
  rater: string,
  relayers: readonly string[],
): 'facilitator-authored' | 'rater-authored' {
  return relayers.includes(rater.toLowerCase()) ? 'facilitator-authored' : 'rater-authored';
}

export function servedEvidence(rater: string, e: RatingEvidence | undefined, relayers: readonly string[]) {
  const d = e?.document ?? null;
  const proof = (d?.payment_proof ?? null) as Record<string, unknown> | null;
  return {
    author_class: authorClass(rater, relayers),
    document: d
      ? {
          state: d.state,
          integrity_state: d.integrity_state,
          blob_sha256: d.blob_sha256,
          byte_length: d.byte_length,
          parser_version: d.parser_version,
          mismatches: Array.isArray(d.mismatches) ? d.mismatches : [],
          attempts: d.attempts,
          last_error_code: d.reason,
          created_at: iso(d.created_at),
          updated_at: iso(d.updated_at),
          fetched_at: iso(d.fetched_at),
        }
      : null,
    payment_proof:
      d && d.payment_state
        ? {
            state: d.payment_state,
            reason: d.payment_reason,
            from_address: (proof?.fromAddress as string | undefined) ?? null,
            to_address: (proof?.toAddress as string | undefined) ?? null,
            chain_id: (proof?.chainId as number | undefined) ?? null,
            tx_hash: (proof?.txHash as string | undefined) ?? null,
            token: (proof?.token as string | undefined) ?? null,
            amount: (proof?.amount as string | undefined) ?? null,
          }
        : null,
    responses: (e?.responses ?? []).map((r) => ({
      responder: r.responder,
      responder_class: r.responder_class,
      response_uri: r.response_uri,
      response_hash: r.response_hash,
      tx_hash: r.tx_hash,
      block_number: r.block_number,
      log_index: r.log_index,
      block_time: iso(r.block_time),
    })),
    responses_total: e?.responses_total ?? 0,
  };
}
