/**
 * Maintained aggregates (migration 0050) against the row versions, property-based (fast-check,
 * seeded; the seed is printed on failure). Random indexes are written through the database with
 * multi-row inserts, ownership transfers, agents appearing and disappearing, revocations and their
 * reversal, reorg-style deletes, self-ratings, out-of-domain values and several chains; after
 * every history:
 *  - each maintained table equals a full recompute from the rows (what the migration's backfill
 *    computes), so the triggers kept them exactly;
 *  - for every owner wallet, every agent and every rater, the aggregate answers
 *    (scoreSubjectFromAggregates, historyFromAggregates, raterStatsFromAggregates) equal the row
 *    versions (scoreSubject, historyPoints, raterStats) over the same rows, weighted_score
 *    included (s over ELIGIBLE ratings only, recomputed from the rows here).
 * Runs on PGlite, and on PostgreSQL when DATABASE_URL / TEST_DATABASE_URL is set.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../src/db/database.js';
import { readEmittedRatings } from '../src/read/rater.js';
import { refreshAggregates } from '../src/store/aggregates-refresh.js';
import { readAgentRatings } from '../src/read/agent.js';
import { readAgentAggregates } from '../src/read/agent-aggregates.js';
import { readEmittedAggregates } from '../src/read/emitted-aggregates.js';
import { readSubjectAggregateInputs, readSubjectDays } from '../src/read/subject-aggregates.js';
import { readSubjectInputs, type SubjectInputs } from '../src/read/subject.js';
import { snapshotDigest, walletProfileBody } from '../src/paid/wallet-profile.js';
import {
  classifyRating,
  historyFromAggregates,
  historyPoints,
  raterStats,
  raterStatsFromAggregates,
  scoreSubject,
  scoreSubjectFromAggregates,
  raterWeight,
  RATER_WEIGHT_POLICY,
  round6,
  undatedEligible,
} from '../src/scoring/index.js';
import { openTestDatabase, type TestDatabase } from './helpers/db.js';
import { loadConfig } from '../src/config.js';
import type { AppContext } from '../src/doors/http/context.js';
import type { PaidHandler, RawPaidRequest } from '../src/paid/handler.js';
import { paidHandlers } from '../src/paid/index.js';
import { AGENT_RATINGS_MAX_LIMIT } from '../src/paid/agent-detail.js';

/* eslint-disable @typescript-eslint/no-explicit-any */

const SEED = Number(process.env.FUZZ_SEED ?? 20261122);
const RUNS = Number(process.env.AGG_RUNS ?? 40);

const A = (n: number) => `0x${String(n).repeat(40)}`;
const ADDRS = [A(1), A(2), A(3), A(4), A(5)];
const NETWORKS = ['base', 'ethereum', 'solana'];
const AGENTS = ['1', '2', '3'];
const VALUES = [
  '0',
  '100',
  '87.5',
  '62.695416666666666',
  '33.333333333333333333',
  '-3',
  '100.000000001',
  '50.10',
  '7',
];
const TAGS = ['', 'quality', 'agent_rating:x', 'speed'];

type Op =
  | {
      kind: 'rate';
      items: {
        network: string;
        agent: string;
        rater: string;
        value: string;
        time: number | null;
        tag: string;
        revoked: boolean;
      }[];
    }
  | { kind: 'owner'; network: string; agent: string; owner: string | null }
  | { kind: 'dropAgent'; network: string; agent: string }
  | { kind: 'revoke'; pick: number; revoked: boolean }
  | { kind: 'rollback'; keep: number };

const rateItem = fc.record({
  network: fc.constantFrom(...NETWORKS),
  agent: fc.constantFrom(...AGENTS),
  rater: fc.constantFrom(...ADDRS),
  value: fc.constantFrom(...VALUES),
  time: fc.option(fc.integer({ min: Date.UTC(2024, 0, 1), max: Date.UTC(2024, 5, 1) }), {
    nil: null,
    freq: 5,
  }),
  tag: fc.constantFrom(...TAGS),
  revoked: fc.constantFrom(false, false, false, true),
});

