/**
 * History: the subject's score through time, bucketed by ON-CHAIN block time in UTC (weeks start
 * Monday 00:00 UTC, months on the 1st). Same policy as the served score (per-chain means, then
 * the mean of chains), over eligible ratings only.
 */
import { normalizeAddress } from './address.js';
import { classifyParsed } from './classify.js';
import { DecimalSum, parseDecimal, type ExactDecimal } from './decimal.js';
import { globalScore } from './score.js';

export type HistoryBucket = 'week' | 'month';
export const HISTORY_BUCKETS: readonly HistoryBucket[] = Object.freeze(['week', 'month'] as const);
export const DEFAULT_HISTORY_BUCKET: HistoryBucket = 'week';

export interface HistoryRating {
  network: string;
  rater: string;
  value: string;
  revoked: boolean;
  /** On-chain block time; null (or an invalid Date) = undated. */
  blockTime: Date | null;
}

interface HistoryPoint {
  /** Bucket start, ISO 8601 UTC (e.g. "2024-12-30T00:00:00.000Z"). */
  period: string;
  /** Eligible ratings dated inside this bucket. */
  review_count: number;
  /** Score of this bucket's ratings alone (same policy); null when the bucket is empty. */
  score: number | null;
  /** Score over every dated eligible rating up to the end of this bucket. */
  cumulative_score: number | null;
}

interface HistoryCoverage {
  /** Eligible ratings placed in the series. */
  dated_reviews: number;
  /** Eligible ratings with no block time, absent from every point. */
  undated_reviews: number;
}

interface WalletHistory {
  wallet: string;
  bucket: HistoryBucket;
  points: HistoryPoint[];
  coverage: HistoryCoverage;
}

const DAY_MS = 86_400_000;

/** Start of the UTC bucket containing t. */
export function bucketStart(t: Date, bucket: HistoryBucket): Date {
  const y = t.getUTCFullYear();
  const m = t.getUTCMonth();
  if (bucket === 'month') return new Date(Date.UTC(y, m, 1));
  const midnight = Date.UTC(y, m, t.getUTCDate());
  const sinceMonday = (t.getUTCDay() + 6) % 7;
  return new Date(midnight - sinceMonday * DAY_MS);
}

/** Start of the bucket after the one starting at `start`. */
export function nextBucketStart(start: Date, bucket: HistoryBucket): Date {
  if (bucket === 'month') return new Date(Date.UTC(start.getUTCFullYear(), start.getUTCMonth() + 1, 1));
  return new Date(start.getTime() + 7 * DAY_MS);
}

function isDated(d: Date | null): d is Date {
  return d !== null && Number.isFinite(d.getTime());
}

function scoreOf(sums: ReadonlyMap<string, DecimalSum>): number | null {
  return globalScore([...sums.values()].map((s) => s.mean6()));
}

function addTo(sums: Map<string, DecimalSum>, network: string, value: ExactDecimal, count: number): void {
  let acc = sums.get(network);
  if (!acc) {
    acc = new DecimalSum();
    sums.set(network, acc);
  }
  acc.addSum(value, count);
}

/**
 * The time series of a subject's eligible ratings. One point per bucket from the first dated
 * rating's bucket to the last one's, empty buckets included (review_count 0, score null,
 * cumulative_score carried), so a quiet stretch reads as flat rather than as missing.
 */
export function historyPoints(
  ratings: readonly HistoryRating[],
  subjectWallet: string,
  bucket: HistoryBucket = DEFAULT_HISTORY_BUCKET,
): WalletHistory {
  const dated: DatedSum[] = [];
  let undated = 0;
  for (const r of ratings) {
    const value = parseDecimal(r.value);
    if (classifyParsed(r, value, subjectWallet) !== 'eligible' || value === null) continue;
    if (isDated(r.blockTime))
      dated.push({ t: r.blockTime.getTime(), network: r.network, sum: value, count: 1 });
    else undated += 1;
  }
  return seriesOf(dated, undated, subjectWallet, bucket);
}

/** Eligible dated ratings of one chain on one UTC day (a row of the maintained day aggregate). */
export interface HistoryDayAggregate {
  network: string;
  /** UTC midnight of the day. */
  day: Date;
  count: number;
  /** Exact decimal string: the sum of those ratings' values. */
  sum: string;
}

/**
 * `historyPoints` from maintained per-day aggregates (weeks and months start on a UTC midnight,
 * so a day never straddles two buckets) and the count of undated eligible ratings.
 */
export function historyFromAggregates(
  days: readonly HistoryDayAggregate[],
  undated: number,
  subjectWallet: string,
  bucket: HistoryBucket = DEFAULT_HISTORY_BUCKET,
): WalletHistory {
  const dated: DatedSum[] = [];
  for (const d of days) {
    if (d.count <= 0) continue;
    const sum = parseDecimal(d.sum);
    if (sum === null) throw new RangeError(`not a decimal sum: ${JSON.stringify(d.sum)}`);
    dated.push({ t: d.day.getTime(), network: d.network, sum, count: d.count });
  }
  return seriesOf(dated, undated, subjectWallet, bucket);
}

interface DatedSum {
  t: number;
  network: string;
  sum: ExactDecimal;
  count: number;
}

function seriesOf(
  dated: DatedSum[],
  undated: number,
  subjectWallet: string,
  bucket: HistoryBucket,
): WalletHistory {
  dated.sort((a, b) => a.t - b.t);
  const points: HistoryPoint[] = [];
  const first = dated[0];
  const last = dated[dated.length - 1];
  let datedCount = 0;
  if (first && last) {
    const cumulative = new Map<string, DecimalSum>();
    const end = bucketStart(new Date(last.t), bucket).getTime();
    let i = 0;
    for (let start = bucketStart(new Date(first.t), bucket); start.getTime() <= end;) {
      const next = nextBucketStart(start, bucket);
      const inBucket = new Map<string, DecimalSum>();
      let count = 0;
      for (let r = dated[i]; r !== undefined && r.t < next.getTime(); r = dated[++i]) {
        addTo(inBucket, r.network, r.sum, r.count);
        addTo(cumulative, r.network, r.sum, r.count);
        count += r.count;
      }
      datedCount += count;
      points.push({
        period: start.toISOString(),
        review_count: count,
        score: scoreOf(inBucket),
        cumulative_score: scoreOf(cumulative),
      });
      start = next;
    }
  }
  return {
    wallet: normalizeAddress(subjectWallet),
    bucket,
    points,
    coverage: { dated_reviews: datedCount, undated_reviews: undated },
  };
}
