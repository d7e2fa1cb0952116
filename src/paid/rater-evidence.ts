/**
 * The rater evidence as the paid answers serve it (issue 32): per rating of the agent detail (the
 * facts of its rater and how its voice was weighed under `rater_weight_policy`), the counts over a
 * wallet's raters in the wallet profile, and a rater's own facts in the rater profile. Each fact
 * names its source. None of it moves `final_score`, `shrunk_score` or `policy_version`; it is what
 * `weighted_score` is weighed by.
 */
import type { RaterProfileEvidence } from '../read/raters.js';
import {
  accountNonce,
  historyClass,
  isProven,
  RATER_EVIDENCE_POLICY,
  RATER_WEIGHT_POLICY,
  type RaterFacts,
  type VoiceWeight,
} from '../scoring/index.js';
import { iso } from './common.js';

export const EVIDENCE_SOURCES = Object.freeze({
  account_history: 'eth_getTransactionByHash of the rater’s first rating in the index (sender and nonce)',
  verified_payment:
    'proofOfPayment of the rating’s feedback document, verified on chain (an ERC-20 Transfer from the rater to the agent’s owner or agentWallet); valued in USDC',
  breadth:
    'maintained aggregates: subjects with an eligible rating, and those rated by someone outside its cohort',
  cohort:
    'first ratings in one window on the same few subjects with near-identical values; one gas payer; or a ring of owners rating each other',
  graph_trust:
    'personalized PageRank over the rater→subject graph, cohorts collapsed, restarting at raters whose verified payments reach the seed amount',
});

/** micro-USD as a decimal USD string ("2500000" → "2.5"). */
export function usdOf(micro: number | string): string {
  const units = BigInt(typeof micro === 'number' ? Math.trunc(micro) : micro);
  const int = units / 1_000_000n;
  const frac = (units % 1_000_000n).toString().padStart(6, '0').replace(/0+$/, '');
  return frac === '' ? int.toString() : `${int}.${frac}`;
}

/** The facts of one rating's rater and the weight of its voice on the agent's subject. */
export function servedRatingEvidence(
  rater: string,
  facts: RaterFacts | undefined,
  weight: VoiceWeight | undefined,
): Record<string, unknown> {
  const f: RaterFacts = facts ?? {
    rater,
    historyState: null,
    txFrom: null,
    txNonce: null,
    independentSubjects: null,
    graphTrust: null,
    cohortId: null,
    cohortSize: 0,
    seed: false,
    verifiedRatings: 0,
    paidMicroUsd: 0,
    reciprocal: false,
  };
  const from = f.historyState === 'fetched' ? f.txFrom : null;
  return {
    account_history: {
      class: historyClass(f),
      nonce_at_first_rating: accountNonce(f),
      gas_payer: from !== null && from.toLowerCase() !== rater.toLowerCase() ? from : null,
      lookup_state: f.historyState,
    },
    verified_payment: {
      ratings_to_subject: f.verifiedRatings,
      usd_to_subject: usdOf(f.paidMicroUsd),
    },
    breadth: { independent_subjects: f.independentSubjects },
    cohort: f.cohortId === null ? null : { id: f.cohortId, size: f.cohortSize },
    graph_trust: f.graphTrust,
    seed: f.seed,
    reciprocal: f.reciprocal,
    // How the voice was weighed (null: the rating's voice is not eligible: revoked, out of domain, self).
    voice: weight
      ? {
          weight: weight.weight,
          history_factor: weight.history_factor,
          breadth_factor: weight.breadth_factor,
          graph_factor: weight.graph_factor,
          payment_lift: weight.payment_lift,
          reciprocal_factor: weight.reciprocal ? RATER_EVIDENCE_POLICY.reciprocalFactor : 1,
          cohort_members: weight.cohort_members,
          proven: weight.proven,
          unproven_scale: weight.unproven_scale,
        }
      : null,
  };
}

