/**
 * What the paid statements over the MAINTAINED aggregates share (src/read/subject-aggregates.ts for
 * a subject, src/read/agent-aggregates.ts for one agent): the SQL pieces of the (agent, rater) rows
 * with each rater's s and evidence, the facet totals of one agent, the first/last eligible rating
 * and the index-wide inputs, and the parsers of what they return. O(distinct raters) rows, never
 * O(ratings); parameterised by the statements that use them; no scoring.
 */
import { factsOf, numberAt } from './raters.js';
import type { AgentRaterAggregate, FacetAggregate, RaterFacts } from '../scoring/index.js';

/**
 * The (agent, rater) rows of a subject's or an agent's answer (the `rr` of SUBJECT_SQL and
 * AGENT_SQL), in the order RATER_LIST joins them and parseRaterList reads them. `k` is an SQL
 * expression for the row's agent: its 1-based position in the statement's list of agents.
 */
export const RR_COLUMNS = (
  k: string,
) => `${k} AS k, ar.rater, ar.live_count, trim_scale(ar.live_sum)::text AS live_sum,
           ar.live_undated, ar.revoked_count, ar.ood_count, lr.subjects,
           coalesce(lr.facts, (SELECT re.facts FROM rater_evidence re WHERE re.rater = ar.rater)) AS facts`;
/**
 * The rater's s beside its (agent, rater) row, and its evidence facts: the copy in `live_rater`
 * (migration 0190), else a probe of `rater_evidence` by the rater's key (the subselect of
 * RR_COLUMNS, only evaluated when the copy is NULL). O(distinct raters) whatever plan the
 * statement gets, never a scan of the whole evidence table.
 */
export const RR_JOINS = `LEFT JOIN live_rater lr ON lr.rater = ar.rater`;

/**
 * The same facet totals for agents `a` of `from` from the maintained per-(agent, tag1) totals
 * (migration 0070): O(tags) rows per agent, the owner's own per-(agent, rater, tag1) rows
 * subtracted for the self/eligible split. Exact only when no rater can count twice, i.e. for ONE
 * agent: a subject with several agents reads FACET_TOTALS (a rater of two of its agents is one
 * distinct rater of the facet).
 */
export const FACET_ONE_AGENT = (from: string, owner: string) => `
  SELECT lt.tag1,
         lt.live_count - coalesce(s.live_count, 0) AS eligible_count,
         (lt.live_sum - coalesce(s.live_sum, 0))::text AS eligible_sum,
         lt.live_raters - (CASE WHEN coalesce(s.live_count, 0) > 0 THEN 1 ELSE 0 END) AS distinct_raters,
         coalesce(s.live_count, 0) AS self_count,
         lt.revoked_count, lt.ood_count
    FROM ${from}
    JOIN live_agent_tag lt ON lt.network = a.network AND lt.agent_id = a.agent_id
    LEFT JOIN live_agent_rater_tag s
      ON s.network = lt.network AND s.agent_id = lt.agent_id AND s.rater = ${owner} AND s.tag_key = lt.tag_key`;

export function facetRow(r: Record<string, unknown>): FacetAggregate {
  return {
    tag1: String(r.tag1),
    eligibleCount: Number(r.eligible_count),
    eligibleSum: String(r.eligible_sum),
    distinctRaters: Number(r.distinct_raters),
    selfCount: Number(r.self_count),
    revokedCount: Number(r.revoked_count),
    oodCount: Number(r.ood_count),
  };
}

export const ELIGIBLE_PROBE = `r.block_time IS NOT NULL AND NOT r.revoked AND r.value >= 0 AND r.value <= 100
  AND r.rater <> coalesce(a.owner, '')`;

