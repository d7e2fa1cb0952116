/**
 * `one-voice-per-counterparty+bounded-trust@3` as pure functions (issue 32): the evidence computed
 * over an index (cohorts by first-rating window, by shared gas payer and by reciprocal rings;
 * independent breadth; reciprocity; personalized PageRank from paying seeds) and the weight of each
 * voice read back from it (history, breadth, graph, payment lift, cohort share, the unproven bound).
 * Property tests (fast-check, seeded): a fresh-wallet farm, however large and however spread in
 * time, never moves a subject with a proven voice past the bound, and never outweighs it;
 * `weighted_score` is defined wherever there is a voice.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  computeRaterEvidence,
  DecimalSum,
  graphFactor,
  historyFactor,
  pairKey,
  parseDecimal,
  paymentLift,
  RATER_EVIDENCE_POLICY,
  voiceWeights,
  weightedFromWeights,
  type VoiceEvidence,
  type WorldPair,
  type WorldRater,
} from '../src/scoring/index.js';

const P = RATER_EVIDENCE_POLICY;
const SEED = Number(process.env.FUZZ_SEED ?? 20261127);
const H = 3600_000;
const T0 = Date.UTC(2026, 0, 1);
const a = (prefix: string, i: number) => `0x${prefix}${String(i).padStart(40 - prefix.length, '0')}`;

function rater(r: string, over: Partial<WorldRater> = {}): WorldRater {
  return { rater: r, firstAt: T0, history: 'fetched', nonce: 500, gasPayer: null, paidMicroUsd: 0, ...over };
}

function sums(voices: Record<string, number[]>): Map<string, DecimalSum> {
  const m = new Map<string, DecimalSum>();
  for (const [r, values] of Object.entries(voices)) {
    const d = new DecimalSum();
    for (const v of values) d.add(parseDecimal(String(v))!);
    m.set(r, d);
  }
  return m;
}

const ev = (over: Partial<VoiceEvidence> = {}): VoiceEvidence => ({
  nonce: 500,
  independentSubjects: 1,
  graphTrust: null,
  cohortId: null,
  paidMicroUsd: 0,
  reciprocal: false,
  ...over,
});

describe('factors', () => {
  it('account history: fresh (nonce 0–2) 0.1, then 0.4 / 0.7 / 1 by nonce; unknown 0.5', () => {
    expect([0, 1, 2, 3, 19, 20, 99, 100, 5000].map(historyFactor)).toEqual([
      0.1, 0.1, 0.1, 0.4, 0.4, 0.7, 0.7, 1, 1,
    ]);
    expect(historyFactor(null)).toBe(0.5);
  });

  it('payment lift: dust ($0.01 or less) lifts nothing, log scale to full at $10', () => {
    expect(paymentLift(0)).toBe(0);
    expect(paymentLift(1)).toBe(0);
    expect(paymentLift(10_000)).toBe(0);
    expect(paymentLift(100_000)).toBeCloseTo(1 / 3, 12);
    expect(paymentLift(1_000_000)).toBeCloseTo(2 / 3, 12);
    expect(paymentLift(10_000_000)).toBe(1);
    expect(paymentLift(1e12)).toBe(1);
  });

  it('graph factor: neutral without graph trust, floor 0.25 with none, 1 with full', () => {
    expect(graphFactor(null)).toBe(1);
    expect(graphFactor(0)).toBe(0.25);
    expect(graphFactor(1)).toBe(1);
    expect(graphFactor(0.5)).toBe(0.625);
  });
});

describe('computeRaterEvidence', () => {
  it('a first-rating window cohort: same subject, near-identical value, within six hours of the first', () => {
    const pairs: WorldPair[] = [];
    const raters: WorldRater[] = [];
    for (let i = 0; i < 5; i++) {
      pairs.push({ rater: a('a', i), subject: a('5', 1), voice: 98 + (i % 2) * 4 });
      raters.push(rater(a('a', i), { firstAt: T0 + i * H }));
    }
    // past the window of the cohort's first member, and a far value inside the window
    pairs.push({ rater: a('a', 9), subject: a('5', 1), voice: 100 });
    raters.push(rater(a('a', 9), { firstAt: T0 + 7 * H }));
    pairs.push({ rater: a('a', 8), subject: a('5', 1), voice: 60 });
    raters.push(rater(a('a', 8), { firstAt: T0 + H }));
    const run = computeRaterEvidence({ pairs, raters });
    const c = run.raters.get(a('a', 0))!;
    expect(c.cohortId).toBe(a('a', 0));
    expect(c.cohortSize).toBe(5);
    expect(c.cohortReasons).toEqual(['first_rating_window']);
    for (let i = 1; i < 5; i++) expect(run.raters.get(a('a', i))!.cohortId).toBe(a('a', 0));
    expect(run.raters.get(a('a', 9))!.cohortId).toBeNull();
    expect(run.raters.get(a('a', 8))!.cohortId).toBeNull();
    expect(run.cohorts).toBe(1);
  });

  it('two raters are no cohort (three at least)', () => {
    const run = computeRaterEvidence({
      pairs: [0, 1].map((i) => ({ rater: a('a', i), subject: a('5', 1), voice: 100 })),
      raters: [0, 1].map((i) => rater(a('a', i))),
    });
    expect(run.cohorts).toBe(0);
    expect(run.raters.get(a('a', 0))!.cohortId).toBeNull();
  });

  it('three or more identical subjects need no window; decoys only the cohort rates add no breadth', () => {
    const subjects = [a('5', 1), a('d', 1), a('d', 2), a('d', 3)];
    const pairs: WorldPair[] = [];
    const raters: WorldRater[] = [];
    for (let i = 0; i < 4; i++) {
      for (const s of subjects) pairs.push({ rater: a('f', i), subject: s, voice: 100 });
      raters.push(rater(a('f', i), { firstAt: T0 + i * 30 * 24 * H }));
    }
    // an honest rater of the target
    pairs.push({ rater: a('b', 1), subject: a('5', 1), voice: 50 });
    raters.push(rater(a('b', 1)));
    const run = computeRaterEvidence({ pairs, raters });
    const f = run.raters.get(a('f', 0))!;
    expect(f.cohortSize).toBe(4);
    expect(f.subjects).toBe(4);
    expect(f.independentSubjects).toBe(1);
    expect(run.raters.get(a('b', 1))!.independentSubjects).toBe(1);
  });

  it('a shared gas payer makes a cohort; a known relayer does not', () => {
    const pairs = [0, 1, 2].map((i) => ({ rater: a('c', i), subject: a('5', i), voice: 10 * i }));
    const payer = a('e', 1);
    const run = computeRaterEvidence({
      pairs,
      raters: [0, 1, 2].map((i) =>
        rater(a('c', i), { history: 'relayed', nonce: null, gasPayer: payer, firstAt: T0 + i * 100 * H }),
      ),
    });
    expect(run.raters.get(a('c', 2))!.cohortReasons).toEqual(['gas_payer']);
    expect(run.raters.get(a('c', 2))!.cohortSize).toBe(3);
    const known = computeRaterEvidence({
      pairs,
      raters: [0, 1, 2].map((i) => rater(a('c', i), { history: 'relayed', nonce: null, gasPayer: payer })),
      knownRelayers: new Set([payer]),
    });
    expect(known.cohorts).toBe(0);
  });

  it('owners that rate each other: reciprocal pairs, and a ring of three or more is a cohort', () => {
    const owners = [a('7', 1), a('7', 2), a('7', 3)];
    const pairs: WorldPair[] = [];
    for (const x of owners)
      for (const y of owners) if (x !== y) pairs.push({ rater: x, subject: y, voice: 100 });
    const run = computeRaterEvidence({
      pairs,
      raters: owners.map((o, i) => rater(o, { firstAt: T0 + i * 100 * H })),
    });
    expect(run.reciprocal.has(pairKey(owners[0]!, owners[1]!))).toBe(true);
    expect(run.raters.get(owners[2]!)!.cohortReasons).toContain('reciprocal_ring');
    expect(run.raters.get(owners[2]!)!.cohortSize).toBe(3);
    const two = computeRaterEvidence({
      pairs: [
        { rater: owners[0]!, subject: owners[1]!, voice: 100 },
        { rater: owners[1]!, subject: owners[0]!, voice: 100 },
      ],
      raters: owners.slice(0, 2).map((o, i) => rater(o, { firstAt: T0 + i * 100 * H })),
    });
    expect(two.reciprocal.size).toBe(2);
    expect(two.cohorts).toBe(0);
  });

  it('graph trust: null without a seed; seeds near 1, their neighbours less, strangers 0', () => {
    const pairs: WorldPair[] = [
      { rater: a('1', 1), subject: a('5', 1), voice: 90 },
      { rater: a('1', 2), subject: a('5', 1), voice: 80 },
      { rater: a('1', 2), subject: a('5', 2), voice: 80 },
      { rater: a('1', 3), subject: a('5', 2), voice: 70 },
      { rater: a('1', 9), subject: a('5', 9), voice: 50 },
    ];
    const raters = [1, 2, 3, 9].map((i) => rater(a('1', i)));
    const none = computeRaterEvidence({ pairs, raters });
    expect([...none.raters.values()].every((r) => r.graphTrust === null && r.trust === 0)).toBe(true);
    expect(none.graph.seeds).toBe(0);
    raters[0] = rater(a('1', 1), { paidMicroUsd: P.payment.seedMicroUsd });
    const run = computeRaterEvidence({ pairs, raters });
    const g = (i: number) => run.raters.get(a('1', i))!.graphTrust!;
    expect(run.graph.seeds).toBe(1);
    expect(run.raters.get(a('1', 1))!.seed).toBe(true);
    expect(g(1)).toBe(1);
    expect(g(2)).toBeLessThan(g(1));
    expect(g(3)).toBeLessThan(g(2));
    expect(g(9)).toBe(0);
    expect(run.graph.iterations).toBeLessThanOrEqual(P.graph.maxIterations);
    // a payment below the seed amount seeds nothing
    raters[0] = rater(a('1', 1), { paidMicroUsd: P.payment.seedMicroUsd - 1 });
    expect(computeRaterEvidence({ pairs, raters }).graph.seeds).toBe(0);
  });

  it('is deterministic whatever the order of its input', () => {
    const pairs: WorldPair[] = [];
    const raters: WorldRater[] = [];
    for (let i = 0; i < 30; i++) {
      pairs.push({ rater: a('1', i), subject: a('5', i % 7), voice: (i * 37) % 101 });
      pairs.push({ rater: a('1', i), subject: a('5', (i * 3) % 11), voice: (i * 17) % 101 });
      raters.push(rater(a('1', i), { firstAt: T0 + (i % 5) * H, paidMicroUsd: i % 4 === 0 ? 1_000_000 : 0 }));
    }
    const x = computeRaterEvidence({ pairs, raters });
    const y = computeRaterEvidence({ pairs: [...pairs].reverse(), raters: [...raters].reverse() });
    expect([...y.raters.entries()].sort()).toEqual([...x.raters.entries()].sort());
  });
});

describe('voiceWeights', () => {
  it('base = history · breadth · graph; reciprocal × 0.1; a paying customer weighs fully', () => {
    const w = voiceWeights(
      sums({ [a('1', 1)]: [80], [a('1', 2)]: [60], [a('1', 3)]: [40], [a('1', 4)]: [20] }),
      new Map(),
      new Map([
        [a('1', 1), ev({ nonce: 30, independentSubjects: 2, graphTrust: 0.5 })],
        [a('1', 2), ev({ nonce: 500, independentSubjects: 9, reciprocal: true })],
        [a('1', 3), ev({ nonce: 0, paidMicroUsd: 10_000_000 })],
        [a('1', 4), ev({ nonce: 100, independentSubjects: 4 })],
      ]),
    );
    expect(w.map((v) => v.weight)).toEqual([0.7 * 0.5 * 0.625, 0.1, 1, 1]);
    expect(w.every((v) => v.proven)).toBe(true);
    expect(weightedFromWeights(w)).toBeCloseTo((0.21875 * 80 + 0.1 * 60 + 40 + 20) / (0.21875 + 0.1 + 2), 5);
  });

  it('a cohort is one voice: its members share it', () => {
    const voices: Record<string, number[]> = { [a('1', 0)]: [50] };
    const evidence = new Map([[a('1', 0), ev({ independentSubjects: 4 })]]);
    for (let i = 1; i <= 10; i++) {
      voices[a('2', i)] = [100];
      evidence.set(a('2', i), ev({ independentSubjects: 4, cohortId: a('2', 1) }));
    }
    const w = voiceWeights(sums(voices), new Map(), evidence);
    const farm = w.filter((v) => v.rater !== a('1', 0));
    expect(farm.every((v) => v.cohort_members === 10 && v.weight === 0.1)).toBe(true);
    expect(weightedFromWeights(w)).toBe(75);
  });

  it('unproven voices weigh together at most 3 % of the proven weight; alone, they are the score', () => {
    const voices: Record<string, number[]> = { [a('1', 0)]: [40] };
    const evidence = new Map([[a('1', 0), ev({ nonce: 200, independentSubjects: 4 })]]);
    for (let i = 1; i <= 50; i++) {
      voices[a('3', i)] = [100];
      evidence.set(a('3', i), ev({ nonce: i % 3, independentSubjects: 1 }));
    }
    const w = voiceWeights(sums(voices), new Map(), evidence);
    const unproven = w.filter((v) => !v.proven).reduce((s, v) => s + v.weight, 0);
    expect(unproven).toBeCloseTo(P.unprovenShare * 1, 12);
    expect(weightedFromWeights(w)).toBeCloseTo((40 + 0.03 * 100) / 1.03, 5);
    delete voices[a('1', 0)];
    expect(weightedFromWeights(voiceWeights(sums(voices), new Map(), evidence))).toBe(100);
  });

  it('without evidence it is the breadth weighting of @2 (a rater missing from the map has none)', () => {
    const w = voiceWeights(
      sums({ [a('1', 1)]: [90], [a('1', 2)]: [30] }),
      new Map([
        [a('1', 1), 4],
        [a('1', 2), 1],
      ]),
      undefined,
    );
    expect(weightedFromWeights(w)).toBe(78);
  });
});

/** A subject's voices: honest raters (at least one proven) and an optional fresh-wallet farm. */
const honestVoice = fc.record({
  value: fc.integer({ min: 0, max: 100 }),
  nonce: fc.oneof(fc.constant(null), fc.integer({ min: 0, max: 2000 })),
  subjects: fc.integer({ min: 1, max: 12 }),
  paid: fc.oneof(fc.constant(0), fc.integer({ min: 0, max: 50_000_000 })),
  firstHour: fc.integer({ min: 0, max: 24 * 200 }),
});

