/**
 * Reads of the rater evidence (migration 0160): the facts of each rater (its first rating
 * transaction and what the background run computed) and of its pair with a subject, one row per
 * distinct rater; what the background run reads of the whole index; the free count of a subject's
 * raters with a verified payment. Every statement is parameterised; no weighting here
 * (src/scoring/rater-weight.ts does it).
 */
import type { Queryable } from '../db/database.js';
import type { AccountHistoryState, RaterFacts } from '../scoring/index.js';

/**
 * The subject's pairs that say something (verified payments to it, reciprocity), as ONE text value:
 * rows joined by ';', fields by ',' (rater, verified ratings, micro-USD, reciprocal 0/1). Few rows,
 * read by the subject's index; the facts of each rater travel in the rater list itself
 * (`rater_evidence.facts`, joined into the (agent, rater) rows of src/read/subject-aggregates.ts).
 */
export const PAIR_LIST = (subject: string) => `(SELECT string_agg(p.rater || ',' || p.verified_ratings || ','
          || trim_scale(p.paid_micro_usd) || ',' || CASE WHEN p.reciprocal THEN '1' ELSE '0' END, ';')
     FROM rater_subject_evidence p WHERE p.subject = ${subject})`;

/** The facts and pairs of the distinct raters of `rr` (a CTE with a `rater` column), '|' between. */
const EVIDENCE_LIST = (subject: string) => `concat_ws('|',
     coalesce((SELECT string_agg(e.rater || ',' || e.facts, ';')
                 FROM (SELECT DISTINCT rater FROM rr) x JOIN rater_evidence e ON e.rater = x.rater), ''),
     coalesce(${PAIR_LIST(subject)}, ''))`;

/** When the background run last finished, as a column of a paid statement. */
export const EVIDENCE_COMPUTED_AT = `(SELECT value->>'computed_at' FROM rater_evidence_meta WHERE meta_key = 'run')`;

const HISTORY_STATES: readonly NonNullable<AccountHistoryState>[] = [
  'queued',
  'leased',
  'retry',
  'fetched',
  'failed',
  'unavailable',
];

/**
 * `Number(v.slice(from, to))` without making the substring when it is a plain non-negative integer
 * (counts, nonces: thousands per paid answer); anything else (a sign, a decimal point, more than
 * 15 digits, nothing) goes through Number itself.
 */
export function numberAt(v: string, from: number, to: number): number {
  if (to - from > 15 || to === from) return Number(v.slice(from, to));
  let n = 0;
  for (let i = from; i < to; i++) {
    const d = v.charCodeAt(i) - 48;
    if (d < 0 || d > 9) return Number(v.slice(from, to));
    n = n * 10 + d;
  }
  return n;
}

/** `numberAt`, null for an empty field. */
const numOrNullAt = (v: string, from: number, to: number) => (to === from ? null : numberAt(v, from, to));

/** The history state written in text[0, to) (one of the known constants), else null. */
function historyStateAt(text: string, to: number): AccountHistoryState {
  for (const state of HISTORY_STATES) if (state.length === to && text.startsWith(state)) return state;
  return null;
}

/** What a rater's row keeps for the paid statements (its lookup and the run's facts). */
export interface StoredFacts {
  state: string | null;
  txFrom: string | null;
  nonce: number | null;
  independentSubjects: number;
  graphTrust: number | null;
  cohortId: string | null;
  cohortSize: number;
  seed: boolean;
}

/**
 * The `facts` text of a rater's row, what the paid statements read of it: 8 fields joined by ':'
 * (lookup state, sender ('=' the rater itself), nonce, independent subjects, graph trust, cohort
 * id and size, seed 0/1). None of them holds ':', ',' or ';'.
 */
export function encodeFacts(rater: string, f: StoredFacts): string {
  const from = f.txFrom === null ? '' : f.txFrom.toLowerCase() === rater.toLowerCase() ? '=' : f.txFrom;
  return [
    f.state ?? '',
    from,
    f.nonce ?? '',
    f.independentSubjects,
    f.graphTrust ?? '',
    f.cohortId ?? '',
    f.cohortSize,
    f.seed ? 1 : 0,
  ].join(':');
}

