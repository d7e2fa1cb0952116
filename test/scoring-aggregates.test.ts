/**
 * The aggregate versions in src/scoring (pure) against the row versions, property-based
 * (fast-check, seeded): random ratings over several chains and agents, mixed-case EVM spellings
 * of one rater, self-ratings, revocations, out-of-domain and undated values. The aggregates are
 * built here by plain grouping (what the database keeps); every answer must be deep-equal to the
 * row version's: scoreSubject (per chain, facets, concentration, weighting, self, activity),
 * historyPoints and raterStats.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  classifyRating,
  facetTotals,
  historyFromAggregates,
  historyPoints,
  inDomain,
  parseDecimal,
  raterStats,
  raterStatsFromAggregates,
  scoreSubject,
  scoreSubjectFromAggregates,
  undatedEligible,
  formatDecimal,
  DecimalSum,
  ZERO,
  type AgentRaterAggregate,
  type AgentRaterTagAggregate,
  type EmittedAggregate,
  type HistoryDayAggregate,
  type SubjectRating,
} from '../src/scoring/index.js';

const SEED = Number(process.env.FUZZ_SEED ?? 8_2026);
const W = '0x00000000000000000000000000000000000000aa';
const RATERS = [
  W,
  '0x00000000000000000000000000000000000000AA',
  '0x00000000000000000000000000000000000000bb',
  '0x00000000000000000000000000000000000000BB',
  '0x00000000000000000000000000000000000000cc',
  'So1anaRater111111111111111111111111111111111',
];
const VALUES = [
  '0',
  '100',
  '100.0',
  '50.5',
  '62.695416666666666',
  '1e1',
  '-0',
  '-1',
  '100.0000001',
  'x',
  '33.333333333333333333',
];

const rating: fc.Arbitrary<SubjectRating> = fc.record({
  network: fc.constantFrom('base', 'ethereum', 'solana'),
  agentId: fc.constantFrom('1', '2', '7'),
  rater: fc.constantFrom(...RATERS),
  value: fc.constantFrom(...VALUES),
  revoked: fc.boolean(),
  blockTime: fc.option(
    fc.integer({ min: Date.UTC(2024, 11, 20), max: Date.UTC(2025, 2, 10) }).map((t) => new Date(t)),
    { nil: null, freq: 4 },
  ),
  tag1: fc.constantFrom('', 'quality', '__proto__', '7'),
});

const add = (a: string, b: string) => {
  const s = new DecimalSum();
  s.add(parseDecimal(a) ?? ZERO);
  s.add(parseDecimal(b) ?? ZERO);
  return formatDecimal(s.sum);
};
const live = (r: { value: string; revoked: boolean }) => !r.revoked && inDomain(r.value);

function groupRaters(rows: readonly SubjectRating[]): AgentRaterAggregate[] {
  const m = new Map<string, AgentRaterAggregate>();
  for (const r of rows) {
    const k = `${r.network}|${r.agentId}|${r.rater}`;
    const g = m.get(k) ?? {
      network: r.network,
      agentId: r.agentId,
      rater: r.rater,
      liveCount: 0,
      liveSum: '0',
      liveSumSq: '0',
      liveUndated: 0,
      revokedCount: 0,
      oodCount: 0,
    };
    if (r.revoked) g.revokedCount += 1;
    else if (!live(r)) g.oodCount += 1;
    else {
      const d = parseDecimal(r.value)!;
      g.liveCount += 1;
      g.liveSum = add(g.liveSum, r.value);
      g.liveSumSq = add(g.liveSumSq!, formatDecimal({ units: d.units * d.units, scale: 2 * d.scale }));
      if (r.blockTime === null) g.liveUndated! += 1;
    }
    m.set(k, g);
  }
  // the order rows come back in must not matter
  return [...m.values()].reverse();
}

function groupTags(rows: readonly SubjectRating[]): AgentRaterTagAggregate[] {
  const m = new Map<string, AgentRaterTagAggregate>();
  for (const r of rows) {
    const k = `${r.network}|${r.agentId}|${r.rater}|${r.tag1}`;
    const g = m.get(k) ?? {
      network: r.network,
      agentId: r.agentId,
      rater: r.rater,
      tag1: r.tag1,
      liveCount: 0,
      liveSum: '0',
      revokedCount: 0,
      oodCount: 0,
    };
    if (r.revoked) g.revokedCount += 1;
    else if (!live(r)) g.oodCount += 1;
    else {
      g.liveCount += 1;
      g.liveSum = add(g.liveSum, r.value);
    }
    m.set(k, g);
  }
  return [...m.values()];
}

describe(`aggregate scoring equals the row versions (seed ${SEED})`, () => {
  it('scoreSubject, facets, weighting, concentration, activity and history', () => {
    fc.assert(
      fc.property(
        fc.array(rating, { maxLength: 40 }),
        fc.dictionary(fc.constantFrom(...RATERS.map((r) => r.toLowerCase())), fc.integer({ min: 0, max: 9 })),
        fc.option(fc.double({ min: 0, max: 100, noNaN: true }), { nil: null }),
        (rows, counts, prior) => {
          const eligible = rows.filter((r) => classifyRating(r, W) === 'eligible' && r.blockTime !== null);
          const times = eligible.map((r) => r.blockTime!.getTime());
          const ctx = {
            prior,
            raterSubjectCounts: counts,
            identities: [{ network: 'base', agentIds: ['9'] }],
          };
          const aggs = {
            raters: groupRaters(rows),
            facets: facetTotals(groupTags(rows), W),
            firstEligibleAt: times.length ? new Date(Math.min(...times)) : null,
            lastEligibleAt: times.length ? new Date(Math.max(...times)) : null,
          };
          expect(scoreSubjectFromAggregates(W, aggs, ctx)).toEqual(scoreSubject(W, rows, ctx));

          const days = new Map<string, HistoryDayAggregate>();
          for (const r of eligible) {
            const day = new Date(
              Date.UTC(r.blockTime!.getUTCFullYear(), r.blockTime!.getUTCMonth(), r.blockTime!.getUTCDate()),
            );
            const k = `${r.network}|${day.toISOString()}`;
            const g = days.get(k) ?? { network: r.network, day, count: 0, sum: '0' };
            g.count += 1;
            g.sum = add(g.sum, r.value);
            days.set(k, g);
          }
          for (const bucket of ['week', 'month'] as const) {
            expect(
              historyFromAggregates([...days.values()], undatedEligible(aggs.raters, W), W, bucket),
            ).toEqual(historyPoints(rows, W, bucket));
          }
        },
      ),
      { seed: SEED, numRuns: 300 },
    );
  });

  it('raterStats', () => {
    fc.assert(
      fc.property(fc.array(rating, { maxLength: 40 }), (rows) => {
        const rater = RATERS[2] as string;
        const subjectOf = (r: SubjectRating) =>
          r.agentId === '7' ? rater : `0x0000000000000000000000000000000000000${r.agentId}0d`;
        const mine = rows.filter((r) => r.value !== 'x').map((r) => ({ ...r, rater }));
        const emitted = mine.map((r) => ({
          network: r.network,
          subject: subjectOf(r),
          value: r.value,
          revoked: r.revoked,
          blockTime: r.blockTime,
        }));
        const grouped: EmittedAggregate[] = groupRaters(mine).map((g) => ({
          ...g,
          subject: subjectOf({ ...mine[0]!, agentId: g.agentId }),
        }));
        const times = mine.filter((r) => r.blockTime !== null).map((r) => r.blockTime!.getTime());
        expect(
          raterStatsFromAggregates(
            rater,
            grouped,
            times.length ? new Date(Math.min(...times)) : null,
            times.length ? new Date(Math.max(...times)) : null,
          ),
        ).toEqual(raterStats(rater, emitted));
      }),
      { seed: SEED, numRuns: 300 },
    );
  });
});