/**
 * The (agent, rater) rows of `rr` as ONE text value: rows joined by ';', fields by ',':
 *   k (the row's agent: its 1-based position in the statement's agent list), rater, live_count,
 *   live_sum, rest ('' when live_undated, revoked_count and ood_count are all 0, else the three
 *   joined by '/'), subjects ('' when NULL), facts ('' when none).
 * Building this costs a third of json_agg(json_build_array(…)) per row, and the answer of a subject
 * with thousands of raters is mostly this list: the agent travels as its position, not as its
 * network and id on every row, and the three counts that are almost always 0 as one empty field
 * (15 % fewer bytes and output calls than the ten-field rows before). Safe as text: raters are hex
 * or base58 addresses, the rest numbers, facts `encodeFacts` text; none holds ',' or ';'
 * (`parseRaterList` checks the field count anyway). Sums travel with their trailing zeros trimmed
 * (`trim_scale`: the same value, fewer digits), which lets most per-rater means skip bigint
 * arithmetic (`meanOfSum`'s exact fast path).
 */
export const RATER_LIST = `(SELECT string_agg(concat_ws(',', k, rater, live_count, live_sum,
           CASE WHEN live_undated = 0 AND revoked_count = 0 AND ood_count = 0 THEN ''
                ELSE concat_ws('/', live_undated, revoked_count, ood_count) END,
           coalesce(subjects::text, ''), coalesce(facts, '')), ';') FROM rr)`;

/** The index-wide inputs of every scored answer (refresh meta prior, chain priors, facet means). */
export const GLOBAL_COLUMNS = `(SELECT value FROM agg_meta WHERE meta_key = 'refresh') AS meta,
    (SELECT json_agg(json_build_array(network, prior)) FROM agg_chain) AS chain_priors,
    (SELECT json_agg(json_build_array(tag1, mean)) FROM agg_facet WHERE network = '*') AS facet_means`;

/** First and last ELIGIBLE rating of the agents `a` of `from` (two index probes per agent). */
export const SPAN_SQL = (from: string) => `
    SELECT min(f.t) AS first, max(l.t) AS last
      FROM ${from}
      LEFT JOIN LATERAL (SELECT r.block_time AS t FROM ratings r
                          WHERE r.network = a.network AND r.agent_id = a.agent_id AND ${ELIGIBLE_PROBE}
                          ORDER BY r.block_time ASC LIMIT 1) f ON TRUE
      LEFT JOIN LATERAL (SELECT r.block_time AS t FROM ratings r
                          WHERE r.network = a.network AND r.agent_id = a.agent_id AND ${ELIGIBLE_PROBE}
                          ORDER BY r.block_time DESC LIMIT 1) l ON TRUE`;

export type Json = unknown[][] | null;
export const rowsOf = (v: unknown): unknown[][] => (Array.isArray(v) ? (v as unknown[][]) : []);
export const numOrNull = (v: unknown): number | null => (v === null || v === undefined ? null : Number(v));

/**
 * The (agent, rater) rows of a RATER_LIST value, s (distinct subjects) of each rater with an
 * eligible rating (live, not the owner), and the stored facts of each rater (its evidence row):
 * one pass, one object per row (no live_sumsq: only the rater profile needs it). `agents` is the
 * statement's agent list ([network, agent id], in the order its `k` numbers them).
 */
