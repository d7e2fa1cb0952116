/**
 * Policy constants of the scoring module (published by GET /health). Change one rule, bump its
 * version: only `POLICY_VERSION` moves scores; ordering, rater weighting and confidence move lists
 * and bands only. The policies and their math are written out in docs/POLICIES.md.
 */

/** Scoring policy: per-chain mean of eligible values, global = mean of the non-null chain scores. */
export const POLICY_VERSION = 'equal-weight-per-chain@2';
/** Leaderboard ordering: Bayesian shrinkage toward the index prior by distinct raters. */
export const ORDERING_POLICY = 'bayes-shrinkage-distinct-raters@1';
/** Published second weighting (`weighted_score`). */
export const RATER_WEIGHT_POLICY = 'one-voice-per-counterparty+bounded-trust@2';
/** Evidence band policy. */
export const CONFIDENCE_POLICY = 'wilson-raters@1';

/** Shrinkage strength k of `bayes-shrinkage-distinct-raters@1`. */
export const SHRINKAGE_K = 3;
/** z of the 95 % Wilson interval. */
export const WILSON_Z = 1.96;

/** Rater weight of `one-voice-per-counterparty+bounded-trust@2`: min(1, step·s), bounded to [min, max]. */
export const RATER_WEIGHT_STEP = 0.25;
export const RATER_WEIGHT_MIN = 0.25;
export const RATER_WEIGHT_MAX = 1;

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
