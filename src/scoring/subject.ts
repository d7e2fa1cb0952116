/**
 * The full composition of one subject wallet's score: the numbers and everything that lets them
 * be checked (per chain, facets, self-rating, concentration, evidence band, caveats).
 */
import { normalizeAddress } from './address.js';
import { classifyParsed, type ClassCounts } from './classify.js';
import { concentration as concentrationOf, type Concentration } from './concentration.js';
import { confidence as confidenceOf, type Confidence } from './confidence.js';
import { caveats as caveatsOf, type Caveat } from './caveats.js';
import { parseDecimal } from './decimal.js';
import { facets as facetsOf, type Facet, type FacetIndexMeans } from './facets.js';
import { POLICY_VERSION, RATER_WEIGHT_POLICY, READING_POLICY, type ReadingPolicy } from './policies.js';
import {
  chainScores,
  globalScore,
  selfRated as selfRatedOf,
  shrunkScore,
  weightedScore,
  type EligibleValue,
  type RaterSubjectCounts,
  type SelfRated,
} from './score.js';

/** One rating received by the subject (its agent is currently owned by the subject wallet). */
export interface SubjectRating {
  network: string;
  agentId: string;
  rater: string;
  /** Exact decimal string (value / 10^valueDecimals). */
  value: string;
  revoked: boolean;
  /** On-chain block time; null = undated. */
  blockTime: Date | null;
  tag1: string;
  feedbackURI?: string;
}

/** A chain where the subject holds identities (rated or not). */
export interface IdentityChain {
  network: string;
  agentIds: readonly string[];
}

export interface SubjectContext {
  /** Index prior (mean final_score of every scored wallet); null when the index has none. */
  prior: number | null;
  /** Per-chain priors for per-chain shrinkage; absent or missing chain → per-chain shrunk null. */
  chainPriors?: ReadonlyMap<string, number | null> | Readonly<Record<string, number | null>>;
  /**
   * Distinct subjects each rater has rated in the index (for `weighted_score`). Absent →
   * `weighted_score: null` (the side signal is unavailable); a rater missing from it weighs 0.25.
   */
  raterSubjectCounts?: RaterSubjectCounts;
  /** True while a chain with ratings of the subject has not completed backfill, or when the side query failed. */
  degraded?: boolean;
  /** Index-wide facet means keyed by raw tag1. */
  facetIndexMeans?: FacetIndexMeans;
  /** Chains where the subject holds identities; listed in per_chain even when unrated. */
  identities?: readonly IdentityChain[];
  /** Defaults to READING_POLICY. */
  readingPolicy?: ReadingPolicy;
}

export interface SubjectChainScore {
  network: string;
  /** Mean of this chain's eligible values; null (never 0) when none. */
  final_score: number | null;
  /** Same value as `final_score` (field name of the reference schema's ChainScore). */
  score: number | null;
  /** This chain's score shrunk toward this chain's prior by its distinct raters; null without prior. */
  shrunk_score: number | null;
  /** Eligible ratings on this chain. */
  review_count: number;
  /** Distinct eligible raters on this chain. */
  distinct_raters: number;
  /** Vote in the global score: 1 when the chain has a score, 0 when not (equal weight per chain). */
  weight: number;
  /** Identities the subject holds on this chain (from identities and from rated agents), sorted. */
  agent_ids: string[];
}

export interface SubjectScore {
  wallet: string;
  final_score: number | null;
  shrunk_score: number | null;
  weighted_score: number | null;
  rater_weight_policy: string;
  policy_version: string;
  /** Chains that contributed a score. */
  chain_count: number;
  /** Keyed by network, networks in ascending order. */
  per_chain: Record<string, SubjectChainScore>;
  /** Eligible ratings behind final_score. */
  total_reviews: number;
  /** Distinct eligible raters across all chains. */
  distinct_raters: number;
  /** Null when degraded. */
  top_client: string | null;
  /** Null when degraded. */
  top_client_share: number | null;
  /** Null when degraded. */
  concentration: Concentration | null;
  /** Null when degraded (it goes null together with concentration). */
  confidence: Confidence | null;
  self_rated: SelfRated;
  facets: Record<string, Facet>;
  /** Earliest and latest ELIGIBLE rating by block time (ISO); null while undated or none. */
  activity: { first_rating_at: string | null; last_rating_at: string | null };
  /** Every rating received: ratings_count = total_reviews + revoked_count + out_of_domain_count + self_rated.count. */
  ratings_count: number;
  revoked_count: number;
  out_of_domain_count: number;
  caveats: Caveat[];
}

