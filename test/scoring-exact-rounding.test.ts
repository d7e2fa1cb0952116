/**
 * Issue 31, point 8: every served composite is computed in exact decimals and rounded once to six
 * decimals, half up (docs/POLICIES.md, "Precision and display"), so a checker recomputing it by
 * hand in exact decimals from the response gets the same digits, ties included. Each property
 * compares the scoring code with an integer-only reference written from that rule
 * (helpers/exact-reference.ts), on random inputs and on exact ties.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  concentrationFromCounts,
  DecimalSum,
  globalScore,
  meanFromAggregate,
  parseDecimal,
  populationStddev,
  raterWeight,
  round6,
  round6Ratio,
  scoreSubject,
  scoreSubjectFromAggregates,
  selfRatedFrom,
  shrunkScore,
  SHRINKAGE_K,
  weightedScore,
  wilsonBounds6,
  WILSON_Z,
} from '../src/scoring/index.js';
import { decimalFraction, halfUp6, micros, sqrtHalfUp6 } from './helpers/exact-reference.js';

/** A served six-decimal score in 0..100, as a number. */
const served = fc.integer({ min: 0, max: 100_000_000 }).map((m) => m / 1e6);
/** A rating value in 0..100 written with 0 to 9 decimals. */
const value = fc
  .tuple(fc.integer({ min: 0, max: 9 }), fc.bigInt({ min: 0n, max: 10n ** 11n }))
  .map(([scale, u]) => {
    const units = u % (100n * 10n ** BigInt(scale) + 1n);
    const s = units.toString().padStart(scale + 1, '0');
    return scale === 0 ? s : `${s.slice(0, -scale)}.${s.slice(-scale)}`;
  });

/** num/den of a sum of decimal strings. */
function sumOf(values: readonly string[]): { num: bigint; den: bigint } {
  let num = 0n;
  let den = 1n;
  for (const v of values) {
    const f = decimalFraction(v);
    num = num * f.den + f.num * den;
    den *= f.den;
  }
  return { num, den };
}

describe('the tie of the issue, and ties in every mean', () => {
  it('(n·f + k·p)/(n + k) = 62.6537755 exactly serves 62.653776 (floating point gave 62.653775)', () => {
    // n = 1, f = 64.615102, k = 3, p = 62: (64.615102 + 186) / 4 = 62.6537755.
    expect(SHRINKAGE_K).toBe(3);
    expect(Number(((1 * 64.615102 + 3 * 62) / 4).toFixed(6))).toBe(62.653775); // the old way
    expect(shrunkScore(64.615102, 1, 62)).toBe(62.653776);
    expect(round6(62.6537755)).toBe(62.653776);
  });

  it('weighted_score at the same tie: voices 64.615102 (weight 0.25) and 62 (weight 0.75) serve 62.653776', () => {
    const a = '0x000000000000000000000000000000000000000a';
    const b = '0x000000000000000000000000000000000000000b';
    // 1 subject rated → 0.25, 3 → 0.75 (the weights of one-voice-per-counterparty+bounded-trust@2).
    expect([raterWeight(1), raterWeight(3)]).toEqual([0.25, 0.75]);
    expect(Number(((0.25 * 64.615102 + 0.75 * 62) / 1).toFixed(6))).toBe(62.653775); // the old way
    const eligible = [
      { rater: a, value: '64.615102' },
      { rater: b, value: '62' },
    ];
    expect(weightedScore(eligible, { [a]: 1, [b]: 3 })).toBe(62.653776);
  });

  it('a mean exactly halfway between two six-decimal numbers goes up, per chain and in the aggregate path', () => {
    // 0.000001 and 0 average to 0.0000005 (the double 5e-7 is just below it: toFixed gave 0).
    expect(meanFromAggregate('0.000001', 2)).toBe(0.000001);
    const ratings = ['0.000001', '0'].map((v, i) => ({
      network: 'base',
      agentId: '1',
      rater: `0x${String(i + 1).padStart(40, '0')}`,
      value: v,
      revoked: false,
      blockTime: null,
      tag1: 'trust',
    }));
    const rows = scoreSubject('0x00000000000000000000000000000000000000aa', ratings, { prior: 50 });
    expect(rows.per_chain.base!.final_score).toBe(0.000001);
    expect(rows.final_score).toBe(0.000001);
    expect(rows.facets.trust!.score).toBe(0.000001);
    const aggs = scoreSubjectFromAggregates(
      '0x00000000000000000000000000000000000000aa',
      {
        raters: ratings.map((r) => ({
          network: r.network,
          agentId: r.agentId,
          rater: r.rater,
          liveCount: 1,
          liveSum: r.value,
          revokedCount: 0,
          oodCount: 0,
        })),
        facets: [
          {
            tag1: 'trust',
            eligibleCount: 2,
            eligibleSum: '0.000001',
            distinctRaters: 2,
            selfCount: 0,
            revokedCount: 0,
            oodCount: 0,
          },
        ],
        firstEligibleAt: null,
        lastEligibleAt: null,
      },
      { prior: 50 },
    );
    expect(aggs).toEqual(rows);
    // The global mean of two chain scores at a tie: (62.653775 + 62.653776) / 2.
    expect(globalScore([62.653775, 62.653776])).toBe(62.653776);
  });
});

