/**
 * SQL spellings of the scoring policy, for the aggregates that must run inside the database at
 * 5-million-rating scale. They mirror src/scoring (classify.ts: revoked → out_of_domain → self →
 * eligible, domain 0..100 inclusive, exact NUMERIC comparison); the contract tests check that both
 * give the same numbers on the demo index.
 */
import { SCORE_DOMAIN } from '../scoring/policies.js';

/** Value inside the scoring domain (exact: `value` is NUMERIC). */
export const IN_DOMAIN = (r: string) =>
  `(${r}.value >= ${SCORE_DOMAIN.min} AND ${r}.value <= ${SCORE_DOMAIN.max})`;

/** Eligible: not revoked, in domain, rater is not the agent's current owner. */
export const ELIGIBLE = (r: string, owner: string) =>
  `(NOT ${r}.revoked AND ${IN_DOMAIN(r)} AND ${r}.rater <> ${owner})`;

/** Live in-domain self-rating (rater is the current owner). */
export const SELF = (r: string, owner: string) =>
  `(NOT ${r}.revoked AND ${IN_DOMAIN(r)} AND ${r}.rater = ${owner})`;

/**
 * Host of an http(s) feedbackURI, lower-cased; NULL when there is none. The rule itself is one SQL
 * function, `uri_host` (migration 0120), which also fills `feedback_documents.host` (a stored
 * generated column), so the issuer aggregates and the document coverage agree on every host.
 */
export const URI_HOST = (col: string) => `uri_host(${col})`;
