/**
 * Scoring: scoreSubject, the full composition of one subject's ratings (every served field worked
 * out by hand in the comment beside it) and its edge cases (degraded, no ratings, a single zero,
 * self-only, revoked-only, out of domain, burn address, Solana case, determinism). The building
 * blocks are in test/scoring-policies.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { scoreSubject, type SubjectRating } from '../src/scoring/index.js';
import { R1, R2, R3, SOL, W, w } from './helpers/scoring-fixtures.js';

function rating(p: Partial<SubjectRating> & { rater: string; value: string }): SubjectRating {
  return { network: 'base', agentId: '1', revoked: false, blockTime: null, tag1: '', ...p };
}

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
