/**
 * Scoring evidence signals: Wilson bands, concentration and the eight caveats at their boundaries.
 * Wilson by hand: z = 1.96, z² = 3.8416, denom = 1 + z²/n,
 * centre = (p + z²/2n)/denom, half = (z/denom)·sqrt(p(1−p)/n + z²/4n²), ×100.
 */
import { describe, expect, it } from 'vitest';
import {
  CAVEAT_CODES,
  caveats,
  caveatsNotComputedInPreview,
  concentration,
  concentrationFromCounts,
  confidence,
  confidenceBand,
  previewCaveats,
  wilsonInterval,
  type CaveatInput,
} from '../src/scoring/index.js';

const A = '0xaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa';
const B = '0xbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb';
const C = '0xcccccccccccccccccccccccccccccccccccccccc';
const SUBJECT = '0x1234567890123456789012345678901234567890';

describe('wilson-raters@1', () => {
  it.each([
    // n=1, p=1: denom 4.8416; centre (1 + 1.9208)/4.8416 = 0.603272; half 1.9208/4.8416 = 0.396728
    //   → lower 1/4.8416 = 0.2065433 → 20.654329, upper 1 → 100
    [1, 100, 20.654329, 100],
    // n=4, p=0.5: denom 1.9604; centre (0.5 + 0.4802)/1.9604 = 0.5;
    //   half (1.96/1.9604)·sqrt(0.0625 + 0.060025) = 0.999796·0.350036 = 0.349964 → [15.003571, 84.996429]
    [4, 50, 15.003571, 84.996429],
    // n=10, p=0.8: denom 1.38416; centre (0.8 + 0.19208)/1.38416 = 0.716738;
    //   half (1.96/1.38416)·sqrt(0.016 + 0.009604) = 1.416022·0.160012 = 0.226581 → [49.015685, 94.331905]
    [10, 80, 49.015685, 94.331905],
    // n=3, p=0 (a real zero): centre = half = (0.640267)/2.280533 = 0.280753 → [0, 56.150608]
    [3, 0, 0, 56.150608],
    // n=6, p=0.7: denom 1.640267; centre (0.7 + 0.320133)/1.640267 = 0.621931;
    //   half (1.96/1.640267)·sqrt(0.035 + 0.026678) = 1.194927·0.248350 = 0.296760 → [32.517098, 91.869181]
    [6, 70, 32.517098, 91.869181],
    // n=2, p=0.9: denom 2.9208; centre (0.9 + 0.9604)/2.9208 = 0.636949;
    //   half (1.96/2.9208)·sqrt(0.045 + 0.2401) = 0.671049·0.533948 = 0.358305 → [27.864379, 99.525377]
    [2, 90, 27.864379, 99.525377],
  ])('n=%d, score %d → [%d, %d]', (n, score, lower, upper) => {
    expect(confidence(n, score).interval).toEqual({ lower, upper });
  });

  it('bands by distinct raters at their thresholds', () => {
    expect([0, 1, 2, 3, 5, 6, 100].map(confidenceBand)).toEqual([
      'no_ratings',
      'low',
      'low',
      'medium',
      'medium',
      'high',
      'high',
    ]);
  });

  it('no_ratings: interval null (never a lower bound of 0 beside a null score)', () => {
    const c = confidence(0, null);
    expect(c).toMatchObject({
      band: 'no_ratings',
      interval: null,
      distinct_raters: 0,
      confidence_policy: 'wilson-raters@1',
    });
    expect(c.thresholds).toEqual({ no_ratings: 0, low: 1, medium: 3, high: 6 });
    expect(typeof c.advice).toBe('string');
    // the raw function returns the whole domain for n = 0
    expect(wilsonInterval(0.5, 0)).toEqual({ lower: 0, upper: 1 });
  });
});

