/**
 * The agent detail's read over the MAINTAINED aggregates: one agent's identity row, its (agent,
 * rater) rows with each rater's s and evidence (its score relative to its CURRENT owner), facet
 * totals, first/last eligible rating, the index-wide inputs and its chain's backfill state, in ONE
 * statement. O(distinct raters) rows, never O(ratings). Parameterised; no scoring.
 */
import type { Queryable } from '../db/database.js';
import type { AgentRow } from './agent.js';
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
import type { RaterFacts, SubjectAggregates } from '../scoring/index.js';

/** Everything the agent detail needs besides its ratings page, read in ONE statement. */
interface AgentDetailInputs {
  agent: AgentRow | null;
  aggregates: SubjectAggregates;
  raterSubjectCounts: Map<string, number>;
  /** The evidence of each rater of the agent, on its current owner (the subject). */
  raterFacts: Map<string, RaterFacts>;
  evidenceComputedAt: string | null;
  /** Every rating of the agent (live + revoked + out of domain), from the aggregates. */
  total: number;
  /** chains.backfill_complete of the agent's network (false when the chain is unknown). */
  backfilled: boolean;
  prior: number | null;
  chainPriors: Map<string, number | null>;
  facetIndexMeans: Map<string, number | null>;
}

/**
 * One agent's identity row, maintained rows (its score relative to its CURRENT owner; with no
 * identity row nobody is self), first/last eligible rating, the index-wide inputs and its chain's
 * backfill state: one statement, one round trip.
 */
const AGENT_SQL = `
  WITH ag AS MATERIALIZED (
    SELECT network, agent_id, owner, minter, agent_uri, declared_type, registered_block, registered_tx, registered_at
      FROM agents WHERE network = $1 AND agent_id = $2),
  -- read once (RATER_LIST): inlined, its rows go straight into the list, no tuplestore
  rr AS NOT MATERIALIZED (
    SELECT ${RR_COLUMNS('1')}
      FROM live_agent_rater ar ${RR_JOINS}
     WHERE ar.network = $1 AND ar.agent_id = $2),
  span AS (${SPAN_SQL('(SELECT $1::text AS network, $2::text AS agent_id, (SELECT owner FROM ag) AS owner) a')})
  SELECT
    (ag.agent_id IS NOT NULL) AS found, ag.owner, ag.minter, ag.agent_uri, ag.declared_type, ag.registered_block,
    ag.registered_tx, ag.registered_at,
    ${RATER_LIST} AS raters,
    ${PAIR_LIST("coalesce((SELECT owner FROM ag), $1::text || ':' || $2::text)")} AS pair_list,
    ${EVIDENCE_COMPUTED_AT} AS evidence_at,
    (SELECT json_agg(json_build_array(f.tag1, f.eligible_count, f.eligible_sum, f.distinct_raters, f.self_count,
                                      f.revoked_count, f.ood_count))
       FROM (${FACET_ONE_AGENT('(SELECT $1::text AS network, $2::text AS agent_id) a', '(SELECT owner FROM ag)')}) f) AS facets,
    span.first, span.last,
    ${GLOBAL_COLUMNS},
    coalesce((SELECT backfill_complete FROM chains WHERE network = $1), FALSE) AS backfilled
    FROM span LEFT JOIN ag ON TRUE`;

export async function readAgentDetailInputs(
  db: Queryable,
  network: string,
  agentId: string,
): Promise<AgentDetailInputs> {
  const [row = {}] = await db.query<Record<string, unknown>>(AGENT_SQL, [network, agentId], {
    prepare: true,
  });
  const found = row.found === true;
  const owner = found ? ((row.owner as string | null) ?? null) : null;
  const { raters, weights, facts } = parseRaterList(row.raters, owner ?? '', [[network, agentId]]);
  let total = 0;
  for (const r of raters) total += r.liveCount + r.revokedCount + r.oodCount;
  const g = globalsOf(row);
  return {
    agent: found
      ? {
          network,
          agent_id: agentId,
          owner,
          minter: (row.minter as string | null) ?? null,
          agent_uri: (row.agent_uri as string | null) ?? null,
          declared_type: (row.declared_type as string | null) ?? null,
          registered_block: numOrNull(row.registered_block),
          registered_tx: (row.registered_tx as string | null) ?? null,
          registered_at: (row.registered_at as Date | null) ?? null,
        }
      : null,
    aggregates: {
      raters,
      facets: rowsOf(row.facets as Json).map((f) => facetRow(jsonFacetRow(f))),
      firstEligibleAt: dateOf(row.first),
      lastEligibleAt: dateOf(row.last),
    },
    raterSubjectCounts: weights,
    raterFacts: applyPairList(facts, row.pair_list),
    evidenceComputedAt: (row.evidence_at as string | null | undefined) ?? null,
    total,
    backfilled: row.backfilled === true,
    prior: g.prior,
    chainPriors: g.chainPriors,
    facetIndexMeans: g.facetIndexMeans,
  };
}

/** One agent's maintained rows (its score relative to its current owner). */
export async function readAgentAggregates(
  db: Queryable,
  network: string,
  agentId: string,
): Promise<{ aggregates: SubjectAggregates; raterSubjectCounts: Map<string, number>; total: number }> {
  const d = await readAgentDetailInputs(db, network, agentId);
  return { aggregates: d.aggregates, raterSubjectCounts: d.raterSubjectCounts, total: d.total };
}