/** A rater's facts from its `facts` text (no pair with the subject yet: see `applyPairList`). */
export function factsOf(rater: string, text: string): RaterFacts {
  // Seven ':' then the seed flag; read by position, no array per rater (a subject has thousands).
  const k0 = colon(text, 0);
  const k1 = colon(text, k0 + 1);
  const k2 = colon(text, k1 + 1);
  const k3 = colon(text, k2 + 1);
  const k4 = colon(text, k3 + 1);
  const k5 = colon(text, k4 + 1);
  const k6 = colon(text, k5 + 1);
  if (text.indexOf(':', k6 + 1) !== -1) throw new Error('malformed rater evidence facts from the database');
  // (no substring for the state, the counts and an empty or self sender)
  const txFrom =
    k1 === k0 + 1 ? null : k1 === k0 + 2 && text.charCodeAt(k0 + 1) === 61 ? rater : text.slice(k0 + 1, k1);
  return {
    rater,
    historyState: historyStateAt(text, k0),
    txFrom,
    txNonce: numOrNullAt(text, k1 + 1, k2),
    independentSubjects: numOrNullAt(text, k2 + 1, k3),
    graphTrust: numOrNullAt(text, k3 + 1, k4),
    cohortId: k5 === k4 + 1 ? null : text.slice(k4 + 1, k5),
    cohortSize: numberAt(text, k5 + 1, k6),
    seed: text.length === k6 + 2 && text.charCodeAt(k6 + 1) === 49,
    verifiedRatings: 0,
    paidMicroUsd: 0,
    reciprocal: false,
  };
}

function colon(text: string, from: number): number {
  const k = text.indexOf(':', from);
  if (k === -1) throw new Error('malformed rater evidence facts from the database');
  return k;
}

/** Sets each rater's pair with the subject from a PAIR_LIST value (pairs of other raters ignored). */
export function applyPairList(facts: Map<string, RaterFacts>, v: unknown): Map<string, RaterFacts> {
  if (typeof v !== 'string' || v === '') return facts;
  for (const row of v.split(';')) {
    const f = row.split(',');
    if (f.length !== 4) throw new Error('malformed rater pair row from the database');
    const [rater, verified, paid, reciprocal] = f as [string, string, string, string];
    const r = facts.get(rater);
    if (!r) continue;
    r.verifiedRatings = Number(verified);
    r.paidMicroUsd = Number(paid);
    r.reciprocal = reciprocal === '1';
  }
  return facts;
}

/** The facts of each rater from an EVIDENCE_LIST value. */
function parseEvidenceList(v: unknown): Map<string, RaterFacts> {
  const out = new Map<string, RaterFacts>();
  if (typeof v !== 'string' || v === '' || v === '|') return out;
  const bar = v.indexOf('|');
  const rows = bar === -1 ? v : v.slice(0, bar);
  if (rows !== '') {
    for (const row of rows.split(';')) {
      const comma = row.indexOf(',');
      if (comma === -1) throw new Error('malformed rater evidence row from the database');
      const rater = row.slice(0, comma);
      out.set(rater, factsOf(rater, row.slice(comma + 1)));
    }
  }
  return applyPairList(out, bar === -1 ? '' : v.slice(bar + 1));
}

/** The facts of some raters on one subject (the reference path and the rating pages read this). */
export async function readRaterFacts(
  db: Queryable,
  subject: string,
  raters: readonly string[],
): Promise<Map<string, RaterFacts>> {
  if (raters.length === 0) return new Map();
  const [row] = await db.query<{ list: string | null }>(
    `WITH rr AS (SELECT DISTINCT unnest($1::text[]) AS rater) SELECT ${EVIDENCE_LIST('$2::text')} AS list`,
    [[...new Set(raters)], subject],
  );
  return parseEvidenceList(row?.list ?? null);
}