describe('each served composite equals the exact-decimal reference', () => {
  it('shrunk_score = (n·f + k·p)/(n + k), from the served f and p', () => {
    fc.assert(
      fc.property(served, served, fc.integer({ min: 0, max: 5000 }), (f, p, n) => {
        const k = BigInt(SHRINKAGE_K);
        const bn = BigInt(n);
        const ref = halfUp6(bn * micros(f) + k * micros(p), (bn + k) * 1_000_000n);
        expect(shrunkScore(f, n, p)).toBe(ref);
      }),
      { numRuns: 3000 },
    );
  });

  it('global final_score = the mean of the served per-chain scores', () => {
    fc.assert(
      fc.property(fc.array(served, { minLength: 1, maxLength: 11 }), (scores) => {
        const sum = scores.reduce((s, x) => s + micros(x), 0n);
        expect(globalScore(scores)).toBe(halfUp6(sum, BigInt(scores.length) * 1_000_000n));
      }),
      { numRuns: 2000 },
    );
    // Crafted ties: the sum of micro units times 2 is an odd multiple of the count.
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 49_999_999 }), (m) => {
        const a = m / 1e6;
        const b = (m + 1) / 1e6;
        expect(globalScore([a, b])).toBe((m + 1) / 1e6);
      }),
      { numRuns: 500 },
    );
  });

  it('a per-chain mean = Σ values / count, exactly, from decimal strings of any scale (rows and sums alike)', () => {
    fc.assert(
      fc.property(fc.array(value, { minLength: 1, maxLength: 40 }), (values) => {
        const s = sumOf(values);
        const ref = halfUp6(s.num, s.den * BigInt(values.length));
        const acc = new DecimalSum();
        for (const v of values) acc.add(parseDecimal(v)!);
        expect(acc.mean6()).toBe(ref);
        const dec = `${s.num / s.den}.${(s.num % s.den).toString().padStart(String(s.den).length - 1, '0')}`;
        expect(meanFromAggregate(s.den === 1n ? String(s.num) : dec, values.length)).toBe(ref);
      }),
      { numRuns: 2000 },
    );
  });

  it('weighted_score = Σ(w · voice)/Σ w, each voice its exact mean', () => {
    const rater = fc.integer({ min: 1, max: 6 }).map((i) => `0x${String(i).padStart(40, '0')}`);
    fc.assert(
      fc.property(
        fc.array(fc.record({ rater, value }), { minLength: 1, maxLength: 30 }),
        fc.dictionary(rater, fc.integer({ min: 0, max: 9 })),
        (eligible, counts) => {
          // The reference: voices by rater, weights as the policy writes them (exact decimals).
          const byRater = new Map<string, string[]>();
          for (const r of eligible) byRater.set(r.rater, [...(byRater.get(r.rater) ?? []), r.value]);
          let num = 0n;
          let den = 1n;
          let wsum = { num: 0n, den: 1n };
          for (const [r, vs] of byRater) {
            const w = decimalFraction(String(raterWeight(counts[r])));
            const s = sumOf(vs);
            // w · s / |vs|
            const tn = w.num * s.num;
            const td = w.den * s.den * BigInt(vs.length);
            num = num * td + tn * den;
            den *= td;
            wsum = { num: wsum.num * w.den + w.num * wsum.den, den: wsum.den * w.den };
          }
          const ref = halfUp6(num * wsum.den, den * wsum.num);
          expect(weightedScore(eligible, counts)).toBe(ref);
        },
      ),
      { numRuns: 1500 },
    );
  });

  it('self_rated.gap and a facet delta = the exact difference of two served numbers', () => {
    fc.assert(
      fc.property(served, served, (self, final) => {
        const d = micros(self) - micros(final);
        const ref = (d < 0n ? -1 : 1) * halfUp6(d < 0n ? -d : d, 1_000_000n);
        expect(selfRatedFrom(1, self, final).gap).toBe(ref === 0 ? 0 : ref);
      }),
      { numRuns: 2000 },
    );
  });

  it('shares (top_client_share, ratios of counts) = a/b exactly', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 10_000_000 }),
        fc.integer({ min: 0, max: 10_000_000 }),
        (b, a0) => {
          const a = a0 % (b + 1);
          expect(round6Ratio(a, b)).toBe(halfUp6(BigInt(a), BigInt(b)));
        },
      ),
      { numRuns: 2000 },
    );
    // 1/2,000,000 is exactly 0.0000005: up.
    expect(round6Ratio(1, 2_000_000)).toBe(0.000001);
    const c = concentrationFromCounts(
      new Map([
        ['0xa', 1],
        ['0xb', 1_999_999],
      ]),
    );
    expect(c.top_client_share).toBe(halfUp6(1_999_999n, 2_000_000n));
  });

  it('value_stddev = √((n·Σx² − (Σx)²)/n²), rounded once from the exact value', () => {
    fc.assert(
      fc.property(fc.array(value, { minLength: 2, maxLength: 25 }), (values) => {
        // n·Σx² − (Σx)² over a common denominator.
        let s1 = { num: 0n, den: 1n };
        let s2 = { num: 0n, den: 1n };
        for (const v of values) {
          const f = decimalFraction(v);
          s1 = { num: s1.num * f.den + f.num * s1.den, den: s1.den * f.den };
          s2 = { num: s2.num * f.den * f.den + f.num * f.num * s2.den, den: s2.den * f.den * f.den };
        }
        const n = BigInt(values.length);
        const varNum = n * s2.num * s1.den * s1.den - s1.num * s1.num * s2.den;
        const varDen = s2.den * s1.den * s1.den * n * n;
        expect(populationStddev(values)).toBe(sqrtHalfUp6(varNum, varDen));
      }),
      { numRuns: 1500 },
    );
  });

  it('the Wilson bounds, from their exact form, found by bisection on exact squares', () => {
    // z = 1.96 = 49/25.
    const zn = 49n;
    const zd = 25n;
    expect(WILSON_Z).toBe(1.96);
    fc.assert(
      fc.property(served, fc.integer({ min: 1, max: 2000 }), (f, n) => {
        // p = F / 10^8 (F millionths of a percent); everything below over the one denominator
        // used by each inequality, in integers.
        const F = micros(f);
        const N = BigInt(n);
        const P = { num: F, den: 100_000_000n };
        // denom = 1 + z²/n = (n·zd² + zn²) / (n·zd²)
        const dn = N * zd * zd + zn * zn;
        const dd = N * zd * zd;
        // centre = (p + z²/2n) / denom; coef = z / denom; inner = p(1−p)/n + z²/4n²
        const frac = (a: bigint, b: bigint) => ({ num: a, den: b });
        const addF = (a: { num: bigint; den: bigint }, b: { num: bigint; den: bigint }) =>
          frac(a.num * b.den + b.num * a.den, a.den * b.den);
        const mulF = (a: { num: bigint; den: bigint }, b: { num: bigint; den: bigint }) =>
          frac(a.num * b.num, a.den * b.den);
        const z2 = frac(zn * zn, zd * zd);
        const denomInv = frac(dd, dn);
        const centre = mulF(addF(P, mulF(z2, frac(1n, 2n * N))), denomInv);
        const coef = mulF(frac(zn, zd), denomInv);
        const oneMinusP = frac(P.den - P.num, P.den);
        const inner = addF(mulF(mulF(P, oneMinusP), frac(1n, N)), mulF(z2, frac(1n, 4n * N * N)));
        const A = mulF(frac(100n, 1n), centre);
        const B2I = mulF(mulF(mulF(frac(100n, 1n), coef), mulF(frac(100n, 1n), coef)), inner);
        // X = A ∓ B√I ≥ t, t = (m − ½)/10⁶.
        const geq = (sign: -1 | 1, m: bigint) => {
          if (m <= 0n) return true;
          const t = frac(2n * m - 1n, 2_000_000n);
          const d = addF(A, frac(-t.num, t.den)); // A − t
          const dSign = d.num * d.den; // sign of A − t
          const dSq = mulF(d, d);
          const cmp = dSq.num * B2I.den - B2I.num * dSq.den; // (A − t)² − B²I
          return sign < 0 ? dSign >= 0n && cmp >= 0n : dSign >= 0n || cmp <= 0n;
        };
        const bound = (sign: -1 | 1) => {
          let lo = 0n;
          let hi = 200_000_000n;
          while (hi - lo > 1n) {
            const mid = (lo + hi) / 2n;
            if (geq(sign, mid)) lo = mid;
            else hi = mid;
          }
          return halfUp6(lo, 1_000_000n);
        };
        const w = wilsonBounds6(f, n);
        expect(w).toEqual({ lower: bound(-1), upper: Math.min(100, bound(1)) });
      }),
      { numRuns: 1000 },
    );
  });
});