/** Counts over the voices of a subject (the wallet profile's `rater_evidence`). */
export function raterEvidenceCounts(
  voters: readonly string[],
  facts: ReadonlyMap<string, RaterFacts>,
  computedAt: string | null,
): Record<string, unknown> {
  const byClass: Record<string, number> = {
    established: 0,
    fresh: 0,
    relayed: 0,
    pending: 0,
    unavailable: 0,
  };
  const cohorts = new Set<string>();
  let paid = 0;
  let inCohort = 0;
  let reciprocal = 0;
  let seeds = 0;
  let proven = 0;
  for (const rater of voters) {
    const f = facts.get(rater);
    if (!f) {
      byClass.pending! += 1;
      continue;
    }
    const nonce = accountNonce(f);
    if (isProven({ nonce, paidMicroUsd: f.paidMicroUsd })) proven++;
    byClass[historyClass(f, nonce)]! += 1;
    if (f.verifiedRatings > 0) paid++;
    if (f.cohortId !== null) {
      inCohort++;
      cohorts.add(f.cohortId);
    }
    if (f.reciprocal) reciprocal++;
    if (f.seed) seeds++;
  }
  return {
    raters: voters.length,
    with_verified_payment: paid,
    account_history: byClass,
    proven,
    in_cohort: inCohort,
    cohorts: cohorts.size,
    reciprocal,
    seeds,
    computed_at: computedAt,
    rater_weight_policy: RATER_WEIGHT_POLICY,
  };
}

/** A rater's own facts (the rater profile's `evidence`). */
export function servedRaterProfileEvidence(
  rater: string,
  e: RaterProfileEvidence,
  agentsRated: number,
): Record<string, unknown> {
  const t = e.firstTx;
  const history = t
    ? historyClass({
        rater,
        historyState: t.state as RaterFacts['historyState'],
        txFrom: t.tx_from,
        txNonce: t.nonce,
      })
    : 'pending';
  const ev = e.evidence;
  return {
    computed_at: e.computedAt,
    account_history: {
      class: history,
      first_rating: t
        ? {
            network: t.network,
            tx_hash: t.tx_hash,
            log_index: t.log_index,
            block_number: t.block_number,
            block_time: iso(t.block_time),
          }
        : null,
      nonce_at_first_rating:
        t === null
          ? null
          : accountNonce({
              rater,
              historyState: t.state as RaterFacts['historyState'],
              txFrom: t.tx_from,
              txNonce: t.nonce,
            }),
      tx_from: t?.tx_from ?? null,
      lookup: t
        ? { state: t.state, attempts: t.attempts, reason: t.reason, fetched_at: iso(t.fetched_at) }
        : null,
      source: EVIDENCE_SOURCES.account_history,
    },
    verified_payment: {
      ratings: ev?.verified_ratings ?? 0,
      usd: usdOf(ev?.paid_micro_usd ?? '0'),
      subjects_paid: e.paidSubjects,
      seed: ev?.seed ?? false,
      source: EVIDENCE_SOURCES.verified_payment,
    },
    breadth: {
      agents_rated: agentsRated,
      subjects: ev?.subjects ?? null,
      independent_subjects: ev?.independent_subjects ?? null,
      source: EVIDENCE_SOURCES.breadth,
    },
    cohort: ev?.cohort_id
      ? {
          id: ev.cohort_id,
          size: ev.cohort_size,
          reasons: ev.cohort_reasons === '' ? [] : ev.cohort_reasons.split(','),
          source: EVIDENCE_SOURCES.cohort,
        }
      : null,
    reciprocal_subjects: e.reciprocalSubjects,
    graph_trust: {
      value: ev?.graph_trust ?? null,
      pagerank: ev?.trust ?? null,
      parameters: {
        ...RATER_EVIDENCE_POLICY.graph,
        seed_usd: usdOf(RATER_EVIDENCE_POLICY.payment.seedMicroUsd),
      },
      source: EVIDENCE_SOURCES.graph_trust,
    },
    rater_weight_policy: RATER_WEIGHT_POLICY,
  };
}
