/**
 * Two shortcuts of the paid answers over thousands of raters, held to the plain computation they
 * replace (fast-check, seeded):
 *  - `evidenceLookup` refills ONE object per call: the weights it gives equal the weights from a map
 *    of one fresh evidence object per rater (no field of an earlier rater leaks into the next);
 *  - the weighted score read from the columns of `voiceTable` is the number its rows give;
 *  - the wallet profile counts the evidence of the voices `onVoters` reports: that set is exactly
 *    `votingRaters` (live raters other than the subject), whatever the rows;
 *  - `normalizeAddress` without `toLowerCase` on a string with no ASCII capital gives what the plain
 *    rule gives (EVM lower-cased, anything else verbatim) on any string.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  accountNonce,
  DecimalSum,
  evidenceLookup,
  normalizeAddress,
  parseDecimal,
  scoreSubjectFromAggregates,
  voiceTable,
  voiceWeights,
  votingRaters,
  weightedFromTable,
  weightedFromWeights,
  type AgentRaterAggregate,
  type RaterFacts,
  type VoiceEvidence,
  type VoiceWeight,
} from '../src/scoring/index.js';

const SEED = Number(process.env.FUZZ_SEED ?? 20261128);
const rater = fc.nat({ max: 40 }).map((i) => `0x${String(i).padStart(40, '0')}`);

const facts = (r: string): fc.Arbitrary<RaterFacts> =>
  fc.record({
    rater: fc.constant(r),
    historyState: fc.constantFrom(null, 'queued', 'fetched', 'failed', 'unavailable'),
    txFrom: fc.constantFrom(null, r, '0x00000000000000000000000000000000000000ff'),
    txNonce: fc.option(fc.nat({ max: 5_000 }), { nil: null }),
    independentSubjects: fc.option(fc.nat({ max: 300 }), { nil: null }),
    graphTrust: fc.option(fc.double({ min: 0, max: 1, noNaN: true }), { nil: null }),
    cohortId: fc.option(fc.constantFrom('c1', 'c2', 'c3'), { nil: null }),
    cohortSize: fc.nat({ max: 10 }),
    seed: fc.boolean(),
    verifiedRatings: fc.nat({ max: 3 }),
    paidMicroUsd: fc.constantFrom(0, 5_000, 2_000_000, 50_000_000),
    reciprocal: fc.boolean(),
  });

/** Raters with 1..3 values each, and stored facts for some of them. */
const world = fc.uniqueArray(rater, { minLength: 1, maxLength: 25 }).chain((raters) =>
  fc.record({
    values: fc.tuple(
      ...raters.map(() => fc.array(fc.integer({ min: 0, max: 100 }), { minLength: 1, maxLength: 3 })),
    ),
    facts: fc.tuple(...raters.map((r) => fc.option(facts(r), { nil: null }))),
    s: fc.tuple(...raters.map(() => fc.integer({ min: 1, max: 50 }))),
    raters: fc.constant(raters),
  }),
);

describe('evidenceLookup (one object, refilled per call)', () => {
  it('gives the same weights as one fresh evidence object per rater', () => {
    fc.assert(
      fc.property(world, (w) => {
        const byRater = new Map<string, DecimalSum>();
        const stored = new Map<string, RaterFacts>();
        const fresh = new Map<string, VoiceEvidence>();
        const counts = new Map<string, number>();
        w.raters.forEach((r, i) => {
          const acc = new DecimalSum();
          for (const v of w.values[i]!) acc.add(parseDecimal(String(v))!);
          byRater.set(r, acc);
          counts.set(r, w.s[i]!);
          const f = w.facts[i];
          if (!f) return;
          stored.set(r, f);
          fresh.set(r, {
            nonce: accountNonce(f),
            independentSubjects: f.independentSubjects,
            graphTrust: f.graphTrust,
            cohortId: f.cohortId,
            paidMicroUsd: f.paidMicroUsd,
            reciprocal: f.reciprocal,
          });
        });
        const rows = voiceWeights(byRater, counts, evidenceLookup(stored));
        expect(rows).toEqual(voiceWeights(byRater, counts, fresh));
        // the weighted score read from the columns is the very number the rows give
        expect(
          Object.is(weightedFromTable(voiceTable(byRater, counts, fresh)), weightedFromWeights(rows)),
        ).toBe(true);
      }),
      { seed: SEED, numRuns: 300 },
    );
  });
});

describe('the voices of a subject are its voting raters', () => {
  it('onVoiceWeights reports exactly votingRaters (sorted), the subject and dead rows left out', () => {
    const subject = `0x${String(7).padStart(40, '0')}`;
    const rows = fc.array(
      fc.record({
        network: fc.constantFrom('base', 'bsc'),
        agentId: fc.constantFrom('1', '2'),
        rater: fc.oneof(rater, fc.constant(subject), fc.constant(subject.toUpperCase().replace('0X', '0x'))),
        liveCount: fc.nat({ max: 3 }),
        value: fc.integer({ min: 0, max: 100 }),
        revokedCount: fc.nat({ max: 2 }),
        oodCount: fc.nat({ max: 2 }),
      }),
      { maxLength: 40 },
    );
    fc.assert(
      fc.property(rows, (rs) => {
        const raters: AgentRaterAggregate[] = rs.map((r) => ({
          network: r.network,
          agentId: r.agentId,
          rater: r.rater,
          liveCount: r.liveCount,
          liveSum: String(r.value * r.liveCount),
          revokedCount: r.revokedCount,
          oodCount: r.oodCount,
        }));
        let seen: readonly VoiceWeight[] = [];
        let voters: readonly string[] = [];
        scoreSubjectFromAggregates(
          subject,
          { raters, facets: [], firstEligibleAt: null, lastEligibleAt: null },
          {
            prior: null,
            raterSubjectCounts: new Map(),
            onVoiceWeights: (w) => (seen = w),
            onVoters: (r) => (voters = r),
          },
        );
        const expected = [...votingRaters(subject, raters)].sort();
        expect(seen.map((v) => v.rater)).toEqual(expected);
        expect(voters).toEqual(expected);
      }),
      { seed: SEED, numRuns: 300 },
    );
  });
});

describe('normalizeAddress', () => {
  it('is the plain rule: an EVM address lower-cased, anything else verbatim', () => {
    const plain = (a: string) => (/^0x[0-9a-fA-F]{40}$/.test(a) ? a.toLowerCase() : a);
    const evm = fc
      .array(fc.constantFrom(...'0123456789abcdefABCDEF'), { minLength: 40, maxLength: 40 })
      .map((cs) => `0x${cs.join('')}`);
    // one capital only (any of A–F, wherever it sits)
    const oneCapital = evm
      .map((a) => a.toLowerCase())
      .chain((a) =>
        fc.nat({ max: 39 }).map((i) => a.slice(0, i + 2) + a.charAt(i + 2).toUpperCase() + a.slice(i + 3)),
      );
    const any = fc.oneof(
      oneCapital,
      evm,
      fc.string(),
      fc.string({ unit: 'grapheme' }),
      evm.map((a) => a.replace('0x', '0X')),
    );
    fc.assert(
      fc.property(any, (a) => {
        expect(normalizeAddress(a)).toBe(plain(a));
      }),
      { seed: SEED, numRuns: 1000 },
    );
  });
});