const op: fc.Arbitrary<Op> = fc.oneof(
  {
    weight: 5,
    arbitrary: fc
      .array(rateItem, { minLength: 1, maxLength: 8 })
      .map((items) => ({ kind: 'rate' as const, items })),
  },
  {
    weight: 3,
    arbitrary: fc.record({
      kind: fc.constant('owner' as const),
      network: fc.constantFrom(...NETWORKS),
      agent: fc.constantFrom(...AGENTS),
      owner: fc.option(fc.constantFrom(...ADDRS), { nil: null, freq: 6 }),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant('dropAgent' as const),
      network: fc.constantFrom(...NETWORKS),
      agent: fc.constantFrom(...AGENTS),
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({ kind: fc.constant('revoke' as const), pick: fc.nat(), revoked: fc.boolean() }),
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('rollback' as const), keep: fc.nat({ max: 40 }) }) },
);

let t: TestDatabase;
let db: Database;

beforeAll(async () => {
  t = await openTestDatabase();
  db = t.db;
}, 120_000);

afterAll(async () => {
  await t?.close();
});

async function reset(): Promise<void> {
  await db.query('DELETE FROM ratings');
  await db.query('DELETE FROM agents');
  await db.query('DELETE FROM chains');
}

let seq = 0;
async function apply(ops: readonly Op[]): Promise<void> {
  for (const o of ops) {
    if (o.kind === 'rate') {
      const rows = o.items.map((it) => ({ ...it, block: ++seq }));
      await db.query(
        `INSERT INTO ratings (network, tx_hash, log_index, agent_id, rater, feedback_index, value_raw, value_decimals,
                              value, tag1, block_number, block_time, revoked)
         SELECT k.network, 'tx' || k.block, 0, k.agent, k.rater, k.block, 0, 0, k.value, k.tag, k.block, k.t, k.rev
           FROM unnest($1::text[], $2::text[], $3::text[], $4::numeric[], $5::text[], $6::bigint[], $7::timestamptz[], $8::boolean[])
                AS k(network, agent, rater, value, tag, block, t, rev)`,
        [
          rows.map((r) => r.network),
          rows.map((r) => r.agent),
          rows.map((r) => r.rater),
          rows.map((r) => r.value),
          rows.map((r) => r.tag),
          rows.map((r) => r.block),
          rows.map((r) => (r.time === null ? null : new Date(r.time).toISOString())),
          rows.map((r) => r.revoked),
        ],
      );
    } else if (o.kind === 'owner') {
      await db.query(
        `INSERT INTO agents (network, agent_id, owner) VALUES ($1, $2, $3)
         ON CONFLICT (network, agent_id) DO UPDATE SET owner = EXCLUDED.owner`,
        [o.network, o.agent, o.owner],
      );
    } else if (o.kind === 'dropAgent') {
      await db.query('DELETE FROM agents WHERE network = $1 AND agent_id = $2', [o.network, o.agent]);
    } else if (o.kind === 'revoke') {
      const all = await db.query<{ tx_hash: string; network: string }>(
        'SELECT network, tx_hash FROM ratings ORDER BY block_number',
      );
      const target = all[o.pick % Math.max(1, all.length)];
      if (target)
        await db.query('UPDATE ratings SET revoked = $3 WHERE network = $1 AND tx_hash = $2', [
          target.network,
          target.tx_hash,
          o.revoked,
        ]);
    } else {
      const [m] = await db.query<{ lo: number | null }>('SELECT min(block_number)::int AS lo FROM ratings');
      await db.query('DELETE FROM ratings WHERE block_number > $1', [(m?.lo ?? 0) + o.keep]);
    }
  }
}

const LIVE = `(NOT r.revoked AND r.value >= 0 AND r.value <= 100)`;

