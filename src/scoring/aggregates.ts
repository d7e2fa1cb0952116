/**
 * Aggregate versions of the subject answer, facets, weighting, concentration and the rater
 * profile: the same numbers as the row versions (scoreSubject, facetList, raterStats), computed
 * from the maintained per-(network, agent, rater) and per-(network, agent, rater, tag1) rows, so a
 * subject's answer costs O(distinct raters), never O(ratings). "live" = not revoked and in the
 * scoring domain; the split between eligible and self is made here against the subject wallet
 * (the agent's CURRENT owner), exactly as classifyRating does.
 */
import { normalizeAddress, sameAddress } from './address.js';
import { DecimalSum, formatDecimal, parseDecimal, type ExactDecimal } from './decimal.js';
import { round6Ratio } from './display.js';
import { finishFacets, newFacetAcc, type Facet, type FacetAcc, type FacetIndexMeans } from './facets.js';
import { stddevOfSums, type RaterChain, type RaterStats } from './rater.js';
import {
  addEligibleNormalized,
  agentIdsOf,
  composeSubject,
  emptyTotals,
  type SubjectContext,
  type SubjectScore,
} from './subject.js';

/** One (network, agent, rater) row of the maintained aggregate. */
export interface AgentRaterAggregate {
  network: string;
  agentId: string;
  rater: string;
  /** Live ratings (not revoked, in domain), whatever the rater. */
  liveCount: number;
  /** Exact decimal string: sum of the live values. */
  liveSum: string;
  /** Exact decimal string: sum of the squares of the live values (rater profile). */
  liveSumSq?: string;
  /** Live ratings with no block time. */
  liveUndated?: number;
  revokedCount: number;
  /** Not revoked, out of domain. */
  oodCount: number;
}

/** One (network, agent, rater, tag1) row of the maintained aggregate. */
export interface AgentRaterTagAggregate {
  network: string;
  agentId: string;
  rater: string;
  tag1: string;
  liveCount: number;
  liveSum: string;
  revokedCount: number;
  oodCount: number;
}

/**
 * One facet of a subject, totalled over its agents (what SQL returns grouped by tag1 from the
 * per-(agent, rater, tag1) rows, splitting self from eligible against the owner).
 */
export interface FacetAggregate {
  tag1: string;
  eligibleCount: number;
  /** Exact decimal string; "0" when none. */
  eligibleSum: string;
  /** Distinct raters with at least one eligible rating in the facet. */
  distinctRaters: number;
  selfCount: number;
  revokedCount: number;
  oodCount: number;
}

export interface SubjectAggregates {
  raters: readonly AgentRaterAggregate[];
  /** Per facet, totalled (see `facetTotals` for the same from per-rater tag rows). */
  facets: readonly FacetAggregate[];
  /** Earliest and latest block time of an ELIGIBLE rating (read beside the aggregates). */
  firstEligibleAt: Date | null;
  lastEligibleAt: Date | null;
}

function exact(s: string): ExactDecimal {
  const d = parseDecimal(s);
  if (d === null) throw new RangeError(`not a decimal sum: ${JSON.stringify(s)}`);
  return d;
}

/** Facet totals from per-(agent, rater, tag1) rows, split against the subject wallet. */
export function facetTotals(
  tags: readonly AgentRaterTagAggregate[],
  subjectWallet: string,
): FacetAggregate[] {
  const byTag = new Map<string, FacetAcc>();
  for (const r of tags) {
    let acc = byTag.get(r.tag1);
    if (!acc) {
      acc = newFacetAcc();
      byTag.set(r.tag1, acc);
    }
    acc.total += r.liveCount + r.revokedCount + r.oodCount;
    acc.revoked += r.revokedCount;
    acc.ood += r.oodCount;
    if (r.liveCount <= 0) continue;
    if (sameAddress(r.rater, subjectWallet)) acc.self += r.liveCount;
    else {
      acc.sum.addSum(exact(r.liveSum), r.liveCount);
      acc.raters.add(normalizeAddress(r.rater));
    }
  }
  return [...byTag.entries()].map(([tag1, acc]) => ({
    tag1,
    eligibleCount: acc.sum.count,
    eligibleSum: formatDecimal(acc.sum.sum),
    distinctRaters: acc.raters.size,
    selfCount: acc.self,
    revokedCount: acc.revoked,
    oodCount: acc.ood,
  }));
}

/** `facetList` from facet totals. */
function facetListFromAggregates(facets: readonly FacetAggregate[], indexMeans?: FacetIndexMeans): Facet[] {
  const byTag = new Map<string, FacetAcc>();
  for (const f of facets) {
    const acc = newFacetAcc();
    acc.sum.addSum(exact(f.eligibleSum), f.eligibleCount);
    acc.distinctRaters = f.distinctRaters;
    acc.self = f.selfCount;
    acc.revoked = f.revokedCount;
    acc.ood = f.oodCount;
    acc.total = f.eligibleCount + f.selfCount + f.revokedCount + f.oodCount;
    byTag.set(f.tag1, acc);
  }
  return finishFacets(byTag, indexMeans);
}

/**
 * `scoreSubject` from the maintained aggregates of the agents the subject owns (identities from
 * the context list the chains where it holds agents).
 */
