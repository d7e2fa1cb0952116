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
 * The paid answers over the same aggregates (test/subject-aggregates/paid-answers.ts) run after it,
 * on this file's database.
 * Runs on PGlite, and on PostgreSQL when DATABASE_URL / TEST_DATABASE_URL is set.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { Database } from '../src/db/database.js';
import { readEmittedRatings } from '../src/read/rater.js';
import { readAgentRatings } from '../src/read/agent.js';
import { readAgentAggregates } from '../src/read/agent-aggregates.js';
import { readEmittedAggregates } from '../src/read/emitted-aggregates.js';
import { readSubjectAggregateInputs, readSubjectDays } from '../src/read/subject-aggregates.js';
import { readSubjectInputs, type SubjectInputs } from '../src/read/subject.js';
import {
  classifyRating,
  historyFromAggregates,
  historyPoints,
  raterStats,
  raterStatsFromAggregates,
  scoreSubject,
  scoreSubjectFromAggregates,
  undatedEligible,
} from '../src/scoring/index.js';
import { ADDRS, AGENTS, NETWORKS, TAGS, historyDatabase, type Op } from './helpers/agg-history.js';
import { paidAnswersSuites } from './subject-aggregates/paid-answers.js';

const SEED = Number(process.env.FUZZ_SEED ?? 20261122);
const RUNS = Number(process.env.AGG_RUNS ?? 40);

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

let db: Database;
let seq = 0;
const { reset, apply } = historyDatabase(
  (d) => (db = d),
  () => ++seq,
);

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

paidAnswersSuites(() => db);
