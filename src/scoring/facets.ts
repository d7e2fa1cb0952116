/**
 * Facets: a subject's ratings kept apart per raw `tag1` (the empty tag is its own facet "").
 * Separate judgements, never averaged together. `tag1` is untrusted free text: it is only ever a
 * map key here (built with Object.fromEntries, so "__proto__" is a plain own key); escaping is
 * the renderer's job.
 */
import { normalizeAddress } from './address.js';
import { classifyParsed } from './classify.js';
import { DecimalSum, parseDecimal } from './decimal.js';
import { differenceOfServed, round6 } from './display.js';

interface FacetRating {
  tag1: string;
  rater: string;
  value: string;
  revoked: boolean;
}

export interface Facet {
  tag1: string;
  /** Mean of the facet's eligible values, six decimals; null (never 0) when none. */
  score: number | null;
  /** Eligible ratings in the facet (the N of `score`). */
  count: number;
  /** Distinct eligible raters in the facet. */
  distinct_raters: number;
  revoked_count: number;
  out_of_domain_count: number;
  self_rated_count: number;
  /** The index-wide reference mean of this facet (input); null when unknown. */
  index_mean: number | null;
  /** score − index_mean; null when either is null. */
  delta: number | null;
}

/** Index-wide facet means keyed by raw tag1. */
export type FacetIndexMeans = ReadonlyMap<string, number | null> | Readonly<Record<string, number | null>>;

function lookupMean(means: FacetIndexMeans | undefined, tag1: string): number | null {
  if (means === undefined) return null;
  if (means instanceof Map) return means.get(tag1) ?? null;
  const rec = means as Readonly<Record<string, number | null>>;
  return Object.hasOwn(rec, tag1) ? (rec[tag1] ?? null) : null;
}

/**
 * Facets as a list, ordered by volume: eligible count desc, then all ratings desc, then tag1
 * (code-unit order) asc.
 */
/** One facet's accumulated classes (rows or aggregates add into it). */
export interface FacetAcc {
  sum: DecimalSum;
  raters: Set<string>;
  /** When set (pre-aggregated input), the distinct eligible raters instead of `raters.size`. */
  distinctRaters?: number;
  revoked: number;
  ood: number;
  self: number;
  total: number;
}

export function newFacetAcc(): FacetAcc {
  return { sum: new DecimalSum(), raters: new Set(), revoked: 0, ood: 0, self: 0, total: 0 };
}

export function facetList(
  ratings: readonly FacetRating[],
  subjectWallet: string,
  indexMeans?: FacetIndexMeans,
): Facet[] {
  type Acc = FacetAcc;
  const byTag = new Map<string, Acc>();
  for (const r of ratings) {
    let acc = byTag.get(r.tag1);
    if (!acc) {
      acc = { sum: new DecimalSum(), raters: new Set(), revoked: 0, ood: 0, self: 0, total: 0 };
      byTag.set(r.tag1, acc);
    }
    acc.total += 1;
    const value = parseDecimal(r.value);
    const cls = classifyParsed(r, value, subjectWallet);
    if (cls === 'revoked') acc.revoked += 1;
    else if (cls === 'out_of_domain') acc.ood += 1;
    else if (cls === 'self') acc.self += 1;
    else if (value !== null) {
      acc.sum.add(value);
      acc.raters.add(normalizeAddress(r.rater));
    }
  }
  return finishFacets(byTag, indexMeans);
}

/** Facets from accumulated classes per raw tag1, ordered by volume (see `facetList`). */
export function finishFacets(byTag: ReadonlyMap<string, FacetAcc>, indexMeans?: FacetIndexMeans): Facet[] {
  const rows = [...byTag.entries()].map(([tag1, acc]) => {
    const score = acc.sum.mean6();
    const index_mean = round6(lookupMean(indexMeans, tag1));
    return {
      total: acc.total,
      facet: {
        tag1,
        score,
        count: acc.sum.count,
        distinct_raters: acc.distinctRaters ?? acc.raters.size,
        revoked_count: acc.revoked,
        out_of_domain_count: acc.ood,
        self_rated_count: acc.self,
        index_mean,
        delta: score === null || index_mean === null ? null : differenceOfServed(score, index_mean),
      } satisfies Facet,
    };
  });
  rows.sort(
    (a, b) =>
      b.facet.count - a.facet.count ||
      b.total - a.total ||
      (a.facet.tag1 < b.facet.tag1 ? -1 : a.facet.tag1 > b.facet.tag1 ? 1 : 0),
  );
  return rows.map((r) => r.facet);
}

/**
 * Facets keyed by raw tag1 (the response shape). Insertion order follows `facetList`, except
 * that JavaScript always lists integer-like keys ("7", "42") first: use `facetList` where the
 * order matters.
 */
export function facets(
  ratings: readonly FacetRating[],
  subjectWallet: string,
  indexMeans?: FacetIndexMeans,
): Record<string, Facet> {
  return Object.fromEntries(facetList(ratings, subjectWallet, indexMeans).map((f) => [f.tag1, f]));
}
