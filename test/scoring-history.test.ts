/**
 * Scoring over time and by area: history buckets (UTC, weeks from Monday), facets, rater pieces.
 */
import { describe, expect, it } from 'vitest';
import {
  bucketStart,
  facetList,
  facets,
  historyPoints,
  nextBucketStart,
  populationStddev,
  raterStats,
  type EmittedRating,
  type HistoryRating,
} from '../src/scoring/index.js';

const W = '0x9999999999999999999999999999999999999999';
const R1 = '0x1111111111111111111111111111111111111111';
const R2 = '0x2222222222222222222222222222222222222222';
const d = (s: string) => new Date(s);

describe('bucket boundaries (UTC)', () => {
  it('weeks start Monday 00:00 UTC, across a year boundary', () => {
    // 2025-01-01 is a Wednesday → its week starts Monday 2024-12-30
    expect(bucketStart(d('2025-01-01T12:00:00Z'), 'week').toISOString()).toBe('2024-12-30T00:00:00.000Z');
    // the Monday itself, at midnight
    expect(bucketStart(d('2024-12-30T00:00:00Z'), 'week').toISOString()).toBe('2024-12-30T00:00:00.000Z');
    // one millisecond earlier is Sunday → previous week (Monday 2024-12-23)
    expect(bucketStart(d('2024-12-29T23:59:59.999Z'), 'week').toISOString()).toBe('2024-12-23T00:00:00.000Z');
    // Sunday 2025-01-05 late still belongs to the week of 2024-12-30
    expect(bucketStart(d('2025-01-05T23:59:59Z'), 'week').toISOString()).toBe('2024-12-30T00:00:00.000Z');
    expect(nextBucketStart(d('2024-12-30T00:00:00Z'), 'week').toISOString()).toBe('2025-01-06T00:00:00.000Z');
  });

  it('months start on the 1st 00:00 UTC', () => {
    expect(bucketStart(d('2024-12-31T23:59:59Z'), 'month').toISOString()).toBe('2024-12-01T00:00:00.000Z');
    expect(bucketStart(d('2025-01-01T00:00:00Z'), 'month').toISOString()).toBe('2025-01-01T00:00:00.000Z');
    expect(nextBucketStart(d('2024-12-01T00:00:00Z'), 'month').toISOString()).toBe(
      '2025-01-01T00:00:00.000Z',
    );
    // a time zone offset in the input string does not matter: 2025-01-01T01:00+02:00 is 2024-12-31T23:00Z
    expect(bucketStart(d('2025-01-01T01:00:00+02:00'), 'month').toISOString()).toBe(
      '2024-12-01T00:00:00.000Z',
    );
  });
});

describe('historyPoints', () => {
  const h = (
    network: string,
    rater: string,
    value: string,
    blockTime: Date | null,
    revoked = false,
  ): HistoryRating => ({
    network,
    rater,
    value,
    revoked,
    blockTime,
  });
  const ratings: HistoryRating[] = [
    h('base', R1, '100', d('2024-12-29T23:59:59Z')), // Sunday → week 2024-12-23, month 2024-12
    h('base', R2, '80', d('2024-12-30T00:00:00Z')), // Monday → week 2024-12-30, month 2024-12
    h('optimism', R1, '50', d('2025-01-01T12:00:00Z')), // Wednesday → week 2024-12-30, month 2025-01
    h('base', R1, '60', d('2025-01-13T08:00:00Z')), // Monday → week 2025-01-13, month 2025-01
    h('base', R2, '0', null), // undated, eligible
    h('base', R1, '0', null), // undated, eligible
    h('base', R1, '0', null, true), // undated but revoked: not counted
    h('base', W, '100', d('2025-01-02T00:00:00Z')), // self: excluded
    h('base', R2, '10', d('2025-01-02T00:00:00Z'), true), // revoked: excluded
    h('base', R2, '101', d('2025-01-02T00:00:00Z')), // out of domain: excluded
  ];

  it('weekly across the year boundary and a Monday boundary, empty weeks carried', () => {
    const out = historyPoints(ratings, W, 'week');
    expect(out.bucket).toBe('week');
    expect(out.wallet).toBe(W);
    expect(out.coverage).toEqual({ dated_reviews: 4, undated_reviews: 2 });
    expect(out.points).toEqual([
      // base 100 → 100
      { period: '2024-12-23T00:00:00.000Z', review_count: 1, score: 100, cumulative_score: 100 },
      // in bucket: base 80, optimism 50 → (80 + 50)/2 = 65
      // cumulative: base (100 + 80)/2 = 90, optimism 50 → (90 + 50)/2 = 70
      { period: '2024-12-30T00:00:00.000Z', review_count: 2, score: 65, cumulative_score: 70 },
      // empty week: no score, cumulative unchanged
      { period: '2025-01-06T00:00:00.000Z', review_count: 0, score: null, cumulative_score: 70 },
      // in bucket: base 60; cumulative base (100 + 80 + 60)/3 = 80, optimism 50 → 65
      { period: '2025-01-13T00:00:00.000Z', review_count: 1, score: 60, cumulative_score: 65 },
    ]);
  });

  it('monthly across the year boundary', () => {
    const out = historyPoints(ratings, W, 'month');
    expect(out.points).toEqual([
      // December: base 100, 80 → 90
      { period: '2024-12-01T00:00:00.000Z', review_count: 2, score: 90, cumulative_score: 90 },
      // January: base 60, optimism 50 → (60 + 50)/2 = 55; cumulative base 80, optimism 50 → 65
      { period: '2025-01-01T00:00:00.000Z', review_count: 2, score: 55, cumulative_score: 65 },
    ]);
    // week is the default bucket
    expect(historyPoints(ratings, W).bucket).toBe('week');
  });

  it('only undated ratings: no points, coverage says why', () => {
    const out = historyPoints([h('base', R1, '70', null), h('base', R1, '70', new Date(Number.NaN))], W);
    expect(out.points).toEqual([]);
    expect(out.coverage).toEqual({ dated_reviews: 0, undated_reviews: 2 });
  });

  it('a real zero is plotted as 0', () => {
    const out = historyPoints([h('base', R1, '0', d('2025-03-05T00:00:00Z'))], W, 'month');
    expect(out.points).toEqual([
      { period: '2025-03-01T00:00:00.000Z', review_count: 1, score: 0, cumulative_score: 0 },
    ]);
  });
});