/** Full recomputes of every maintained table from the rows (the reference). */
const REFERENCE: Record<string, { live: string; full: string }> = {
  live_agent_rater: {
    live: `SELECT network, agent_id, rater, live_count, trim_scale(live_sum)::text AS s, trim_scale(live_sumsq)::text AS q, live_undated, revoked_count, ood_count
             FROM live_agent_rater ORDER BY 1, 2, 3`,
    full: `SELECT network, agent_id, rater, count(*) FILTER (WHERE ${LIVE}) AS live_count,
                  trim_scale(coalesce(sum(value) FILTER (WHERE ${LIVE}), 0))::text AS s,
                  trim_scale(coalesce(sum(value * value) FILTER (WHERE ${LIVE}), 0))::text AS q,
                  count(*) FILTER (WHERE ${LIVE} AND block_time IS NULL) AS live_undated,
                  count(*) FILTER (WHERE revoked) AS revoked_count,
                  count(*) FILTER (WHERE NOT revoked AND NOT ${LIVE}) AS ood_count
             FROM ratings r GROUP BY 1, 2, 3 ORDER BY 1, 2, 3`,
  },
  live_agent_rater_tag: {
    live: `SELECT network, agent_id, rater, tag1, live_count, trim_scale(live_sum)::text AS s, revoked_count, ood_count
             FROM live_agent_rater_tag ORDER BY 1, 2, 3, 4`,
    full: `SELECT network, agent_id, rater, tag1, count(*) FILTER (WHERE ${LIVE}) AS live_count,
                  trim_scale(coalesce(sum(value) FILTER (WHERE ${LIVE}), 0))::text AS s,
                  count(*) FILTER (WHERE revoked) AS revoked_count,
                  count(*) FILTER (WHERE NOT revoked AND NOT ${LIVE}) AS ood_count
             FROM ratings r GROUP BY 1, 2, 3, 4 ORDER BY 1, 2, 3, 4`,
  },
  live_agent_tag: {
    live: `SELECT network, agent_id, tag1, live_count, trim_scale(live_sum)::text AS s, revoked_count, ood_count, live_raters
             FROM live_agent_tag ORDER BY 1, 2, 3`,
    full: `SELECT network, agent_id, tag1, count(*) FILTER (WHERE ${LIVE}) AS live_count,
                  trim_scale(coalesce(sum(value) FILTER (WHERE ${LIVE}), 0))::text AS s,
                  count(*) FILTER (WHERE revoked) AS revoked_count,
                  count(*) FILTER (WHERE NOT revoked AND NOT ${LIVE}) AS ood_count,
                  count(DISTINCT rater) FILTER (WHERE ${LIVE}) AS live_raters
             FROM ratings r GROUP BY 1, 2, 3 ORDER BY 1, 2, 3`,
  },
  live_agent_day: {
    live: `SELECT network, agent_id, to_char(day, 'YYYY-MM-DD') AS day, eligible_count, trim_scale(eligible_sum)::text AS s
             FROM live_agent_day ORDER BY 1, 2, 3`,
    full: `SELECT r.network, r.agent_id, to_char((r.block_time AT TIME ZONE 'UTC')::date, 'YYYY-MM-DD') AS day,
                  count(*) AS eligible_count, trim_scale(sum(r.value))::text AS s
             FROM ratings r LEFT JOIN agents a ON a.network = r.network AND a.agent_id = r.agent_id
            WHERE ${LIVE} AND r.block_time IS NOT NULL AND r.rater <> coalesce(a.owner, '')
            GROUP BY 1, 2, 3 ORDER BY 1, 2, 3`,
  },
  live_rater_subject: {
    live: `SELECT rater, subject, eligible_count FROM live_rater_subject ORDER BY 1, 2`,
    full: `SELECT r.rater, coalesce(a.owner, r.network || ':' || r.agent_id) AS subject, count(*) AS eligible_count
             FROM ratings r LEFT JOIN agents a ON a.network = r.network AND a.agent_id = r.agent_id
            WHERE ${LIVE} AND r.rater <> coalesce(a.owner, '')
            GROUP BY 1, 2 ORDER BY 1, 2`,
  },
  live_rater: {
    live: `SELECT rater, subjects FROM live_rater ORDER BY 1`,
    full: `SELECT r.rater, count(DISTINCT coalesce(a.owner, r.network || ':' || r.agent_id)) AS subjects
             FROM ratings r LEFT JOIN agents a ON a.network = r.network AND a.agent_id = r.agent_id
            WHERE ${LIVE} AND r.rater <> coalesce(a.owner, '')
            GROUP BY 1 ORDER BY 1`,
  },
};

/**
 * s per rater computed in JS from the raw rows (the reference for weighted_score): distinct
 * subjects over the rater's ELIGIBLE ratings, each judged against its own subject.
 */