function compareAgentIds(a: string, b: string): number {
  const da = /^\d+$/.test(a);
  const db = /^\d+$/.test(b);
  if (da && db) {
    const x = BigInt(a);
    const y = BigInt(b);
    return x < y ? -1 : x > y ? 1 : 0;
  }
  if (da !== db) return da ? -1 : 1;
  return a < b ? -1 : a > b ? 1 : 0;
}

function lookupPrior(priors: SubjectContext['chainPriors'], network: string): number | null {
  if (priors === undefined) return null;
  if (priors instanceof Map) return priors.get(network) ?? null;
  const rec = priors as Readonly<Record<string, number | null>>;
  return Object.hasOwn(rec, network) ? (rec[network] ?? null) : null;
}

/** Composes the full scored answer for one subject wallet. Pure and deterministic. */
export function scoreSubject(
  subjectWallet: string,
  ratings: readonly SubjectRating[],
  context: SubjectContext,
): SubjectScore {
  const wallet = normalizeAddress(subjectWallet);
  const counts: ClassCounts = { ratings: 0, eligible: 0, revoked: 0, out_of_domain: 0, self: 0 };
  const eligible: EligibleValue[] = [];
  const selfValues: string[] = [];
  const agentIds = new Map<string, Set<string>>();
  let first: number | null = null;
  let last: number | null = null;

  const idsOf = (network: string): Set<string> => {
    let s = agentIds.get(network);
    if (!s) {
      s = new Set();
      agentIds.set(network, s);
    }
    return s;
  };
  for (const id of context.identities ?? []) {
    const s = idsOf(id.network);
    for (const a of id.agentIds) s.add(a);
  }

  for (const r of ratings) {
    idsOf(r.network).add(r.agentId);
    counts.ratings += 1;
    const cls = classifyParsed(r, parseDecimal(r.value), wallet);
    counts[cls] += 1;
    if (cls === 'self') selfValues.push(r.value);
    if (cls !== 'eligible') continue;
    eligible.push({ network: r.network, rater: r.rater, value: r.value });
    if (r.blockTime !== null && Number.isFinite(r.blockTime.getTime())) {
      const t = r.blockTime.getTime();
      if (first === null || t < first) first = t;
      if (last === null || t > last) last = t;
    }
  }

  const scoredChains = new Map(chainScores(eligible).map((c) => [c.network, c]));
  const networks = [...agentIds.keys()].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  const per_chain = Object.fromEntries(
    networks.map((network): [string, SubjectChainScore] => {
      const c = scoredChains.get(network);
      const final_score = c?.final_score ?? null;
      const distinct = c?.distinct_raters ?? 0;
      return [
        network,
        {
          network,
          final_score,
          score: final_score,
          shrunk_score: shrunkScore(final_score, distinct, lookupPrior(context.chainPriors, network)),
          review_count: c?.review_count ?? 0,
          distinct_raters: distinct,
          weight: final_score === null ? 0 : 1,
          agent_ids: [...(agentIds.get(network) ?? [])].sort(compareAgentIds),
        },
      ];
    }),
  );
  const chainFinals = [...scoredChains.values()].map((c) => c.final_score);
  const final_score = globalScore(chainFinals);
  const conc = concentrationOf(eligible);
  const degraded = context.degraded === true;
  const self_rated = selfRatedOf(selfValues, final_score);
  const concentration = degraded ? null : conc;

  return {
    wallet,
    final_score,
    shrunk_score: shrunkScore(final_score, conc.distinct_raters, context.prior),
    weighted_score: context.raterSubjectCounts ? weightedScore(eligible, context.raterSubjectCounts) : null,
    rater_weight_policy: RATER_WEIGHT_POLICY,
    policy_version: POLICY_VERSION,
    chain_count: chainFinals.filter((s) => s !== null).length,
    per_chain,
    total_reviews: counts.eligible,
    distinct_raters: conc.distinct_raters,
    top_client: concentration?.top_client ?? null,
    top_client_share: concentration?.top_client_share ?? null,
    concentration,
    confidence: degraded ? null : confidenceOf(conc.distinct_raters, final_score),
    self_rated,
    facets: facetsOf(ratings, wallet, context.facetIndexMeans),
    activity: {
      first_rating_at: first === null ? null : new Date(first).toISOString(),
      last_rating_at: last === null ? null : new Date(last).toISOString(),
    },
    ratings_count: counts.ratings,
    revoked_count: counts.revoked,
    out_of_domain_count: counts.out_of_domain,
    caveats: caveatsOf(
      {
        wallet,
        final_score,
        total_reviews: counts.eligible,
        distinct_raters: conc.distinct_raters,
        concentration,
        self_rated,
      },
      context.readingPolicy ?? READING_POLICY,
    ),
  };
}
