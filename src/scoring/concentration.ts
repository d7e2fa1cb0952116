/** Concentration signals: advisory, never move a score. */
import { normalizeAddress } from './address.js';
import { round6Ratio } from './display.js';

export interface Concentration {
  /** Distinct raters behind the eligible ratings (EVM addresses compared case-insensitively). */
  distinct_raters: number;
  /** The rater with the most eligible ratings (ties: lowest address); null with no eligible rating. */
  top_client: string | null;
  /** top_client_ratings / total eligible ratings, 0..1, six decimals; null with no eligible rating. */
  top_client_share: number | null;
  /** The raw numerator of `top_client_share`; null with no eligible rating. */
  top_client_ratings: number | null;
}

/** Concentration over the subject's ELIGIBLE ratings (pass only eligible rows). */
export function concentration(eligible: readonly { rater: string }[]): Concentration {
  const counts = new Map<string, number>();
  for (const r of eligible) {
    const k = normalizeAddress(r.rater);
    counts.set(k, (counts.get(k) ?? 0) + 1);
  }
  return concentrationFromCounts(counts);
}

/**
 * Same from per-rater counts (e.g. `SELECT rater, count(*) … GROUP BY rater` over eligible rows).
 * Keys are normalized, so two spellings of one EVM address merge.
 */
export function concentrationFromCounts(
  perRater: ReadonlyMap<string, number> | Iterable<readonly [string, number]>,
): Concentration {
  const merged = new Map<string, number>();
  for (const [rater, n] of perRater) {
    const k = normalizeAddress(rater);
    merged.set(k, (merged.get(k) ?? 0) + Number(n));
  }
  return concentrationFromNormalizedCounts(merged);
}

/**
 * Same from counts whose keys are already normalized and distinct (one entry per account, as the
 * subject's totals keep them): no merge, one pass. `countOf` reads a value's count (a subject's
 * totals keep one accumulator per rater, not a separate map of counts).
 */
export function concentrationFromNormalizedCounts<V = number>(
  perRater: ReadonlyMap<string, V>,
  countOf: (v: V) => number = (v) => v as number,
): Concentration {
  let total = 0;
  let distinct = 0;
  let top: string | null = null;
  let topN = 0;
  // forEach: no [key, value] pair per entry (a subject has thousands of raters)
  perRater.forEach((v, rater) => {
    const n = countOf(v);
    if (n <= 0) return;
    total += n;
    distinct += 1;
    if (top === null || n > topN || (n === topN && rater < top)) {
      top = rater;
      topN = n;
    }
  });
  return {
    distinct_raters: distinct,
    top_client: top,
    top_client_share: top === null ? null : round6Ratio(topN, total),
    top_client_ratings: top === null ? null : topN,
  };
}