async function referenceRaterWeights(): Promise<Map<string, number>> {
  const rows = await db.query<{
    rater: string;
    value: string;
    revoked: boolean;
    owner: string | null;
    key: string;
  }>(
    `SELECT r.rater, r.value::text AS value, r.revoked, a.owner, r.network || ':' || r.agent_id AS key
       FROM ratings r LEFT JOIN agents a ON a.network = r.network AND a.agent_id = r.agent_id`,
  );
  const subjects = new Map<string, Set<string>>();
  for (const r of rows) {
    if (classifyRating(r, r.owner ?? '') !== 'eligible') continue;
    const set = subjects.get(r.rater) ?? new Set<string>();
    set.add(r.owner ?? r.key);
    subjects.set(r.rater, set);
  }
  return new Map([...subjects].map(([k, v]) => [k, v.size]));
}

async function checkAgainstRows(): Promise<void> {
  for (const [table, q] of Object.entries(REFERENCE)) {
    const [live, full] = [await db.query(q.live), await db.query(q.full)];
    expect({ table, rows: live }).toEqual({ table, rows: full });
  }
  const weights = await referenceRaterWeights();
  const ctxOf = (inputs: SubjectInputs) => ({
    prior: inputs.prior,
    chainPriors: inputs.chainPriors,
    raterSubjectCounts: weights,
    degraded: inputs.degraded,
    facetIndexMeans: inputs.facetIndexMeans,
    identities: inputs.identities,
  });

  const owners = await db.query<{ owner: string }>(
    'SELECT DISTINCT owner FROM agents WHERE owner IS NOT NULL',
  );
  for (const { owner } of owners) {
    const rowsIn = await readSubjectInputs(db, owner);
    const aggIn = await readSubjectAggregateInputs(db, owner);
    const fromRows = scoreSubject(owner, rowsIn.ratings, ctxOf(rowsIn));
    const fromAggs = scoreSubjectFromAggregates(owner, aggIn.aggregates, {
      ...ctxOf(rowsIn),
      raterSubjectCounts: aggIn.raterSubjectCounts,
      degraded: aggIn.degraded,
    });
    expect(fromAggs).toEqual(fromRows);
    for (const bucket of ['week', 'month'] as const) {
      const days = await readSubjectDays(db, owner);
      expect(
        historyFromAggregates(days, undatedEligible(aggIn.aggregates.raters, owner), owner, bucket),
      ).toEqual(historyPoints(rowsIn.ratings, owner, bucket));
    }
  }

  const agents = await db.query<{ network: string; agent_id: string; owner: string | null }>(
    `SELECT DISTINCT r.network, r.agent_id, a.owner FROM ratings r
       LEFT JOIN agents a ON a.network = r.network AND a.agent_id = r.agent_id`,
  );
  for (const a of agents) {
    const all = await readAgentRatings(db, a.network, a.agent_id);
    const aggs = await readAgentAggregates(db, a.network, a.agent_id);
    expect(aggs.total).toBe(all.total);
    const ctx = {
      prior: 50,
      raterSubjectCounts: weights,
      identities: [{ network: a.network, agentIds: [a.agent_id] }],
    };
    const fromRows = scoreSubject(
      a.owner ?? '',
      all.ratings.map((r) => ({
        network: r.network,
        agentId: r.agent_id,
        rater: r.rater,
        value: r.value,
        revoked: r.revoked,
        blockTime: r.block_time,
        tag1: r.tag1,
      })),
      ctx,
    );
    expect(
      scoreSubjectFromAggregates(a.owner ?? '', aggs.aggregates, {
        ...ctx,
        raterSubjectCounts: aggs.raterSubjectCounts,
      }),
    ).toEqual(fromRows);
  }

  const raters = await db.query<{ rater: string }>('SELECT DISTINCT rater FROM ratings');
  for (const { rater } of raters) {
    const emitted = await readEmittedAggregates(db, rater);
    expect(raterStatsFromAggregates(rater, emitted.rows, emitted.first, emitted.last)).toEqual(
      raterStats(rater, await readEmittedRatings(db, rater)),
    );
  }
}

