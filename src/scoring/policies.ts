/**
 * Policy constants of the scoring module (published by GET /health). Change one rule, bump its
 * version: only `POLICY_VERSION` moves scores; ordering, rater weighting and confidence move lists
 * and bands only. The policies and their math are written out in docs/POLICIES.md.
 */

/** Scoring policy: per-chain mean of eligible values, global = mean of the non-null chain scores. */
export const POLICY_VERSION = 'equal-weight-per-chain@2';
/** Leaderboard ordering: Bayesian shrinkage toward the index prior by distinct raters. */
export const ORDERING_POLICY = 'bayes-shrinkage-distinct-raters@1';
/** Published second weighting (`weighted_score`): rater evidence, docs/POLICIES.md. */
export const RATER_WEIGHT_POLICY = 'one-voice-per-counterparty+bounded-trust@3';
/** Evidence band policy. */
export const CONFIDENCE_POLICY = 'wilson-raters@1';

/** Shrinkage strength k of `bayes-shrinkage-distinct-raters@1`. */
export const SHRINKAGE_K = 3;
/** z of the 95 % Wilson interval. */
export const WILSON_Z = 1.96;

/**
 * Breadth of a rater: min(1, step·s), bounded to [min, max] (the whole weight under `@2`; the
 * breadth factor of `@3`, over independent subjects).
 */
export const RATER_WEIGHT_STEP = 0.25;
export const RATER_WEIGHT_MIN = 0.25;
export const RATER_WEIGHT_MAX = 1;

/**
 * The parameters of `one-voice-per-counterparty+bounded-trust@3` (docs/POLICIES.md, "Rater
 * weighting"): how a voice is weighed from its rater's evidence. Change one, bump the version.
 */
export const RATER_EVIDENCE_POLICY = Object.freeze({
  /** Account history: the nonce of the rater's first rating transaction (sent by the rater itself). */
  history: Object.freeze({
    /** A nonce at or below this is a fresh wallet. */
    freshMaxNonce: 2,
    /** [lowest nonce, factor], highest first; below the last row (fresh) the factor is `fresh`. */
    tiers: Object.freeze([
      [100, 1],
      [20, 0.7],
      [3, 0.4],
    ] as const),
    fresh: 0.1,
    /** No nonce to read (not fetched yet, relayed transaction, Solana): the voice is unproven. */
    unknown: 0.5,
  }),
  /** Payment: verified transfers to the rated subject in a valued token, in micro-USD. */
  payment: Object.freeze({
    /** At or below this, a payment lifts nothing (dust). */
    dustMicroUsd: 10_000,
    /** At or above this, the voice weighs fully. */
    fullMicroUsd: 10_000_000,
    /** A rater that paid at least this in total (any subject) seeds the graph trust. */
    seedMicroUsd: 100_000,
  }),
  /** Graph trust: personalized PageRank over the rater→subject graph, cohorts collapsed. */
  graph: Object.freeze({
    damping: 0.85,
    maxIterations: 200,
    /** L1 change of the trust vector under which the iteration stops. */
    tolerance: 1e-10,
    /** Decades of trust (per edge, against the seeds' median) between the floor and full trust. */
    decades: 3,
    /** The factor of a rater with no path to a seed. */
    floor: 0.25,
  }),
  /** Cohorts: raters that act as one. */
  cohort: Object.freeze({
    minSize: 3,
    /** First ratings of the members within this many seconds of the cohort's first. */
    windowSeconds: 6 * 3600,
    /** Only raters of at most this many subjects, all the same, are compared. */
    maxSubjects: 8,
    /** Raters of this many subjects or more, all the same, need no window: the set alone is rare. */
    windowlessSubjects: 3,
    /** Voices on each subject within this many points of the cohort's first member's. */
    valueTolerance: 5,
  }),
  /** A voice from a rater the rated subject (as a rater) rated back. */
  reciprocalFactor: 0.1,
  /**
   * Unproven voices (fresh, unknown history, no payment lift) weigh together at most this share
   * of the subject's proven weight (when it has any).
   */
  unprovenShare: 0.03,
});

/** Scoring domain (inclusive on both ends; a real zero is a rating of 0). */
export const SCORE_DOMAIN = { min: 0, max: 100 } as const;

export type ConfidenceBand = 'no_ratings' | 'low' | 'medium' | 'high';

/** Minimum number of distinct eligible raters for each band (bands by n, `wilson-raters@1`). */
export const CONFIDENCE_THRESHOLDS: Readonly<Record<ConfidenceBand, number>> = Object.freeze({
  no_ratings: 0,
  low: 1,
  medium: 3,
  high: 6,
});

/** The thresholds that reproduce the evidence band, as published in `/health.confidence_thresholds`. */
export function confidenceThresholds(): Record<ConfidenceBand, number> {
  return { ...CONFIDENCE_THRESHOLDS };
}

export interface ReadingPolicy {
  min_raters: number;
  top_share: number;
  campaign_per_rater: number;
  /** Always null: the index publishes the self-rating gap and does not judge it. */
  self_gap: null;
  combine: 'independent';
}

/** The cuts that fire caveats (`/health.reading_policy`). */
export const READING_POLICY: Readonly<ReadingPolicy> = Object.freeze({
  min_raters: 3,
  top_share: 0.5,
  campaign_per_rater: 20,
  self_gap: null,
  combine: 'independent',
});

/**
 * Known burn addresses. EVM ones compare case-insensitively, the Solana incinerator exactly.
 * Published as written here.
 */
export const BURN_ADDRESSES: readonly string[] = Object.freeze([
  '0x0000000000000000000000000000000000000000',
  '0x000000000000000000000000000000000000dEaD',
  '1nc1nerator11111111111111111111111111111111',
]);
