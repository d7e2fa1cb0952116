/**
 * `equal-weight-per-chain@2`, `bayes-shrinkage-distinct-raters@1` and the voices and breadth weight
 * of `one-voice-per-counterparty+bounded-trust@2` (`raterWeight` is the breadth factor of `@3`,
 * src/scoring/rater-weight.ts; the `@2` weighted mean stays here for comparison, as bench:sybil
 * prints it).
 *
 * Every score here is returned at its served precision: computed in exact decimals (bigint
 * rationals) and rounded once to six decimals, half up (rational.ts `round6Exact`), and every
 * composite is computed from the served values of its parts (a global score from the served
 * per-chain scores, a shrunk score from the served final score and prior, a gap from the served
 * self and final scores), so a client recomputing a number by hand in exact decimals from the
 * response gets the same digits, ties included.
 */
import { normalizeAddress } from './address.js';
import {
  DecimalSum,
  meanOfSum6,
  numberRational,
  parseDecimal,
  toExactDecimal,
  type ExactDecimal,
} from './decimal.js';
import { differenceOfServed, round6, servedMicros } from './display.js';
import { add, div, halfUpDiv, microsNumber, mul, quotient6, rational, round6Exact } from './rational.js';
import { RATER_WEIGHT_MAX, RATER_WEIGHT_MIN, RATER_WEIGHT_STEP, SHRINKAGE_K } from './policies.js';

/** An eligible rating's value (the caller has already classified it as eligible). */
export interface EligibleValue {
  network: string;
  rater: string;
  /** Exact decimal string, in domain. */
  value: string;
}

/** One chain's contribution under `equal-weight-per-chain@2`. */
interface ChainScoreRow {
  network: string;
  /** Mean of the chain's eligible values, six decimals; null (never 0) when none. */
  final_score: number | null;
  /** Eligible ratings on this chain. */
  review_count: number;
  /** Distinct eligible raters on this chain (null when the aggregate did not carry it). */
  distinct_raters: number | null;
}

function parseOrThrow(value: string): ExactDecimal {
  const d = parseDecimal(value);
  if (d === null) throw new RangeError(`not a decimal value: ${JSON.stringify(value)}`);
  return d;
}

/**
 * The mean of served numbers (each first taken at its six decimals), exactly, rounded once to six
 * decimals; null for an empty list.
 */
function meanOfServed(xs: readonly number[]): number | null {
  if (xs.length === 0) return null;
  let micros = 0;
  for (const x of xs) micros += servedMicros(x);
  const m = halfUpDiv(micros, xs.length);
  return m !== null ? microsNumber(m) : quotient6(BigInt(micros), BigInt(xs.length) * 1_000_000n);
}

/**
 * Global `final_score`: the mean of the non-null per-chain scores (one chain, one vote), six
 * decimals; null when no chain has a score. A real 0 counts as a score.
 */
export function globalScore(chainScores: readonly (number | null)[]): number | null {
  return meanOfServed(chainScores.filter((s): s is number => s !== null));
}

/** Per-chain scores from eligible rows, sorted by network. */
export function chainScores(eligible: readonly EligibleValue[]): ChainScoreRow[] {
  const byChain = new Map<string, { sum: DecimalSum; raters: Set<string> }>();
  for (const r of eligible) {
    let acc = byChain.get(r.network);
    if (!acc) {
      acc = { sum: new DecimalSum(), raters: new Set() };
      byChain.set(r.network, acc);
    }
    acc.sum.add(parseOrThrow(r.value));
    acc.raters.add(normalizeAddress(r.rater));
  }
  return [...byChain.entries()]
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([network, acc]) => ({
      network,
      final_score: acc.sum.mean6(),
      review_count: acc.sum.count,
      distinct_raters: acc.raters.size,
    }));
}

interface WalletScore {
  /** Global score: mean of the non-null per-chain scores; null when nothing is eligible. */
  final_score: number | null;
  /** How many chains contributed a score. */
  chain_count: number;
  per_chain: ChainScoreRow[];
}

/** `equal-weight-per-chain@2` from eligible rows. */
export function walletScore(eligible: readonly EligibleValue[]): WalletScore {
  const per_chain = chainScores(eligible);
  return fromChainRows(per_chain);
}

