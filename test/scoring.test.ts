/**
 * Scoring: hand-computed tables. Every expected number is worked out in the comment beside it.
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
  scoreSubject,
  selfRated,
  selfRatedFromAggregate,
  shrunkScore,
  walletScore,
  weightedScore,
  type EligibleValue,
  type SubjectRating,
} from '../src/scoring/index.js';

const W = '0xAbCdEf0000000000000000000000000000000001'; // subject, mixed case on purpose
const w = W.toLowerCase();
const R1 = '0x1111111111111111111111111111111111111111';
const R2 = '0x2222222222222222222222222222222222222222';
const R3 = '0x3333333333333333333333333333333333333333';
const R4 = '0x4444444444444444444444444444444444444444';
const SOL = 'DevFFyNWxZPtYLpEjzUnN1PFc9Po6PH7eZCi9f3tTkTw';

function rating(p: Partial<SubjectRating> & { rater: string; value: string }): SubjectRating {
  return { network: 'base', agentId: '1', revoked: false, blockTime: null, tag1: '', ...p };
}

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

describe('scoreSubject: the full composition', () => {
  const R1upper = R1.toUpperCase().replace('0X', '0x');
  const ratings: SubjectRating[] = [
    // base, agent 7
    rating({
      agentId: '7',
      rater: R1,
      value: '90',
      tag1: 'trust',
      blockTime: new Date('2025-03-01T10:00:00Z'),
    }),
    rating({
      agentId: '7',
      rater: R1,
      value: '100',
      tag1: 'trust',
      blockTime: new Date('2025-03-02T10:00:00Z'),
    }),
    rating({ agentId: '7', rater: R2, value: '80', tag1: 'liveness', blockTime: null }),
    // base, agent 12: a real zero
    rating({ agentId: '12', rater: R3, value: '0', tag1: '', blockTime: new Date('2025-01-15T00:00:00Z') }),
    // optimism, agent 7 (another agent with the same number), R1 spelled in upper case
    rating({
      network: 'optimism',
      agentId: '7',
      rater: R1upper,
      value: '60',
      tag1: 'trust',
      blockTime: new Date('2025-04-01T00:00:00Z'),
    }),
    // self-rating (lower-case spelling of W): out of every score
    rating({
      agentId: '7',
      rater: w,
      value: '95',
      tag1: 'trust',
      blockTime: new Date('2025-05-01T00:00:00Z'),
    }),
    // revoked
    rating({
      agentId: '7',
      rater: R2,
      value: '10',
      revoked: true,
      tag1: 'liveness',
      blockTime: new Date('2024-01-01T00:00:00Z'),
    }),
    // out of domain by 10^-18
    rating({
      agentId: '12',
      rater: R3,
      value: '100.000000000000000001',
      tag1: '',
      blockTime: new Date('2025-06-01T00:00:00Z'),
    }),
  ];
  const context = {
    prior: 70,
    chainPriors: { base: 60 },
    raterSubjectCounts: new Map([
      [R1, 8], // weight 1
      [R2, 2], // weight 0.5
    ]), // R3 missing → 0.25
    degraded: false,
    facetIndexMeans: { trust: 50 },
    identities: [
      { network: 'base', agentIds: ['12', '7'] },
      { network: 'celo', agentIds: ['3'] },
    ],
  };

  it('composes every field by hand', () => {
    const s = scoreSubject(W, ratings, context);
    expect(s.wallet).toBe(w);
    // base eligible: 90, 100, 80, 0 → 270/4 = 67.5; optimism: 60; global (67.5 + 60)/2 = 63.75
    expect(s.final_score).toBe(63.75);
    expect(s.policy_version).toBe('equal-weight-per-chain@2');
    expect(s.rater_weight_policy).toBe('one-voice-per-counterparty+bounded-trust@3');
    expect(s.chain_count).toBe(2);
    expect(Object.keys(s.per_chain)).toEqual(['base', 'celo', 'optimism']);
    expect(s.per_chain.base).toEqual({
      network: 'base',
      final_score: 67.5,
      score: 67.5,
      // base prior 60, 3 raters on base: (3·67.5 + 3·60)/6 = 382.5/6 = 63.75
      shrunk_score: 63.75,
      review_count: 4,
      distinct_raters: 3,
      weight: 1,
      agent_ids: ['7', '12'],
    });
    // registered but unrated: listed with a null score, never 0
    expect(s.per_chain.celo).toEqual({
      network: 'celo',
      final_score: null,
      score: null,
      shrunk_score: null,
      review_count: 0,
      distinct_raters: 0,
      weight: 0,
      agent_ids: ['3'],
    });
    // no optimism prior → per-chain shrunk null
    expect(s.per_chain.optimism).toMatchObject({
      final_score: 60,
      shrunk_score: null,
      distinct_raters: 1,
      agent_ids: ['7'],
    });
    // distinct raters across chains: R1 (both spellings, both chains), R2, R3 = 3
    expect(s.distinct_raters).toBe(3);
    expect(s.total_reviews).toBe(5);
    // (3·63.75 + 3·70)/6 = 401.25/6 = 66.875
    expect(s.shrunk_score).toBe(66.875);
    // voices: R1 (90+100+60)/3 = 83.333…, w 1; R2 80, w 0.5; R3 0, w 0.25
    // (83.333… + 40 + 0)/1.75 = (370/3)/(7/4) = 1480/21 = 70.476190476… → 70.47619
    expect(s.weighted_score).toBe(70.47619);
    // top client R1: 3 of 5 eligible = 0.6
    expect(s.top_client).toBe(R1);
    expect(s.top_client_share).toBe(0.6);
    expect(s.concentration).toEqual({
      distinct_raters: 3,
      top_client: R1,
      top_client_share: 0.6,
      top_client_ratings: 3,
    });
    // self 95 − 63.75 = 31.25
    expect(s.self_rated).toEqual({ count: 1, score: 95, gap: 31.25 });
    // 8 = 5 eligible + 1 revoked + 1 out of domain + 1 self
    expect(s.ratings_count).toBe(8);
    expect(s.revoked_count).toBe(1);
    expect(s.out_of_domain_count).toBe(1);
    expect(s.ratings_count).toBe(
      s.total_reviews + s.revoked_count + s.out_of_domain_count + s.self_rated.count,
    );
    // n = 3 → medium; p = 0.6375: z²/n = 1.280533…, centre = (0.6375 + 0.640267)/2.280533 = 0.560293,
    // half = (1.96/2.280533)·sqrt(0.6375·0.3625/3 + 3.8416/36) = 0.859440·sqrt(0.077031 + 0.106711) = 0.368404
    // → [19.188895, 92.869688]
    expect(s.confidence).toEqual({
      band: 'medium',
      distinct_raters: 3,
      interval: { lower: 19.188895, upper: 92.869688 },
      thresholds: { no_ratings: 0, low: 1, medium: 3, high: 6 },
      advice: expect.any(String),
      confidence_policy: 'wilson-raters@1',
    });
    // eligible dated ratings: earliest 2025-01-15 (R3's zero), latest 2025-04-01 (optimism);
    // the revoked 2024 rating and the self/out-of-domain later ones do not count
    expect(s.activity).toEqual({
      first_rating_at: '2025-01-15T00:00:00.000Z',
      last_rating_at: '2025-04-01T00:00:00.000Z',
    });
    // trust: 90, 100, 60 eligible (self 95 apart) → 250/3 = 83.333333; index 50 → delta 33.333333
    expect(s.facets.trust).toEqual({
      tag1: 'trust',
      score: 83.333333,
      count: 3,
      distinct_raters: 1,
      revoked_count: 0,
      out_of_domain_count: 0,
      self_rated_count: 1,
      index_mean: 50,
      delta: 33.333333,
    });
    // the empty tag is its own facet; its only eligible value is a real zero
    expect(s.facets['']).toMatchObject({
      score: 0,
      count: 1,
      out_of_domain_count: 1,
      index_mean: null,
      delta: null,
    });
    expect(s.facets.liveness).toMatchObject({ score: 80, count: 1, revoked_count: 1 });
    // R1 wrote 3/5 ≥ 0.5 → top-client-share; 3 raters is not few; 5/3 < 20; self-rated
    expect(s.caveats.map((c) => c.code)).toEqual(['top-client-share', 'self-rated']);
  });

  it('degraded: concentration and confidence go null, the score does not move', () => {
    const s = scoreSubject(W, ratings, { ...context, degraded: true });
    expect(s.final_score).toBe(63.75);
    expect(s.distinct_raters).toBe(3);
    expect(s.concentration).toBeNull();
    expect(s.top_client).toBeNull();
    expect(s.top_client_share).toBeNull();
    expect(s.confidence).toBeNull();
    expect(s.caveats.map((c) => c.code)).toEqual(['concentration-degraded', 'self-rated']);
  });

  it('without rater subject counts the weighted score is null (side signal unavailable)', () => {
    const s = scoreSubject(W, ratings, { prior: null });
    expect(s.weighted_score).toBeNull();
    expect(s.shrunk_score).toBeNull();
    expect(s.final_score).toBe(63.75);
  });

  it('no ratings at all: null, never 0', () => {
    const s = scoreSubject(W, [], { prior: 70, identities: [{ network: 'base', agentIds: ['1'] }] });
    expect(s.final_score).toBeNull();
    expect(s.shrunk_score).toBeNull();
    expect(s.per_chain.base?.final_score).toBeNull();
    expect(s.confidence).toMatchObject({ band: 'no_ratings', interval: null, distinct_raters: 0 });
    expect(s.caveats.map((c) => c.code)).toEqual(['no-score', 'few-raters']);
    expect(s.activity).toEqual({ first_rating_at: null, last_rating_at: null });
  });

  it('a single real zero: score 0, one rater', () => {
    const s = scoreSubject(W, [rating({ rater: R1, value: '0' })], { prior: 60 });
    expect(s.final_score).toBe(0);
    // (1·0 + 3·60)/4 = 45
    expect(s.shrunk_score).toBe(45);
    expect(s.confidence?.band).toBe('low');
    // p = 0, n = 1: centre = half = (3.8416/2)/4.8416 = 0.39672835… → [0, 2·39.672835… = 79.345671]
    expect(s.confidence?.interval).toEqual({ lower: 0, upper: 79.345671 });
    expect(s.caveats.map((c) => c.code)).toEqual(['single-rater', 'few-raters', 'top-client-share']);
  });

  it('self-only: no score, self_rated carries it with a null gap', () => {
    const s = scoreSubject(W, [rating({ rater: w, value: '90' }), rating({ rater: W, value: '100' })], {
      prior: 70,
    });
    expect(s.final_score).toBeNull();
    expect(s.total_reviews).toBe(0);
    expect(s.self_rated).toEqual({ count: 2, score: 95, gap: null });
    expect(s.caveats.map((c) => c.code)).toEqual(['no-score', 'few-raters', 'self-rated']);
  });

  it('revoked-only: no score, revocations counted', () => {
    const s = scoreSubject(W, [rating({ rater: R1, value: '90', revoked: true })], { prior: 70 });
    expect(s.final_score).toBeNull();
    expect(s.revoked_count).toBe(1);
    expect(s.ratings_count).toBe(1);
    expect(s.per_chain.base?.final_score).toBeNull();
    expect(s.caveats.map((c) => c.code)).toEqual(['no-score', 'few-raters']);
  });

  it('out-of-domain-only (the exact boundaries): no score; 0 and 100 themselves are in', () => {
    const out = scoreSubject(
      W,
      [
        rating({ rater: R1, value: '100.000000000000000001' }),
        rating({ rater: R2, value: '-0.000000000000000001' }),
        rating({ rater: R3, value: '-3' }),
      ],
      { prior: 70 },
    );
    expect(out.final_score).toBeNull();
    expect(out.out_of_domain_count).toBe(3);
    const edges = scoreSubject(W, [rating({ rater: R1, value: '100' }), rating({ rater: R2, value: '0' })], {
      prior: 70,
    });
    // (100 + 0)/2 = 50
    expect(edges.final_score).toBe(50);
    expect(edges.out_of_domain_count).toBe(0);
  });

  it('burn address subject: caveat fires, ratings still scored', () => {
    const s = scoreSubject(
      '0x000000000000000000000000000000000000DEAD',
      [rating({ rater: R1, value: '70' })],
      {
        prior: null,
      },
    );
    expect(s.final_score).toBe(70);
    expect(s.caveats.map((c) => c.code)).toContain('burn-address');
  });

  it('Solana subject keeps its case', () => {
    const s = scoreSubject(
      SOL,
      [rating({ network: 'solana', agentId: SOL, rater: SOL.toLowerCase(), value: '70' })],
      {
        prior: null,
      },
    );
    expect(s.wallet).toBe(SOL);
    expect(s.self_rated.count).toBe(0);
    expect(s.final_score).toBe(70);
  });

  it('is deterministic: same input, same output', () => {
    expect(JSON.stringify(scoreSubject(W, ratings, context))).toBe(
      JSON.stringify(scoreSubject(W, [...ratings], context)),
    );
  });
});
