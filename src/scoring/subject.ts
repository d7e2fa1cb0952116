/**
 * The full composition of one subject wallet's score: the numbers and everything that lets them
 * be checked (per chain, facets, self-rating, concentration, evidence band, caveats).
 */
import { normalizeAddress } from './address.js';
import { classifyParsed, type ClassCounts } from './classify.js';
import { concentrationFromNormalizedCounts, type Concentration } from './concentration.js';
import { confidence as confidenceOf, type Confidence } from './confidence.js';
import { caveats as caveatsOf, type Caveat } from './caveats.js';
import { DecimalSum, parseDecimal, type ExactDecimal } from './decimal.js';
import { facetList, type Facet, type FacetIndexMeans } from './facets.js';
import { POLICY_VERSION, RATER_WEIGHT_POLICY, READING_POLICY, type ReadingPolicy } from './policies.js';
import {
  voiceRows,
  voiceTable,
  weightedFromTable,
  type RaterEvidenceLookup,
  type VoiceWeight,
} from './rater-weight.js';
import { globalScore, selfRatedFrom, shrunkScore, type RaterSubjectCounts, type SelfRated } from './score.js';

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
  /**
   * The evidence of each rater (`@3`: history, independent breadth, graph trust, cohort, payment to
   * this subject, reciprocity); a rater missing from it (or an absent map) has none yet.
   */
  raterEvidence?: RaterEvidenceLookup;
  /** Receives the weight of every voice behind `weighted_score` (the agent detail serves them). */
  onVoiceWeights?: (weights: readonly VoiceWeight[]) => void;
  /** Receives the raters of those voices, sorted (no object per voice is made for it). */
  onVoters?: (raters: readonly string[]) => void;
  /** True while a chain with ratings of the subject has not completed backfill, or when the side query failed. */
  degraded?: boolean;
  /** Index-wide facet means keyed by raw tag1. */
  facetIndexMeans?: FacetIndexMeans;
  /** Chains where the subject holds identities; listed in per_chain even when unrated. */
  identities?: readonly IdentityChain[];
  /** Defaults to READING_POLICY. */
  readingPolicy?: ReadingPolicy;
}

interface SubjectChainScore {
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

/**
 * One rater's eligible values on a subject, all chains together (a DecimalSum: its sum and count),
 * and the chains it rated on: the first as a string, any other in a set made only then (one object
 * per rater, not a map of raters per chain beside the map of voices).
 */
class VoiceSum extends DecimalSum {
  more: Set<string> | null = null;
  constructor(readonly network: string) {
    super();
  }