function fromChainRows(per_chain: ChainScoreRow[]): WalletScore {
  const scores = per_chain.map((c) => c.final_score);
  return {
    final_score: globalScore(scores),
    chain_count: scores.filter((s) => s !== null).length,
    per_chain,
  };
}

/**
 * A chain pre-aggregated by SQL over the subject's ELIGIBLE ratings:
 * `sum(value)` (exact NUMERIC, as a string preferably), `count(*)` and optionally
 * `count(DISTINCT rater)`.
 */
interface ChainAggregate {
  network: string;
  sum: string | number | bigint | null;
  count: number | string | bigint;
  distinct_raters?: number | string | bigint | null;
}

/** Mean of a pre-aggregated (sum, count) pair, six decimals; null when count is 0. */
export function meanFromAggregate(
  sum: string | number | bigint | null,
  count: number | string | bigint,
): number | null {
  const n = BigInt(count);
  if (n === 0n) return null;
  if (sum === null) throw new RangeError('aggregate sum is null with a non-zero count');
  const d = toExactDecimal(sum);
  if (d === null) throw new RangeError(`not a decimal sum: ${String(sum)}`);
  return meanOfSum6(d, n);
}

/**
 * `equal-weight-per-chain@2` from per-chain aggregates (identical numbers to `walletScore` over
 * the same rows). Chains with count 0 are kept with `final_score: null`.
 */
export function scoreFromAggregates(aggs: readonly ChainAggregate[]): WalletScore {
  const per_chain = [...aggs]
    .sort((a, b) => (a.network < b.network ? -1 : a.network > b.network ? 1 : 0))
    .map((a) => ({
      network: a.network,
      final_score: meanFromAggregate(a.sum, a.count),
      review_count: Number(a.count),
      distinct_raters:
        a.distinct_raters === undefined || a.distinct_raters === null ? null : Number(a.distinct_raters),
    }));
  return fromChainRows(per_chain);
}

export interface SelfRated {
  /** Live, in-domain self-ratings (the 'self' class of the partition). */
  count: number;
  /** Their mean, six decimals; null when none. */
  score: number | null;
  /** self score − final_score (positive: the subject overrates itself); null when either is null. */
  gap: number | null;
}

/** `self_rated` from the self-rating values (class 'self') and the served final score. */
export function selfRated(selfValues: readonly string[], finalScore: number | null): SelfRated {
  const acc = new DecimalSum();
  for (const v of selfValues) acc.add(parseOrThrow(v));
  return selfRatedFrom(acc.count, acc.mean6(), finalScore);
}

/** `self_rated` from an SQL aggregate of the self-ratings (sum, count). */
export function selfRatedFromAggregate(
  sum: string | number | bigint | null,
  count: number | string | bigint,
  finalScore: number | null,
): SelfRated {
  return selfRatedFrom(Number(count), meanFromAggregate(sum, count), finalScore);
}

export function selfRatedFrom(count: number, score: number | null, finalScore: number | null): SelfRated {
  const f = round6(finalScore);
  return { count, score, gap: score === null || f === null ? null : differenceOfServed(score, f) };
}

/**
 * `bayes-shrinkage-distinct-raters@1`: (n·final + k·prior) / (n + k), n = distinct eligible
 * raters, from the served (six-decimal) final score and prior. Null when final is null (nothing
 * to rank) or prior is null (the index cannot form one).
 */
export function shrunkScore(
  finalScore: number | null,
  distinctRaters: number,
  prior: number | null,
  k: number = SHRINKAGE_K,
): number | null {
  if (finalScore === null || prior === null) return null;
  const n = Math.max(0, distinctRaters);
  if (n + k <= 0) return null;
  // (n·f + k·p) / (n + k) in exact decimals, rounded once: 62.6537755 serves as 62.653776. In
  // millionths, with integer n and k: one integer division rounded half up.
  const F = servedMicros(finalScore);
  const P = servedMicros(prior);
  if (Number.isInteger(n) && Number.isInteger(k)) {
    const m = halfUpDiv(n * F + k * P, n + k);
    if (m !== null) return microsNumber(m);
  }
  const bn = numberRational(n);
  const bk = numberRational(k);
  const num = add(mul(bn, rational(BigInt(F))), mul(bk, rational(BigInt(P))));
  return round6Exact(div(num, mul(add(bn, bk), rational(1_000_000n))));
}