describe('concentration', () => {
  it('top client = most eligible ratings; ties broken by address ascending', () => {
    // B 2, A 2, C 1: tie between A and B → A (ascending); share 2/5 = 0.4
    const c = concentration([
      { rater: B },
      { rater: A },
      { rater: B },
      { rater: A.toUpperCase().replace('0X', '0x') },
      { rater: C },
    ]);
    expect(c).toEqual({ distinct_raters: 3, top_client: A, top_client_share: 0.4, top_client_ratings: 2 });
  });

  it('nothing eligible: no top client, no share', () => {
    expect(concentration([])).toEqual({
      distinct_raters: 0,
      top_client: null,
      top_client_share: null,
      top_client_ratings: null,
    });
  });

  it('from SQL counts, merging spellings of one EVM address', () => {
    // A: 1 + 2 = 3 of 3 + 3 = 6 → 0.5
    const c = concentrationFromCounts([
      [A, 1],
      [A.toUpperCase().replace('0X', '0x'), 2],
      [C, 3],
    ]);
    expect(c).toEqual({ distinct_raters: 2, top_client: A, top_client_share: 0.5, top_client_ratings: 3 });
    // 1 of 3 → 0.333333 (six decimals)
    expect(
      concentrationFromCounts(
        new Map([
          [A, 1],
          [B, 1],
          [C, 1],
        ]),
      ).top_client_share,
    ).toBe(0.333333);
  });
});

function input(p: Partial<CaveatInput>): CaveatInput {
  // a clean subject: score, 5 raters, 10 reviews, top share 0.2, no self-rating, not burn
  return {
    wallet: SUBJECT,
    final_score: 80,
    total_reviews: 10,
    distinct_raters: 5,
    concentration: { top_client_share: 0.2, top_client_ratings: 2 },
    self_rated: { count: 0 },
    ...p,
  };
}
const codes = (i: CaveatInput) => caveats(i).map((c) => c.code);