  /** Records `network` among its chains; true when it is new to them. */
  onChain(network: string): boolean {
    if (network === this.network || this.more?.has(network)) return false;
    (this.more ??= new Set()).add(network);
    return true;
  }
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

/**
 * What a subject's answer is composed from, whichever way it was gathered (rows or maintained
 * aggregates): exact per-chain and per-rater sums of eligible values, the self-rating sum, the
 * class counts, the facets, the identities and the first/last eligible rating.
 */
interface SubjectTotals {
  /** Normalised subject wallet. */
  wallet: string;
  /** Per network: exact sum of eligible values and the number of distinct raters behind them. */
  chains: Map<string, { sum: DecimalSum; raters: number }>;
  /** Per normalized rater, all chains together: exact sum and count of its eligible values. */
  voices: Map<string, VoiceSum>;
  self: DecimalSum;
  counts: ClassCounts;
  agentIds: Map<string, Set<string>>;
  facets: Facet[];
  first: number | null;
  last: number | null;
}

/** Empty totals with the context's identities listed. */
export function emptyTotals(subjectWallet: string, identities: readonly IdentityChain[] = []): SubjectTotals {
  const t: SubjectTotals = {
    wallet: normalizeAddress(subjectWallet),
    chains: new Map(),
    voices: new Map(),
    self: new DecimalSum(),
    counts: { ratings: 0, eligible: 0, revoked: 0, out_of_domain: 0, self: 0 },
    agentIds: new Map(),
    facets: [],
    first: null,
    last: null,
  };
  for (const id of identities) {
    const ids = agentIdsOf(t, id.network);
    for (const a of id.agentIds) ids.add(a);
  }
  return t;
}

export function agentIdsOf(t: SubjectTotals, network: string): Set<string> {
  let s = t.agentIds.get(network);
  if (!s) {
    s = new Set();
    t.agentIds.set(network, s);
  }
  return s;
}

/** Adds `count` eligible values summing to `sum`, from one rater on one chain. */
export function addEligible(
  t: SubjectTotals,
  network: string,
  rater: string,
  sum: ExactDecimal,
  count: number,
): void {
  addEligibleNormalized(t, network, normalizeAddress(rater), sum, count);
}

/** `addEligible` of a rater address already normalized (`normalizeAddress`). */
export function addEligibleNormalized(
  t: SubjectTotals,
  network: string,
  key: string,
  sum: ExactDecimal,
  count: number,
): void {
  if (count <= 0) return;
  let chain = t.chains.get(network);
  if (!chain) {
    chain = { sum: new DecimalSum(), raters: 0 };
    t.chains.set(network, chain);
  }
  chain.sum.addSum(sum, count);
  let voice = t.voices.get(key);
  if (!voice) {
    voice = new VoiceSum(network);
    t.voices.set(key, voice);
    chain.raters += 1;
  } else if (voice.onChain(network)) chain.raters += 1;
  voice.addSum(sum, count);
}

/** Composes the full scored answer for one subject wallet. Pure and deterministic. */
export function scoreSubject(
  subjectWallet: string,
  ratings: readonly SubjectRating[],
  context: SubjectContext,
): SubjectScore {
  const t = emptyTotals(subjectWallet, context.identities);
  for (const r of ratings) {
    agentIdsOf(t, r.network).add(r.agentId);
    t.counts.ratings += 1;
    const value = parseDecimal(r.value);
    const cls = classifyParsed(r, value, t.wallet);
    t.counts[cls] += 1;
    if (cls === 'self' && value !== null) t.self.add(value);
    if (cls !== 'eligible' || value === null) continue;
    addEligible(t, r.network, r.rater, value, 1);
    if (r.blockTime !== null && Number.isFinite(r.blockTime.getTime())) {
      const time = r.blockTime.getTime();
      if (t.first === null || time < t.first) t.first = time;
      if (t.last === null || time > t.last) t.last = time;
    }
  }
  t.facets = facetList(ratings, t.wallet, context.facetIndexMeans);
  return composeSubject(t, context);
}

/** The scored answer from its totals (shared by the row and the aggregate paths). */
export function composeSubject(t: SubjectTotals, context: SubjectContext): SubjectScore {
  const wallet = t.wallet;
  const chainRows = [...t.chains.entries()]
    .filter(([, c]) => c.sum.count > 0)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([network, c]) => ({
      network,
      final_score: c.sum.mean6(),
      review_count: c.sum.count,
      distinct_raters: c.raters,
    }));
  const scoredChains = new Map(chainRows.map((c) => [c.network, c]));
  const networks = [...t.agentIds.keys()].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
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
          agent_ids: [...(t.agentIds.get(network) ?? [])].sort(compareAgentIds),
        },
      ];
    }),
  );
  const chainFinals = chainRows.map((c) => c.final_score);
  const final_score = globalScore(chainFinals);
  // Eligible ratings per rater over every chain (keys normalized by addEligible): each voice's count.
  const conc = concentrationFromNormalizedCounts(t.voices, (v) => v.count);
  const degraded = context.degraded === true;
  const self_rated = selfRatedFrom(t.self.count, t.self.mean6(), final_score);
  const concentration = degraded ? null : conc;
  let weighted: number | null = null;
  if (context.raterSubjectCounts) {
    const table = voiceTable(t.voices, context.raterSubjectCounts, context.raterEvidence);
    if (context.onVoiceWeights) context.onVoiceWeights(voiceRows(table));
    context.onVoters?.(table.raters);
    weighted = weightedFromTable(table);
  }

  return {
    wallet,
    final_score,
    shrunk_score: shrunkScore(final_score, conc.distinct_raters, context.prior),
    weighted_score: weighted,
    rater_weight_policy: RATER_WEIGHT_POLICY,
    policy_version: POLICY_VERSION,
    chain_count: chainFinals.filter((s) => s !== null).length,
    per_chain,
    total_reviews: t.counts.eligible,
    distinct_raters: conc.distinct_raters,
    top_client: concentration?.top_client ?? null,
    top_client_share: concentration?.top_client_share ?? null,
    concentration,
    confidence: degraded ? null : confidenceOf(conc.distinct_raters, final_score),
    self_rated,
    facets: Object.fromEntries(t.facets.map((f) => [f.tag1, f])),
    activity: {
      first_rating_at: t.first === null ? null : new Date(t.first).toISOString(),
      last_rating_at: t.last === null ? null : new Date(t.last).toISOString(),
    },
    ratings_count: t.counts.ratings,
    revoked_count: t.counts.revoked,
    out_of_domain_count: t.counts.out_of_domain,
    caveats: caveatsOf(
      {
        wallet,
        final_score,
        total_reviews: t.counts.eligible,
        distinct_raters: conc.distinct_raters,
        concentration,
        self_rated,
      },
      context.readingPolicy ?? READING_POLICY,
    ),
  };
}