/** The index prior: mean of the final scores of every scored wallet (nulls skipped), or null. */
export function indexPrior(finalScores: readonly (number | null)[]): number | null {
  return meanOfServed(finalScores.filter((s): s is number => s !== null));
}

/** Leaderboard order: shrunk_score desc (null last), distinct_raters desc, wallet asc. */
export function compareLeaderboard(
  a: { wallet: string; shrunk_score: number | null; distinct_raters: number },
  b: { wallet: string; shrunk_score: number | null; distinct_raters: number },
): number {
  if (a.shrunk_score !== b.shrunk_score) {
    if (a.shrunk_score === null) return 1;
    if (b.shrunk_score === null) return -1;
    return b.shrunk_score - a.shrunk_score;
  }
  if (a.distinct_raters !== b.distinct_raters) return b.distinct_raters - a.distinct_raters;
  return a.wallet < b.wallet ? -1 : a.wallet > b.wallet ? 1 : 0;
}

/**
 * Distinct subjects on which each rater has at least one ELIGIBLE rating (live, in domain, not a
 * self-rating), keyed by rater (EVM lower-case).
 */
export type RaterSubjectCounts = ReadonlyMap<string, number> | Readonly<Record<string, number>>;

function lookupSubjects(counts: RaterSubjectCounts, rater: string): number | undefined {
  if (counts instanceof Map) return counts.get(rater);
  const rec = counts as Readonly<Record<string, number>>;
  return Object.hasOwn(rec, rater) ? rec[rater] : undefined;
}

/**
 * Weight of one voice: min(1, 0.25·s) bounded to 0.25..1, s = distinct subjects the rater has
 * rated ELIGIBLY in the index (self-, revoked and out-of-domain ratings never raise it). A missing, zero or invalid s counts as 1 (the rater has at least rated this
 * subject), i.e. the minimum weight 0.25.
 */
export function raterWeight(distinctSubjects: number | undefined | null): number {
  const s =
    distinctSubjects !== undefined && distinctSubjects !== null && Number.isFinite(distinctSubjects)
      ? Math.max(1, distinctSubjects)
      : 1;
  return Math.min(RATER_WEIGHT_MAX, Math.max(RATER_WEIGHT_MIN, RATER_WEIGHT_STEP * s));
}

interface RaterVoice {
  /** Rater address (EVM lower-case). */
  rater: string;
  /** Mean of this rater's eligible ratings of the subject (the nearest double). */
  mean: number;
  /** The exact sum of those ratings (the weighted score is computed from it, exactly). */
  sum: ExactDecimal;
  /** How many eligible ratings collapsed into this voice. */
  count: number;
  /** s used for the weight. */
  distinct_subjects: number;
  weight: number;
}

/** One voice per distinct rater (all chains together), sorted by rater. */
export function raterVoices(
  eligible: readonly { rater: string; value: string }[],
  subjectCounts: RaterSubjectCounts,
): RaterVoice[] {
  const byRater = new Map<string, DecimalSum>();
  for (const r of eligible) {
    const key = normalizeAddress(r.rater);
    let acc = byRater.get(key);
    if (!acc) {
      acc = new DecimalSum();
      byRater.set(key, acc);
    }
    acc.add(parseOrThrow(r.value));
  }
  return voicesFromSums(byRater, subjectCounts);
}

/**
 * Voices from exact per-rater sums of eligible values (keys already normalized; the aggregate
 * path merges its (agent, rater) rows into these), sorted by rater.
 */
export function voicesFromSums(
  byRater: ReadonlyMap<string, DecimalSum>,
  subjectCounts: RaterSubjectCounts,
): RaterVoice[] {
  return [...byRater.entries()]
    .filter(([, acc]) => acc.count > 0)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([rater, acc]) => {
      const raw = lookupSubjects(subjectCounts, rater);
      const s = raw !== undefined && Number.isFinite(raw) ? Math.max(1, raw) : 1;
      return {
        rater,
        mean: acc.mean() as number,
        sum: acc.sum,
        count: acc.count,
        distinct_subjects: s,
        weight: raterWeight(s),
      };
    });
}