describe('properties', () => {
  it('a fresh-wallet farm never raises a subject with a proven voice past the bound, whatever its size and timing', () => {
    const bound = (100 * P.unprovenShare) / (1 + P.unprovenShare);
    fc.assert(
      fc.property(
        fc.array(honestVoice, { minLength: 1, maxLength: 12 }),
        fc.integer({ min: 1, max: 300 }),
        fc.integer({ min: 0, max: 100 }),
        fc.integer({ min: 0, max: 2000 }),
        fc.integer({ min: 0, max: 24 * 365 }),
        (honest, farmSize, farmValue, spreadHours, startHour) => {
          // at least one proven honest voice
          honest[0] = { ...honest[0]!, nonce: Math.max(3, honest[0]!.nonce ?? 3) };
          const target = a('5', 0);
          const pairs: WorldPair[] = [];
          const raters: WorldRater[] = [];
          honest.forEach((h, i) => {
            const r = a('1', i);
            pairs.push({ rater: r, subject: target, voice: h.value });
            for (let k = 1; k < h.subjects; k++)
              pairs.push({ rater: r, subject: a('6', i * 100 + k), voice: 50 });
            raters.push(
              rater(r, {
                firstAt: T0 + h.firstHour * H,
                history: h.nonce === null ? 'pending' : 'fetched',
                nonce: h.nonce,
                paidMicroUsd: h.paid,
              }),
            );
          });
          const weighted = (withFarm: boolean): { score: number; farm: number; proven: number } => {
            const p = [...pairs];
            const r = [...raters];
            if (withFarm) {
              for (let i = 0; i < farmSize; i++) {
                const f = a('9', i);
                p.push({ rater: f, subject: target, voice: farmValue });
                r.push(
                  rater(f, {
                    nonce: i % 3,
                    firstAt: T0 + (startHour + Math.floor((spreadHours * i) / farmSize)) * H,
                  }),
                );
              }
            }
            const run = computeRaterEvidence({ pairs: p, raters: r });
            const voices = new Map<string, DecimalSum>();
            const evidence = new Map<string, VoiceEvidence>();
            for (const pair of p) {
              if (pair.subject !== target) continue;
              const d = new DecimalSum();
              d.add(parseDecimal(String(pair.voice))!);
              voices.set(pair.rater, d);
              const e = run.raters.get(pair.rater)!;
              const info = r.find((x) => x.rater === pair.rater)!;
              evidence.set(pair.rater, {
                nonce: info.nonce,
                independentSubjects: e.independentSubjects,
                graphTrust: e.graphTrust,
                cohortId: e.cohortId,
                paidMicroUsd: info.paidMicroUsd,
                reciprocal: run.reciprocal.has(pairKey(pair.rater, target)),
              });
            }
            const w = voiceWeights(voices, new Map(), evidence);
            return {
              score: weightedFromWeights(w)!,
              farm: w.filter((v) => v.rater.startsWith('0x9')).reduce((s, v) => s + v.weight, 0),
              proven: w.filter((v) => v.proven).reduce((s, v) => s + v.weight, 0),
            };
          };
          const clean = weighted(false);
          const attacked = weighted(true);
          expect(attacked.farm).toBeLessThanOrEqual(P.unprovenShare * attacked.proven + 1e-12);
          // the proven voices weigh the same with the farm as without (it takes no part in the graph
          // and shares no cohort weight with them): the score moves at most 100 · 3 % / 1.03
          expect(attacked.proven).toBeCloseTo(clean.proven, 9);
          expect(Math.abs(attacked.score - clean.score)).toBeLessThanOrEqual(bound + 1e-6);
        },
      ),
      { seed: SEED, numRuns: Number(process.env.FARM_RUNS ?? 60) },
    );
  });

  it('weighted_score is defined (a number in 0..100) wherever there is a voice, whatever the evidence', () => {
    const evidenceArb = fc.record({
      nonce: fc.oneof(fc.constant(null), fc.integer({ min: 0, max: 10_000 })),
      independentSubjects: fc.oneof(fc.constant(null), fc.integer({ min: 0, max: 50 })),
      graphTrust: fc.oneof(fc.constant(null), fc.double({ min: 0, max: 1, noNaN: true })),
      cohortId: fc.oneof(fc.constant(null), fc.constantFrom('c1', 'c2')),
      paidMicroUsd: fc.integer({ min: 0, max: 100_000_000 }),
      reciprocal: fc.boolean(),
    });
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.integer({ min: 0, max: 100 }), evidenceArb), { minLength: 1, maxLength: 40 }),
        (voices) => {
          const byRater = new Map<string, DecimalSum>();
          const evidence = new Map<string, VoiceEvidence>();
          voices.forEach(([v, e], i) => {
            const d = new DecimalSum();
            d.add(parseDecimal(String(v))!);
            byRater.set(a('1', i), d);
            evidence.set(a('1', i), e);
          });
          const w = voiceWeights(byRater, new Map(), evidence);
          expect(w.every((x) => x.weight > 0 && Number.isFinite(x.weight))).toBe(true);
          const s = weightedFromWeights(w);
          expect(s).not.toBeNull();
          expect(s!).toBeGreaterThanOrEqual(0);
          expect(s!).toBeLessThanOrEqual(100);
        },
      ),
      { seed: SEED, numRuns: 200 },
    );
  });
});