describe('facets', () => {
  const f = (tag1: string, rater: string, value: string, revoked = false) => ({
    tag1,
    rater,
    value,
    revoked,
  });
  const rows = [
    f('trust', R1, '80'),
    f('trust', R2, '60'),
    f('trust', W, '100'), // self
    f('', R1, '40'), // the empty tag is its own facet
    f('liveness', R1, '90', true), // revoked only
    f('__proto__', R2, '10'), // hostile key stays a plain key
  ];

  it('keyed by raw tag1, never averaged together', () => {
    const out = facets(rows, W, new Map([['trust', 50]]));
    // trust: (80 + 60)/2 = 70; index 50 → delta 20
    expect(out.trust).toEqual({
      tag1: 'trust',
      score: 70,
      count: 2,
      distinct_raters: 2,
      revoked_count: 0,
      out_of_domain_count: 0,
      self_rated_count: 1,
      index_mean: 50,
      delta: 20,
    });
    expect(out['']).toMatchObject({ tag1: '', score: 40, count: 1, index_mean: null, delta: null });
    // nothing eligible: null, never 0
    expect(out.liveness).toMatchObject({ score: null, count: 0, revoked_count: 1, delta: null });
    expect(Object.hasOwn(out, '__proto__')).toBe(true);
    expect(Object.getPrototypeOf(out)).toBe(Object.prototype);
    expect(JSON.parse(JSON.stringify(out)).__proto__).toMatchObject({ score: 10 });
  });

  it('ordered by volume: eligible count desc, then total, then tag1', () => {
    // trust 2; '' 1 and __proto__ 1 tie → '' < '__proto__'; liveness 0
    expect(facetList(rows, W).map((x) => x.tag1)).toEqual(['trust', '', '__proto__', 'liveness']);
  });
});

describe('rater pieces', () => {
  const S1 = '0xa1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1';
  const S2 = '0xa2a2a2a2a2a2a2a2a2a2a2a2a2a2a2a2a2a2a2a2';
  const S3 = '0xa3a3a3a3a3a3a3a3a3a3a3a3a3a3a3a3a3a3a3a3';
  const e = (
    network: string,
    subject: string,
    value: string,
    revoked = false,
    blockTime: Date | null = null,
  ): EmittedRating => ({
    network,
    subject,
    value,
    revoked,
    blockTime,
  });
  const emitted = [
    e('base', S1, '80', false, d('2025-02-01T00:00:00Z')),
    e('base', S1.toUpperCase().replace('0X', '0x'), '90'),
    e('base', S2, '100'),
    e('optimism', S2, '50', true, d('2024-06-01T00:00:00Z')), // revoked
    e('optimism', S3, '150'), // out of domain, still active
    e('base', R1, '70', false, d('2025-03-01T00:00:00Z')), // rated a subject it owns (self)
  ];

  it('totals, dispersion and concentration of its output', () => {
    const s = raterStats(R1, emitted);
    expect(s).toEqual({
      wallet: R1,
      ratings_emitted: 6,
      revoked_count: 1,
      // not revoked, in domain, not on itself: 80, 90, 100 (the self-rating 70 is left out)
      eligible_count: 3,
      self_ratings: 1,
      // S1 (two spellings), S2, S3, R1
      distinct_subjects: 4,
      // (80 + 90 + 100)/3 = 90
      value_avg: 90,
      // deviations −10, 0, 10 → (100 + 0 + 100)/3 = 66.666…; sqrt = 8.164965809…
      value_stddev: 8.164966,
      // active (not revoked) = 5: S1 2, S2 1, S3 1, R1 1 → 2/5 = 0.4
      top_subject_share: 0.4,
      first_rating_at: '2024-06-01T00:00:00.000Z',
      last_rating_at: '2025-03-01T00:00:00.000Z',
      per_chain: [
        { network: 'base', total: 4, active: 4, distinct_subjects: 3 },
        { network: 'optimism', total: 2, active: 1, distinct_subjects: 2 },
      ],
    });
  });

  it('stddev: null below two values, 0 for a constant stamp', () => {
    expect(populationStddev([])).toBeNull();
    expect(populationStddev(['50'])).toBeNull();
    expect(populationStddev(['50', '50.0'])).toBe(0);
    // 0 and 100: mean 50, deviations ±50 → 50
    expect(populationStddev(['0', '100'])).toBe(50);
  });

  it('nothing emitted: nulls, never zeros', () => {
    const s = raterStats(R1, []);
    expect(s).toMatchObject({
      ratings_emitted: 0,
      value_avg: null,
      value_stddev: null,
      top_subject_share: null,
      per_chain: [],
    });
    // only revoked: no active output
    expect(raterStats(R1, [e('base', S1, '10', true)])).toMatchObject({
      value_avg: null,
      top_subject_share: null,
      revoked_count: 1,
    });
  });
});
