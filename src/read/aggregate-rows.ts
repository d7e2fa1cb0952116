/**
 * What the paid statements over the MAINTAINED aggregates share (src/read/subject-aggregates.ts for
 * a subject, src/read/agent-aggregates.ts for one agent): the SQL pieces of the (agent, rater) rows
 * with each rater's s and evidence, the facet totals of one agent, the first/last eligible rating
 * and the index-wide inputs, and the parsers of what they return. O(distinct raters) rows, never
 * O(ratings); parameterised by the statements that use them; no scoring.
 */
import { factsOf } from './raters.js';
import type { AgentRaterAggregate, FacetAggregate, RaterFacts } from '../scoring/index.js';

/**
 * The (agent, rater) rows of a subject's or an agent's answer (the `rr` of SUBJECT_SQL and
 * AGENT_SQL), in the order RATER_LIST joins them and parseRaterList reads them.
 */
export const RR_COLUMNS = `ar.network, ar.agent_id, ar.rater, ar.live_count, trim_scale(ar.live_sum)::text AS live_sum,
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
 * The (agent, rater) rows of \`rr\` as ONE text value: rows joined by ';', fields by ',' (network,
 * agent_id, rater, live_count, live_sum, live_undated, revoked_count, ood_count, subjects ('' when
 * NULL)). Building this costs a third of json_agg(json_build_array(…)) per row, and the answer of a
 * subject with thousands of raters is mostly this list. Safe as text: networks are configuration
 * keys, agent ids decimal integers or base58 keys, raters hex or base58 addresses, the rest numbers;
 * none holds ',' or ';' (\`parseRaterList\` checks the field count anyway). Sums travel with their
 * trailing zeros trimmed (\`trim_scale\`: the same value, fewer digits), which lets most per-rater
 * means skip bigint arithmetic (\`meanOfSum\`'s exact fast path).
 */
export const RATER_LIST = `(SELECT string_agg(concat_ws(',', network, agent_id, rater, live_count, live_sum, live_undated,
                                    revoked_count, ood_count, coalesce(subjects::text, ''), coalesce(facts, '')), ';') FROM rr)`;

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
 * one pass, one object per row (no live_sumsq: only the rater profile needs it).
 */
export function parseRaterList(
  v: unknown,
  owner: string,
): { raters: AgentRaterAggregate[]; weights: Map<string, number>; facts: Map<string, RaterFacts> } {
  const raters: AgentRaterAggregate[] = [];
  const weights = new Map<string, number>();
  const facts = new Map<string, RaterFacts>();
  if (typeof v !== 'string' || v === '') return { raters, weights, facts };
  // A hand-rolled scan (indexOf per field, no array or substring per row for the counts):
  // thousands of raters are common.
  let at = 0;
  const end = v.length;
  // The rows of one agent come together and repeat its network and agent id: the previous row's
  // strings are reused when they match (no new string, and a Map keyed by them hashes once).
  let network = '';
  let agentId = '';
  while (at <= end) {
    const semi = v.indexOf(';', at);
    const rowEnd = semi === -1 ? end : semi;
    const c0 = fieldEnd(v, at, rowEnd);
    const c1 = fieldEnd(v, c0 + 1, rowEnd);
    const c2 = fieldEnd(v, c1 + 1, rowEnd);
    const c3 = fieldEnd(v, c2 + 1, rowEnd);
    const c4 = fieldEnd(v, c3 + 1, rowEnd);
    const c5 = fieldEnd(v, c4 + 1, rowEnd);
    const c6 = fieldEnd(v, c5 + 1, rowEnd);
    const c7 = fieldEnd(v, c6 + 1, rowEnd);
    const c8 = fieldEnd(v, c7 + 1, rowEnd);
    const extra = v.indexOf(',', c8 + 1);
    if (extra !== -1 && extra < rowEnd)
      throw new Error('malformed rater row from the database: too many fields');
    const liveCount = countAt(v, c2 + 1, c3);
    const rater = v.slice(c1 + 1, c2);
    if (c0 - at !== network.length || !v.startsWith(network, at)) network = v.slice(at, c0);
    if (c1 - c0 - 1 !== agentId.length || !v.startsWith(agentId, c0 + 1)) agentId = v.slice(c0 + 1, c1);
    raters.push({
      network,
      agentId,
      rater,
      liveCount,
      liveSum: v.slice(c3 + 1, c4),
      liveUndated: countAt(v, c4 + 1, c5),
      revokedCount: countAt(v, c5 + 1, c6),
      oodCount: countAt(v, c6 + 1, c7),
    });
    if (liveCount > 0 && c8 > c7 + 1 && rater !== owner) weights.set(rater, countAt(v, c7 + 1, c8));
    if (rowEnd > c8 + 1 && !facts.has(rater)) facts.set(rater, factsOf(rater, v.slice(c8 + 1, rowEnd)));
    at = rowEnd + 1;
  }
  return { raters, weights, facts };
}

/** Where the field starting at `from` ends (its ','), within the row ending at `rowEnd`. */
function fieldEnd(v: string, from: number, rowEnd: number): number {
  const k = v.indexOf(',', from);
  if (k === -1 || k >= rowEnd) throw new Error('malformed rater row from the database: too few fields');
  return k;
}

/**
 * The non-negative integer written in v[from, to) (a count from the database), read without making
 * a substring; anything else (a sign, a decimal point, more than 15 digits) goes through Number.
 */
function countAt(v: string, from: number, to: number): number {
  if (to - from > 15 || to === from) return Number(v.slice(from, to));
  let n = 0;
  for (let i = from; i < to; i++) {
    const d = v.charCodeAt(i) - 48;
    if (d < 0 || d > 9) return Number(v.slice(from, to));
    n = n * 10 + d;
  }
  return n;
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
