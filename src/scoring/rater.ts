/**
 * Rater profile pieces: the wallet as the AUTHOR of ratings. It emits no score and never will;
 * these are descriptive statistics of what it handed out.
 */
import { normalizeAddress, sameAddress } from './address.js';
import { decimalInDomain, meanOfSum6, parseDecimal, type ExactDecimal } from './decimal.js';
import { round6Ratio } from './display.js';
import { rational, round6AffineSqrt } from './rational.js';

export interface EmittedRating {
  network: string;
  /** The rated subject: the agent's current owner wallet (or the agent key when unowned). */
  subject: string;
  value: string;
  revoked: boolean;
  blockTime: Date | null;
}

export interface RaterChain {
  network: string;
  /** Ratings emitted on this chain, any state. */
  total: number;
  /** Not revoked. */
  active: number;
  /** Distinct subjects rated on this chain, any state. */
  distinct_subjects: number;
}

export interface RaterStats {
  wallet: string;
  /** Every rating emitted, revoked and out-of-domain included. */
  ratings_emitted: number;
  revoked_count: number;
  /**
   * Not revoked, in domain and not a self-rating (the rated subject is not the rater itself): the
   * denominator of `value_avg` and `value_stddev`.
   */
  eligible_count: number;
  /** Ratings it wrote on subjects it owns (any state); counted here, not excluded. */
  self_ratings: number;
  /** Distinct subjects across all emitted ratings (any state). */
  distinct_subjects: number;
  /** Mean of the eligible values, six decimals; null (never 0) when none. */
  value_avg: number | null;
  /** Population standard deviation of the eligible values, six decimals; null with fewer than 2. */
  value_stddev: number | null;
  /** Share of its active (non-revoked) ratings on its favourite subject, 0..1; null when none. */
  top_subject_share: number | null;
  first_rating_at: string | null;
  last_rating_at: string | null;
  /** Per chain, sorted by network. */
  per_chain: RaterChain[];
}

function rescale(d: ExactDecimal, scale: number): bigint {
  return d.scale === scale ? d.units : d.units * 10n ** BigInt(scale - d.scale);
}

/**
 * Population standard deviation of decimal strings (exact sums: var = (n·Σu² − (Σu)²) / n²,
 * then one square root), six decimals; null with fewer than two values.
 */
export function populationStddev(values: readonly string[]): number | null {
  const parsed: ExactDecimal[] = [];
  for (const v of values) {
    const d = parseDecimal(v);
    if (d === null) throw new RangeError(`not a decimal value: ${JSON.stringify(v)}`);
    parsed.push(d);
  }
  return stddevOfParsed(parsed);
}

function stddevOfParsed(parsed: readonly ExactDecimal[]): number | null {
  const n = parsed.length;
  if (n < 2) return null;
  const scale = parsed.reduce((m, d) => Math.max(m, d.scale), 0);
  let s1 = 0n;
  let s2 = 0n;
  for (const d of parsed) {
    const u = rescale(d, scale);
    s1 += u;
    s2 += u * u;
  }
  const bn = BigInt(n);
  return stddevOfSums(bn * s2 - s1 * s1, 2 * scale, bn);
}

/**
 * √((n·Σx² − (Σx)²) / n²), where `spread` = n·Σx² − (Σx)² at `scale` decimals: the population
 * standard deviation, from its exact form, rounded once to six decimals (half up).
 */
export function stddevOfSums(spread: bigint, scale: number, n: bigint): number {
  const variance = rational(spread < 0n ? 0n : spread, n * n * 10n ** BigInt(scale));
  return round6AffineSqrt(rational(0n), rational(1n), variance);
}

/** Statistics of everything one rater emitted. */
export function raterStats(raterWallet: string, emitted: readonly EmittedRating[]): RaterStats {
  const eligible: ExactDecimal[] = [];
  const subjects = new Set<string>();
  const activeBySubject = new Map<string, number>();
  const chains = new Map<string, { total: number; active: number; subjects: Set<string> }>();
  let revoked = 0;
  let self = 0;
  let active = 0;
  let first: number | null = null;
  let last: number | null = null;
  for (const r of emitted) {
    const subject = normalizeAddress(r.subject);
    subjects.add(subject);
    let ch = chains.get(r.network);
    if (!ch) {
      ch = { total: 0, active: 0, subjects: new Set() };
      chains.set(r.network, ch);
    }
    ch.total += 1;
    ch.subjects.add(subject);
    const isSelf = sameAddress(r.subject, raterWallet);
    if (isSelf) self += 1;
    if (r.blockTime !== null && Number.isFinite(r.blockTime.getTime())) {
      const t = r.blockTime.getTime();
      if (first === null || t < first) first = t;
      if (last === null || t > last) last = t;
    }
    if (r.revoked) {
      revoked += 1;
      continue;
    }
    active += 1;
    ch.active += 1;
    activeBySubject.set(subject, (activeBySubject.get(subject) ?? 0) + 1);
    const d = parseDecimal(r.value);
    if (d !== null && decimalInDomain(d) && !isSelf) eligible.push(d);
  }
  let sum: ExactDecimal = { units: 0n, scale: 0 };
  for (const d of eligible) {
    const scale = Math.max(sum.scale, d.scale);
    sum = { units: rescale(sum, scale) + rescale(d, scale), scale };
  }
  let top = 0;
  for (const n of activeBySubject.values()) if (n > top) top = n;
  return {
    wallet: normalizeAddress(raterWallet),
    ratings_emitted: emitted.length,
    revoked_count: revoked,
    eligible_count: eligible.length,
    self_ratings: self,
    distinct_subjects: subjects.size,
    value_avg: meanOfSum6(sum, eligible.length),
    value_stddev: stddevOfParsed(eligible),
    top_subject_share: active === 0 ? null : round6Ratio(top, active),
    first_rating_at: first === null ? null : new Date(first).toISOString(),
    last_rating_at: last === null ? null : new Date(last).toISOString(),
    per_chain: [...chains.entries()]
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([network, c]) => ({
        network,
        total: c.total,
        active: c.active,
        distinct_subjects: c.subjects.size,
      })),
  };
}
