/**
 * Scoring policies: hand-computed tables for each building block (published constants, the exact
 * domain, rating classes, equal weight per chain, self-rating gap, Bayesian shrinkage, rater weight,
 * display rounding). Every expected number is worked out in the comment beside it. The full
 * composition (scoreSubject) is in test/scoring-subject.test.ts.
 */
import { describe, expect, it } from 'vitest';
import {
  BURN_ADDRESSES,
  CONFIDENCE_POLICY,
  ORDERING_POLICY,
  POLICY_VERSION,
  RATER_WEIGHT_POLICY,
  READING_POLICY,
  SHRINKAGE_K,
  WILSON_Z,
  chainScores,
  classifyRating,
  compareLeaderboard,
  confidenceThresholds,
  countClasses,
  displayScore,
  globalScore,
  inDomain,
  indexPrior,
  isBurnAddress,
  meanFromAggregate,
  raterVoices,
  raterWeight,
  round6,
  sameAddress,
  scoreFromAggregates,
  selfRated,
  selfRatedFromAggregate,
  shrunkScore,
  walletScore,
  weightedScore,
  type EligibleValue,
} from '../src/scoring/index.js';
import { R1, R2, R3, R4, SOL, W, w } from './helpers/scoring-fixtures.js';

describe('policies', () => {
  it('publishes the versions, constants and thresholds', () => {
    expect(POLICY_VERSION).toBe('equal-weight-per-chain@2');
    expect(ORDERING_POLICY).toBe('bayes-shrinkage-distinct-raters@1');
    expect(RATER_WEIGHT_POLICY).toBe('one-voice-per-counterparty+bounded-trust@3');
    expect(CONFIDENCE_POLICY).toBe('wilson-raters@1');
    expect(SHRINKAGE_K).toBe(3);
    expect(WILSON_Z).toBe(1.96);
    expect(confidenceThresholds()).toEqual({ no_ratings: 0, low: 1, medium: 3, high: 6 });
    expect({ ...READING_POLICY }).toEqual({
      min_raters: 3,
      top_share: 0.5,
      campaign_per_rater: 20,
      self_gap: null,
      combine: 'independent',
    });
    expect(BURN_ADDRESSES).toEqual([
      '0x0000000000000000000000000000000000000000',
      '0x000000000000000000000000000000000000dEaD',
      '1nc1nerator11111111111111111111111111111111',
    ]);
  });

  it('recognises burn addresses: EVM in any case, Solana exactly', () => {
    expect(isBurnAddress('0x000000000000000000000000000000000000dead')).toBe(true);
    expect(isBurnAddress('0x000000000000000000000000000000000000DEAD')).toBe(true);
    expect(isBurnAddress('0x0000000000000000000000000000000000000000')).toBe(true);
    expect(isBurnAddress('1nc1nerator11111111111111111111111111111111')).toBe(true);
    expect(isBurnAddress('1NC1nerator11111111111111111111111111111111')).toBe(false);
    expect(isBurnAddress(R1)).toBe(false);
  });
});

describe('inDomain: exact 0 <= v <= 100', () => {
  it.each([
    ['0', true],
    ['-0', true],
    ['0.000', true],
    ['100', true],
    ['100.0', true],
    ['100.000000000000000000', true],
    ['0.000000000000000001', true],
    ['87.5', true],
    ['99.999999999999999999999999', true],
    ['1e2', true],
    ['.5', true],
    ['100.000000000000000001', false], // one unit of 10^-18 above 100: floats would say 100
    ['-0.000000000000000001', false],
    ['1.000000000000000001e2', false],
    ['-3', false],
    ['101', false],
    ['1e3', false],
    ['', false],
    [' 5', false],
    ['abc', false],
    ['NaN', false],
    ['Infinity', false],
    ['1.2.3', false],
  ])('%j → %s', (v, expected) => {
    expect(inDomain(v)).toBe(expected);
  });
});

