/**
 * The paid read model over the MAINTAINED aggregates (migration 0050, kept by triggers in the same
 * transaction as the rows, so answers are exact and live): everything a paid answer about one
 * subject, one agent or one rater needs, in O(distinct raters) rows, never O(ratings). The only
 * reads of `ratings` here are index probes (first/last eligible rating: ORDER BY … LIMIT 1 on
 * (network, agent_id, block_time); a keyset page of an agent's ratings). Parameterised; no scoring.
 */
import type { Queryable } from '../db/database.js';
import type { EvidenceCounts } from './documents.js';
import {
  dateOf,
  FACET_ONE_AGENT,
  facetRow,
  GLOBAL_COLUMNS,
  globalsOf,
  jsonFacetRow,
  numOrNull,
  parseRaterList,
  RATER_LIST,
  rowsOf,
  RR_COLUMNS,
  RR_JOINS,
  SPAN_SQL,
  type Json,
} from './aggregate-rows.js';
import { applyPairList, EVIDENCE_COMPUTED_AT, PAIR_LIST } from './raters.js';
import type { HistoryDayAggregate, IdentityChain, RaterFacts, SubjectAggregates } from '../scoring/index.js';

export interface Checkpoint {
  network: string;
  /** chains.last_scanned_block when the answer was read (null before the first pass). */
  last_scanned_block: number | null;
}

export interface SubjectAggregateInputs {
  wallet: string;
  aggregates: SubjectAggregates;
  identities: IdentityChain[];
  /** s per rater of the subject (distinct subjects with eligible ratings). */
  raterSubjectCounts: Map<string, number>;
  /** The evidence of each rater of the subject (migration 0160), one row per distinct rater. */
  raterFacts: Map<string, RaterFacts>;
  /** When the rater evidence was last computed (null: never). */
  evidenceComputedAt: string | null;
  prior: number | null;
  chainPriors: Map<string, number | null>;
  facetIndexMeans: Map<string, number | null>;
  degraded: boolean;
  checkpoints: Checkpoint[];
  /** Evidence beside the score over the subject's agents (kept per agent, migration 0110). */
  evidence: EvidenceCounts;
}

/**
 * Facet totals of a set of agents that share one owner (`owner`, an SQL expression; NULL: nobody is
 * self), one row per tag1: what facets need, whatever the number of raters. The rows are first
 * summed per (tag1, rater) by hash (so "distinct raters" is a plain count, with no sort of every
 * row), then per tag1.
 */
const FACET_TOTALS = (from: string, where: string, owner: string) => `
  SELECT g.tag1,
         coalesce(sum(g.live_count) FILTER (WHERE g.rater <> coalesce(${owner}, '')), 0) AS eligible_count,
         coalesce(sum(g.live_sum) FILTER (WHERE g.rater <> coalesce(${owner}, '')), 0)::text AS eligible_sum,
         count(*) FILTER (WHERE g.rater <> coalesce(${owner}, '') AND g.live_count > 0) AS distinct_raters,
         coalesce(sum(g.live_count) FILTER (WHERE g.rater = ${owner}), 0) AS self_count,
         sum(g.revoked_count) AS revoked_count, sum(g.ood_count) AS ood_count
    FROM (SELECT t.tag1, t.rater, sum(t.live_count) AS live_count, sum(t.live_sum) AS live_sum,
                 sum(t.revoked_count) AS revoked_count, sum(t.ood_count) AS ood_count
            FROM ${from}
           WHERE ${where}
           GROUP BY t.tag1, t.rater) g
   GROUP BY g.tag1`;

/**
 * The parts of the ONE statement that reads a subject's answer: every per-subject read keyed by the
 * owned agents (`own`), and the index-wide inputs (prior, chain priors, facet means), each
 * aggregated into a JSON column so one round trip brings everything back (the answer of a small
 * subject is dominated by round trips, not by rows). Numbers that must stay exact travel as text.
 */
const SUBJECT_SQL = (withDays: boolean) => `
  WITH own AS MATERIALIZED (SELECT network, agent_id, owner, row_number() OVER (ORDER BY network, agent_id) AS k
                              FROM agents WHERE owner = $1),
  -- read once (RATER_LIST): inlined, its rows go straight into the list, no tuplestore
  rr AS NOT MATERIALIZED (
    SELECT ${RR_COLUMNS('a.k')}
      FROM own a
      JOIN live_agent_rater ar ON ar.network = a.network AND ar.agent_id = a.agent_id
      ${RR_JOINS}),
  span AS (${SPAN_SQL('own a')})
  SELECT
    ${RATER_LIST} AS raters,
    ${PAIR_LIST('$1::text')} AS pair_list, ${EVIDENCE_COMPUTED_AT} AS evidence_at,
    (SELECT json_agg(json_build_array(f.tag1, f.eligible_count, f.eligible_sum, f.distinct_raters, f.self_count,
                                      f.revoked_count, f.ood_count))
       FROM (SELECT * FROM (${FACET_ONE_AGENT('own a', '$1::text')}) one WHERE (SELECT count(*) FROM own) = 1
             UNION ALL
             SELECT * FROM (${FACET_TOTALS('own a JOIN live_agent_rater_tag t ON t.network = a.network AND t.agent_id = a.agent_id', 'TRUE', '$1::text')}) many
              WHERE (SELECT count(*) FROM own) <> 1) f) AS facets,
    -- in k order: the agent list of RATER_LIST
    (SELECT json_agg(json_build_array(network, agent_id) ORDER BY k) FROM own) AS identities,
    span.first, span.last,
    ${GLOBAL_COLUMNS},
    (SELECT json_agg(json_build_array(c.network, c.last_scanned_block) ORDER BY c.network)
       FROM chains c WHERE c.network IN (SELECT network FROM own)) AS checkpoints,
    (SELECT json_build_array(coalesce(sum(e.fetched), 0), coalesce(sum(e.matching), 0), coalesce(sum(e.verified), 0))
       FROM own a JOIN agent_evidence e ON e.network = a.network AND e.agent_id = a.agent_id) AS evidence,
    (SELECT count(*)::int FROM chains c
      WHERE NOT c.backfill_complete
        AND c.network IN (SELECT a.network FROM own a
                           WHERE EXISTS (SELECT 1 FROM live_agent_rater x
                                          WHERE x.network = a.network AND x.agent_id = a.agent_id))) AS incomplete
    ${
      withDays
        ? `, (SELECT json_agg(json_build_array(x.network, x.day, x.n, x.s))
             FROM (SELECT d.network, to_char(d.day, 'YYYY-MM-DD') AS day, sum(d.eligible_count) AS n,
                          sum(d.eligible_sum)::text AS s
                     FROM own a JOIN live_agent_day d ON d.network = a.network AND d.agent_id = a.agent_id
                    WHERE d.eligible_count > 0
                    GROUP BY d.network, d.day) x) AS days`
        : ''
    }
    FROM span`;