export function parseRaterList(
  v: unknown,
  owner: string,
  agents: readonly (readonly [string, string])[],
): { raters: AgentRaterAggregate[]; weights: Map<string, number>; facts: Map<string, RaterFacts> } {
  const raters: AgentRaterAggregate[] = [];
  const weights = new Map<string, number>();
  const facts = new Map<string, RaterFacts>();
  if (typeof v !== 'string' || v === '') return { raters, weights, facts };
  // A hand-rolled scan (indexOf per field, no array or substring per row for the counts):
  // thousands of raters are common.
  let at = 0;
  const end = v.length;
  while (at <= end) {
    const semi = v.indexOf(';', at);
    const rowEnd = semi === -1 ? end : semi;
    const c0 = fieldEnd(v, at, rowEnd);
    const c1 = fieldEnd(v, c0 + 1, rowEnd);
    const c2 = fieldEnd(v, c1 + 1, rowEnd);
    const c3 = fieldEnd(v, c2 + 1, rowEnd);
    const c4 = fieldEnd(v, c3 + 1, rowEnd);
    const c5 = fieldEnd(v, c4 + 1, rowEnd);
    const extra = v.indexOf(',', c5 + 1);
    if (extra !== -1 && extra < rowEnd)
      throw new Error('malformed rater row from the database: too many fields');
    // (the agent's network and id strings are shared by all its rows: a Map keyed by them hashes once)
    const agent = agents[numberAt(v, at, c0) - 1];
    if (agent === undefined) throw new Error('malformed rater row from the database: unknown agent');
    const liveCount = numberAt(v, c1 + 1, c2);
    const rater = v.slice(c0 + 1, c1);
    let liveUndated = 0;
    let revokedCount = 0;
    let oodCount = 0;
    if (c4 > c3 + 1) {
      const s0 = slash(v, c3 + 1, c4);
      const s1 = slash(v, s0 + 1, c4);
      const s2 = v.indexOf('/', s1 + 1);
      if (s2 !== -1 && s2 < c4) throw new Error('malformed rater row from the database: bad counts');
      liveUndated = numberAt(v, c3 + 1, s0);
      revokedCount = numberAt(v, s0 + 1, s1);
      oodCount = numberAt(v, s1 + 1, c4);
    }
    raters.push({
      network: agent[0],
      agentId: agent[1],
      rater,
      liveCount,
      liveSum: v.slice(c2 + 1, c3),
      liveUndated,
      revokedCount,
      oodCount,
    });
    if (liveCount > 0 && c5 > c4 + 1 && rater !== owner) weights.set(rater, numberAt(v, c4 + 1, c5));
    if (rowEnd > c5 + 1 && !facts.has(rater)) facts.set(rater, factsOf(rater, v.slice(c5 + 1, rowEnd)));
    at = rowEnd + 1;
  }
  return { raters, weights, facts };
}

/** Where the '/' of a packed count field starting at `from` and ending at `to` is. */
function slash(v: string, from: number, to: number): number {
  const k = v.indexOf('/', from);
  if (k === -1 || k >= to) throw new Error('malformed rater row from the database: bad counts');
  return k;
}

/** Where the field starting at `from` ends (its ','), within the row ending at `rowEnd`. */
function fieldEnd(v: string, from: number, rowEnd: number): number {
  const k = v.indexOf(',', from);
  if (k === -1 || k >= rowEnd) throw new Error('malformed rater row from the database: too few fields');
  return k;
}

export function jsonFacetRow(r: unknown[]): Record<string, unknown> {
  const [tag1, eligible_count, eligible_sum, distinct_raters, self_count, revoked_count, ood_count] = r;
  return { tag1, eligible_count, eligible_sum, distinct_raters, self_count, revoked_count, ood_count };
}

/** Prior, chain priors and facet means from the GLOBAL_COLUMNS of a row. */
export function globalsOf(row: Record<string, unknown>): {
  prior: number | null;
  chainPriors: Map<string, number | null>;
  facetIndexMeans: Map<string, number | null>;
} {
  const meta = row.meta as { prior?: number | null } | null | undefined;
  return {
    prior: meta?.prior ?? null,
    chainPriors: new Map(rowsOf(row.chain_priors).map(([n, p]) => [String(n), numOrNull(p)])),
    facetIndexMeans: new Map(rowsOf(row.facet_means).map(([t, m]) => [String(t), numOrNull(m)])),
  };
}

/** A timestamptz column (a Date from the driver; a string on a driver that leaves it as text). */
export function dateOf(v: unknown): Date | null {
  if (v === null || v === undefined) return null;
  return v instanceof Date ? v : new Date(String(v));
}