describe('classifyRating: revoked > out_of_domain > self > eligible', () => {
  it.each([
    // revoked wins over everything, even an out-of-domain self-rating
    [{ rater: w, value: '150', revoked: true }, 'revoked'],
    [{ rater: R1, value: '50', revoked: true }, 'revoked'],
    // out of domain wins over self
    [{ rater: w, value: '-1', revoked: false }, 'out_of_domain'],
    [{ rater: R1, value: '100.000000000000000001', revoked: false }, 'out_of_domain'],
    // self: EVM case-insensitive
    [{ rater: W.toUpperCase().replace('0X', '0x'), value: '90', revoked: false }, 'self'],
    [{ rater: R1, value: '0', revoked: false }, 'eligible'],
  ] as const)('%j → %s', (r, expected) => {
    expect(classifyRating(r, W)).toBe(expected);
  });

  it('Solana self-rating compares exactly (case-sensitive)', () => {
    expect(classifyRating({ rater: SOL, value: '90', revoked: false }, SOL)).toBe('self');
    expect(classifyRating({ rater: SOL.toLowerCase(), value: '90', revoked: false }, SOL)).toBe('eligible');
    expect(sameAddress(R1.toUpperCase().replace('0X', '0x'), R1)).toBe(true);
  });

  it('counts the partition: ratings = eligible + revoked + out_of_domain + self', () => {
    const c = countClasses(
      [
        { rater: R1, value: '1', revoked: false },
        { rater: R1, value: '1', revoked: true },
        { rater: R1, value: '101', revoked: false },
        { rater: w, value: '1', revoked: false },
      ],
      W,
    );
    expect(c).toEqual({ ratings: 4, eligible: 1, revoked: 1, out_of_domain: 1, self: 1 });
  });
});

describe('equal-weight-per-chain@2', () => {
  it('chain A mean 90 over 10 ratings, chain B 50 over 1 → global 70 (not the pooled 86.36)', () => {
    const rows: EligibleValue[] = [];
    // base: five 80s and five 100s → (5·80 + 5·100)/10 = 900/10 = 90
    for (let i = 0; i < 5; i++) rows.push({ network: 'base', rater: R1, value: '80' });
    for (let i = 0; i < 5; i++) rows.push({ network: 'base', rater: R2, value: '100' });
    // optimism: one 50
    rows.push({ network: 'optimism', rater: R3, value: '50' });
    const s = walletScore(rows);
    expect(s.per_chain).toEqual([
      { network: 'base', final_score: 90, review_count: 10, distinct_raters: 2 },
      { network: 'optimism', final_score: 50, review_count: 1, distinct_raters: 1 },
    ]);
    // (90 + 50) / 2 = 70; the pooled mean would be 950/11 = 86.363636
    expect(s.final_score).toBe(70);
    expect(s.chain_count).toBe(2);
  });

  it('null when nothing is eligible, a real 0 stays 0', () => {
    expect(walletScore([]).final_score).toBeNull();
    expect(globalScore([])).toBeNull();
    expect(globalScore([null, null])).toBeNull();
    expect(walletScore([{ network: 'base', rater: R1, value: '0' }]).final_score).toBe(0);
    // a null chain is skipped, a 0 chain votes: (0 + 100)/2 = 50
    expect(globalScore([0, null, 100])).toBe(50);
  });

  it('means are exact before the single rounding', () => {
    // 0 + 0 + 1 = 1; 1/3 = 0.333333…
    expect(
      chainScores(['0', '0', '1'].map((value) => ({ network: 'base', rater: R1, value })))[0]?.final_score,
    ).toBe(0.333333);
    // 3 × 33.333333333333333333 = 99.999999999999999999; /3 = 33.333333333333333333 → 33.333333
    expect(
      chainScores(Array(3).fill({ network: 'base', rater: R1, value: '33.333333333333333333' }))[0]
        ?.final_score,
    ).toBe(33.333333);
    // 0.1 + 0.2 = 0.3 exactly; /2 = 0.15
    expect(
      chainScores(['0.1', '0.2'].map((value) => ({ network: 'base', rater: R1, value })))[0]?.final_score,
    ).toBe(0.15);
    // global from the served chain scores: (0.333333 + 0.666667)/2 = 0.5
    expect(globalScore([1 / 3, 2 / 3])).toBe(0.5);
  });

  it('the aggregate variant gives the same numbers as the row variant', () => {
    const fromRows = walletScore([
      ...Array(5).fill({ network: 'base', rater: R1, value: '80' }),
      ...Array(5).fill({ network: 'base', rater: R2, value: '100' }),
      { network: 'optimism', rater: R3, value: '50' },
    ]);
    const fromAggs = scoreFromAggregates([
      { network: 'optimism', sum: '50', count: '1', distinct_raters: 1 },
      { network: 'base', sum: '900', count: 10, distinct_raters: '2' },
      { network: 'celo', sum: null, count: 0 }, // an identity chain with nothing eligible
    ]);
    expect(fromAggs.final_score).toBe(fromRows.final_score);
    expect(fromAggs.chain_count).toBe(2);
    expect(fromAggs.per_chain).toEqual([
      { network: 'base', final_score: 90, review_count: 10, distinct_raters: 2 },
      { network: 'celo', final_score: null, review_count: 0, distinct_raters: null },
      { network: 'optimism', final_score: 50, review_count: 1, distinct_raters: 1 },
    ]);
    // 1/3 from an exact numeric sum
    expect(meanFromAggregate('1', 3)).toBe(0.333333);
    expect(meanFromAggregate('99.999999999999999999', 3n)).toBe(33.333333);
    expect(meanFromAggregate(null, 0)).toBeNull();
  });
});