const SUBJECT_TEXT = SUBJECT_SQL(false);
const SUBJECT_DAYS_TEXT = SUBJECT_SQL(true);

/** The subject's evidence counts from its `evidence` column ([fetched, matching, verified]). */
function evidenceOf(v: unknown): EvidenceCounts {
  const [fetched, matching, verified] = Array.isArray(v) ? (v as unknown[]) : [];
  return {
    ratings_with_document: Number(fetched ?? 0),
    ratings_with_matching_document: Number(matching ?? 0),
    ratings_with_verified_payment: Number(verified ?? 0),
  };
}

async function readSubjectRow(
  db: Queryable,
  wallet: string,
  withDays: boolean,
): Promise<Record<string, unknown>> {
  const [row] = await db.query<Record<string, unknown>>(
    withDays ? SUBJECT_DAYS_TEXT : SUBJECT_TEXT,
    [wallet],
    {
      prepare: true,
    },
  );
  return row ?? {};
}

function subjectInputsOf(wallet: string, row: Record<string, unknown>): SubjectAggregateInputs {
  const agents = rowsOf(row.identities as Json).map(([n, a]): [string, string] => [String(n), String(a)]);
  const { raters, weights, facts } = parseRaterList(row.raters, wallet, agents);
  const byChain = new Map<string, string[]>();
  for (const [network, agentId] of agents) {
    const list = byChain.get(network) ?? [];
    list.push(agentId);
    byChain.set(network, list);
  }
  const g = globalsOf(row);
  return {
    wallet,
    aggregates: {
      raters,
      facets: rowsOf(row.facets as Json).map((f) => facetRow(jsonFacetRow(f))),
      firstEligibleAt: dateOf(row.first),
      lastEligibleAt: dateOf(row.last),
    },
    identities: [...byChain.entries()].map(([network, agentIds]) => ({ network, agentIds })),
    raterSubjectCounts: weights,
    raterFacts: applyPairList(facts, row.pair_list),
    evidenceComputedAt: (row.evidence_at as string | null | undefined) ?? null,
    prior: g.prior,
    chainPriors: g.chainPriors,
    facetIndexMeans: g.facetIndexMeans,
    degraded: Number(row.incomplete ?? 0) > 0,
    checkpoints: rowsOf(row.checkpoints as Json).map(([network, b]) => ({
      network: String(network),
      last_scanned_block: numOrNull(b),
    })),
    evidence: evidenceOf(row.evidence),
  };
}

/**
 * All the inputs of one subject's scored answer, from the maintained aggregates, in ONE statement
 * (one round trip): the (agent, rater) rows with each rater's s, facet totals, identities, the
 * first/last eligible rating, prior, chain priors, facet means, checkpoints and backfill state.
 */
export async function readSubjectAggregateInputs(
  db: Queryable,
  wallet: string,
): Promise<SubjectAggregateInputs> {
  return subjectInputsOf(wallet, await readSubjectRow(db, wallet, false));
}

/** `readSubjectAggregateInputs` and the subject's per-day history rows, in the same one statement. */
export async function readSubjectHistoryInputs(
  db: Queryable,
  wallet: string,
): Promise<{ inputs: SubjectAggregateInputs; days: HistoryDayAggregate[] }> {
  const row = await readSubjectRow(db, wallet, true);
  return {
    inputs: subjectInputsOf(wallet, row),
    days: rowsOf(row.days as Json).map(([network, day, n, s]) => ({
      network: String(network),
      day: new Date(`${String(day)}T00:00:00.000Z`),
      count: Number(n),
      sum: String(s),
    })),
  };
}

/** The subject's eligible dated ratings per (network, UTC day). */
export async function readSubjectDays(db: Queryable, wallet: string): Promise<HistoryDayAggregate[]> {
  const rows = await db.query<{ network: string; day: Date | string; n: number | bigint; s: string }>(
    `SELECT d.network, to_char(d.day, 'YYYY-MM-DD') AS day, sum(d.eligible_count) AS n, sum(d.eligible_sum)::text AS s
       FROM agents a JOIN live_agent_day d ON d.network = a.network AND d.agent_id = a.agent_id
      WHERE a.owner = $1 AND d.eligible_count > 0
      GROUP BY d.network, d.day`,
    [wallet],
  );
  return rows.map((r) => ({
    network: r.network,
    day: new Date(`${String(r.day)}T00:00:00.000Z`),
    count: Number(r.n),
    sum: r.s,
  }));
}