/**
 * The weighted mean of voices, Σ(w · voice) / Σ w, in exact decimals (each voice its exact mean
 * sum / count, each weight the decimal it is written as), rounded once to six decimals; null
 * without voices (or with no weight). One pass of integer products over a common scale; the voices
 * are grouped by their count, so only the distinct counts meet in one common denominator.
 */
export function weightedFromVoices(voices: readonly RaterVoice[]): number | null {
  if (voices.length === 0) return null;
  const weights = new Map<number, ExactDecimal>();
  const weightOf = (w: number): ExactDecimal => {
    const known = weights.get(w);
    if (known !== undefined) return known;
    const d = toExactDecimal(w);
    if (d === null) throw new RangeError(`not a finite weight: ${w}`);
    weights.set(w, d);
    return d;
  };
  let ws = 0;
  let ss = 0;
  for (const v of voices) {
    ws = Math.max(ws, weightOf(v.weight).scale);
    ss = Math.max(ss, v.sum.scale);
  }
  // Σ w·sum per count, at 10^-(ws+ss); Σ w at 10^-ws: in plain numbers while every figure is a
  // safe integer (weights of two decimals, sums of a few), else in bigints.
  const byCount = fastWeightedTotals(voices, weightOf, ws, ss) ?? bigWeightedTotals(voices, weightOf, ws, ss);
  const wsum = byCount.wsum;
  if (wsum === 0n) return null;
  let lcm = 1n;
  for (const c of byCount.totals.keys()) {
    const bc = BigInt(c);
    lcm = (lcm / gcdOf(lcm, bc)) * bc;
  }
  let num = 0n;
  for (const [c, total] of byCount.totals) num += total * (lcm / BigInt(c));
  // value = (num / (lcm·10^(ws+ss))) / (wsum / 10^ws)
  return quotient6(num, lcm * 10n ** BigInt(ss) * wsum);
}

type WeightOf = (w: number) => ExactDecimal;
interface WeightedTotals {
  /** Per voice count: Σ w·sum of the voices with that count, at 10^-(ws+ss). */
  totals: Map<number, bigint>;
  /** Σ w at 10^-ws. */
  wsum: bigint;
}

const POW10 = [1, 10, 100, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15];

/** `bigWeightedTotals` in plain numbers, or null as soon as a figure is not a safe integer. */
function fastWeightedTotals(
  voices: readonly RaterVoice[],
  weightOf: WeightOf,
  ws: number,
  ss: number,
): WeightedTotals | null {
  const totals = new Map<number, number>();
  let wsum = 0;
  for (const v of voices) {
    const w = weightOf(v.weight);
    const wu = Number(w.units) * (POW10[ws - w.scale] ?? NaN);
    const su = Number(v.sum.units) * (POW10[ss - v.sum.scale] ?? NaN);
    const t = (totals.get(v.count) ?? 0) + wu * su;
    wsum += wu;
    if (!Number.isSafeInteger(t) || !Number.isSafeInteger(wsum) || !Number.isSafeInteger(wu * su))
      return null;
    totals.set(v.count, t);
  }
  return {
    totals: new Map([...totals].map(([c, t]) => [c, BigInt(t)])),
    wsum: BigInt(wsum),
  };
}

function bigWeightedTotals(
  voices: readonly RaterVoice[],
  weightOf: WeightOf,
  ws: number,
  ss: number,
): WeightedTotals {
  const totals = new Map<number, bigint>();
  let wsum = 0n;
  for (const v of voices) {
    const w = weightOf(v.weight);
    const wu = w.units * 10n ** BigInt(ws - w.scale);
    const su = v.sum.units * 10n ** BigInt(ss - v.sum.scale);
    totals.set(v.count, (totals.get(v.count) ?? 0n) + wu * su);
    wsum += wu;
  }
  return { totals, wsum };
}

function gcdOf(a: bigint, b: bigint): bigint {
  while (b !== 0n) [a, b] = [b, a % b];
  return a;
}

/**
 * The `@2` weighted score (`one-voice-per-counterparty+bounded-trust@2`): the weighted mean of the
 * voices, six decimals; null when there is no eligible rating. It never replaces `final_score`.
 */
export function weightedScore(
  eligible: readonly { rater: string; value: string }[],
  subjectCounts: RaterSubjectCounts,
): number | null {
  return weightedFromVoices(raterVoices(eligible, subjectCounts));
}