describe('self_rated', () => {
  it('gap = self − final; null when either side is null', () => {
    // self (90 + 100)/2 = 95; gap 95 − 63.75 = 31.25
    expect(selfRated(['90', '100'], 63.75)).toEqual({ count: 2, score: 95, gap: 31.25 });
    // underrates itself: 40 − 70 = −30
    expect(selfRated(['40'], 70)).toEqual({ count: 1, score: 40, gap: -30 });
    expect(selfRated(['90'], null)).toEqual({ count: 1, score: 90, gap: null });
    expect(selfRated([], 70)).toEqual({ count: 0, score: null, gap: null });
    // a real zero self-rating: 0 − 70 = −70
    expect(selfRatedFromAggregate('0', 1, 70)).toEqual({ count: 1, score: 0, gap: -70 });
    expect(selfRatedFromAggregate(null, 0, 70)).toEqual({ count: 0, score: null, gap: null });
  });
});

describe('bayes-shrinkage-distinct-raters@1', () => {
  it.each([
    // (1·90 + 3·70)/(1+3) = 300/4 = 75
    [90, 1, 70, 75],
    // (3·100 + 3·60)/6 = 480/6 = 80
    [100, 3, 60, 80],
    // (17·80 + 3·50)/20 = 1510/20 = 75.5
    [80, 17, 50, 75.5],
    // a real zero with one rater: (0 + 3·60)/4 = 45
    [0, 1, 60, 45],
    // (2·100 + 3·70)/5 = 410/5 = 82
    [100, 2, 70, 82],
  ])('final %d, n %d, prior %d → %d', (f, n, p, expected) => {
    expect(shrunkScore(f, n, p)).toBe(expected);
  });

  it('null when there is nothing to rank or no prior; k is overridable', () => {
    expect(shrunkScore(null, 0, 70)).toBeNull();
    expect(shrunkScore(90, 5, null)).toBeNull();
    // k = 1: (1·90 + 1·70)/2 = 80
    expect(shrunkScore(90, 1, 70, 1)).toBe(80);
    // (2·70 + 3·(200/3 = 66.666667))/5 = (140 + 200.000001)/5 = 68.0000002 → 68
    expect(shrunkScore(70, 2, 200 / 3)).toBe(68);
  });

  it('prior = mean of scored wallets; leaderboard order shrunk desc, raters desc, wallet asc', () => {
    // (80 + 0 + 70)/3 = 50; nulls skipped
    expect(indexPrior([80, null, 0, 70])).toBe(50);
    expect(indexPrior([null])).toBeNull();
    const rows = [
      { wallet: '0xc', shrunk_score: 70, distinct_raters: 2 },
      { wallet: '0xb', shrunk_score: null, distinct_raters: 9 },
      { wallet: '0xd', shrunk_score: 70, distinct_raters: 5 },
      { wallet: '0xa', shrunk_score: 70, distinct_raters: 2 },
      { wallet: '0xe', shrunk_score: 80, distinct_raters: 1 },
    ];
    expect(rows.sort(compareLeaderboard).map((r) => r.wallet)).toEqual(['0xe', '0xd', '0xa', '0xc', '0xb']);
  });
});