/** A rater's own evidence (the rater profile): its facts and the pairs that say something. */
export interface RaterProfileEvidence {
  firstTx: {
    network: string;
    tx_hash: string;
    log_index: number;
    block_number: number;
    block_time: Date | null;
    state: string;
    attempts: number;
    reason: string | null;
    tx_from: string | null;
    nonce: number | null;
    fetched_at: Date | null;
  } | null;
  evidence: {
    subjects: number;
    independent_subjects: number;
    verified_ratings: number;
    paid_micro_usd: string;
    seed: boolean;
    cohort_id: string | null;
    cohort_size: number;
    cohort_reasons: string;
    trust: number;
    graph_trust: number | null;
  } | null;
  /** Subjects it paid (verified), and subjects that rated it back. */
  paidSubjects: number;
  reciprocalSubjects: number;
  computedAt: string | null;
}

export async function readRaterProfileEvidence(db: Queryable, rater: string): Promise<RaterProfileEvidence> {
  const [row] = await db.query<Record<string, unknown>>(
    `SELECT (SELECT row_to_json(f) FROM (SELECT network, tx_hash, log_index, block_number, block_time, state, attempts,
                                                reason, tx_from, nonce, fetched_at
                                           FROM rater_first_tx WHERE rater = $1) f) AS first_tx,
            (SELECT row_to_json(e) FROM (SELECT subjects, independent_subjects, verified_ratings,
                                                trim_scale(paid_micro_usd)::text AS paid_micro_usd, seed, cohort_id,
                                                cohort_size, cohort_reasons, trust, graph_trust
                                           FROM rater_evidence WHERE rater = $1) e) AS evidence,
            (SELECT count(*) FILTER (WHERE verified_ratings > 0) FROM rater_subject_evidence WHERE rater = $1) AS paid,
            (SELECT count(*) FILTER (WHERE reciprocal) FROM rater_subject_evidence WHERE rater = $1) AS reciprocal,
            (SELECT value->>'computed_at' FROM rater_evidence_meta WHERE meta_key = 'run') AS computed_at`,
    [rater],
    { prepare: true },
  );
  const f = (row?.first_tx ?? null) as Record<string, unknown> | null;
  const e = (row?.evidence ?? null) as RaterProfileEvidence['evidence'];
  return {
    firstTx: f
      ? {
          network: String(f.network),
          tx_hash: String(f.tx_hash),
          log_index: Number(f.log_index),
          block_number: Number(f.block_number),
          block_time: f.block_time ? new Date(String(f.block_time)) : null,
          state: String(f.state),
          attempts: Number(f.attempts),
          reason: (f.reason as string | null) ?? null,
          tx_from: (f.tx_from as string | null) ?? null,
          nonce: f.nonce === null || f.nonce === undefined ? null : Number(f.nonce),
          fetched_at: f.fetched_at ? new Date(String(f.fetched_at)) : null,
        }
      : null,
    evidence: e ? { ...e, graph_trust: e.graph_trust === null ? null : Number(e.graph_trust) } : null,
    paidSubjects: Number(row?.paid ?? 0),
    reciprocalSubjects: Number(row?.reciprocal ?? 0),
    computedAt: (row?.computed_at as string | null | undefined) ?? null,
  };
}

/** When the background run last finished (null: never). */
export async function readEvidenceComputedAt(db: Queryable): Promise<string | null> {
  const [row] = await db.query<{ at: string | null }>(
    `SELECT value->>'computed_at' AS at FROM rater_evidence_meta WHERE meta_key = 'run'`,
  );
  return row?.at ?? null;
}

/** The free count of a subject's raters with a verified payment to it, and when it was computed. */
export async function readSubjectPaidRaters(
  db: Queryable,
  subject: string,
): Promise<{ raters_with_verified_payment: number; computed_at: string | null }> {
  const [row] = await db.query<{ n: number | string; at: string | null }>(
    `SELECT (SELECT count(*) FROM rater_subject_evidence WHERE subject = $1 AND verified_ratings > 0) AS n,
            (SELECT value->>'computed_at' FROM rater_evidence_meta WHERE meta_key = 'run') AS at`,
    [subject],
  );
  return { raters_with_verified_payment: Number(row?.n ?? 0), computed_at: row?.at ?? null };
}

// ---------------------------------------------------------------- what the background run reads