describe(`maintained aggregates equal the row versions (seed ${SEED})`, () => {
  it('after random histories of inserts, transfers, revocations and rollbacks on several chains', async () => {
    try {
      await fc.assert(
        fc.asyncProperty(fc.array(op, { minLength: 1, maxLength: 14 }), async (ops) => {
          await reset();
          await apply(ops);
          await checkAgainstRows();
        }),
        { seed: SEED, numRuns: RUNS, endOnFailure: true },
      );
    } catch (e) {
      console.error(`[aggregates] failed; replay with FUZZ_SEED=${SEED}`);
      throw e;
    }
    await reset();
    for (const table of Object.keys(REFERENCE)) {
      expect(await db.query(`SELECT * FROM ${table}`)).toEqual([]);
    }
  }, 600_000);
});

describe('bit-identical answers across re-indexings', () => {
  it('the same ratings ingested in two orders and batchings give byte-identical paid bodies and digests', async () => {
    const items: Extract<Op, { kind: 'rate' }>['items'] = [];
    // Values whose float running sums depend on order (0.1-style fractions, long thirds).
    const vals = [
      '62.695416666666666',
      '33.333333333333333333',
      '0.1',
      '0.2',
      '87.5',
      '99.99',
      '1.000000000000001',
    ];
    for (let i = 0; i < 60; i++) {
      items.push({
        network: NETWORKS[i % 2] as string,
        agent: AGENTS[i % 3] as string,
        rater: ADDRS[(i * 7) % 5] as string,
        value: vals[(i * 5) % vals.length] as string,
        time: Date.UTC(2024, 0, 1) + i * 36_000_000,
        tag: TAGS[i % TAGS.length] as string,
        revoked: i % 11 === 0,
      });
    }
    const owners: Op[] = NETWORKS.flatMap((network) =>
      AGENTS.map((agent, k) => ({ kind: 'owner' as const, network, agent, owner: ADDRS[k % 2] as string })),
    );
    const bodies = async () => {
      // The free aggregates too (their means feed the prior that the paid answers shrink toward).
      await db.query(
        `INSERT INTO chains (network, kind) SELECT unnest($1::text[]), 'evm' ON CONFLICT DO NOTHING`,
        [NETWORKS],
      );
      await refreshAggregates(db, () => new Date(0));
      const out: string[] = [];
      for (const q of [
        'SELECT wallet, final_score, shrunk_score FROM agg_wallet ORDER BY wallet',
        'SELECT wallet, network, final_score, shrunk_score FROM agg_wallet_chain ORDER BY wallet, network',
        'SELECT network, mean_value, prior FROM agg_chain ORDER BY network',
        'SELECT network, tag1, mean FROM agg_facet ORDER BY network, tag1',
        "SELECT value FROM agg_meta WHERE meta_key = 'refresh'",
      ]) {
        out.push(JSON.stringify(await db.query(q)));
      }
      for (const w of [ADDRS[0], ADDRS[1]] as string[]) {
        const inputs = await readSubjectAggregateInputs(db, w);
        out.push(JSON.stringify(walletProfileBody(inputs)), snapshotDigest(inputs, 'p'));
      }
      return out;
    };
    await reset();
    seq = 0;
    await apply([...owners, { kind: 'rate', items }]);
    const first = await bodies();
    await reset();
    seq = 0;
    // Reverse order, one rating per statement, owners set last (transfers move what they must).
    const reversed = [...items].reverse();
    await apply(reversed.map((it) => ({ kind: 'rate' as const, items: [it] })));
    await apply(owners);
    const second = await bodies();
    expect(second).toEqual(first);
    await reset();
  }, 300_000);
});