describe('one-voice-per-counterparty+bounded-trust@3', () => {
  it.each([
    [undefined, 0.25], // unknown: counts as this one subject
    [0, 0.25], // bounded below
    [1, 0.25], // 0.25·1
    [2, 0.5], // 0.25·2
    [3, 0.75], // 0.25·3
    [4, 1], // 0.25·4 = 1
    [100, 1], // min(1, 25) = 1
  ])('s = %s → weight %s', (s, expected) => {
    expect(raterWeight(s)).toBe(expected);
  });

  it('collapses each rater to one voice and weights it', () => {
    const eligible = [
      { rater: R1, value: '100' },
      { rater: R1.toUpperCase().replace('0X', '0x'), value: '100' }, // same rater, other spelling
      { rater: R2, value: '40' },
      { rater: R3, value: '70' },
      { rater: R4, value: '10' },
    ];
    const counts = new Map([
      [R1, 1], // 0.25
      [R2, 4], // 1
      [R3, 10], // min(1, 2.5) = 1
      // R4 missing → 0.25
    ]);
    expect(raterVoices(eligible, counts).map((v) => [v.rater, v.mean, v.count, v.weight])).toEqual([
      [R1, 100, 2, 0.25],
      [R2, 40, 1, 1],
      [R3, 70, 1, 1],
      [R4, 10, 1, 0.25],
    ]);
    // (0.25·100 + 1·40 + 1·70 + 0.25·10) / (0.25 + 1 + 1 + 0.25) = 137.5 / 2.5 = 55
    expect(weightedScore(eligible, counts)).toBe(55);
    // a plain record works the same
    expect(weightedScore(eligible, { [R1]: 1, [R2]: 4, [R3]: 10 })).toBe(55);
    // R1 voice 100 (weight 0.25), R2 voice 0 (s = 9 → 1): (25 + 0)/1.25 = 20 — a real 0 voice counts
    expect(
      weightedScore(
        [
          { rater: R1, value: '100' },
          { rater: R2, value: '0' },
        ],
        { [R2]: 9 },
      ),
    ).toBe(20);
    expect(weightedScore([], counts)).toBeNull();
  });
});

describe('display convention and serving precision', () => {
  it.each([
    [86.653045, '86.65'],
    [84.7, '84.7'],
    [87, '87'],
    [82.0, '82'],
    [0, '0'],
    [100, '100'],
    [84.745, '84.75'], // half-up at the served six decimals, not at the binary value 84.74499…
    [99.999, '100'],
    [0.004, '0'],
    [0.005, '0.01'],
    [70.476190476, '70.48'],
    [-0.001, '0'],
  ])('displayScore(%s) = %s', (x, s) => {
    expect(displayScore(x)).toBe(s);
  });

  it('null stays null', () => {
    expect(displayScore(null)).toBeNull();
    expect(round6(null)).toBeNull();
  });

  it('round6 keeps six decimals and never yields -0', () => {
    expect(round6(1 / 3)).toBe(0.333333);
    expect(round6(2 / 3)).toBe(0.666667);
    expect(round6(86.6530454)).toBe(86.653045);
    expect(Object.is(round6(-1e-9), 0)).toBe(true);
    expect(Object.is(round6(-0), 0)).toBe(true);
    expect(round6(1480 / 21)).toBe(70.47619);
    expect(() => round6(Number.NaN)).toThrow(RangeError);
  });
});