describe('caveats: each fires independently at its boundary', () => {
  it('a clean subject fires nothing (which does not mean verified clean)', () => {
    expect(codes(input({}))).toEqual([]);
  });

  it('no-score: null fires, a real 0 does not', () => {
    expect(codes(input({ final_score: null }))).toEqual(['no-score']);
    expect(codes(input({ final_score: 0 }))).toEqual([]);
  });

  it('concentration-degraded: concentration null', () => {
    expect(codes(input({ concentration: null }))).toEqual(['concentration-degraded']);
  });

  it('single-rater: exactly one distinct rater (also few-raters and, here, top share 1)', () => {
    expect(
      codes(
        input({
          distinct_raters: 1,
          total_reviews: 1,
          concentration: { top_client_share: 1, top_client_ratings: 1 },
        }),
      ),
    ).toEqual(['single-rater', 'few-raters', 'top-client-share']);
    expect(
      codes(
        input({
          distinct_raters: 2,
          total_reviews: 4,
          concentration: { top_client_share: 0.25, top_client_ratings: 1 },
        }),
      ),
    ).not.toContain('single-rater');
  });

  it('few-raters: min_raters 3 → 2 fires, 3 does not, 0 fires', () => {
    const at = (n: number) =>
      codes(
        input({
          distinct_raters: n,
          total_reviews: 4,
          concentration: { top_client_share: 0.25, top_client_ratings: 1 },
        }),
      );
    expect(at(2)).toEqual(['few-raters']);
    expect(at(3)).toEqual([]);
    expect(
      codes(
        input({
          final_score: null,
          distinct_raters: 0,
          total_reviews: 0,
          concentration: { top_client_share: null, top_client_ratings: null },
        }),
      ),
    ).toEqual(['no-score', 'few-raters']);
  });

  it('top-client-share: exactly 0.5 fires, just under does not', () => {
    // 5 of 10 = 0.5 ≥ 0.5
    expect(codes(input({ concentration: { top_client_share: 0.5, top_client_ratings: 5 } }))).toEqual([
      'top-client-share',
    ]);
    // 4 of 9 = 0.444444 < 0.5
    expect(
      codes(
        input({ total_reviews: 9, concentration: { top_client_share: 0.444444, top_client_ratings: 4 } }),
      ),
    ).toEqual([]);
    // exact counts win over the rounded share: 2,499,999 of 5,000,000 = 0.4999998 → served 0.5, but below
    expect(
      codes(
        input({
          total_reviews: 5_000_000,
          distinct_raters: 1_000_000,
          concentration: { top_client_share: 0.5, top_client_ratings: 2_499_999 },
        }),
      ),
    ).toEqual([]);
    // without the raw numerator the served share decides
    expect(codes(input({ concentration: { top_client_share: 0.5 } }))).toEqual(['top-client-share']);
  });

  it('campaign-per-rater: total/distinct exactly 20 fires, 19.67 does not', () => {
    // 60 / 3 = 20 ≥ 20
    expect(
      codes(
        input({
          total_reviews: 60,
          distinct_raters: 3,
          concentration: { top_client_share: 0.4, top_client_ratings: 24 },
        }),
      ),
    ).toEqual(['campaign-per-rater']);
    // 59 / 3 = 19.666…
    expect(
      codes(
        input({
          total_reviews: 59,
          distinct_raters: 3,
          concentration: { top_client_share: 0.4, top_client_ratings: 23 },
        }),
      ),
    ).toEqual([]);
    // no raters, no ratio
    expect(
      codes(
        input({
          final_score: null,
          total_reviews: 0,
          distinct_raters: 0,
          concentration: { top_client_share: null },
        }),
      ),
    ).not.toContain('campaign-per-rater');
  });

  it('self-rated: one self-rating fires, none does not', () => {
    expect(codes(input({ self_rated: { count: 1 } }))).toEqual(['self-rated']);
    expect(codes(input({ self_rated: { count: 0 } }))).toEqual([]);
  });

  it('burn-address: EVM any case, Solana incinerator exactly', () => {
    expect(codes(input({ wallet: '0x000000000000000000000000000000000000dEaD' }))).toEqual(['burn-address']);
    expect(codes(input({ wallet: '0x000000000000000000000000000000000000DEAD' }))).toEqual(['burn-address']);
    expect(codes(input({ wallet: '0x0000000000000000000000000000000000000000' }))).toEqual(['burn-address']);
    expect(codes(input({ wallet: '1nc1nerator11111111111111111111111111111111' }))).toEqual(['burn-address']);
    expect(codes(input({ wallet: '1nc1nerator11111111111111111111111111111112' }))).toEqual([]);
  });

  it('keeps the fixed order whatever fires', () => {
    const seven = caveats(
      input({
        wallet: '0x000000000000000000000000000000000000dead',
        final_score: null,
        distinct_raters: 1,
        total_reviews: 20,
        concentration: { top_client_share: 1, top_client_ratings: 20 },
        self_rated: { count: 2 },
      }),
    );
    expect(seven.map((c) => c.code)).toEqual([
      'no-score',
      'single-rater',
      'few-raters',
      'top-client-share',
      'campaign-per-rater',
      'self-rated',
      'burn-address',
    ]);
    const degraded = codes(
      input({
        wallet: '0x0000000000000000000000000000000000000000',
        final_score: null,
        concentration: null,
        distinct_raters: 2,
        total_reviews: 40,
        self_rated: { count: 1 },
      }),
    );
    expect(degraded).toEqual([
      'no-score',
      'concentration-degraded',
      'few-raters',
      'campaign-per-rater',
      'self-rated',
      'burn-address',
    ]);
    // every list is a subsequence of the frozen code order
    for (const list of [seven.map((c) => c.code), degraded]) {
      const idx = list.map((c) => CAVEAT_CODES.indexOf(c));
      expect([...idx].sort((a, b) => a - b)).toEqual(idx);
    }
  });

  it('every caveat is {code, text} with a Spanish sentence', () => {
    const all = caveats(
      input({
        wallet: '0x000000000000000000000000000000000000dead',
        final_score: null,
        distinct_raters: 1,
        total_reviews: 20,
        concentration: { top_client_share: 1, top_client_ratings: 20 },
        self_rated: { count: 1 },
      }),
    );
    for (const c of all) {
      expect(Object.keys(c)).toEqual(['code', 'text']);
      expect(c.text.length).toBeGreaterThan(10);
    }
    expect(all.find((c) => c.code === 'campaign-per-rater')?.text).toContain(
      '20 calificaciones por calificador distinto',
    );
    expect(all.find((c) => c.code === 'top-client-share')?.text).toContain('100 %');
  });

  it('the frozen set is eight codes; the free preview computes only burn-address', () => {
    expect(CAVEAT_CODES).toHaveLength(8);
    expect(previewCaveats('0x000000000000000000000000000000000000dEaD').map((c) => c.code)).toEqual([
      'burn-address',
    ]);
    expect(previewCaveats(SUBJECT)).toEqual([]);
    expect(caveatsNotComputedInPreview()).toEqual([
      'campaign-per-rater',
      'concentration-degraded',
      'few-raters',
      'no-score',
      'self-rated',
      'single-rater',
      'top-client-share',
    ]);
  });
});