describe('paid handlers over the maintained aggregates', () => {
  const W = A(6);
  const R = A(7);
  const Q = A(8);
  const ctx = () =>
    ({ config: loadConfig({ INDEXER_PERIOD_SECONDS: '0' }), db, now: () => new Date() }) as AppContext;
  const call = async (tier: string, params: Record<string, string>, query: Record<string, string> = {}) => {
    const h = paidHandlers[tier] as PaidHandler<unknown>;
    const req: RawPaidRequest = {
      params,
      query: Object.fromEntries(Object.entries(query).map(([k, v]) => [k, [v]])),
    };
    const v = await h.validate(ctx(), req);
    if (!v.ok) return { status: v.status, body: v.body as any };
    const r = await h.run(ctx(), v.input, { receipt: null });
    return { status: r.status, body: JSON.parse(JSON.stringify(r.body)) };
  };
  const rate = (agent: string, rater: string, value: string, block: number, logIndex = 0, revoked = false) =>
    db.query(
      `INSERT INTO ratings (network, tx_hash, log_index, agent_id, rater, feedback_index, value_raw, value_decimals,
                            value, block_number, block_time, revoked)
       VALUES ('base', $1, $2, $3, $4, $5::bigint, 0, 0, $6, $5::bigint, $7, $8)`,
      [
        `0x${block.toString(16).padStart(64, '0')}`,
        logIndex,
        agent,
        rater,
        block,
        value,
        new Date(Date.UTC(2025, 0, 1) + block * 60_000),
        revoked,
      ],
    );

  it("weighted_score: junk (self, revoked, out-of-domain) ratings never raise a rater's weight", async () => {
    await reset();
    for (const [agent, owner] of [
      ['1', W],
      ['2', A(1)],
      ['3', A(2)],
      ['5', R],
    ] as const) {
      await db.query('INSERT INTO agents (network, agent_id, owner) VALUES ($1, $2, $3)', [
        'base',
        agent,
        owner,
      ]);
    }
    await rate('1', R, '100', 1);
    await rate('1', Q, '0', 2);
    await rate('2', R, '90', 3, 0, true); // revoked
    await rate('3', R, '150', 4); // out of domain
    await rate('5', R, '100', 5); // R rating its own agent
    const { status, body } = await call('wallet-lookup', { wallet: W });
    expect(status).toBe(200);
    // R's only ELIGIBLE subject is W, like Q's: equal weights, so the weighted mean is the plain one.
    const w = raterWeight(1);
    expect(body.weighted_score).toBe(round6((w * 100 + w * 0) / (2 * w)));
    expect(body.rater_weight_policy).toBe(RATER_WEIGHT_POLICY);
    await reset();
  });

  it('agent detail pages by keyset and never returns more than the page; the score covers every rating', async () => {
    await reset();
    await db.query("INSERT INTO agents (network, agent_id, owner) VALUES ('base', '1', $1)", [W]);
    const blocks = [5, 5, 9, 12, 12, 12, 20];
    for (let i = 0; i < blocks.length; i++)
      await rate('1', i % 2 ? R : Q, String(10 * i), blocks[i] as number, i);
    const expected = await db.query<{ tx_hash: string }>(
      "SELECT tx_hash, log_index FROM ratings WHERE network = 'base' AND agent_id = '1' ORDER BY block_number, log_index, tx_hash",
    );
    const seen: string[] = [];
    let after: string | null = null;
    for (let pages = 0; pages < 10; pages++) {
      const q: Record<string, string> = { limit: '3' };
      if (after !== null) q.after = after;
      const { status, body } = await call('agent-detail', { network: 'base', agent_id: '1' }, q);
      expect(status).toBe(200);
      expect(body.ratings.length).toBeLessThanOrEqual(3);
      expect(body.pagination.total).toBe(blocks.length);
      expect(body.total_reviews).toBe(blocks.length);
      seen.push(
        ...body.ratings.map((r: { tx_hash: string; log_index: number }) => `${r.tx_hash}/${r.log_index}`),
      );
      after = body.pagination.next_cursor;
      if (after === null) break;
    }
    expect(seen).toEqual(expected.map((r: any) => `${r.tx_hash}/${r.log_index}`));
    const bad = await call('agent-detail', { network: 'base', agent_id: '1' }, { after: 'nope' });
    expect(bad.status).toBe(422);
    const both = await call(
      'agent-detail',
      { network: 'base', agent_id: '1' },
      { after: '5.0.0xab', offset: '2' },
    );
    expect(both.status).toBe(422);
    const all = await call('agent-detail', { network: 'base', agent_id: '1' }, { limit: '0' });
    expect(all.body.pagination.limit).toBe(AGENT_RATINGS_MAX_LIMIT);
    expect(all.body.ratings.length).toBe(blocks.length);
    await reset();
  });
});