/** One (rater, subject) pair with eligible ratings: the exact sum and count of the rater's values. */
export interface WorldPairRow {
  rater: string;
  subject: string;
  sum: string;
  count: number;
}

/** A rater's first rating and the lookup of its transaction. */
export type WorldRaterRow = {
  rater: string;
  block_time: Date | null;
  state: string;
  tx_from: string | null;
  nonce: number | null;
};

/** A verified payment proof: who paid which subject, where, in which token, how much. */
export type WorldPaymentRow = {
  rater: string;
  subject: string;
  chain_id: number | null;
  token: string | null;
  amount: string | null;
};

/**
 * Everything the background run reads, from the maintained tables (pairs from the per-(agent,
 * rater) aggregates against today's owners; first ratings; verified payments): O(pairs + raters +
 * verified documents), never O(ratings).
 */
export async function readEvidenceWorld(
  db: Queryable,
): Promise<{ pairs: WorldPairRow[]; raters: WorldRaterRow[]; payments: WorldPaymentRow[] }> {
  const pairs = await db.query<{ rater: string; subject: string; s: string; n: number | string }>(
    `SELECT ar.rater, coalesce(a.owner, ar.network || ':' || ar.agent_id) AS subject,
            trim_scale(sum(ar.live_sum))::text AS s, sum(ar.live_count) AS n
       FROM live_agent_rater ar LEFT JOIN agents a ON a.network = ar.network AND a.agent_id = ar.agent_id
      WHERE ar.live_count > 0 AND ar.rater <> coalesce(a.owner, '')
      GROUP BY 1, 2`,
  );
  const raters = await db.query<WorldRaterRow>(
    `SELECT rater, block_time, state, tx_from, nonce FROM rater_first_tx`,
  );
  const payments = await db.query<WorldPaymentRow>(
    `SELECT r.rater, coalesce(a.owner, r.network || ':' || r.agent_id) AS subject,
            CASE WHEN d.payment_proof->>'chainId' ~ '^[0-9]{1,15}$' THEN (d.payment_proof->>'chainId')::bigint END AS chain_id,
            lower(d.payment_proof->>'token') AS token, d.payment_proof->>'amount' AS amount
       FROM feedback_documents d
       JOIN ratings r ON r.network = d.network AND r.tx_hash = d.tx_hash AND r.log_index = d.log_index
       LEFT JOIN agents a ON a.network = r.network AND a.agent_id = r.agent_id
      WHERE d.payment_state = 'verified'`,
  );
  return {
    pairs: pairs.map((p) => ({ rater: p.rater, subject: p.subject, sum: p.s, count: Number(p.n) })),
    raters: raters.map((r) => ({
      ...r,
      nonce: r.nonce === null || r.nonce === undefined ? null : Number(r.nonce),
    })),
    payments: payments.map((p) => ({ ...p, chain_id: p.chain_id === null ? null : Number(p.chain_id) })),
  };
}

/**
 * What the run's inputs stand at: the chains' checkpoints (every write of a pass moves one), the
 * free aggregates' refresh stamp, the first-transaction lookups and the verified payments (counts
 * and latest changes). The same text: nothing to recompute.
 */
export async function readEvidenceFingerprint(db: Queryable): Promise<string> {
  const [row] = await db.query<{ f: string }>(
    `SELECT concat_ws('|',
       (SELECT string_agg(network || ':' || coalesce(last_scanned_block::text, '-'), ',' ORDER BY network) FROM chains),
       (SELECT count(*) || ':' || coalesce(max(updated_at)::text, '-') FROM rater_first_tx),
       (SELECT count(*) || ':' || coalesce(max(updated_at)::text, '-') FROM feedback_documents WHERE payment_state = 'verified'),
       (SELECT value::text FROM agg_meta WHERE meta_key = 'refresh')) AS f`,
  );
  return row?.f ?? '';
}

/** The fingerprint of the inputs the last run read (null: none yet). */
export async function readLastRunFingerprint(db: Queryable): Promise<string | null> {
  const [row] = await db.query<{ f: string | null }>(
    `SELECT value->>'fingerprint' AS f FROM rater_evidence_meta WHERE meta_key = 'run'`,
  );
  return row?.f ?? null;
}
