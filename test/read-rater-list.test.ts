/**
 * The paid statements' packed rater list (src/read/aggregate-rows.ts `RATER_LIST`) and the facts
 * text of a rater (src/read/raters.ts `encodeFacts`), read back by the hand-rolled scanners
 * `parseRaterList` and `factsOf`: equal to a plain split-based reading on any well-formed list, and
 * refusing a row with a field too few or too many, an agent outside the list or counts not three.
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

/** The statement's agent list of some rows: each distinct (network, agent id), first seen first. */
function agentsOf(rows: Row[]): [string, string][] {
  const out: [string, string][] = [];
  for (const r of rows)
    if (!out.some(([n, a]) => n === r.network && a === r.agentId)) out.push([r.network, r.agentId]);
  return out;
}

/** One row's fields as RATER_LIST writes them (k: the row's agent's 1-based position in `agents`). */
function fieldsOf(r: Row, agents: [string, string][]): string[] {
  const k = agents.findIndex(([n, a]) => n === r.network && a === r.agentId) + 1;
  const rest = [r.liveUndated, r.revokedCount, r.oodCount].map(String);
  return [
    String(k),
    r.rater,
    String(r.liveCount),
    r.liveSum,
    rest.every((c) => c === '0') ? '' : rest.join('/'),
    r.subjects,
    r.factsText,
  ];
}
const packed = (rows: Row[]) => rows.map((r) => fieldsOf(r, agentsOf(rows)).join(',')).join(';');

/** The reading the scanner must equal: split on ';', ',' and '/', and Number() each count. */
function reference(rows: Row[], owner: string) {
  const agents = agentsOf(rows);
  const weights = new Map<string, number>();
  const facts = new Map<string, ReturnType<typeof factsOf>>();
  const raters = rows.map((r) => {
    const f = fieldsOf(r, agents);
    const [network, agentId] = agents[Number(f[0]) - 1]!;
    const liveCount = Number(f[2]);
    const rest = f[4] === '' ? ['0', '0', '0'] : f[4]!.split('/');
    if (liveCount > 0 && r.rater !== owner && f[5] !== '') weights.set(r.rater, Number(f[5]));
    if (f[6] !== '' && !facts.has(r.rater)) facts.set(r.rater, factsOf(r.rater, f[6]!));
    return {
      network,
      agentId,
      rater: f[1],
      liveCount,
      liveSum: f[3],
      liveUndated: Number(rest[0]),
      revokedCount: Number(rest[1]),
      oodCount: Number(rest[2]),
    };
  });
  return { raters, weights, facts };
}

describe('parseRaterList', () => {
  it('equals the split-based reading on any well-formed list', () => {
    fc.assert(
      fc.property(fc.array(row, { minLength: 1, maxLength: 30 }), fc.boolean(), (rows, ownerIsRater) => {
        const owner = ownerIsRater ? rows[0]!.rater : '0x' + 'f'.repeat(40);
        expect(parseRaterList(packed(rows), owner, agentsOf(rows))).toEqual(reference(rows, owner));
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
          const agents = agentsOf(rows);
          const i = at % rows.length;
          const texts = rows.map((r) => fieldsOf(r, agents).join(','));
          const f = fieldsOf(rows[i]!, agents);
          texts[i] = (fewer ? f.slice(0, 6) : [...f, 'x']).join(',');
          expect(() => parseRaterList(texts.join(';'), '', agents)).toThrow(/malformed rater row/);
        },
      ),
      { numRuns: 200 },
    );
  });

  it('refuses a row whose agent is not in the list, or whose counts are not three', () => {
    fc.assert(
      fc.property(
        fc.array(row, { minLength: 1, maxLength: 8 }),
        fc.nat(),
        fc.nat({ max: 3 }),
        (rows, at, how) => {
          const agents = agentsOf(rows);
          const i = at % rows.length;
          const texts = rows.map((r) => fieldsOf(r, agents));
          const f = texts[i]!;
          if (how === 0) f[0] = String(agents.length + 1);
          else if (how === 1) f[0] = '0';
          else if (how === 2) f[4] = '1/2';
          else f[4] = '1/2/3/4';
          expect(() => parseRaterList(texts.map((t) => t.join(',')).join(';'), '', agents)).toThrow(
            /malformed rater row/,
          );
        },
      ),
      { numRuns: 200 },
    );
  });

  it('reads nothing from an empty or absent list', () => {
    for (const v of ['', null, undefined, 42]) {
      const out = parseRaterList(v, '', [['base', '1']]);
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