export function scoreSubjectFromAggregates(
  subjectWallet: string,
  aggs: SubjectAggregates,
  context: SubjectContext,
): SubjectScore {
  const t = emptyTotals(subjectWallet, context.identities);
  for (const r of aggs.raters) {
    agentIdsOf(t, r.network).add(r.agentId);
    t.counts.ratings += r.liveCount + r.revokedCount + r.oodCount;
    t.counts.revoked += r.revokedCount;
    t.counts.out_of_domain += r.oodCount;
    if (r.liveCount <= 0) continue;
    const sum = exact(r.liveSum);
    const rater = normalizeAddress(r.rater);
    if (rater === t.wallet) {
      t.counts.self += r.liveCount;
      t.self.addSum(sum, r.liveCount);
    } else {
      t.counts.eligible += r.liveCount;
      addEligibleNormalized(t, r.network, rater, sum, r.liveCount);
    }
  }
  t.facets = facetListFromAggregates(aggs.facets, context.facetIndexMeans);
  const valid = (d: Date | null) => (d !== null && Number.isFinite(d.getTime()) ? d.getTime() : null);
  t.first = t.counts.eligible > 0 ? valid(aggs.firstEligibleAt) : null;
  t.last = t.counts.eligible > 0 ? valid(aggs.lastEligibleAt) : null;
  return composeSubject(t, context);
}

/** Undated eligible ratings of a subject, from its (network, agent, rater) rows. */
export function undatedEligible(raters: readonly AgentRaterAggregate[], subjectWallet: string): number {
  let n = 0;
  for (const r of raters) if (!sameAddress(r.rater, subjectWallet)) n += r.liveUndated ?? 0;
  return n;
}

/** A rater's emitted ratings on one agent, with that agent's current subject. */
export interface EmittedAggregate extends AgentRaterAggregate {
  /** The agent's current owner, or `network:agent_id` when unknown. */
  subject: string;
}

/**
 * `raterStats` from the rater's (network, agent) rows and the block times of its first and last
 * rating (any state). Eligible = live (not revoked, in domain), as in the row version.
 */
export function raterStatsFromAggregates(
  raterWallet: string,
  rows: readonly EmittedAggregate[],
  firstAt: Date | null,
  lastAt: Date | null,
): RaterStats {
  const subjects = new Set<string>();
  const activeBySubject = new Map<string, number>();
  const chains = new Map<string, { total: number; active: number; subjects: Set<string> }>();
  const sum = new DecimalSum();
  let sumSq: ExactDecimal = { units: 0n, scale: 0 };
  let emitted = 0;
  let revoked = 0;
  let self = 0;
  let active = 0;
  for (const r of rows) {
    const total = r.liveCount + r.revokedCount + r.oodCount;
    if (total <= 0) continue;
    const subject = normalizeAddress(r.subject);
    emitted += total;
    revoked += r.revokedCount;
    subjects.add(subject);
    let ch = chains.get(r.network);
    if (!ch) {
      ch = { total: 0, active: 0, subjects: new Set() };
      chains.set(r.network, ch);
    }
    ch.total += total;
    ch.subjects.add(subject);
    const isSelf = sameAddress(r.subject, raterWallet);
    if (isSelf) self += total;
    const act = r.liveCount + r.oodCount;
    active += act;
    ch.active += act;
    if (act > 0) activeBySubject.set(subject, (activeBySubject.get(subject) ?? 0) + act);
    // eligible = live, in domain and not a self-rating (the row version's rule)
    if (r.liveCount > 0 && !isSelf) {
      sum.addSum(exact(r.liveSum), r.liveCount);
      const sq = exact(r.liveSumSq ?? '0');
      const scale = Math.max(sumSq.scale, sq.scale);
      sumSq = {
        units: sumSq.units * 10n ** BigInt(scale - sumSq.scale) + sq.units * 10n ** BigInt(scale - sq.scale),
        scale,
      };
    }
  }
  let top = 0;
  for (const n of activeBySubject.values()) if (n > top) top = n;
  const n = sum.count;
  let stddev: number | null = null;
  if (n >= 2) {
    // var = (n·Σx² − (Σx)²) / n², exactly as the row version (its sums are over a common scale).
    const s1 = sum.sum;
    const scale = Math.max(2 * s1.scale, sumSq.scale);
    const bn = BigInt(n);
    const a = bn * sumSq.units * 10n ** BigInt(scale - sumSq.scale);
    const b = s1.units * s1.units * 10n ** BigInt(scale - 2 * s1.scale);
    stddev = stddevOfSums(a - b, scale, bn);
  }
  const iso = (d: Date | null) => (d !== null && Number.isFinite(d.getTime()) ? d.toISOString() : null);
  return {
    wallet: normalizeAddress(raterWallet),
    ratings_emitted: emitted,
    revoked_count: revoked,
    eligible_count: n,
    self_ratings: self,
    distinct_subjects: subjects.size,
    value_avg: sum.mean6(),
    value_stddev: stddev,
    top_subject_share: active === 0 ? null : round6Ratio(top, active),
    first_rating_at: iso(firstAt),
    last_rating_at: iso(lastAt),
    per_chain: [...chains.entries()]
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([network, c]): RaterChain => ({
        network,
        total: c.total,
        active: c.active,
        distinct_subjects: c.subjects.size,
      })),
  };
}
