/**
 * The paid statements' packed rater list (src/read/aggregate-rows.ts `RATER_LIST`) and the facts
 * text of a rater (src/read/raters.ts `encodeFacts`), read back by the hand-rolled scanners
 * `parseRaterList` and `factsOf`: equal to a plain split-based reading on any well-formed list, and
 * refusing a row with a field too few or too many.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseRaterList } from '../src/read/aggregate-rows.js';
import { encodeFacts, factsOf, type StoredFacts } from '../src/read/raters.js';

const hex = fc.stringMatching(/^0x[0-9a-f]{40}$/);
const base58 = fc.stringMatching(/^[1-9A-HJ-NP-Za-km-z]{32,44}$/);
const count = fc.oneof(
  fc.nat({ max: 20 }),
  fc.nat(),
  fc.bigInt({ min: 10n ** 15n, max: 10n ** 20n }).map(String),
);
const decimal = fc.oneof(
  fc.nat({ max: 10_000 }).map(String),
  fc.tuple(fc.integer({ min: -500, max: 100_000 }), fc.nat({ max: 999_999 })).map(([i, f]) => `${i}.${f}`),
);

const storedFacts: fc.Arbitrary<StoredFacts> = fc.record({
  state: fc.constantFrom(null, 'queued', 'leased', 'retry', 'fetched', 'failed', 'unavailable', 'odd'),
  txFrom: fc.option(hex, { nil: null }),
  nonce: fc.option(fc.nat({ max: 1_000_000 }), { nil: null }),
  independentSubjects: fc.nat({ max: 500 }),
  graphTrust: fc.option(fc.double({ min: 0, max: 1, noNaN: true }), { nil: null }),
  cohortId: fc.option(fc.stringMatching(/^[a-z0-9-]{1,20}$/), { nil: null }),
  cohortSize: fc.nat({ max: 300 }),
  seed: fc.boolean(),
});

const row = fc
  .record({
    network: fc.constantFrom('base', 'ethereum', 'bsc', 'solana'),
    agentId: fc.oneof(fc.nat().map(String), base58),
    rater: fc.oneof(hex, base58),
    liveCount: count,
    liveSum: decimal,
    liveUndated: count,
    revokedCount: count,
    oodCount: count,
    subjects: fc.option(fc.nat({ max: 10_000 }).map(String), { nil: '' }),
    facts: fc.option(storedFacts, { nil: null }),
  })
  .map((r) => ({ ...r, factsText: r.facts === null ? '' : encodeFacts(r.rater, r.facts) }));

type Row = typeof row extends fc.Arbitrary<infer T> ? T : never;

const fieldsOf = (r: Row) => [
  r.network,
  r.agentId,
  r.rater,
  String(r.liveCount),
  r.liveSum,
  String(r.liveUndated),
  String(r.revokedCount),
  String(r.oodCount),
  r.subjects,
  r.factsText,
];
const packed = (rows: Row[]) => rows.map((r) => fieldsOf(r).join(',')).join(';');

/** The reading the scanner must equal: split on ';' then ',' and Number() each count. */
function reference(rows: Row[], owner: string) {
  const weights = new Map<string, number>();
  const facts = new Map<string, ReturnType<typeof factsOf>>();
  const raters = rows.map((r) => {
    const f = fieldsOf(r);
    const liveCount = Number(f[3]);
    if (liveCount > 0 && r.rater !== owner && f[8] !== '') weights.set(r.rater, Number(f[8]));
    if (f[9] !== '' && !facts.has(r.rater)) facts.set(r.rater, factsOf(r.rater, f[9]!));
    return {
      network: f[0],
      agentId: f[1],
      rater: f[2],
      liveCount,
      liveSum: f[4],
      liveUndated: Number(f[5]),
      revokedCount: Number(f[6]),
      oodCount: Number(f[7]),
    };
  });
  return { raters, weights, facts };
}

describe('parseRaterList', () => {
  it('equals the split-based reading on any well-formed list', () => {
    fc.assert(
      fc.property(fc.array(row, { minLength: 1, maxLength: 30 }), fc.boolean(), (rows, ownerIsRater) => {
        const owner = ownerIsRater ? rows[0]!.rater : '0x' + 'f'.repeat(40);
        expect(parseRaterList(packed(rows), owner)).toEqual(reference(rows, owner));
      }),
      { numRuns: 300 },
    );
  });

  it('refuses a row with a field too few or too many, wherever it sits', () => {
    fc.assert(
      fc.property(
        fc.array(row, { minLength: 1, maxLength: 8 }),
        fc.nat(),
        fc.boolean(),
        (rows, at, fewer) => {
          const i = at % rows.length;
          const texts = rows.map((r) => fieldsOf(r).join(','));
          const f = fieldsOf(rows[i]!);
          texts[i] = (fewer ? f.slice(0, 9) : [...f, 'x']).join(',');
          expect(() => parseRaterList(texts.join(';'), '')).toThrow(/malformed rater row/);
        },
      ),
      { numRuns: 200 },
    );
  });

  it('reads nothing from an empty or absent list', () => {
    for (const v of ['', null, undefined, 42]) {
      const out = parseRaterList(v, '');
      expect(out.raters).toEqual([]);
      expect(out.weights.size).toBe(0);
      expect(out.facts.size).toBe(0);
    }
  });
});

describe('factsOf', () => {
  it('reads back what encodeFacts wrote', () => {
    fc.assert(
      fc.property(fc.oneof(hex, base58), storedFacts, fc.boolean(), (rater, f, selfSent) => {
        const stored = selfSent ? { ...f, txFrom: rater.toUpperCase() } : f;
        const got = factsOf(rater, encodeFacts(rater, stored));
        const self = stored.txFrom !== null && stored.txFrom.toLowerCase() === rater.toLowerCase();
        expect(got).toEqual({
          rater,
          historyState:
            stored.state !== null &&
            ['queued', 'leased', 'retry', 'fetched', 'failed', 'unavailable'].includes(stored.state)
              ? stored.state
              : null,
          txFrom: stored.txFrom === null ? null : self ? rater : stored.txFrom,
          txNonce: stored.nonce,
          independentSubjects: stored.independentSubjects,
          graphTrust: stored.graphTrust === null ? null : Number(String(stored.graphTrust)),
          cohortId: stored.cohortId,
          cohortSize: stored.cohortSize,
          seed: stored.seed,
          verifiedRatings: 0,
          paidMicroUsd: 0,
          reciprocal: false,
        });
      }),
      { numRuns: 300 },
    );
  });

  it('refuses facts with a field too few or too many', () => {
    expect(() => factsOf('r', 'fetched:=:5:3::c:2')).toThrow(/malformed rater evidence facts/);
    expect(() => factsOf('r', 'fetched:=:5:3::c:2:1:9')).toThrow(/malformed rater evidence facts/);
    expect(factsOf('r', 'fetched:=:5:3::c:2:1').seed).toBe(true);
    expect(factsOf('r', 'fetched:=:5:3::c:2:0').seed).toBe(false);
  });
});
